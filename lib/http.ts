import { randomUUID } from 'node:crypto';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import type { Logger } from './logger';

const clientRequestId = /^[A-Za-z0-9._:-]{1,128}$/;

/** Every response carries X-Request-ID: the client's own when it is sane, otherwise a new one. */
export function requestIdMiddleware(req: Request, res: Response, next: NextFunction): void {
  const incoming = req.header('x-request-id');
  const requestId = incoming && clientRequestId.test(incoming) ? incoming : randomUUID();
  res.locals['requestId'] = requestId;
  res.setHeader('X-Request-ID', requestId);
  next();
}

/**
 * `Authorization: Bearer <credential>` read strictly (RFC 6750 §2.1): the scheme (any case, as RFC 9110 allows),
 * exactly one space, and a b64token — letters, digits and `-._~+/`, then optional `=` padding. Nothing else: no
 * second space, no tab, no control character, nothing after the token. Every reader of the header (the gateway,
 * its /auth proxy, the auth service's introspection) uses this one function, so a header one of them accepts is
 * never read differently by another; a lenient reader beside a strict one is where smuggled credentials live.
 */
const BEARER = /^Bearer ([A-Za-z0-9\-._~+/]+=*)$/i;

export type PresentedAuthorization = { kind: 'bearer'; token: string } | { kind: 'absent' } | { kind: 'malformed' };

export function parseAuthorization(header: string | undefined): PresentedAuthorization {
  if (header === undefined || header === '') return { kind: 'absent' };
  const match = BEARER.exec(header);
  return match ? { kind: 'bearer', token: match[1]! } : { kind: 'malformed' };
}

/** The credential of a well-formed `Authorization: Bearer <credential>` (parseAuthorization), or null. */
export function bearerToken(req: Request): string | null {
  const presented = parseAuthorization(req.header('authorization'));
  return presented.kind === 'bearer' ? presented.token : null;
}

/** Every value the Cookie header carries for `name`, in order (a name can come more than once); undecodable ones are null. */
export function cookieValues(cookieHeader: string | undefined, name: string): (string | null)[] {
  const values: (string | null)[] = [];
  for (const part of (cookieHeader ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at < 0 || part.slice(0, at).trim() !== name) continue;
    try {
      values.push(decodeURIComponent(part.slice(at + 1).trim()));
    } catch {
      values.push(null);
    }
  }
  return values;
}

export function requestIdOf(res: Response): string {
  return String(res.locals['requestId']);
}

/** One JSON line per request; never headers or bodies, so no credential can reach the log. */
export function accessLogMiddleware(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    res.on('finish', () => {
      // Who, for the gateway: the verified credential's id and tenant (never the secret), and the client address.
      const credential = res.locals['credential'] as { subject?: string; kind?: string; tenantId?: string } | undefined;
      logger.info(
        {
          requestId: res.locals['requestId'],
          method: req.method,
          path: req.originalUrl.split('?')[0],
          status: res.statusCode,
          durationMs: Number(process.hrtime.bigint() - started) / 1e6,
          clientAddress: req.ip,
          ...(credential ? { credentialId: credential.subject, credentialKind: credential.kind, tenantId: credential.tenantId } : {}),
        },
        'request',
      );
    });
    next();
  };
}

export function listen(server: Server, port: number, host: string): Promise<number> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve((server.address() as AddressInfo).port);
    });
  });
}

/** In-flight requests get this long to finish on shutdown before their connections are cut (a batch of 10,000 measurements fits). */
export const SHUTDOWN_GRACE_MS = 10_000;

export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // Keep-alive clients (HTTP pools in SDKs) would otherwise hold the server open indefinitely.
    setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
  });
}
