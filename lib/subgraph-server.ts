import http from 'node:http';
import express, { type Express, type Request, type Response } from 'express';
import { ApolloServer, type BaseContext } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloServerPluginCacheControlDisabled, ApolloServerPluginInlineTraceDisabled } from '@apollo/server/plugin/disabled';
import { buildSubgraphSchema } from '@apollo/subgraph';
import type { GraphQLResolverMap } from './resolver-map';
import { parse } from 'graphql';
import type { Db } from 'mongodb';
import { scopeEnforcementPlugin } from './authz/scope-plugin';
import { formatErrorFor, graphqlErrorBody } from './errors';
import { accessLogMiddleware, HttpDrain, jsonErrorHandler, listen, requestIdMiddleware, requestIdOf } from './http';
import { deadlineFromHeader, DEADLINE_HEADER, INTERNAL_IDENTITY_HEADER, InternalTokenVerifier, InvalidInternalTokenError, type Identity } from './identity';
import { errorSummary, type Logger } from './logger';
import { graphqlMetricsMiddleware, operationNamePlugin, requestMetricsOf, watchMongoPool, type RequestMetrics } from './metrics';
import { connectMongo, databaseName } from './mongo';
import type { RunningService, SubgraphStartOptions } from './subgraph-types';
import { EXPENSIVE_LANE_HEADER, wantsExpensiveLane, type SubgraphLane } from './subgraph-lane';
import { traceCarrier } from './tracing';

export type { RunningService, SubgraphStartOptions } from './subgraph-types';

/** What every subgraph's context starts from: the verified caller of this request. */
export interface BaseSubgraphContext extends BaseContext {
  identity: Identity;
  requestId: string;
  logger: Logger;
  /** Where the operation's name is left for the request metrics. */
  metrics: RequestMetrics;
}

/** What makes one subgraph itself; where and how it runs comes from SubgraphStartOptions. */
export interface SubgraphSpec<C extends BaseSubgraphContext> {
  name: string;
  /** The subgraph's SDL as it is served (its own file plus the shared types it uses). */
  sdl: string;
  resolvers: GraphQLResolverMap<C>;
  buildContext(base: BaseSubgraphContext): C | Promise<C>;
  /** Routes outside GraphQL (the auth subgraph's REST API); they do their own authentication. */
  routes?(app: Express): void;
  /** Readiness beyond "the process is up", e.g. a database ping. */
  ready?(): Promise<void>;
  /** Where the requests the gateway's expensive-operation lane marks are executed (lib/subgraph-lane.ts); without it, on the loop. */
  lane?: SubgraphLane;
}

/** A subgraph that owns a database: `prepare` runs once on it (indexes, relays) and yields the rest of the spec. */
export interface DatabaseSubgraphSpec<C extends BaseSubgraphContext> {
  name: string;
  sdl: string;
  resolvers: GraphQLResolverMap<C>;
  prepare(db: Db): Promise<Omit<SubgraphSpec<C>, 'name' | 'sdl' | 'resolvers' | 'ready'> & { stop?(): Promise<void> }>;
}

export const GRAPHQL_BODY_LIMIT = '16mb';

/** A subgraph's Apollo Server: the one its loop serves with, and the one its expensive-request lane runs (lib/subgraph-lane.ts). */
export function createSubgraphApollo<C extends BaseSubgraphContext>(
  spec: Pick<SubgraphSpec<C>, 'sdl' | 'resolvers'>,
  logger: Logger,
): ApolloServer<BaseSubgraphContext> {
  const { sdl } = spec;
  return new ApolloServer<BaseSubgraphContext>({
    schema: buildSubgraphSchema({ typeDefs: parse(sdl), resolvers: spec.resolvers as GraphQLResolverMap<unknown> }),
    // Inline tracing only feeds Apollo Studio, which Linepack does not use. No schema declares cache hints, so the
    // cache-control plugin only wrapped every field's resolver to compute "no-store" (8 % of the measurements subgraph's
    // CPU answering 500 assets' pages of 240 readings, issue 31); the gateway says no-store to clients itself.
    plugins: [
      ApolloServerPluginInlineTraceDisabled(),
      ApolloServerPluginCacheControlDisabled(),
      scopeEnforcementPlugin<BaseSubgraphContext>(sdl, (context) => context.identity.scopes),
      operationNamePlugin<BaseSubgraphContext>((context) => context.metrics),
    ],
    formatError: formatErrorFor(logger),
    includeStacktraceInErrorResponses: false,
    stopOnTerminationSignals: false,
  });
}

