import http from 'node:http';
import net from 'node:net';
import { closeServer, KEEP_ALIVE_ADVERTISED_MS, listen } from '../http';

/**
 * A loaded machine stalls a server's event loop for seconds. A client that reused a kept-alive connection just before
 * it stalled must still be answered: before lib/http.ts held idle connections past the advertised timeout, Node closed
 * the connection when the loop woke, without reading the request waiting on it (the gateway then reported a busy
 * subgraph as SUBGRAPH_UNAVAILABLE, and the CLI said "fetch failed").
 */
const request = 'POST /graphql HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}';

/** Blocks this process's event loop, as a busy machine, a GC pause or a large synchronous parse does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

it('answers a request written on a kept-alive connection while the server was stalled past the advertised timeout', async () => {
  const server = http.createServer((req, res) => {
    req.resume();
    req.on('end', () => res.end('answered'));
  });
  const port = await listen(server, 0, '127.0.0.1');
  const socket = net.connect(port, '127.0.0.1');
  let received = '';
  const responses = () => received.split('answered').length - 1;
  const closed = new Promise<void>((resolve) => socket.once('close', () => resolve()));
  socket.on('error', () => undefined);
  socket.on('data', (chunk: Buffer) => (received += chunk.toString()));
  const answered = (n: number) =>
    new Promise<boolean>((resolve) => {
      if (responses() >= n) return resolve(true);
      socket.on('data', () => responses() >= n && resolve(true));
      void closed.then(() => resolve(responses() >= n));
    });
  try {
    await new Promise<void>((resolve) => socket.once('connect', () => resolve()));
    socket.write(request);
    expect(await answered(1)).toBe(true);
    // Clients that follow the hint close the connection before 5 s of idleness; this one writes at once.
    expect(received).toContain(`Keep-Alive: timeout=${KEEP_ALIVE_ADVERTISED_MS / 1000}`);
    socket.write(request);
    // Longer than the advertised timeout plus Node's own 1 s of slack: the server wakes to a connection idle for 7 s.
    stall(KEEP_ALIVE_ADVERTISED_MS + 2_000);
    expect(await answered(2)).toBe(true);
  } finally {
    socket.destroy();
    await closeServer(server);
  }
});
