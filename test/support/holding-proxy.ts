import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A pass-through proxy in front of a subgraph that holds the requests whose body contains `holdWhen` (or that
 * `holdWhen` picks by path and body) until released: a gateway request that needs one stays in flight for as long as
 * the test wants. Everything else passes at once.
 */
export async function holdingProxy(target: string, holdWhen: string | ((request: { path: string; body: string }) => boolean)) {
  const held: (() => void)[] = [];
  let arrivals = 0;
  let abandoned = 0;
  const waiting: { count: number; resolve(): void }[] = [];
  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks);
      const forward = async () => {
        const headers = Object.fromEntries(
          Object.entries(req.headers).filter(([name, v]) => typeof v === 'string' && !['host', 'connection', 'content-length'].includes(name)),
        ) as Record<string, string>;
        try {
          const answer = await fetch(new URL(req.url ?? '/', target), { method: req.method, headers, body: body.length ? body : undefined });
          res
            .writeHead(answer.status, { 'content-type': answer.headers.get('content-type') ?? 'application/json' })
            .end(Buffer.from(await answer.arrayBuffer()));
        } catch (err) {
          res.writeHead(502).end((err as Error).message);
        }
      };
      const holds = typeof holdWhen === 'string' ? body.toString().includes(holdWhen) : holdWhen({ path: req.url ?? '/', body: body.toString() });
      if (!holds) return void forward();
      held.push(() => void forward());
      arrivals += 1;
      // The caller gave up on it (aborted, or its connection closed) while it was held.
      res.once('close', () => {
        if (!res.writableFinished) abandoned += 1;
      });
      for (const w of waiting.filter((w) => arrivals >= w.count)) w.resolve();
    });
  });
  const port = await new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));
  const arrived = (count: number) => (arrivals >= count ? Promise.resolve() : new Promise<void>((resolve) => waiting.push({ count, resolve })));
  return {
    url: `http://127.0.0.1:${port}/graphql`,
    /** Resolves once a held request has arrived. */
    firstArrival: arrived(1),
    /** Held requests that arrived so far, in all. */
    arrivals: () => arrivals,
    /** Held requests whose caller closed the connection before they were answered. */
    abandoned: () => abandoned,
    /** Resolves once `count` held requests have arrived in all. */
    arrived,
    release: () => held.splice(0).forEach((forward) => forward()),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}
