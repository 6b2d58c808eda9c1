import http from 'node:http';
import { readFileSync } from 'node:fs';
import express, { type NextFunction, type Request, type Response } from 'express';
import { ApolloServer, type ApolloServerPlugin } from '@apollo/server';
import { expressMiddleware } from '@as-integrations/express5';
import { ApolloArmor } from '@escape.tech/graphql-armor';
import { LRUCache } from 'lru-cache';
import { graphqlErrorBody } from '@linepack/lib/errors';
import { accessLogMiddleware, HttpDrain, jsonErrorHandler, listen, parseAuthorization, requestIdMiddleware, requestIdOf } from '@linepack/lib/http';
import { jsonBody } from '@linepack/lib/json-body';
import { checkAccessToken } from '@linepack/lib/access-tokens';
import { createLogger, type Logger } from '@linepack/lib/logger';
import { activeTracing } from '@linepack/lib/tracing';
import { formatErrorFor } from '@linepack/lib/errors';
import { mountAuthProxy } from './auth-proxy';
import { DEFAULT_CREDENTIAL_VERIFY_TIMEOUT_MS, type GatewayConfig } from './config';
import type { GatewayContext } from './context';
import { API_KEY_PREFIX, hashApiKeySecret } from '@linepack/lib/api-keys';
import { ApiKeyVerifier, CredentialServiceUnavailableError, type VerifiedCredential } from './credentials';
import { createRedisClient } from '@linepack/lib/redis';
import {
  authenticationFailures,
  graphqlMetricsMiddleware,
  operationNamePlugin,
  rateLimitDecisions,
  requestMetricsOf,
  watchRedis,
  type AuthenticationFailureReason,
} from '@linepack/lib/metrics';
import { RevocationListener } from '@linepack/lib/revocations';
import { RevocationPuller } from './revocation-pull';
import { credentialFingerprint, TieredRateLimiter } from './rate-limit';
import { scopeEnforcementPlugin } from '@linepack/lib/authz/scope-plugin';
import { UserTokenVerifier, userCredential } from './user-tokens';
import { subgraphRefusalPlugin } from './subgraph-data-source';
import { subgraphUnavailablePlugin } from './subgraph-unavailable';
import { TrustedDocumentList } from './trusted-documents';
import { subgraphNames } from '@linepack/schema/subgraphs';
import { IdentityTokenCache } from './identity-tokens';
import { knownRootTypeRule, literalLimitsRule, operationSelectionPlugin, requestShapeGuard } from './request-guards';
import { costPlugin, oneCallPerMutationRule } from './cost';
import { ExpensiveOperations } from './expensive-operations';
import { ExpensiveLane, withLaneAnswers } from './expensive-lane';
import { createSupergraphGateway } from './supergraph-gateway';
import { deadlineMiddleware, deadlinePlugin, type RequestDeadline } from './deadline';
import { scopeRequirementsDocument } from './schema-scopes';
import { recordAccessDenied } from './audit';
import { KeyUsageReporter } from './key-usage';
import { Readiness } from './readiness';
import { corsMiddleware, mountConsole } from './console';
import { responseCompression } from './compression';

export interface RunningGateway {
  url: string;
  origin: string;
  port: number;
  /** Draining: /readyz 503 and `Connection: close` on every answer, still serving (lib/http.ts HttpDrain). */
  drain(): void;
  /** Stops accepting, closes idle connections, answers what is in flight, then releases everything. */
  stop(): Promise<void>;
}

/** A client that ignores its Retry-After and sends a larger body has its connection closed instead of its body drained. */
const REFUSED_BODY_DRAIN_LIMIT = 64 * 1024;

/** Tokens in one query document (a syntax error beyond it, 400). */
const MAX_TOKENS = 20_000;

/** Enough for a 10,000-item measurement batch in variables; far below what would tie up a gateway. */
const GATEWAY_BODY_LIMIT = '8mb';

/** Per-request bounds on the document's shape (graphql-armor); what it costs is cost.ts's business. */
export const queryLimits: NonNullable<ConstructorParameters<typeof ApolloArmor>[0]> = {
  // The token limit is graphql-js's own (parseOptions below): armor's re-parses the query in a plugin, which
  // turned every syntax error into a 500.
  maxTokens: { enabled: false },
  maxDepth: { n: 12 },
  maxAliases: { n: 30 },
  maxDirectives: { n: 50 },
  // Cost is priced after the variables are known (cost.ts); armor's counts only literal `first` values.
  costLimit: { enabled: false },
  blockFieldSuggestion: { enabled: true },
};

