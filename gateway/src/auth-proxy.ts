import express, { type Express } from 'express';
import { problem } from '@linepack/lib/errors';
import { cookieValues, parseAuthorization, requestIdOf } from '@linepack/lib/http';
import { isJsonContentType, parseJsonBody } from '@linepack/lib/json-body';
import type { Logger } from '@linepack/lib/logger';
import { credentialFingerprint, type TieredRateLimiter } from './rate-limit';
import { identityHeaderForAuth } from './auth-internal';

// cookie and x-csrf-token: the web console's session (the refresh cookie is scoped to /auth, so only these routes see it).
const forwardedRequestHeaders = ['authorization', 'content-type', 'accept', 'user-agent', 'x-tenant-id', 'cookie', 'x-csrf-token'];
const forwardedResponseHeaders = ['content-type', 'cache-control', 'retry-after', 'www-authenticate'];

/**
 * Clients reach the auth service's REST routes through the one gateway URL. The gateway forwards
 * them as they are (these routes authenticate on their own) and adds the client address for the
 * per-IP login throttle. The routes that take a credential other than a password are throttled like
 * /graphql: a credential that keeps failing is refused before it reaches the auth service, and an
 * address over its failure budget gets 429 for its failing requests (never for a valid credential).
 */
const CREDENTIAL_ROUTES = new Set(['/auth/introspect', '/auth/refresh', '/auth/logout', '/auth/password/reset']);

/**
 * The throttled routes whose answer tells a valid credential from an invalid one (an oracle for guessing): from an
 * address over its failure budget they are refused before the auth service looks anything up. Logout answers 204
 * whatever it is sent, so it tells nothing and is not refused for its address: a user behind a guesser's NAT can
 * still sign out.
 */
const ORACLE_ROUTES = new Set(['/auth/introspect', '/auth/refresh', '/auth/password/reset']);

type JsonObject = Record<string, unknown>;

/** The credential a throttled route is asked about: the bearer token, the refresh or reset token in the body, or the browser's refresh cookie. */
function presentedCredential(pathname: string, authorization: string | undefined, body: JsonObject | null, cookies: string | undefined): string | null {
  if (pathname === '/auth/introspect') {
    // The parser the auth service reads the header with: what is throttled here is what it would look up.
    const presented = parseAuthorization(authorization);
    return presented.kind === 'bearer' ? presented.token : null;
  }
  const refreshCookie = cookieValues(cookies, 'lp_refresh')[0] ?? null;
  const token = body?.['refresh_token'] ?? body?.['reset_token'];
  return typeof token === 'string' ? token : refreshCookie;
}

/**
 * Whether a request acts on the web console's cookie session: a cookie-mode sign-in, or a refresh or logout that
 * names no refresh token in its body (so the cookie is the credential). `body` is what the auth service will read
 * (the same parser); null when it is not a JSON object, which the auth service refuses.
 */
function actsOnBrowserSession(pathname: string, body: JsonObject | null): boolean {
  if (!['/auth/login', '/auth/refresh', '/auth/logout'].includes(pathname) || !body) return false;
  return pathname === '/auth/login' ? body['session'] === 'cookie' : body['refresh_token'] === undefined;
}

/** Did the auth service turn the credential down? (Introspection answers 200 {"active": false} for that.) */
function failed(pathname: string, status: number, body: Buffer): boolean {
  if (status === 401) return true;
  if (pathname !== '/auth/introspect' || status !== 200) return false;
  try {
    return (JSON.parse(body.toString('utf8')) as { active?: unknown }).active === false;
  } catch {
    return false;
  }
}
/** The path with escapes decoded; a malformed escape counts as suspicious (it is refused like "..") . */
function decodedPath(pathname: string): string {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return '..';
  }
}

const tooMany = (res: import('express').Response, seconds: number, detail: string) =>
  res
    .status(429)
    .setHeader('Retry-After', String(seconds))
    .type('application/problem+json')
    .json(problem(429, 'RATE_LIMITED', 'Too many failed attempts', `${detail}; retry in ${seconds} s`));

