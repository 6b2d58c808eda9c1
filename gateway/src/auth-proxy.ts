import express, { type Express } from 'express';
import { problem } from '@linepack/lib/errors';
import { requestIdOf } from '@linepack/lib/http';
import type { Logger } from '@linepack/lib/logger';

const forwardedRequestHeaders = ['authorization', 'content-type', 'accept', 'user-agent', 'x-tenant-id'];
const forwardedResponseHeaders = ['content-type', 'cache-control', 'retry-after', 'www-authenticate'];

/**
 * Clients reach the auth service's REST routes through the one gateway URL. The gateway forwards
 * them as they are (these routes authenticate on their own) and adds the client address for the
 * per-IP login throttle.
 */
/** The path with escapes decoded; a malformed escape counts as suspicious (it is refused like "..") . */
function decodedPath(pathname: string): string {
  try {
    return decodeURIComponent(pathname);
  } catch {
    return '..';
  }
}

export function mountAuthProxy(app: Express, authUrl: string, logger: Logger): void {
  app.use('/auth', express.raw({ type: () => true, limit: '64kb' }), async (req, res) => {
    const headers: Record<string, string> = { 'x-request-id': requestIdOf(res), 'x-forwarded-for': req.ip ?? '' };
    for (const name of forwardedRequestHeaders) {
      const value = req.header(name);
      if (value) headers[name] = value;
    }
    // Normalise first: "/auth/../graphql" or "/auth/%2e%2e/" must not reach other routes of the auth service.
    const target = new URL(req.originalUrl, authUrl);
    if (!target.pathname.startsWith('/auth/') || decodedPath(target.pathname).includes('..')) {
      res
        .status(404)
        .type('application/problem+json')
        .json(problem(404, 'NOT_FOUND', 'No such auth route'));
      return;
    }
    const hasBody = !['GET', 'HEAD'].includes(req.method) && Buffer.isBuffer(req.body) && req.body.length > 0;
    try {
      const upstream = await fetch(target, {
        method: req.method,
        headers,
        ...(hasBody ? { body: req.body as Buffer } : {}),
        signal: AbortSignal.timeout(10_000),
      });
      res.status(upstream.status);
      for (const name of forwardedResponseHeaders) {
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
}
