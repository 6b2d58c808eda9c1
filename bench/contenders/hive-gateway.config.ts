/**
 * Contender "Hive Gateway" of `npm run bench:gateway`: @graphql-hive/gateway's own CLI
 * (`hive-gateway supergraph <file> --fork 1 --port N --config-path <this file, bundled>`) on the same supergraph and
 * subgraphs, every other setting as shipped — its in-flight de-duplication of subgraph queries and its request-id
 * propagation (X-Request-ID to every subgraph) included.
 *
 * The only addition is what every gateway in front of these subgraphs must do: send each subgraph request an ES256
 * identity token for that subgraph (`propagateHeaders.fromClientToSubgraphs` runs once per subgraph request), minted
 * as BENCH_TOKEN_MODE says (contender-tokens.ts: per client credential by default, as Linepack reuses its tokens).
 *
 * Environment: INTERNAL_TOKEN_PRIVATE_KEY, BENCH_TENANT_ID, BENCH_SCOPES, BENCH_TOKEN_MODE. The benchmark bundles
 * this file with esbuild (it imports Linepack's TypeScript library) and passes the bundle with --config-path.
 */
import { INTERNAL_IDENTITY_HEADER } from '@linepack/lib/identity';
import { contenderTokens } from './contender-tokens';

const tokens = contenderTokens(process.env, 'gateway-bench-hive');

/**
 * The part of Hive Gateway's `GatewayCLISupergraphConfig` used here, written out: importing its types into the
 * repository's one TypeScript program brings graphql-yoga's and whatwg-node's global augmentations with them, which
 * change the types of `fetch` bodies and GraphQL error extensions everywhere else.
 */
interface HiveGatewayConfig {
  propagateHeaders: {
    fromClientToSubgraphs(payload: { request: { headers: { get(name: string): string | null } }; subgraphName: string }): Record<string, string>;
  };
}

export const gatewayConfig: HiveGatewayConfig = {
  propagateHeaders: {
    fromClientToSubgraphs({ request, subgraphName }) {
      return { [INTERNAL_IDENTITY_HEADER]: tokens.tokenFor(request.headers.get('authorization') ?? '', subgraphName) };
    },
  },
};
