import { readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '../lib/repo-root';

/**
 * The subgraph registry: the single list of subgraphs that composition, codegen,
 * the gateway and the development launcher all read. Adding a subgraph starts here.
 * `ownsDatabase` says whether it needs MONGODB_URI. `defaultPort` is where the subgraph listens in development and docker-compose;
 * the routing URL written into the supergraph is the docker-compose service address.
 */
export const subgraphRegistry = [
  { name: 'auth', defaultPort: 4005, ownsDatabase: true },
  { name: 'assets', defaultPort: 4001, ownsDatabase: true },
  { name: 'measurements', defaultPort: 4002, ownsDatabase: true },
  { name: 'analytics', defaultPort: 4003, ownsDatabase: false },
  { name: 'compliance', defaultPort: 4004, ownsDatabase: false },
] as const;

export type SubgraphName = (typeof subgraphRegistry)[number]['name'];

export const subgraphNames: readonly SubgraphName[] = subgraphRegistry.map((s) => s.name);

/** Resolved from the repository root so it holds when running from a dist/ build too. */
export const schemaDir = path.join(repoRoot, 'schema');

export function subgraphSdlPath(name: SubgraphName): string {
  return path.join(schemaDir, `${name}.graphql`);
}

export function readSubgraphSdl(name: SubgraphName): string {
  return readFileSync(subgraphSdlPath(name), 'utf8');
}

export const supergraphPath = path.join(schemaDir, 'supergraph.graphql');

/** The routing URL baked into the committed supergraph: the docker-compose service name. */
export function defaultRoutingUrl(name: SubgraphName): string {
  const entry = subgraphRegistry.find((s) => s.name === name)!;
  return `http://${name}:${entry.defaultPort}/graphql`;
}
