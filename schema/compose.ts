/**
 * Composes the subgraph SDLs into schema/supergraph.graphql with @apollo/composition.
 *   npm run compose          write the supergraph
 *   npm run compose:check    fail on composition errors or when the committed file is stale
 */
import { readFileSync, writeFileSync, existsSync } from 'node:fs';
import { composeServices } from '@apollo/composition';
import { parse } from 'graphql';
import { defaultRoutingUrl, readSubgraphSdl, subgraphNames, supergraphPath } from './subgraphs';

export function composeSupergraph(): { supergraphSdl: string } | { errors: string[] } {
  const result = composeServices(
    subgraphNames.map((name) => ({
      name,
      url: defaultRoutingUrl(name),
      typeDefs: parse(readSubgraphSdl(name)),
    })),
  );
  if (result.errors) {
    return {
      errors: result.errors.map((e) => `${String(e.extensions?.['code'] ?? 'COMPOSITION_ERROR')}: ${e.message}`),
    };
  }
  const hints = result.hints ?? [];
  for (const hint of hints) console.warn(`hint ${hint.definition.code}: ${hint.message}`);
  return { supergraphSdl: result.supergraphSdl + '\n' };
}

function main(): void {
  const check = process.argv.includes('--check');
  const composed = composeSupergraph();
  if ('errors' in composed) {
    console.error(`Composition failed with ${composed.errors.length} error(s):`);
    for (const line of composed.errors) console.error(`  ${line}`);
    process.exit(1);
  }
  if (check) {
    const committed = existsSync(supergraphPath) ? readFileSync(supergraphPath, 'utf8') : '';
    if (committed !== composed.supergraphSdl) {
      console.error('schema/supergraph.graphql is stale: a subgraph SDL changed. Run `npm run compose` and commit the result.');
      process.exit(1);
    }
    console.log('supergraph is up to date');
    return;
  }
  writeFileSync(supergraphPath, composed.supergraphSdl);
  console.log(`wrote ${supergraphPath}`);
}

if (require.main === module) main();
