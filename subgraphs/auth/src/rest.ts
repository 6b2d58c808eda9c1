import { hash as argon2Hash, verify as argon2Verify } from '@node-rs/argon2';
import { clearBrowserSession, CSRF_COOKIE, csrfMatches, REFRESH_COOKIE, requestCookie, sendBrowserSession } from './browser-session';
import { tokenScopes } from '@linepack/lib/access-tokens';
import express, { type Express, type NextFunction, type Request, type Response, type Router } from 'express';
import { z } from 'zod';
import { problem } from '@linepack/lib/errors';
import { parseAuthorization, requestIdOf } from '@linepack/lib/http';
import { isJsonContentType, jsonBody } from '@linepack/lib/json-body';
import type { AuditActor, AuditContext } from './audit';
import { INTERNAL_IDENTITY_HEADER, verifyInternalToken, type Identity } from '@linepack/lib/identity';
import { auditContextOf } from './audit-context';
import type { UserDocument } from './documents';
import type { Logger } from '@linepack/lib/logger';
import { violationsOf } from '@linepack/lib/validation';
import { apiKeyPattern } from '@linepack/lib/api-keys';
import type { LoginThrottle } from './login-throttle';
import type { TokenKeys } from './signing-key-ring';
import { ARGON2_OPTIONS, AuthStoreError, tenantIdsOf, userTarget, type AuthStore } from './store';
import type { TokenService } from './tokens';
import type { Db } from 'mongodb';
import { oauthRoutes } from './oauth/routes';

function sendProblem(res: Response, status: number, code: string, title: string, detail?: string, extra: Record<string, unknown> = {}): void {
  res
    .status(status)
    .type('application/problem+json')
    .json(problem(status, code, title, detail, extra));
}

/** `session: "cookie"`: a browser session (browser-session.ts); otherwise both tokens in the body. */
const loginBody = z
  .object({ email: z.string().min(1).max(320), password: z.string().min(1).max(1024), session: z.enum(['cookie', 'body']).optional() })
  .strict();
/** Without refresh_token: the browser session's cookie, with its X-CSRF-Token. */
const refreshBody = z.object({ refresh_token: z.string().min(1).max(4096).optional() }).strict();
const resetBody = z.object({ reset_token: z.string().min(1).max(200), new_password: z.string().min(1).max(1024) }).strict();

/** Parses a JSON body against a schema, answering 400/415 problems itself; null means "answered". */
function body<S extends z.ZodType>(req: Request, res: Response, schema: S): z.output<S> | null {
  // The gateway's test of "is this JSON" (lib/json-body.ts), so both read a body alike.
  if (!isJsonContentType(req.header('content-type'))) {
    sendProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported media type', 'send the body as Content-Type: application/json');
    return null;
  }
  const parsed = schema.safeParse(req.body);
  if (!parsed.success) {
    const violations = violationsOf(parsed.error, '');
    sendProblem(res, 400, 'BAD_REQUEST', 'Invalid request body', violations.map((v) => `${v.field || 'body'}: ${v.message}`).join('; '), { violations });
    return null;
  }
  return parsed.data;
}

const deniedBody = z
  .object({
    operationName: z.string().max(200).nullable(),
    missingScopes: z.array(z.string().max(100)).max(20),
    deniedFields: z.array(z.string().max(200)).max(50),
  })
  .strict();
const keyUseBody = z.object({ uses: z.array(z.object({ id: z.string().max(100), at: z.string().datetime() }).strict()).max(10_000) }).strict();

/**
 * About this many keys and this many sessions (refresh families, not their tokens) per revocation-list answer; a
 * longer list is answered in pages (`next`), so a gateway learns every revocation however many there are.
 */
const REVOCATION_LIST_LIMIT = 10_000;

/** The identity a gateway vouches for with its identity token (audience auth), or null when there is none or it is not genuine. */
function vouchedIdentity(req: Request, internalTokenPublicKeys: string): Identity | null {
  const token = req.header(INTERNAL_IDENTITY_HEADER);
  if (!token) return null;
  try {
    // One or more keys (a rotation of the gateway's key): the token's kid picks one.
    const vouched = verifyInternalToken(token, 'auth', internalTokenPublicKeys);
    // The gateway's calls here are one-off tokens that sign the request id in.
    return { ...vouched, requestId: vouched.requestId ?? req.header('x-request-id') ?? 'unknown' };
  } catch {
    return null;
  }
}