export async function startSubgraphServer<C extends BaseSubgraphContext>(options: SubgraphStartOptions, spec: SubgraphSpec<C>): Promise<RunningService> {
  const { name } = spec;
  const { logger } = options;
  const app = express();
  app.disable('x-powered-by');
  const httpServer = http.createServer(app);
  const httpDrain = new HttpDrain(httpServer);

  const apollo = createSubgraphApollo(spec, logger);
  await apollo.start();

  app.use(requestIdMiddleware);
  app.use(accessLogMiddleware(logger));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  const identityTokens = new InternalTokenVerifier(name, options.internalTokenPublicKey);
  /**
   * Ready: serving (not draining) and, for a subgraph that owns one, its database answers a ping. A gateway's probe
   * presents its identity token: the answer then also says whether this subgraph trusts that gateway's key
   * (`identity`), so a gateway whose key is not trusted here reports itself unavailable (gateway/src/readiness.ts).
   */
  app.get('/readyz', async (req, res) => {
    const token = req.header(INTERNAL_IDENTITY_HEADER);
    let identity: { identity: 'accepted' } | { identity: 'refused'; reason: string } | Record<string, never> = {};
    if (token) {
      try {
        identityTokens.verify(token);
        identity = { identity: 'accepted' };
      } catch (err) {
        if (!(err instanceof InvalidInternalTokenError)) throw err;
        identity = { identity: 'refused', reason: err.message };
      }
    }
    if (httpDrain.isDraining) return void res.status(503).json({ status: 'draining', ...identity });
    try {
      await spec.ready?.();
      res.json({ status: 'ready', ...identity });
    } catch (err) {
      logger.warn({ error: errorSummary(err) }, 'not ready');
      res.status(503).json({ status: 'unavailable', ...identity });
    }
  });
  spec.routes?.(app);

  app.use(
    '/graphql',
    graphqlMetricsMiddleware(name),
    (req: Request, res: Response, next) => {
      const token = req.header(INTERNAL_IDENTITY_HEADER);
      if (!token) {
        res.status(401).json(graphqlErrorBody('UNAUTHENTICATED', 'this subgraph is reached through the Linepack gateway only'));
        return;
      }
      try {
        const vouched = identityTokens.verify(token);
        // A reused token leaves the request id and the deadline to headers (lib/identity.ts); a one-off token signs them.
        res.locals['identity'] = {
          ...vouched,
          requestId: vouched.requestId ?? requestIdOf(res),
          deadline: vouched.deadline ?? deadlineFromHeader(req.header(DEADLINE_HEADER)),
        } satisfies Identity;
        next();
      } catch (err) {
        if (!(err instanceof InvalidInternalTokenError)) throw err;
        logger.warn({ requestId: requestIdOf(res), reason: err.message }, 'rejected internal identity token');
        res.status(401).json(graphqlErrorBody('UNAUTHENTICATED', 'invalid internal identity token'));
      }
    },
    express.json({ limit: GRAPHQL_BODY_LIMIT }),
    (req: Request, res: Response, next) => {
      const { lane } = spec;
      if (!lane || !wantsExpensiveLane(req.header(EXPENSIVE_LANE_HEADER))) return next();
      const headers = (['content-type', 'accept'] as const).flatMap((name): [string, string][] => (req.headers[name] ? [[name, req.headers[name]]] : []));
      lane
        .execute({ body: req.body as unknown, headers, identity: res.locals['identity'] as Identity, traceCarrier: traceCarrier() })
        .then((answer) => {
          // The lane could not start: executed here, as every other request.
          if (!answer) return next();
          Object.assign(requestMetricsOf(res), answer.requestMetrics);
          for (const [name, value] of answer.headers) res.setHeader(name, value);
          // Written as it is: no ETag hashed over it (res.send would), nobody asks a subgraph for one.
          res.status(answer.status).setHeader('content-length', answer.body.byteLength);
          res.end(answer.body);
        })
        // A failure of the lane or of writing its answer goes to Express's error handling, never unhandled.
        .catch(next);
    },
    expressMiddleware(apollo, {
      context: async ({ res }) => {
        const identity = res.locals['identity'] as Identity;
        return spec.buildContext({
          identity,
          requestId: identity.requestId,
          logger: logger.child({ requestId: identity.requestId }),
          metrics: requestMetricsOf(res),
        });
      },
    }),
  );

  // Anything that reached Express (a REST route's rejected promise, a body-parser failure): JSON, never its default handler.
  app.use(jsonErrorHandler(logger));

  const port = await listen(httpServer, options.port, options.host);
  logger.info({ port, trustedIdentityKeys: identityTokens.keyIds }, `${name} subgraph listening`);
  return {
    name,
    port,
    url: `http://${options.host}:${port}/graphql`,
    drain: () => httpDrain.drain(),
    async stop() {
      // Every request answered first (HttpDrain), so Apollo stops with nothing in flight.
      await httpDrain.close();
      await apollo.stop();
    },
  };
}

/** Connects the subgraph's own database (`<prefix>_<name>`), prepares it, serves, and closes everything on stop. */
export async function startDatabaseSubgraph<C extends BaseSubgraphContext>(
  options: SubgraphStartOptions,
  spec: DatabaseSubgraphSpec<C>,
): Promise<RunningService> {
  if (!options.mongoUri) throw new Error(`the ${spec.name} subgraph needs MONGODB_URI`);
  let unwatchPool = () => undefined as void;
  const mongo = await connectMongo(options.mongoUri, { monitorCommands: options.monitorCommands ?? false }, (client) => {
    unwatchPool = watchMongoPool(client, spec.name);
  });
  let stopPrepared: (() => Promise<void>) | undefined;
  try {
    const db = mongo.db(databaseName(options.dbPrefix, spec.name));
    const { stop, ...rest } = await spec.prepare(db);
    stopPrepared = stop;
    const service = await startSubgraphServer<C>(options, {
      ...rest,
      name: spec.name,
      sdl: spec.sdl,
      resolvers: spec.resolvers,
      ready: async () => void (await db.command({ ping: 1 })),
    });
    return {
      ...service,
      mongo,
      drain: () => service.drain(),
      async stop() {
        await service.stop();
        await stopPrepared?.();
        await mongo.close();
        unwatchPool();
      },
    };
  } catch (err) {
    // e.g. the port is taken: whatever prepare started (an outbox relay) must not outlive the failure.
    await stopPrepared?.();
    await mongo.close();
    unwatchPool();
    throw err;
  }
}
