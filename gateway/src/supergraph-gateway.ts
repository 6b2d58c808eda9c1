import { ApolloGateway } from '@apollo/gateway';
import type { SubgraphName } from '@linepack/schema/subgraphs';
import type { IdentityTokenCache } from './identity-tokens';
import { AuthenticatedSubgraphDataSource } from './subgraph-data-source';

/**
 * @apollo/gateway refuses a supergraph whose @link features are `for: SECURITY` (it cannot
 * enforce @requiresScopes / @authenticated itself). This gateway enforces them before execution
 * (lib/authz/scope-plugin.ts, reading the original SDL), so the query planner gets the same supergraph with
 * that purpose dropped from those links.
 */
export function withSecurityEnforcedByLinepack(supergraphSdl: string): string {
  return supergraphSdl.replace(/(@link\(url: "https:\/\/specs\.apollo\.dev\/(?:requiresScopes|authenticated)\/v[\d.]+"), for: SECURITY\)/g, '$1)');
}

export interface SupergraphGatewayOptions {
  supergraphSdl: string;
  /** Overrides of the routing URLs baked into the supergraph. */
  subgraphUrls: Partial<Record<SubgraphName, string>>;
  identityTokens: IdentityTokenCache;
  deduplicateInflightQueries: boolean;
  /** The expensive-operation lane's gateway: its subgraph requests ask the subgraphs' expensive-request lanes (lib/subgraph-lane.ts). */
  expensiveLane?: boolean;
  /** Told each subgraph's name and URL as the gateway routes to it (readiness asks them). */
  onSubgraph?: (name: string, url: string) => void;
}

/**
 * The query planner and executor over the committed supergraph, calling each subgraph through an
 * AuthenticatedSubgraphDataSource. One per gateway, and one in its expensive-operation lane (expensive-lane.ts): both
 * plan and call the subgraphs the same way.
 */
export function createSupergraphGateway(options: SupergraphGatewayOptions): ApolloGateway {
  // @apollo/gateway otherwise probes cloud metadata endpoints and exports usage metrics to Apollo;
  // Linepack phones nowhere. Read by the library at construction; an explicit setting wins.
  process.env['APOLLO_TELEMETRY_DISABLED'] ??= 'true';
  return new ApolloGateway({
    supergraphSdl: withSecurityEnforcedByLinepack(options.supergraphSdl),
    buildService: ({ name, url }) => {
      const target = options.subgraphUrls[name as SubgraphName] ?? url;
      if (!target) throw new Error(`no URL for subgraph ${name}`);
      options.onSubgraph?.(name, target);
      return new AuthenticatedSubgraphDataSource(name, target, options.identityTokens, options.deduplicateInflightQueries, options.expensiveLane ?? false);
    },
  });
}