/**
 * Internal routes, for gateways only: not under /auth, so the gateway's /auth proxy never forwards a client here,
 * and the caller must present a gateway's identity token.
 */
export function auditRoutes(app: Express, deps: { store: AuthStore; internalTokenPublicKey: string; logger: Logger }): void {
  const internal = <S extends z.ZodType>(path: string, schema: S, limit: string, handle: (input: z.output<S>, identity: Identity) => Promise<void>) =>
    app.post(path, ...jsonBody({ limit }), async (req, res) => {
      const identity = vouchedIdentity(req, deps.internalTokenPublicKey);
      if (!identity) return sendProblem(res, 401, 'UNAUTHENTICATED', 'Invalid internal identity token');
      const input = schema.safeParse(req.body);
      if (!input.success) return sendProblem(res, 400, 'BAD_REQUEST', 'Invalid request body');
      await handle(input.data, identity);
      res.status(204).end();
    });

  /** Gateways report when keys were used, in batches. */
  internal('/internal/keys/used', keyUseBody, '1mb', async ({ uses }) => {
    const now = Date.now();
    // A clock running ahead must not date a use in the future.
    await deps.store.recordKeyUse(uses.map((u) => ({ id: u.id, at: new Date(Math.min(Date.parse(u.at), now)) })));
  });

  /**
   * What was revoked since `since` (epoch ms): gateways pull it while their Redis revocation channel is away
   * (gateway/src/revocation-pull.ts), so a revoked key or a signed-out session is refused within a poll rather than
   * when a cache entry or the token expires. `now` is this service's clock, for the gateway's next `since`. When the
   * list was longer than one answer, `truncated` is true and `next` (epoch ms) is where the gateway asks again: the
   * answer is complete for everything revoked before it. Truncation is decided on what was cut (keys, or families),
   * never on a count that merely reached the limit.
   */
  app.get('/internal/revocations', async (req, res) => {
    const identity = vouchedIdentity(req, deps.internalTokenPublicKey);
    if (!identity) return sendProblem(res, 401, 'UNAUTHENTICATED', 'Invalid internal identity token');
    const since = Number(req.query['since']);
    if (!Number.isSafeInteger(since) || since < 0) return sendProblem(res, 400, 'BAD_REQUEST', 'since must be a time in epoch milliseconds');
    const now = Date.now();
    const revoked = await deps.store.revokedSince(new Date(since), REVOCATION_LIST_LIMIT);
    res.json({
      now,
      apiKeys: revoked.apiKeys,
      sessions: revoked.sessions,
      truncated: revoked.next !== null,
      next: revoked.next?.getTime() ?? null,
    });
  });

  /** Gateways report operations they refused for a missing scope, vouching for the caller. */
  internal('/internal/audit/access-denied', deniedBody, '16kb', async ({ operationName, missingScopes, deniedFields }, identity) => {
    await deps.store.audit.record(
      [identity.tenantId],
      'ACCESS_DENIED',
      await auditContextOf(identity, deps.store),
      { kind: 'OPERATION', id: operationName ?? '(anonymous operation)', label: `needs ${missingScopes.join(', ')}` },
      `refused: missing ${missingScopes.join(', ')} for ${deniedFields.join(', ')}`,
    );
  });
}

const anonymous: AuditActor = { kind: 'ANONYMOUS', id: null, label: null };
const userActor = (user: UserDocument): AuditActor => ({ kind: 'USER', id: user._id, label: user.email });
const context = (res: Response, actor: AuditActor): AuditContext => ({ actor, clientAddress: clientAddressOf(res), requestId: requestIdOf(res) });
const clientAddressOf = (res: Response) => res.locals['clientAddress'] as string;

