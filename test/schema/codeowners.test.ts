/**
 * .github/CODEOWNERS matches the registry and the SDL: each subgraph's package — which holds its SDL, published
 * baseline, event payloads and chart values — is owned by the team its @contact names (the lines `npm run
 * registry-files` writes), generated outputs by the bot, shared layers by the platform team, and every path it lists
 * exists.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { codeownersTeam, subgraphContact } from '@linepack/schema/sdl';
import { publishedSubgraphSdlPath, schemaDir, subgraphNames, subgraphSdlPath } from '@linepack/schema/subgraphs';
import { chartValuesFile, registryFiles } from '../../scripts/registry-files';

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

it('is what npm run registry-files writes from the registry', () => {
  const codeowners = registryFiles().find((f) => f.file === '.github/CODEOWNERS')!;
  expect(codeowners.now).toBe(codeowners.next);
});

it.each([...subgraphNames])('gives the %s package, its SDL, baseline, events and chart values to the team its @contact names', (subgraph) => {
  const team = codeownersTeam(subgraphContact(subgraph));
  const present = [`subgraphs/${subgraph}/src/index.ts`, `subgraphs/${subgraph}/package.json`, path.relative(root, subgraphSdlPath(subgraph))];
  // Its baseline appears with its first `npm run schema:publish`, its events and chart values when it has them.
  const once = [
    path.relative(root, publishedSubgraphSdlPath(subgraph)),
    path.relative(root, chartValuesFile(subgraph)),
    `subgraphs/${subgraph}/src/events.ts`,
    `subgraphs/${subgraph}/src/generated/resolvers-types.ts`,
  ];
  for (const file of present) expect([file, existsSync(path.join(root, file))]).toEqual([file, true]);
  for (const file of [...present, ...once]) expect([file, ownersOf(file)]).toEqual([file, [team]]);
});

it('gives generated outputs to the bot: a change to them is reviewed through its source, and CI checks they are current', () => {
  for (const file of [
    'schema/supergraph.graphql',
    'schema/published/supergraph.graphql',
    'schema/CHANGELOG.md',
    'deploy/helm/linepack/files/supergraph.graphql',
    'docs/api/index.html',
    'lib/generated/scopes.ts',
    'lib/generated/trusted-documents.ts',
  ]) {
    expect([file, existsSync(path.join(root, file)), ownersOf(file)]).toEqual([file, true, ['@linepack-bot']]);
  }
});

it('gives the shared layers to the platform team', () => {
  for (const file of [
    'lib/scopes.ts',
    'gateway/src/server.ts',
    'schema/compose.ts',
    'schema/subgraphs.ts',
    'schema/shared.graphql',
    'scripts/registry-files.ts',
    'docker-compose.yml',
    'deploy/helm/linepack/values.yaml',
    'dev/stack.ts',
    'package.json',
  ]) {
    expect([file, ownersOf(file)]).toEqual([file, ['@linepack/platform-team']]);
  }
});

it('lists only paths that exist', () => {
  for (const { pattern } of rules.filter((r) => r.pattern !== '*')) expect([pattern, existsSync(path.join(root, pattern))]).toEqual([pattern, true]);
});
