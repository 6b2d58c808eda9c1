import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';

/** The repository root, found from this file whether it runs from source (tsx) or from dist/. */
function findRepoRoot(start: string): string {
  let dir = start;
  for (;;) {
    const manifest = path.join(dir, 'package.json');
    if (existsSync(manifest) && (JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string }).name === 'linepack') return dir;
    const parent = path.dirname(dir);
    if (parent === dir) throw new Error(`cannot find the linepack repository root above ${start}`);
    dir = parent;
  }
}

export const repoRoot = findRepoRoot(__dirname);
