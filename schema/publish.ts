/**
 * `npm run schema:publish`: records the current schemas as the new baseline (`schema/published/`) and
 * appends what changed since the previous one to `schema/CHANGELOG.md`. Refuses while `schema:check`
 * fails, unless `--force`.
 */
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { changelogEntry } from './changelog';
import { currentSchemas, formatReport, runSchemaCheck } from './check';
import { schemaDir } from './subgraphs';

async function main(): Promise<void> {
  const force = process.argv.includes('--force');
  const result = await runSchemaCheck();
  if (!result.ok && !force) {
    console.error(`${formatReport(result)}\n\nschema:publish refused: fix the check above first (or --force).`);
    process.exit(1);
  }
  const baseDir = path.join(schemaDir, 'published');
  mkdirSync(baseDir, { recursive: true });
  for (const [id, sdl] of currentSchemas(schemaDir)) writeFileSync(path.join(baseDir, `${id}.graphql`), sdl);
  const changelog = path.join(schemaDir, 'CHANGELOG.md');
  if (!existsSync(changelog))
    writeFileSync(
      changelog,
      '# Schema changelog\n\nEvery `npm run schema:publish`, newest last: what changed in each subgraph and in the client-facing API.\n',
    );
  const date = new Date().toISOString().slice(0, 10);
  appendFileSync(changelog, changelogEntry(result, date));
  const touched = [...new Set(result.changes.map((c) => c.schema))];
  console.log(
    `published ${touched.length ? touched.join(', ') : 'no changes'} to ${path.relative(process.cwd(), baseDir)}; appended to ${path.relative(process.cwd(), changelog)}`,
  );
}

main().catch((err: unknown) => {
  console.error(`schema:publish failed: ${(err as Error).message}`);
  process.exit(1);
});