export function mountAuthProxy(app: Express, authUrl: string, logger: Logger, rateLimiter: TieredRateLimiter, internalTokenPrivateKey: string): void {
  // RFC 8414 §3: the authorization server's metadata at the issuer's (this origin's) well-known URL; the auth service
  // serves it under /auth like its other routes. Only this one document, nothing else under /.well-known.
  app.get('/.well-known/oauth-authorization-server', async (_req, res) => {
    try {
      const upstream = await fetch(`${authUrl.replace(/\/$/, '')}/auth/oauth/metadata`, { signal: AbortSignal.timeout(10_000) });
      res.status(upstream.status);
      for (const name of ['content-type', 'cache-control']) {
        const value = upstream.headers.get(name);
        if (value) res.setHeader(name, value);
      }
      res.send(Buffer.from(await upstream.arrayBuffer()));
    } catch (err) {
      logger.error({ err: (err as Error).message, requestId: requestIdOf(res) }, 'auth service unreachable');
      res
        .status(502)
        .type('application/problem+json')
        .json(problem(502, 'AUTH_UNAVAILABLE', 'Auth service unavailable', 'try again shortly'));
    }
  });
  app.use('/auth', express.raw({ type: () => true, limit: '64kb' }), async (req, res) => {
    // The client's address travels signed (the identity token the gateway gives subgraphs), never as a bare
    // X-Forwarded-For: the auth service believes no address header that anyone on its network could send.
    const headers: Record<string, string> = {
      'x-request-id': requestIdOf(res),
      ...identityHeaderForAuth(internalTokenPrivateKey, { requestId: requestIdOf(res), clientAddress: req.ip ?? 'unknown' }),
    };
    for (const name of forwardedRequestHeaders) {
      const value = req.header(name);
      if (value) headers[name] = value;
    }
    // Only the path and query of what the client asked for, on the configured auth service: an absolute-form target
    // (`GET http://elsewhere/auth/login`) names a host, and it must never be the one fetched — that sent the client's
    // password and an identity token minted for the auth service to whatever host the client named. (Host is not
    // read at all: nothing here depends on what the client says it is talking to.)
    const asked = new URL(req.originalUrl, 'http://gateway.invalid');
    // Normalise first: "/auth/../graphql" or "/auth/%2e%2e/" must not reach other routes of the auth service.
    // Appended, not resolved: a path that begins with "//" stays a path on the auth service.
    const target = new URL(`${authUrl.replace(/\/$/, '')}${asked.pathname}${asked.search}`);
    if (!target.pathname.startsWith('/auth/') || decodedPath(target.pathname).includes('..')) {
      res
        .status(404)
        .type('application/problem+json')
        .json(problem(404, 'NOT_FOUND', 'No such auth route'));
      return;
    }
    const hasBody = !['GET', 'HEAD'].includes(req.method) && Buffer.isBuffer(req.body) && req.body.length > 0;
    // Decisions below read the body exactly as the auth service will: with its parser (lib/json-body.ts). A body it
    // would refuse (a byte order mark, UTF-16, malformed) is refused here with the same answer, never forwarded.
    let body: JsonObject | null = null;
    if (!['GET', 'HEAD'].includes(req.method) && isJsonContentType(req.header('content-type')) && Buffer.isBuffer(req.body)) {
      const verdict = parseJsonBody(req.body, req.header('content-type'));
      if (!verdict.ok) {
        const [code, title] = verdict.status === 415 ? ['UNSUPPORTED_MEDIA_TYPE', 'Unsupported media type'] : ['MALFORMED_JSON', 'Malformed JSON body'];
        res
          .status(verdict.status)
          .type('application/problem+json')
          .json(problem(verdict.status, code, title, verdict.message));
        return;
      }
      if (typeof verdict.value === 'object' && verdict.value !== null && !Array.isArray(verdict.value)) body = verdict.value as JsonObject;
    }
    // The cookie session belongs to the console, which is same-origin. A browser says where a request comes from
    // (Sec-Fetch-Site): from another site or origin, signing in to, refreshing or ending that session is refused —
    // login CSRF and session swapping included — whatever CORS allows. Non-browser clients send no such header.
    const fetchSite = req.header('sec-fetch-site');
    if (fetchSite && fetchSite !== 'same-origin' && fetchSite !== 'none' && actsOnBrowserSession(target.pathname, body)) {
      res
        .status(403)
        .type('application/problem+json')
        .json(problem(403, 'CROSS_ORIGIN_SESSION', 'The browser session is for the console only', "use it from the gateway's own origin"));
      return;
    }
    const throttled = CREDENTIAL_ROUTES.has(target.pathname);
    const credential = throttled ? presentedCredential(target.pathname, req.header('authorization'), body, req.header('cookie')) : null;
    const fingerprint = credential ? credentialFingerprint(credential) : null;
    // Refused before the auth service looks the credential up: guessing costs the guesser.
    if (ORACLE_ROUTES.has(target.pathname)) {
      const blocked = await rateLimiter.failureBlock(req.ip ?? 'unknown', fingerprint);
      if (blocked)
        return void tooMany(
          res,
          blocked.seconds,
          blocked.by === 'credential' ? 'this credential failed too often' : 'too many failed authentications from this address',
        );
    } else if (fingerprint) {
      const blocked = await rateLimiter.credentialFailureBlock(fingerprint);
      if (blocked !== null) return void tooMany(res, blocked, 'this credential failed too often');
    }
    try {
      const upstream = await fetch(target, {
        method: req.method,
        headers,
        ...(hasBody ? { body: req.body as Buffer } : {}),
        signal: AbortSignal.timeout(10_000),
      });
      const answer = Buffer.from(await upstream.arrayBuffer());
      if (throttled && failed(target.pathname, upstream.status, answer)) {
        const blocked = await rateLimiter.recordAuthFailure(req.ip ?? 'unknown', fingerprint);
        if (blocked !== null) return void tooMany(res, blocked, 'too many failed authentications from this address');
      }
      res.status(upstream.status);
      for (const name of forwardedResponseHeaders) {
        const value = upstream.headers.get(name);
        if (value) res.setHeader(name, value);
      }
      const cookies = upstream.headers.getSetCookie();
      if (cookies.length > 0) res.setHeader('Set-Cookie', cookies);
      res.send(answer);
    } catch (err) {
      logger.error({ err: (err as Error).message, requestId: requestIdOf(res) }, 'auth service unreachable');
      res
        .status(502)
        .type('application/problem+json')
        .json(problem(502, 'AUTH_UNAVAILABLE', 'Auth service unavailable', 'try again shortly'));
    }
  });
}
