/**
 * `npm run schema:publish`: records the current schemas as the new baseline (each subgraph's
 * `subgraphs/<name>/published.graphql`, the API schema's `schema/published/supergraph.graphql`) and appends what changed since the previous one to `schema/CHANGELOG.md`. Refuses while `schema:check`
 * fails. `--force` publishes over breaking changes, but never over a client operation (README, console,
 * CLI, MCP companion, trusted documents) that the new schema refuses: those are checked against the current
 * schema on every run, so forcing them into the baseline would only fail the next check, and publishing a
 * schema its own clients cannot use is what the check exists to stop.
 */
import { appendFileSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { changelogEntry } from './changelog';
import { baselinePath, currentSchemas, formatReport, runSchemaCheck, type CheckOptions, type CheckResult } from './check';
import { schemaDir as defaultSchemaDir } from './subgraphs';

export interface PublishOutcome {
  published: boolean;
  result: CheckResult;
  /** What to tell the person publishing: the refusal with the check's report, or what was written. */
  message: string;
}

export async function publishSchemas(options: CheckOptions & { force?: boolean; date?: string } = {}): Promise<PublishOutcome> {
  const dir = options.schemaDir ?? defaultSchemaDir;
  const result = await runSchemaCheck(options);
  if (result.invalidClientOperations.length > 0) {
    const why = 'client operations the new schema refuses (update them in the same change; --force does not cover them)';
    return { published: false, result, message: `${formatReport(result)}\n\nschema:publish refused: ${why}.` };
  }
  if (!result.ok && !options.force) {
    return { published: false, result, message: `${formatReport(result)}\n\nschema:publish refused: fix the check above first (or --force).` };
  }
  const touched = new Set(result.changes.map((c) => c.schema));
  const written: string[] = [];
  for (const [id, sdl] of currentSchemas(dir)) {
    const file = baselinePath(id, dir);
    mkdirSync(path.dirname(file), { recursive: true });
    writeFileSync(file, sdl);
    if (touched.has(id)) written.push(path.relative(process.cwd(), file));
  }
  const changelog = path.join(dir, 'CHANGELOG.md');
  if (!existsSync(changelog))
    writeFileSync(
      changelog,
      '# Schema changelog\n\nEvery `npm run schema:publish`, newest last: what changed in each subgraph and in the client-facing API.\n',
    );
  appendFileSync(changelog, changelogEntry(result, options.date ?? new Date().toISOString().slice(0, 10)));
  return {
    published: true,
    result,
    message: `published ${written.length ? written.join(', ') : 'no changes'}; appended to ${path.relative(process.cwd(), changelog)}`,
  };
}

if (require.main === module) {
  publishSchemas({ force: process.argv.includes('--force') }).then(
    (outcome) => {
      if (!outcome.published) {
        console.error(outcome.message);
        process.exit(1);
      }
      console.log(outcome.message);
    },
    (err: unknown) => {
      // SDL and acknowledgement errors say what and where; a stack adds nothing for the person publishing.
      console.error(`schema:publish failed: ${(err as Error).message}`);
      process.exit(1);
    },
  );
}
