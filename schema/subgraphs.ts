import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Kind, print, visit, type DefinitionNode, type DocumentNode } from 'graphql';
import { parseSdl, SdlError } from './sdl-errors';

/**
 * The subgraph registry: the one list that composition, the gateway's configuration and the
 * development stack read. Adding a subgraph is one line here (its name and port) plus its own
 * package `subgraphs/<name>` (`@linepack/subgraph-<name>`) and SDL `schema/<name>.graphql`.
 * `port` is where the subgraph listens in development and docker-compose; the routing URL written
 * into the supergraph is the docker-compose service address.
 */
export const subgraphRegistry = [
  { name: 'auth', port: 4005 },
  { name: 'assets', port: 4001 },
  { name: 'measurements', port: 4002 },
  { name: 'analytics', port: 4003 },
  { name: 'compliance', port: 4004 },
] as const;

export type SubgraphName = (typeof subgraphRegistry)[number]['name'];

export const subgraphNames: readonly SubgraphName[] = subgraphRegistry.map((s) => s.name);

/**
 * Where the SDL files are: this package's folder when running from source; a bundled service
 * (scripts/build-package.mjs) has no such folder and its image sets LINEPACK_SCHEMA_DIR.
 */
export const schemaDir = process.env['LINEPACK_SCHEMA_DIR'] ?? __dirname;

export const supergraphPath = path.join(schemaDir, 'supergraph.graphql');
export const sharedSdlPath = path.join(schemaDir, 'shared.graphql');

export function subgraphPort(name: SubgraphName): number {
  const entry = subgraphRegistry.find((s) => s.name === name);
  if (!entry) throw new Error(`unknown subgraph ${name}`);
  return entry.port;
}

export function subgraphSdlPath(name: string, dir: string = schemaDir): string {
  return path.join(dir, `${name}.graphql`);
}

/** The subgraph's own SDL file, as its team writes it and reviewers read it. */
export function readOwnSubgraphSdl(name: string, dir: string = schemaDir): string {
  return readFileSync(subgraphSdlPath(name, dir), 'utf8');
}

/**
 * The SDL a subgraph serves: its own file plus the definitions from shared.graphql that it uses
 * (`@contact` always, since every subgraph names its owner). A type defined in both is an error:
 * shared types have one definition.
 */
export function readSubgraphSdl(name: string, dir: string = schemaDir): string {
  const sharedFile = path.join(dir, 'shared.graphql');
  return withSharedDefinitions(name, readOwnSubgraphSdl(name, dir), readFileSync(sharedFile, 'utf8'), { own: subgraphSdlPath(name, dir), shared: sharedFile });
}

export function withSharedDefinitions(
  name: string,
  ownSdl: string,
  sharedSdl: string,
  files = { own: `schema/${name}.graphql`, shared: 'schema/shared.graphql' },
): string {
  const own = parseSdl(ownSdl, files.own);
  const shared = parseSdl(sharedSdl, files.shared);
  const sharedByName = new Map<string, DefinitionNode>();
  for (const def of shared.definitions) if ('name' in def && def.name) sharedByName.set(def.name.value, def);
  const defined = new Set<string>();
  for (const def of own.definitions) {
    if ('name' in def && def.name && def.kind !== Kind.OBJECT_TYPE_EXTENSION) defined.add(def.name.value);
  }
  const redefined = [...defined].filter((n) => sharedByName.has(n));
  if (redefined.length > 0) {
    throw new SdlError(`schema/${name}.graphql defines ${redefined.join(', ')}, which schema/shared.graphql owns: use it without redefining it`);
  }
  const needed = new Set<string>(['contact']);
  const collect = (doc: DocumentNode) =>
    visit(doc, {
      NamedType: (node) => void needed.add(node.name.value),
      Directive: (node) => void needed.add(node.name.value),
    });
  collect(own);
  // Shared definitions may reference each other (none do today); one pass over the included ones covers that.
  const included = [...sharedByName.entries()].filter(([n]) => needed.has(n) && !defined.has(n)).map(([, def]) => def);
  for (const def of included) collect({ kind: Kind.DOCUMENT, definitions: [def] });
  const all = [...sharedByName.entries()].filter(([n]) => needed.has(n) && !defined.has(n)).map(([, def]) => def);
  if (all.length === 0) return ownSdl;
  return `${ownSdl.trimEnd()}\n\n# ---- from schema/shared.graphql ----\n\n${all.map((d) => print(d)).join('\n\n')}\n`;
}

/** The routing URL baked into the committed supergraph: the docker-compose service name. */
export function defaultRoutingUrl(name: SubgraphName): string {
  return `http://${name}:${subgraphPort(name)}/graphql`;
}
