import http from 'node:http';
import express, { type Express, type Request, type Response } from 'express';
import { ApolloServer, type ApolloServerPlugin, type BaseContext } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloServerPluginDrainHttpServer } from '@apollo/server/plugin/drainHttpServer';
import { ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { parse, type GraphQLFormattedError } from 'graphql';
import { readSubgraphSdl, type SubgraphName } from '../schema/subgraphs';
import { authorizeOperation, securityMapFromSdl } from './authz/security-directives';
import { graphqlErrorBody, requestError } from './errors';
import { accessLogMiddleware, closeServer, listen, requestIdMiddleware, requestIdOf, SHUTDOWN_GRACE_MS } from './http';
import { INTERNAL_IDENTITY_HEADER, InvalidInternalTokenError, verifyInternalToken, type Identity } from './identity';
import type { Logger } from './logger';

/** What every subgraph's context starts from: the verified caller of this request. */
export interface BaseSubgraphContext extends BaseContext {
  identity: Identity;
  requestId: string;
  logger: Logger;
}

export interface SubgraphServerOptions<C extends BaseSubgraphContext> {
  name: SubgraphName;
  port: number;
  host: string;
  internalTokenPublicKey: string;
  logger: Logger;
  resolvers: GraphQLResolverMap<C>;
  buildContext(base: BaseSubgraphContext): C | Promise<C>;
  /** Routes outside GraphQL (the auth subgraph's REST API); they do their own authentication. */
  routes?(app: Express): void;
  /** Readiness beyond "the process is up", e.g. a database ping. */
  ready?(): Promise<void>;
}

export interface RunningService {
  name: string;
  url: string;
  port: number;
  /** The subgraph's own MongoDB client, for diagnostics (command monitoring in tests). */
  mongo?: import('mongodb').MongoClient;
  stop(): Promise<void>;
}

export const GRAPHQL_BODY_LIMIT = '16mb';

/** Hides internals: unexpected errors reach clients as a bare INTERNAL_SERVER_ERROR, logged in full here. */
export function formatErrorFor(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.['code'];
    if (code === undefined || code === 'INTERNAL_SERVER_ERROR') {
      logger.error({ err: error }, 'unexpected error while executing an operation');
      return { message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' }, ...(formatted.path ? { path: formatted.path } : {}) };
    }
    const { stacktrace: _stacktrace, exception: _exception, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, extensions };
  };
}

/** Defence in depth: the subgraph enforces its own SDL's scopes on the identity the gateway vouched for. */
function scopePlugin(sdl: string): ApolloServerPlugin<BaseSubgraphContext> {
  const security = securityMapFromSdl(parse(sdl));
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ schema, document, operation, contextValue }) {
          if (!operation) return;
          const result = authorizeOperation(schema, document, operation, security, contextValue.identity.scopes);
          if (result.missingScopes.length > 0) {
            throw requestError('FORBIDDEN', `missing scope ${result.missingScopes.join(', ')} for ${result.deniedFields.join(', ')}`, {
              missingScopes: result.missingScopes,
            });
          }
        },
      };
    },
  };
}

export async function startSubgraphServer<C extends BaseSubgraphContext>(options: SubgraphServerOptions<C>): Promise<RunningService> {
  const { name, logger } = options;
  const sdl = readSubgraphSdl(name);
  const app = express();
  app.disable('x-powered-by');
  const httpServer = http.createServer(app);

  const apollo = new ApolloServer<BaseSubgraphContext>({
    schema: buildSubgraphSchema({ typeDefs: parse(sdl), resolvers: options.resolvers as GraphQLResolverMap<unknown> }),
    // Inline tracing only feeds Apollo Studio, which Linepack does not use.
    plugins: [ApolloServerPluginDrainHttpServer({ httpServer, stopGracePeriodMillis: SHUTDOWN_GRACE_MS }), ApolloServerPluginInlineTraceDisabled(), scopePlugin(sdl)],
    formatError: formatErrorFor(logger),
    includeStacktraceInErrorResponses: false,
    stopOnTerminationSignals: false,
  });
  await apollo.start();

  app.use(requestIdMiddleware);
  app.use(accessLogMiddleware(logger));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  app.get('/readyz', async (_req, res) => {
    try {
      await options.ready?.();
      res.json({ status: 'ready' });
    } catch (err) {
      logger.warn({ err }, 'not ready');
      res.status(503).json({ status: 'unavailable' });
    }
  });
  options.routes?.(app);

  app.use(
    '/graphql',
    (req: Request, res: Response, next) => {
      const token = req.header(INTERNAL_IDENTITY_HEADER);
      if (!token) {
        res.status(401).json(graphqlErrorBody('UNAUTHENTICATED', 'this subgraph is reached through the Linepack gateway only'));
        return;
      }
      try {
        res.locals['identity'] = verifyInternalToken(token, name, options.internalTokenPublicKey);
        next();
      } catch (err) {
        if (!(err instanceof InvalidInternalTokenError)) throw err;
        logger.warn({ requestId: requestIdOf(res), reason: err.message }, 'rejected internal identity token');
        res.status(401).json(graphqlErrorBody('UNAUTHENTICATED', 'invalid internal identity token'));
      }
    },
    express.json({ limit: GRAPHQL_BODY_LIMIT }),
    expressMiddleware(apollo, {
      context: async ({ res }) => {
        const identity = res.locals['identity'] as Identity;
        return options.buildContext({
          identity,
          requestId: identity.requestId,
          logger: logger.child({ requestId: identity.requestId }),
        });
      },
    }),
  );

  const port = await listen(httpServer, options.port, options.host);
  logger.info({ port }, `${name} subgraph listening`);
  return {
    name,
    port,
    url: `http://${options.host}:${port}/graphql`,
    async stop() {
      await apollo.stop();
      await closeServer(httpServer);
    },
  };
}
