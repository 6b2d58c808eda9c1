/**
 * Composes the subgraph SDLs into schema/supergraph.graphql with @apollo/composition, and derives
 * the scope vocabulary (lib/generated/scopes.ts) from the SDL's @scope declarations.
 *   npm run compose          write both
 *   npm run compose:check    fail on composition errors or when either committed file is stale
 */
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { composeServices } from '@apollo/composition';
import { renderScopesModule, scopeVocabulary } from './scope-vocabulary';
import { locatedMessage, parseSdl, SdlError } from './sdl-errors';
import { readSubgraphSdl } from './sdl';
import { defaultRoutingUrl, schemaDir, subgraphNames, subgraphSdlPath, supergraphPath } from './subgraphs';

export const scopesModulePath = path.join(schemaDir, '..', 'lib', 'generated', 'scopes.ts');

/**
 * The composed supergraph and scope vocabulary, or the composition errors. An SDL syntax error throws an SdlError
 * (file:line:column). A composition error names the line of the subgraph's own file where it has one: the served
 * SDL is that file with shared.graphql's definitions appended, so its lines are the file's lines.
 */
export function composeSupergraph(dir: string = schemaDir): { supergraphSdl: string; scopesModule: string } | { errors: string[] } {
  const sdls = new Map(subgraphNames.map((name) => [name, readSubgraphSdl(name, dir)]));
  const result = composeServices(
    subgraphNames.map((name) => ({ name, url: defaultRoutingUrl(name), typeDefs: parseSdl(sdls.get(name)!, subgraphSdlPath(name, dir)) })),
  );
  if (result.errors) {
    return { errors: result.errors.map((e) => `${String(e.extensions?.['code'] ?? 'COMPOSITION_ERROR')}: ${locatedMessage(e)}`) };
  }
  const vocabulary = scopeVocabulary(sdls);
  if (vocabulary.errors.length > 0) return { errors: vocabulary.errors.map((e) => `SCOPE: ${e}`) };
  for (const hint of result.hints ?? []) console.warn(`hint ${hint.definition.code}: ${hint.message}`);
  return { supergraphSdl: result.supergraphSdl + '\n', scopesModule: renderScopesModule(vocabulary.scopes) };
}

function main(): void {
  const check = process.argv.includes('--check');
  let composed: ReturnType<typeof composeSupergraph>;
  try {
    composed = composeSupergraph();
  } catch (err) {
    // The message says what and where; a stack through the composition library says nothing more to an SDL author.
    if (!(err instanceof SdlError)) throw err;
    console.error(`Composition failed: ${err.message}`);
    process.exit(1);
  }
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
