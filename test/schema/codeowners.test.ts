/**
 * .github/CODEOWNERS matches the SDL: each subgraph's package and SDL are owned by the team its
 * @contact names, shared layers by the platform team, and every path it lists exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { codeownersTeam, subgraphContact } from '@linepack/schema/sdl';
import { publishedSubgraphSdlPath, schemaDir, subgraphNames, subgraphSdlPath } from '@linepack/schema/subgraphs';

const root = path.resolve(schemaDir, '..');
const rules = readFileSync(path.join(root, '.github', 'CODEOWNERS'), 'utf8')
  .split('\n')
  .map((line) => line.trim())
  .filter((line) => line && !line.startsWith('#'))
  .map((line) => {
    const [pattern, ...owners] = line.split(/\s+/);
    return { pattern: pattern!, owners };
  });

/** The subset of CODEOWNERS patterns used here: `*`, `/dir/` and `/file`; the last match wins. */
function ownersOf(file: string): string[] {
  let owners: string[] = [];
  for (const { pattern, owners: o } of rules) {
    const p = pattern.replace(/^\//, '');
    if (pattern === '*' || (p.endsWith('/') ? file.startsWith(p) : file === p)) owners = o;
  }
  return owners;
}

it.each([...subgraphNames])('gives the %s package and SDL to the team its @contact names', (subgraph) => {
  const team = codeownersTeam(subgraphContact(subgraph));
  expect(ownersOf(`subgraphs/${subgraph}/src/index.ts`)).toEqual([team]);
  expect(ownersOf(`subgraphs/${subgraph}/package.json`)).toEqual([team]);
  expect(ownersOf(path.relative(root, subgraphSdlPath(subgraph)))).toEqual([team]);
  expect(ownersOf(path.relative(root, publishedSubgraphSdlPath(subgraph)))).toEqual([team]);
});

it('gives the shared layers to the platform team', () => {
  for (const file of [
    'lib/scopes.ts',
    'gateway/src/server.ts',
    'schema/compose.ts',
    'schema/shared.graphql',
    'schema/supergraph.graphql',
    'dev/stack.ts',
    'package.json',
  ]) {
    expect([file, ownersOf(file)]).toEqual([file, ['@linepack/platform-team']]);
  }
});

it('lists only paths that exist', () => {
  for (const { pattern } of rules.filter((r) => r.pattern !== '*')) expect([pattern, existsSync(path.join(root, pattern))]).toEqual([pattern, true]);
});
