import path from 'node:path';

/**
 * The subgraph registry: the one list that composition, codegen, the gateway's configuration, the development stack,
 * scale-out and every generated deployment file (`npm run registry-files`: docker-compose.yml, Prometheus, the chart's
 * values, CODEOWNERS) read. Adding a subgraph is one line here (its name and port) plus its own package
 * `subgraphs/<name>` (`@linepack/subgraph-<name>`), which holds everything that is its own: its SDL
 * (`schema.graphql`), its published baseline (`published.graphql`), its event payloads (`src/events.ts`), its chart
 * values (`chart-values.yaml`) and its code. `port` is where the subgraph listens in development and
 * docker-compose; the routing URL written into the supergraph is the docker-compose service address.
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
 * The platform's schema folder (shared.graphql, supergraph.graphql, the API schema's baseline in published/): this
 * package's folder when running from source. A bundled service (scripts/build-package.mjs) has no such folder: its
 * image sets LINEPACK_SCHEMA_DIR and lays the files out the same way (Dockerfile).
 */
export const schemaDir = process.env['LINEPACK_SCHEMA_DIR'] ?? __dirname;

export const supergraphPath = path.join(schemaDir, 'supergraph.graphql');
export const sharedSdlPath = path.join(schemaDir, 'shared.graphql');

/**
 * Where the files of one layout are. A layout is a schema folder and, beside it, `subgraphs/<name>/` for each
 * subgraph: the repository, an image, or a copy a test changes (every function takes the schema folder).
 */
export const subgraphDir = (name: string, dir: string = schemaDir): string => path.join(dir, '..', 'subgraphs', name);
/** The subgraph's own SDL, as its team writes it and reviewers read it. */
export const subgraphSdlPath = (name: string, dir: string = schemaDir): string => path.join(subgraphDir(name, dir), 'schema.graphql');
/** The subgraph's published baseline (`npm run schema:publish` writes it; schema:check diffs against it). */
export const publishedSubgraphSdlPath = (name: string, dir: string = schemaDir): string => path.join(subgraphDir(name, dir), 'published.graphql');
/** The client-facing API schema's published baseline: the platform's, as every subgraph contributes to it. */
export const publishedApiSchemaPath = (dir: string = schemaDir): string => path.join(dir, 'published', 'supergraph.graphql');

export function subgraphPort(name: SubgraphName): number {
  const entry = subgraphRegistry.find((s) => s.name === name);
  if (!entry) throw new Error(`unknown subgraph ${name}`);
  return entry.port;
}

/** The routing URL baked into the committed supergraph: the docker-compose service name. */
export function defaultRoutingUrl(name: SubgraphName): string {
  return `http://${name}:${subgraphPort(name)}/graphql`;
}