/** 429 for a client address or a credential that failed authentication too often. */
function refuseForFailures(res: Response, seconds: number, what: string, reason: AuthenticationFailureReason): void {
  authenticationFailures.inc({ reason });
  res.setHeader('Retry-After', String(seconds));
  res.status(429).json(graphqlErrorBody('RATE_LIMITED', `${what}; retry in ${seconds} s`, { retryAfterSeconds: seconds }));
}

/**
 * After a mutation, its tenant's write counter moves (before the client hears the answer), so no read that arrives
 * afterwards joins one in flight from before it (subgraph-data-source.ts). Failed mutations count too: part of one
 * may have been applied.
 */
function writeEpochPlugin(rateLimiter: TieredRateLimiter): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, operation }) {
          if (operation?.operation === 'mutation' && contextValue.credential) await rateLimiter.recordWrite(contextValue.credential.tenantId);
        },
      };
    },
  };
}

export { withSecurityEnforcedByLinepack } from './supergraph-gateway';

export async function startGateway(config: GatewayConfig, logger: Logger = createLogger('gateway', config.logLevel)): Promise<RunningGateway> {
  const supergraphSdl = readFileSync(config.supergraphPath, 'utf8');
  const app = express();
  app.disable('x-powered-by');
  // GraphQL answers are POST responses no cache revalidates: an ETag was a SHA-1 of every body for nothing. (The
  // console's static files keep theirs: express.static sets its own.)
  app.set('etag', false);
  // Only a configured proxy may speak for the client's address (it feeds the per-IP login throttle).
  app.set('trust proxy', config.trustProxy);
  const httpServer = http.createServer(app);
  const httpDrain = new HttpDrain(httpServer);
  const apiKeys = new ApiKeyVerifier(
    config.authUrl,
    config.credentialCacheTtlSeconds,
    logger,
    config.credentialVerifyTimeoutMs ?? DEFAULT_CREDENTIAL_VERIFY_TIMEOUT_MS,
  );
  const keyUsage = new KeyUsageReporter(config.authUrl, config.internalTokenPrivateKey, logger);
  const userTokens = new UserTokenVerifier(`${config.authUrl}/auth/.well-known/jwks.json`, logger);
  // Rate limiting sits on every request's path: a slow Redis counts as a missing one after 250 ms.
  // Auto-pipelining: the commands of requests arriving together go out in one socket write (a write was a tenth of a
  // small request's CPU here); each request still waits for its own reply only.
  const redis = config.redisUrl ? createRedisClient(config.redisUrl, logger, { commandTimeoutMs: 250, autoPipelining: true }) : null;
  // Revoked keys and signed-out sessions are refused by every gateway as soon as the auth service says so.
  const revocations = config.redisUrl
    ? await RevocationListener.start(
        config.redisUrl,
        { apiKeyRevoked: (hash) => apiKeys.forget(hash), resynchronise: () => apiKeys.forgetAll() },
        config.maxAccessTokenAgeSeconds + 60,
        logger,
      )
    : null;
  // Without the Redis channel (Redis down, or no REDIS_URL), the gateway pulls the revocation list instead.
  const revocationList = new RevocationPuller(
    config.authUrl,
    config.internalTokenPrivateKey,
    () => revocations?.live ?? false,
    apiKeys,
    (config.maxAccessTokenAgeSeconds + 60) * 1000,
    logger,
  );
  await revocationList.pull();
  const sessionRevoked = (sessionId: string) => (revocations?.sessionRevoked(sessionId) ?? false) || revocationList.sessionRevoked(sessionId);
  const rateLimiter = new TieredRateLimiter(redis, config.rateLimitWindows, logger, config.inProcessLimitShares ?? 1);
  /** When each recently refused credential may send again (its Retry-After). */
  const refusedUntil = new LRUCache<string, number>({ max: 10_000 });

  /** What readiness probes besides the auth service: each subgraph as the gateway routes to it. */
  const subgraphTargets = new Map<string, string>();
  const identityTokens = new IdentityTokenCache(config.internalTokenPrivateKey);
  const gateway = createSupergraphGateway({
    supergraphSdl,
    subgraphUrls: config.subgraphUrls,
    identityTokens,
    deduplicateInflightQueries: config.deduplicateInflightQueries ?? true,
    onSubgraph: (name, url) => subgraphTargets.set(name, url),
  });
  // Expensive operations (cost.ts prices them, expensive-operations.ts admits them per tenant) execute on a thread of
  // their own, so merging a huge answer never holds the loop every other request is served on (expensive-lane.ts).
  const expensiveOperations = new ExpensiveOperations();
  const expensiveLane = new ExpensiveLane(
    {
      supergraphSdl,
      subgraphUrls: config.subgraphUrls,
      internalTokenPrivateKey: config.internalTokenPrivateKey,
      deduplicateInflightQueries: config.deduplicateInflightQueries ?? true,
      logLevel: config.logLevel,
      tracingServiceName: activeTracing()?.serviceName ?? null,
    },
    logger,
  );
  const trustedDocuments = new TrustedDocumentList({ enforce: config.trustedDocumentsOnly ?? false });
  // Rate limits count requests; these limits bound what one request may ask for.
  const armor = new ApolloArmor(queryLimits).protect();
  const apollo = new ApolloServer<GatewayContext>({
    gateway: expensiveLane.gateway(gateway, (context) => expensiveOperations.isAdmitted(context)),
    allowBatchedHttpRequests: false,
    // On in production too (Apollo turns it off when NODE_ENV=production): /graphql answers authenticated callers
    // only, and they need the schema — the MCP companion, explorers, client code generators.
    introspection: true,
    parseOptions: { maxTokens: MAX_TOKENS },
    validationRules: [...armor.validationRules, knownRootTypeRule, literalLimitsRule, oneCallPerMutationRule],
    plugins: [
      // First: with no operation resolved, no other plugin's didResolveOperation has anything to look at.
      operationSelectionPlugin<GatewayContext>(),
      ...armor.plugins,
      scopeEnforcementPlugin<GatewayContext>(
        supergraphSdl,
        (context) => context.credential.scopes,
        (context, denial) => void recordAccessDenied(config, context, denial),
      ),
      costPlugin(rateLimiter, expensiveOperations),
      writeEpochPlugin(rateLimiter),
      deadlinePlugin(),
      subgraphRefusalPlugin(),
      subgraphUnavailablePlugin(),
      trustedDocuments.enforcementPlugin<GatewayContext>(),
      operationNamePlugin<GatewayContext>((context) => context.metrics, {
        label: ({ document, operationName, source }) => trustedDocuments.labelOf(document, operationName, source),
        subgraphs: new Set(subgraphNames),
      }),
    ],
    formatError: formatErrorFor(logger),
    includeStacktraceInErrorResponses: false,
    stopOnTerminationSignals: false,
  });
  await apollo.start();

  app.use(requestIdMiddleware);
  app.use(accessLogMiddleware(logger));
  // Before authentication: a listed origin's preflight is answered here, never with a 401.
  app.use(corsMiddleware(config.corsOrigins));
  app.get('/healthz', (_req, res) => void res.json({ status: 'ok' }));
  // 503 while draining, when a dependency refuses this gateway's identity, or when the auth service or every subgraph is
  // down; a subgraph down or Redis away is only "degraded" (readiness.ts).
  const readiness = new Readiness(config.authUrl, subgraphTargets, identityTokens, rateLimiter);
  app.get('/readyz', async (_req, res) => {
    if (httpDrain.isDraining) return void res.status(503).json({ status: 'draining' });
    const report = await readiness.report();
    res.status(report.status === 'unavailable' ? 503 : 200).json(report);
  });
  mountAuthProxy(app, config.authUrl, logger, rateLimiter, config.internalTokenPrivateKey);

  /**
   * Who is calling: an API key (`lpk_…`, verified by introspection) or a user access token
   * (verified locally against the JWKS). X-Tenant-ID picks among a user's tenants; an API key is
   * bound to its one tenant.
   */
  const authenticate = async (req: Request, res: Response, next: NextFunction) => {
    // Strictly "Bearer <token>" (lib/http.ts), as the auth service reads it.
    const presented = parseAuthorization(req.header('authorization'));
    const token = presented.kind === 'bearer' ? presented.token : null;
    const requestId = requestIdOf(res);
    const requestedTenant = req.header('x-tenant-id') || undefined;
    const address = req.ip ?? 'unknown';
    // One hash of the credential: how API keys are looked up, and (a prefix) what failure counters call it.
    const tokenHash = token ? hashApiKeySecret(token) : null;
    const fingerprint = token && tokenHash ? credentialFingerprint(token, tokenHash) : null;
    const tooMany = (seconds: number, what: string, reason: AuthenticationFailureReason) => refuseForFailures(res, seconds, what, reason);
    // Counted per address and per credential; the address's budget only ever refuses failing requests.
    const refuse = async (message: string, reason: AuthenticationFailureReason) => {
      if (fingerprint && res.locals['credentialFailuresChecked'] === false) {
        const credentialBlocked = await rateLimiter.credentialFailureBlock(fingerprint);
        if (credentialBlocked !== null) return tooMany(credentialBlocked, 'this credential failed too often', 'credential_blocked');
      }
      const blocked = await rateLimiter.recordAuthFailure(address, fingerprint);
      if (blocked !== null) return tooMany(blocked, 'too many failed authentications from this address', 'address_blocked');
      authenticationFailures.inc({ reason });
      res.setHeader('WWW-Authenticate', 'Bearer realm="linepack"');
      res.status(401).json(graphqlErrorBody('UNAUTHENTICATED', message));
    };
    const forbid = (message: string) => {
      authenticationFailures.inc({ reason: 'tenant_not_allowed' });
      res.status(403).json(graphqlErrorBody('FORBIDDEN', message));
    };
    if (presented.kind === 'malformed') {
      return refuse('malformed Authorization header: send exactly "Bearer <API key or access token>" (one space, nothing else)', 'malformed_credential');
    }
    if (!token) return refuse('missing credential: send Authorization: Bearer <API key or access token>', 'missing_credential');
    const isApiKey = token.startsWith(API_KEY_PREFIX);
    // Abuse costs the abuser: a credential the gateway can only verify by asking the auth service (a key it has not
    // cached, a token naming a key it does not know) is refused before that lookup when it kept failing, or when its
    // address used up its failure budget — so guessing keys costs no introspection and no database read. A cached key
    // or a token verified locally skips this (its failures are checked in the rate limits' round trip below, or in
    // refuse() when it fails): behind a NAT, one guesser must not lock out the valid credentials beside it.
    const failuresChecked = isApiKey ? !apiKeys.answersLocally(tokenHash!) : !userTokens.answersLocally(token);
    if (failuresChecked) {
      const blocked = await rateLimiter.failureBlock(address, fingerprint);
      if (blocked?.by === 'credential') return tooMany(blocked.seconds, 'this credential failed too often', 'credential_blocked');
      if (blocked) return tooMany(blocked.seconds, 'too many failed authentications from this address', 'address_blocked');
    }
    res.locals['credentialFailuresChecked'] = failuresChecked;
    let credential: VerifiedCredential | null;
    try {
      if (isApiKey) {
        credential = await apiKeys.verify(token, requestId, tokenHash!);
        if (credential && requestedTenant && requestedTenant !== credential.tenantId) {
          return forbid('an API key is bound to its own tenant and cannot select another with X-Tenant-ID');
        }
      } else {
        // The rules /auth/introspect applies too (lib/access-tokens.ts).
        const verdict = await checkAccessToken(token, requestedTenant, {
          maxTokenAgeSeconds: config.maxAccessTokenAgeSeconds,
          keyFor: (kid) => userTokens.keyFor(kid),
          sessionRevoked,
        });
        if (!verdict.ok && verdict.reason === 'tenant_not_allowed') return forbid(verdict.message);
        if (!verdict.ok) return refuse(verdict.message, verdict.reason === 'session_revoked' ? 'session_revoked' : 'invalid_access_token');
        credential = userCredential(verdict.claims, verdict.membership);
      }
    } catch (err) {
      if (!(err instanceof CredentialServiceUnavailableError)) throw err;
      authenticationFailures.inc({ reason: 'verification_unavailable' });
      res.status(503).json(graphqlErrorBody('INTERNAL_SERVER_ERROR', 'credential verification is unavailable; try again shortly'));
      return;
    }
    if (!credential) return refuse('invalid, expired or revoked credential', 'invalid_api_key');
    if (credential.kind === 'api_key') keyUsage.used(credential.subject);
    res.locals['credential'] = credential;
    res.locals['fingerprint'] = fingerprint;
    next();
  };

  /** After authentication (the budget is per credential), before parsing: a refused request costs the subgraphs nothing. */
  const rateLimit = async (req: Request, res: Response, next: NextFunction) => {
    const credential = res.locals['credential'] as VerifiedCredential;
    const admission = await rateLimiter.admit(credential, res.locals['fingerprint'] as string, res.locals['credentialFailuresChecked'] !== true);
    if (admission.credentialBlockedSeconds !== null) {
      return refuseForFailures(res, admission.credentialBlockedSeconds, 'this credential failed too often', 'credential_blocked');
    }
    // Known from the admission, or read once when a subgraph query first needs it (subgraph-data-source.ts).
    let writeEpoch: Promise<string | undefined> | undefined = admission.writeEpoch !== undefined ? Promise.resolve(admission.writeEpoch) : undefined;
    res.locals['writeEpoch'] = () => (writeEpoch ??= rateLimiter.writeEpoch(credential.tenantId));
    const { decision } = admission;
    res.set(decision.headers);
    rateLimitDecisions.inc({ tier: credential.tier, decision: decision.allowed ? 'allowed' : 'limited' });
    if (decision.allowed) return next();
    const retryAfter = decision.headers['Retry-After'];
    // A refused request's body is never read, but on a kept-alive connection Node still receives and discards all
    // of it before the next request. A client that ignores its Retry-After and keeps sending large bodies gets its
    // connection closed instead: it costs that client a reconnect, not everyone else megabytes of reading.
    const now = Date.now();
    const ignoredRetryAfter = (refusedUntil.get(credential.rateLimitKey) ?? 0) > now;
    refusedUntil.set(credential.rateLimitKey, now + Number(retryAfter) * 1000);
    if (ignoredRetryAfter && Number(req.header('content-length') ?? 0) > REFUSED_BODY_DRAIN_LIMIT) res.set('Connection', 'close');
    res.status(429).json(
      graphqlErrorBody('RATE_LIMITED', `rate limit of the ${credential.tier} tier exceeded; retry in ${retryAfter} s`, {
        retryAfterSeconds: Number(retryAfter),
      }),
    );
  };

  // The web console and, for a browser opening /graphql, its explorer; before /graphql's authentication.
  mountConsole(app, config.consoleDir, config.consoleMapTiles ?? null);

  // Large API answers go out as Brotli or gzip when the client accepts it (gateway/src/compression.ts).
  app.use(['/graphql', '/schema'], responseCompression());
  const scopeRequirements = scopeRequirementsDocument(supergraphSdl);
  app.get('/schema/scopes', authenticate, rateLimit, (_req, res) => void res.json(scopeRequirements));

  app.use(
    '/graphql',
    graphqlMetricsMiddleware('gateway'),
    authenticate,
    rateLimit,
    deadlineMiddleware(config.requestTimeoutMs),
    // The auth service's parser too (lib/json-body.ts): UTF-8 JSON only, no byte order mark.
    ...jsonBody({ limit: GATEWAY_BODY_LIMIT }),
    trustedDocuments.middleware(),
    requestShapeGuard,
    expressMiddleware(apollo, {
      context: withLaneAnswers(async ({ req, res }) => {
        const credential = res.locals['credential'] as VerifiedCredential;
        const requestId = requestIdOf(res);
        return {
          credential,
          requestId,
          clientAddress: req.ip ?? 'unknown',
          logger: logger.child({ requestId, subject: credential.subject }),
          deadline: res.locals['deadline'] as RequestDeadline,
          writeEpoch: res.locals['writeEpoch'] as GatewayContext['writeEpoch'],
          metrics: requestMetricsOf(res),
        };
      }),
    }),
  );

  // Body-parser failures and anything unexpected: a clear status and one JSON log line, never a stack in the answer.
  app.use(jsonErrorHandler(logger));

  const port = await listen(httpServer, config.port, config.host);
  // Registered once serving: a gateway that failed to start leaves no collector behind.
  const unwatchRedis = redis ? watchRedis(redis, 'gateway') : () => undefined;
  const origin = `http://${config.host === '0.0.0.0' ? 'localhost' : config.host}:${port}`;
  logger.info({ port, identityKey: identityTokens.keyId }, 'gateway listening');
  return {
    url: `${origin}/graphql`,
    origin,
    port,
    drain: () => httpDrain.drain(),
    async stop() {
      // Every request answered first (HttpDrain), so Apollo stops with nothing in flight.
      await httpDrain.close();
      await apollo.stop();
      rateLimiter.close();
      unwatchRedis();
      revocations?.close();
      revocationList.stop();
      await keyUsage.stop();
    },
  };
}
