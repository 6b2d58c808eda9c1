import { randomUUID } from 'node:crypto';
import type { Server, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { NextFunction, Request, Response } from 'express';
import { graphqlErrorBody, isDatabaseUnavailable, problem } from './errors';
import { JsonBodyError } from './json-body';
import { errorSummary, type Logger } from './logger';

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

/** Health and readiness probes: every few seconds from every orchestrator and gateway, so logged at debug. */
const probePaths = new Set(['/healthz', '/readyz']);

/** One JSON line per request (probes at debug); never headers or bodies, so no credential can reach the log. */
export function accessLogMiddleware(logger: Logger) {
  return (req: Request, res: Response, next: NextFunction): void => {
    const started = process.hrtime.bigint();
    const probe = probePaths.has(req.path);
    res.on('finish', () => {
      // Who, for the gateway: the verified credential's id and tenant (never the secret), and the client address.
      const credential = res.locals['credential'] as { subject?: string; kind?: string; tenantId?: string } | undefined;
      logger[probe ? 'debug' : 'info'](
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

/** How long a client is asked to wait (Retry-After) when the database is unavailable: the gateway's SUBGRAPH_UNAVAILABLE says the same. */
export const DATABASE_RETRY_AFTER_SECONDS = 5;

/**
 * The last handler of every Express app (gateway, subgraphs, the auth REST routes): an error that reached Express
 * becomes a JSON answer — problem+json (RFC 9457) on REST routes, a GraphQL error body under /graphql — and at most
 * one JSON log line, never Express's default handler, which prints the stack as plain text. Body-parser failures are
 * the client's (4xx, not logged); a database that cannot be reached is 503 with Retry-After, logged at warn without
 * a stack; anything else is 500, logged at error with its stack inside the JSON line.
 */
export function jsonErrorHandler(logger: Logger) {
  return (err: Error & { status?: number; type?: string }, req: Request, res: Response, _next: NextFunction): void => {
    const requestId = res.locals['requestId'] as string | undefined;
    if (res.headersSent) {
      // Too late for an answer: end the connection as Express would, but say so in JSON.
      logger.error({ err, requestId }, 'error after the answer had started');
      req.socket.destroy();
      return;
    }
    const unavailable = isDatabaseUnavailable(err);
    const status = unavailable ? 503 : err.status && err.status >= 400 && err.status < 500 ? err.status : 500;
    if (unavailable) logger.warn({ error: errorSummary(err), requestId, path: req.path }, 'database unavailable');
    else if (status === 500) logger.error({ err, requestId, path: req.path }, 'unhandled error');
    const [code, message] = unavailable
      ? ['DATABASE_UNAVAILABLE', 'the database is unavailable; retry shortly']
      : err.type === 'entity.too.large'
        ? ['PAYLOAD_TOO_LARGE', 'request body too large']
        : err.type === 'entity.parse.failed'
          ? ['MALFORMED_JSON', err instanceof JsonBodyError ? err.message : 'malformed JSON body']
          : err.type === 'charset.unsupported'
            ? ['UNSUPPORTED_MEDIA_TYPE', err.message]
            : status === 500
              ? ['INTERNAL', 'Internal server error']
              : ['BAD_REQUEST', 'malformed request'];
    if (unavailable) res.setHeader('Retry-After', String(DATABASE_RETRY_AFTER_SECONDS));
    if (req.path.startsWith('/graphql')) {
      const body = unavailable
        ? { errors: [{ message, extensions: { code } }] }
        : graphqlErrorBody(status === 500 ? 'INTERNAL_SERVER_ERROR' : 'BAD_USER_INPUT', message, { reason: code });
      res.status(status).json(body);
    } else {
      res
        .status(status)
        .type('application/problem+json')
        .json(problem(status, code, message));
    }
  };
}

/**
 * Keep-alive: every Linepack server tells its clients an idle connection lasts 5 s (`Keep-Alive: timeout=5`, Node's
 * default) but closes one only after a minute. A client that reuses a connection shortly before the advertised
 * timeout (undici, so the gateway's subgraph calls and Node's fetch, stops 2 s before it; nginx after 4 s) has written
 * its request before this process reads it; when this process stalls in between (a loaded machine, a GC, a large
 * batch being parsed by the same event loop) past the point where it closes the connection, Node closes it in the
 * timers phase without reading the request. The client sees a reset, cannot tell whether a POST ran, and the gateway
 * answers SUBGRAPH_UNAVAILABLE for a subgraph that is merely busy (the CLI: "fetch failed"). Node adds
 * keepAliveTimeoutBuffer to the advertised timeout for exactly this (Node ≥ 24.6; 1 s by default): a minute covers any
 * stall short of the request's own deadline. Idle connections still close at once on shutdown (closeServer).
 */
export const KEEP_ALIVE_ADVERTISED_MS = 5_000;
export const KEEP_ALIVE_HELD_MS = 60_000;

export function listen(server: Server, port: number, host: string): Promise<number> {
  server.keepAliveTimeout = KEEP_ALIVE_ADVERTISED_MS;
  server.keepAliveTimeoutBuffer = KEEP_ALIVE_HELD_MS - KEEP_ALIVE_ADVERTISED_MS;
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

/** Closes a server that serves no client traffic (the metrics port): stop accepting, close idle connections, cut the rest after the grace. */
export function closeServer(server: Server): Promise<void> {
  return new Promise((resolve) => {
    server.close(() => resolve());
    server.closeIdleConnections();
    // Keep-alive clients (HTTP pools in SDKs) would otherwise hold the server open indefinitely.
    setTimeout(() => server.closeAllConnections(), SHUTDOWN_GRACE_MS).unref();
  });
}

/**
 * Shutting a public HTTP server down without resetting a request that reached it (README, Draining):
 *
 *   drain()  — from now on every response says `Connection: close` (also those in flight whose headers are not yet
 *              sent), so each client learns on its own connection, after its own answer, that this server is going;
 *              the service's /readyz answers 503 (`draining`). Requests are still served, on new connections too:
 *              load balancers take a while to stop sending.
 *   close()  — stops accepting, closes the connections that are idle (no request on them), lets every request in
 *              flight finish and its connection close after its answer, and cuts what is left after `graceMs`.
 *
 * Closing an idle keep-alive connection races a client that sends on it at that instant (HTTP/1.1 §9.3.1: a client
 * retries then); draining first leaves only connections that stayed idle for the whole drain period.
 */
export class HttpDrain {
  private draining = false;
  private closing: Promise<void> | null = null;
  /** Responses not yet finished (whose client may still read a Connection: close). */
  private readonly inFlight = new Set<ServerResponse>();

  constructor(private readonly server: Server) {
    // Before the application's listener: a response written synchronously must already know.
    server.prependListener('request', (_req, res: ServerResponse) => {
      if (this.draining) res.shouldKeepAlive = false;
      this.inFlight.add(res);
      res.once('close', () => this.inFlight.delete(res));
    });
  }

  get isDraining(): boolean {
    return this.draining;
  }

  drain(): void {
    if (this.draining) return;
    this.draining = true;
    for (const res of this.inFlight) if (!res.headersSent) res.shouldKeepAlive = false;
  }

  close(graceMs: number = SHUTDOWN_GRACE_MS): Promise<void> {
    this.drain();
    this.closing ??= new Promise<void>((resolve) => {
      if (!this.server.listening) return resolve();
      const cut = setTimeout(() => this.server.closeAllConnections(), graceMs);
      this.server.close(() => {
        clearTimeout(cut);
        resolve();
      });
      this.server.closeIdleConnections();
    });
    return this.closing;
  }
}