export interface AuthRestDependencies {
  /** Verifies the gateway's identity token, which carries the client's address. */
  internalTokenPublicKey: string;
  store: AuthStore;
  tokens: TokenService;
  keys: TokenKeys;
  throttle: LoginThrottle;
  logger: Logger;
  /** Where the OAuth authorization server (oauth/) keeps clients, codes and grants; without it, it is not mounted. */
  db?: Db;
}

/** The auth REST API (README, REST routes), mounted under /auth and reached by clients through the gateway. */
export function authRoutes(app: Express, deps: AuthRestDependencies): void {
  const { store, tokens, keys, throttle, logger } = deps;
  const audit = store.audit;
  const router: Router = express.Router();
  // Spending the same argon2 work on unknown emails keeps their timing like a wrong password's.
  const dummyHash = argon2Hash('linepack-timing-equaliser', ARGON2_OPTIONS);
  const recordRefreshReuse = async (res: Response | null, userId: string) => {
    const owner = await store.findUser(userId);
    if (!owner) return;
    const ctx: AuditContext = res ? context(res, anonymous) : { actor: anonymous, clientAddress: null, requestId: null };
    await audit.record(
      tenantIdsOf(owner),
      'REFRESH_TOKEN_REUSED',
      ctx,
      userTarget(owner),
      'a spent refresh token was presented again: every token of that sign-in was revoked',
    );
  };
  // Mounted first: /auth/oauth/* is its own router, with form-encoded bodies at its token endpoint.
  const oauthGrants = deps.db
    ? oauthRoutes(app, { db: deps.db, store, tokens, keys, logger, onRefreshReuse: (userId) => recordRefreshReuse(null, userId) })
    : null;

  // The gateway's parser (lib/json-body.ts): its /auth proxy decides on these bodies with the same function.
  router.use(jsonBody({ limit: '16kb' }));
  // Whose request: the address the gateway vouches for in its signed identity token; without one (a call that
  // did not come through a gateway) the connection's own peer. X-Forwarded-For is never believed.
  router.use((req, res, next) => {
    res.locals['clientAddress'] = vouchedIdentity(req, deps.internalTokenPublicKey)?.clientAddress ?? req.socket.remoteAddress ?? 'unknown';
    next();
  });

  router.post('/login', async (req, res) => {
    const input = body(req, res, loginBody);
    if (!input) return;
    const ip = clientAddressOf(res);
    const blocked = await throttle.admit(ip, input.email);
    if (blocked !== null) {
      const known = await store.users.findOne({ email: input.email.trim().toLowerCase() });
      if (known)
        await audit.record(
          tenantIdsOf(known),
          'LOGIN_THROTTLED',
          context(res, anonymous),
          userTarget(known),
          `sign-in refused for ${blocked} s: too many failed attempts`,
        );
      res.setHeader('Retry-After', String(blocked));
      sendProblem(res, 429, 'TOO_MANY_ATTEMPTS', 'Too many failed logins', `try again in ${blocked} s`);
      return;
    }
    const user = await store.users.findOne({ email: input.email.trim().toLowerCase() });
    const passwordOk = await argon2Verify(user?.passwordHash ?? (await dummyHash), input.password);
    if (!user || !passwordOk || user.memberships.length === 0) {
      // An unknown email is recorded for no tenant and without the address typed (it may hold a password).
      await audit.record(
        user ? tenantIdsOf(user) : [null],
        'LOGIN_FAILED',
        context(res, anonymous),
        user ? userTarget(user) : null,
        user ? 'wrong password' : 'unknown email',
      );
      sendProblem(res, 401, 'INVALID_CREDENTIALS', 'Invalid email or password');
      return;
    }
    await throttle.recordSuccess(ip, input.email);
    await audit.record(tenantIdsOf(user), 'LOGIN_SUCCEEDED', context(res, userActor(user)), userTarget(user), `${user.email} signed in`);
    const tenants = await store.tenants.find({ _id: { $in: user.memberships.map((m) => m.tenantId) } }).toArray();
    logger.info({ userId: user._id }, 'login');
    const pair = await tokens.issue(user, tenants);
    if (input.session === 'cookie') return sendBrowserSession(res, pair, tokens.refreshTokenTtlSeconds);
    res.setHeader('Cache-Control', 'no-store');
    res.json(pair);
  });

  /** The refresh token of a refresh or logout: from the body, or from the browser session's cookie (CSRF-checked). */
  const presentedRefreshToken = (req: Request, res: Response, fromBody: string | undefined): { token: string; browser: boolean } | null => {
    if (fromBody) return { token: fromBody, browser: false };
    const cookie = requestCookie(req, REFRESH_COOKIE);
    if (cookie === 'ambiguous') {
      clearBrowserSession(res);
      sendProblem(res, 400, 'AMBIGUOUS_SESSION', 'More than one session cookie', 'sign in again');
      return null;
    }
    if (!cookie) {
      sendProblem(res, 401, 'INVALID_REFRESH_TOKEN', 'No session', 'send refresh_token, or sign in again');
      return null;
    }
    if (!csrfMatches(req, cookie)) {
      sendProblem(res, 403, 'CSRF_FAILED', 'Missing or wrong CSRF token', `send the ${CSRF_COOKIE} cookie's value as X-CSRF-Token`);
      return null;
    }
    return { token: cookie, browser: true };
  };

  router.post('/refresh', async (req, res) => {
    const input = body(req, res, refreshBody);
    if (!input) return;
    const presented = presentedRefreshToken(req, res, input.refresh_token);
    if (!presented) return;
    const outcome = await tokens.consume(presented.token);
    if (!outcome.ok) {
      if (presented.browser) clearBrowserSession(res);
      if (outcome.reason === 'reused') {
        logger.warn('refresh token reused: token family revoked');
        await recordRefreshReuse(res, outcome.userId);
      }
      sendProblem(res, 401, 'INVALID_REFRESH_TOKEN', 'Invalid refresh token', 'log in again');
      return;
    }
    // An OAuth client's refresh token refreshed here would come back with every tenant and the user's whole role:
    // it may only be refreshed at the token endpoint, within its grant. Presenting it here ends that grant.
    const user = (await oauthGrants?.isOAuthFamily(outcome.familyId)) ? null : await store.findUser(outcome.userId);
    if (!user || user.memberships.length === 0) {
      await tokens.revokeFamily(outcome.familyId);
      if (presented.browser) clearBrowserSession(res);
      sendProblem(res, 401, 'INVALID_REFRESH_TOKEN', 'Invalid refresh token', 'log in again');
      return;
    }
    const tenants = await store.tenants.find({ _id: { $in: user.memberships.map((m) => m.tenantId) } }).toArray();
    await audit.record(tenantIdsOf(user), 'TOKEN_REFRESHED', context(res, userActor(user)), userTarget(user), 'tokens refreshed');
    if (outcome.graceRetry) logger.warn({ userId: user._id }, 'refresh token presented again within the rotation grace: same successor issued');
    const pair = await tokens.issue(user, tenants, outcome.familyId, outcome.successorId);
    if (presented.browser) return sendBrowserSession(res, pair, tokens.refreshTokenTtlSeconds);
    res.setHeader('Cache-Control', 'no-store');
    res.json(pair);
  });

  router.post('/logout', async (req, res) => {
    const input = body(req, res, refreshBody);
    if (!input) return;
    const presented = presentedRefreshToken(req, res, input.refresh_token);
    if (!presented) return;
    if (presented.browser) clearBrowserSession(res);
    const userId = await tokens.revoke(presented.token);
    const user = userId ? await store.findUser(userId) : null;
    if (user) await audit.record(tenantIdsOf(user), 'LOGGED_OUT', context(res, userActor(user)), userTarget(user), `${user.email} signed out`);
    res.status(204).end();
  });

  /** Sets a new password with an admin-issued reset token (once, within 30 minutes); every session ends. */
  router.post('/password/reset', async (req, res) => {
    const input = body(req, res, resetBody);
    if (!input) return;
    try {
      const user = await store.resetPassword(input.reset_token, input.new_password, { clientAddress: clientAddressOf(res), requestId: requestIdOf(res) });
      if (!user) {
        sendProblem(res, 401, 'INVALID_RESET_TOKEN', 'Invalid reset token', 'the token is unknown, used or expired: ask an admin for a new one');
        return;
      }
    } catch (err) {
      if (err instanceof AuthStoreError) {
        sendProblem(res, 400, 'BAD_REQUEST', 'Password not accepted', `${err.field}: ${err.message}`, {
          violations: [{ field: err.field, message: err.message }],
        });
        return;
      }
      throw err;
    }
    res.status(204).end();
  });

  router.get('/.well-known/jwks.json', (_req, res) => {
    res.setHeader('Cache-Control', 'public, max-age=300');
    res.json(keys.jwks());
  });

  /**
   * RFC 7662-style introspection of any token this service issued: an API key (the gateway uses it to verify
   * keys; `sub` and `tier` are extra members it needs for identity and rate limiting) or a user's access token
   * (its scopes in the tenant X-Tenant-ID names, or in the user's first tenant, as the gateway picks it).
   */
  router.get('/introspect', async (req, res) => {
    const presented = parseAuthorization(req.header('authorization'));
    if (presented.kind !== 'bearer') {
      res.setHeader('WWW-Authenticate', 'Bearer');
      sendProblem(
        res,
        401,
        'UNAUTHENTICATED',
        presented.kind === 'absent' ? 'Missing credential' : 'Malformed Authorization header',
        'send the API key or access token as Authorization: Bearer <token> (one space, nothing else)',
      );
      return;
    }
    const credential = presented.token;
    const requested = req.header('x-tenant-id') || undefined;
    if (!apiKeyPattern.test(credential)) {
      // The gateway's rules exactly (lib/access-tokens.ts): lifetime limits, iat, signed-out sessions, the tenant.
      const verdict = await tokens.checkAccess(credential, requested, (familyId) => store.sessionRevoked(familyId));
      if (!verdict.ok) {
        res.json({ active: false });
        return;
      }
      const { claims, membership } = verdict;
      res.json({
        active: true,
        scopes: tokenScopes(claims, membership),
        tenant_id: membership.id,
        expires_at: new Date(claims.exp * 1000).toISOString(),
        sub: claims.sub,
        credential_kind: 'access_token',
        tier: membership.tier,
        role: membership.role,
        tenants: claims.tenants.map((t) => ({ tenant_id: t.id, role: t.role })),
      });
      return;
    }
    const key = await store.findApiKeyBySecret(credential);
    const now = new Date();
    // As the gateway: a key is bound to its tenant, and naming another with X-Tenant-ID is refused there (403).
    if (!key || key.revokedAt || (key.expiresAt && key.expiresAt <= now) || (requested !== undefined && requested !== key.tenantId)) {
      res.json({ active: false });
      return;
    }
    res.json({
      active: true,
      scopes: key.scopes,
      tenant_id: key.tenantId,
      expires_at: key.expiresAt?.toISOString() ?? null,
      sub: key._id,
      credential_kind: 'api_key',
      tier: key.tier.toLowerCase(),
      key_prefix: key.prefix,
      // What the gateway counts rate limits against: the same through rotations.
      lineage_id: key.lineageId ?? key._id,
    });
  });

  router.use((_req, res) => sendProblem(res, 404, 'NOT_FOUND', 'No such auth route'));

  // Body-parser failures: malformed JSON and oversized bodies are the client's problem, never a 500.
  // Anything else (a database outage: 503 with Retry-After) is the service's JSON error handler's (lib/http.ts).
  router.use((err: Error & { status?: number; type?: string }, _req: Request, res: Response, next: NextFunction) => {
    if (err.type === 'entity.too.large') return sendProblem(res, 413, 'PAYLOAD_TOO_LARGE', 'Request body too large', 'at most 16 KiB');
    if (err.type === 'entity.parse.failed') return sendProblem(res, 400, 'MALFORMED_JSON', 'Malformed JSON body', err.message);
    if (err.type === 'charset.unsupported') return sendProblem(res, 415, 'UNSUPPORTED_MEDIA_TYPE', 'Unsupported media type', err.message);
    next(err);
  });

  app.use('/auth', router);
}
