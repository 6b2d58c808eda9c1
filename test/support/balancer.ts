import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A round-robin HTTP load balancer in front of replicas, standing in for a Kubernetes Service's endpoints in tests
 * that roll replicas (it is not part of Linepack). `route(...)` replaces the endpoints for new requests; what was
 * already forwarded to a removed replica goes on, and `settled(upstream)` resolves once none is in flight there —
 * the moment a rolling update may stop that replica. Each forwarded request opens its own connection to its replica
 * (no pooling), so a replica that closes its idle connections cannot break a request the balancer is about to send.
 * A request the balancer cannot deliver is answered 502 (the test counts it as failed).
 */
export interface Balancer {
  /** The balancer's base URL plus `path` (e.g. /graphql). */
  url: string;
  origin: string;
  route(...upstreams: string[]): void;
  settled(upstream: string): Promise<void>;
  close(): Promise<void>;
}

export async function startBalancer(path: string, ...initial: string[]): Promise<Balancer> {
  let upstreams = initial.map((u) => new URL(u).origin);
  let next = 0;
  const inFlight = new Map<string, number>();
  const waiters = new Map<string, (() => void)[]>();
  const done = (origin: string) => {
    const left = (inFlight.get(origin) ?? 1) - 1;
    inFlight.set(origin, left);
    if (left === 0) for (const wake of waiters.get(origin)?.splice(0) ?? []) wake();
  };

  const server = http.createServer((req, res) => {
    if (upstreams.length === 0) return void res.writeHead(503).end('no upstream');
    const origin = upstreams[next++ % upstreams.length]!;
    inFlight.set(origin, (inFlight.get(origin) ?? 0) + 1);
    let finished = false;
    const finish = () => {
      if (finished) return;
      finished = true;
      done(origin);
    };
    const target = new URL(req.url ?? '/', origin);
    const headers = { ...req.headers, host: target.host };
    delete headers.connection;
    const upstream = http.request(target, { method: req.method, headers, agent: false }, (answer) => {
      const answerHeaders = { ...answer.headers };
      delete answerHeaders.connection;
      res.writeHead(answer.statusCode ?? 502, answerHeaders);
      answer.pipe(res);
      answer.once('end', finish);
      answer.once('error', () => (finish(), res.destroy()));
    });
    upstream.once('error', (err) => {
      finish();
      if (!res.headersSent) res.writeHead(502, { 'content-type': 'text/plain' }).end(`balancer: ${err.message}`);
      else res.destroy();
    });
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    url: `${origin}${path}`,
    origin,
    route(...next) {
      upstreams = next.map((u) => new URL(u).origin);
    },
    settled(upstream) {
      const key = new URL(upstream).origin;
      if ((inFlight.get(key) ?? 0) === 0) return Promise.resolve();
      return new Promise((resolve) => waiters.set(key, [...(waiters.get(key) ?? []), resolve]));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
