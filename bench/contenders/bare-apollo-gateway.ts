/**
 * Contender "bare @apollo/gateway" of `npm run bench:gateway`: the same libraries Linepack's gateway is built on
 * (@apollo/server 5, @apollo/gateway 2.14, Express 5 through @as-integrations/express5) with nothing of Linepack's
 * own — no authentication, no rate limit, no scope check, no cost pricing, no access log, no metrics. The one thing
 * it must do to be answered at all is what Linepack does for every subgraph request: mint an ES256 identity token
 * for that subgraph (lib/identity mintInternalToken, a fresh one per subgraph request, as Linepack mints them).
 * The identity is fixed (the benchmark's tenant with every read and write scope); the client's Authorization is
 * ignored.
 *
 * Environment: PORT, HOST (127.0.0.1), SUPERGRAPH_PATH (passed through withSecurityEnforcedByLinepack, so
 * @apollo/gateway accepts it), SUBGRAPH_URL_<NAME> for each subgraph, INTERNAL_TOKEN_PRIVATE_KEY,
 * BENCH_TENANT_ID, BENCH_SCOPES (comma-separated). The benchmark bundles it with esbuild like the Linepack gateway
 * and runs it with plain `node`.
 */
import http from 'node:http';
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import express from 'express';
import { ApolloServer } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloGateway, RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { INTERNAL_IDENTITY_HEADER } from '@linepack/lib/identity';
import { contenderTokens } from './contender-tokens';

interface BareContext {
  requestId?: string;
  /** The client's Authorization header (what identity tokens are cached by). */
  client?: string;
}

function required(name: string): string {
  const value = process.env[name];
  if (!value) {
    console.error(`bare-apollo-gateway: ${name} is required`);
    process.exit(2);
  }
  return value;
}

const port = Number(process.env['PORT'] ?? 4100);
const host = process.env['HOST'] ?? '127.0.0.1';
const tokens = contenderTokens(process.env, 'gateway-bench-bare');

class IdentityDataSource extends RemoteGraphQLDataSource<BareContext> {
  constructor(
    private readonly subgraph: string,
    url: string,
  ) {
    // Node's own fetch (undici), as Linepack's gateway uses undici: it honours the subgraph's `Keep-Alive: timeout=5`,
    // where @apollo/gateway's default fetcher kept idle sockets longer than the subgraphs do and sometimes sent a
    // request down one the subgraph had just closed ("socket hang up" in bench:gateway --short, a CI failure).
    super({ url, fetcher: fetch as unknown as RemoteGraphQLDataSource['fetcher'] });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<BareContext>): void {
    if (!('requestId' in context) || !context.requestId) return; // schema loading and health checks
    request.http?.headers.set(INTERNAL_IDENTITY_HEADER, tokens.tokenFor(context.client ?? '', this.subgraph));
    request.http?.headers.set('x-request-id', context.requestId);
  }
}

async function main(): Promise<void> {
  process.env['APOLLO_TELEMETRY_DISABLED'] ??= 'true';
  const gateway = new ApolloGateway({
    supergraphSdl: readFileSync(required('SUPERGRAPH_PATH'), 'utf8'),
    buildService: ({ name, url }) => {
      const target = process.env[`SUBGRAPH_URL_${name.toUpperCase()}`] ?? url;
      if (!target) throw new Error(`no URL for subgraph ${name}`);
      return new IdentityDataSource(name, target);
    },
  });
  const app = express();
  const httpServer = http.createServer(app);
  const apollo = new ApolloServer<BareContext>({ gateway });
  await apollo.start();
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.use(
    '/graphql',
    express.json({ limit: '8mb' }),
    expressMiddleware(apollo, {
      context: async ({ req }) => ({ requestId: randomUUID(), client: req.headers.authorization ?? '' }),
    }),
  );
  await new Promise<void>((resolve, reject) => {
    httpServer.once('error', reject);
    httpServer.listen(port, host, () => resolve());
  });
  const shutdown = () => void apollo.stop().finally(() => httpServer.close(() => process.exit(0)));
  process.once('SIGINT', shutdown);
  process.once('SIGTERM', shutdown);
}

main().catch((err: unknown) => {
  console.error('bare-apollo-gateway failed to start:', err);
  process.exit(1);
});
