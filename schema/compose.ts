/**
 * Composes the subgraph SDLs into schema/supergraph.graphql with @apollo/composition, and derives
 * the scope vocabulary (lib/generated/scopes.ts) from the SDL's @scope declarations.
 *   npm run compose          write both
 *   npm run compose:check    fail on composition errors or when either committed file is stale
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { renderScopesModule, scopeVocabulary } from './scope-vocabulary';
import { defaultRoutingUrl, readSubgraphSdl, schemaDir, subgraphNames, supergraphPath } from './subgraphs';

export const scopesModulePath = path.join(schemaDir, '..', 'lib', 'generated', 'scopes.ts');

export function composeSupergraph(dir: string = schemaDir): { supergraphSdl: string; scopesModule: string } | { errors: string[] } {
  const sdls = new Map(subgraphNames.map((name) => [name, readSubgraphSdl(name, dir)]));
  const result = composeServices(subgraphNames.map((name) => ({ name, url: defaultRoutingUrl(name), typeDefs: parse(sdls.get(name)!) })));
  if (result.errors) {
    return { errors: result.errors.map((e) => `${String(e.extensions?.['code'] ?? 'COMPOSITION_ERROR')}: ${e.message}`) };
  }
  const vocabulary = scopeVocabulary(sdls);
  if (vocabulary.errors.length > 0) return { errors: vocabulary.errors.map((e) => `SCOPE: ${e}`) };
  for (const hint of result.hints ?? []) console.warn(`hint ${hint.definition.code}: ${hint.message}`);
  return { supergraphSdl: result.supergraphSdl + '\n', scopesModule: renderScopesModule(vocabulary.scopes) };
}

function main(): void {
  const check = process.argv.includes('--check');
  const composed = composeSupergraph();
  if ('errors' in composed) {
    console.error(`Composition failed with ${composed.errors.length} error(s):`);
    for (const line of composed.errors) console.error(`  ${line}`);
    process.exit(1);
  }
  const outputs = [
    { file: supergraphPath, content: composed.supergraphSdl, what: 'schema/supergraph.graphql' },
    { file: scopesModulePath, content: composed.scopesModule, what: 'lib/generated/scopes.ts' },
  ];
  if (check) {
    const stale = outputs.filter(({ file, content }) => !existsSync(file) || readFileSync(file, 'utf8') !== content);
    if (stale.length > 0) {
      console.error(`${stale.map((s) => s.what).join(' and ')} stale: a subgraph SDL changed. Run \`npm run compose\` and commit the result.`);
      process.exit(1);
    }
    console.log('supergraph and scope vocabulary are up to date');
    return;
  }
  for (const { file, content } of outputs) {
    writeFileSync(file, content);
    console.log(`wrote ${path.relative(process.cwd(), file)}`);
  }
}

if (require.main === module) main();
