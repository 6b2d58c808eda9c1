/** Fails when the committed generated resolver types differ from what the SDL generates now. */
import { readFileSync, existsSync } from 'node:fs';
import path from 'node:path';
import { generate } from '@graphql-codegen/cli';
import config from '../codegen';
import { repoRoot } from '@linepack/lib/repo-root';

async function main(): Promise<void> {
  const outputs = (await generate({ ...config, cwd: repoRoot, silent: true }, false)) as { filename: string; content: string }[];
  const stale = outputs.filter(({ filename, content }) => {
    const file = path.resolve(repoRoot, filename);
    return !existsSync(file) || readFileSync(file, 'utf8') !== content;
  });
  if (stale.length > 0) {
    console.error(`Generated resolver types are stale: ${stale.map((o) => o.filename).join(', ')}\nRun \`npm run codegen\` and commit the result.`);
    process.exit(1);
  }
  console.log(`generated types are up to date (${outputs.length} files)`);
}

main().catch((err: unknown) => {
  console.error(`codegen:check failed: ${(err as Error).message}`);
  process.exit(1);
});
