import net from 'node:net';

/**
 * A TCP proxy in front of a server (MongoDB in the tests): it can hold the bytes of any message that carries
 * `holdWhen` (and what follows on that connection) until released — a request then waits for its database inside
 * the service — and it can cut: every connection closed and no new one accepted, as when the database goes away.
 * Only a holding connection waits; the driver's monitoring connections pass, so the server is not declared lost.
 */
export async function startTcpProxy(target: { host: string; port: number }, options: { holdWhen?: string } = {}) {
  const releases: (() => void)[] = [];
  const sockets = new Set<net.Socket>();
  let holding = 0;
  /** Once released, nothing is held any more (a request's second command may reach the proxy after the release). */
  let released = false;
  const arrivals: (() => void)[] = [];
  const server = net.createServer((client) => {
    const upstream = net.connect(target);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.once('close', () => sockets.delete(socket));
    }
    let queue: Buffer[] | null = null;
    client.on('data', (chunk: Buffer) => {
      if (queue === null && !released && options.holdWhen !== undefined && chunk.includes(options.holdWhen)) {
        queue = [];
        holding += 1;
        arrivals.splice(0).forEach((wake) => wake());
        releases.push(() => {
          for (const queued of queue ?? []) upstream.write(queued);
          queue = null;
        });
      }
      if (queue) queue.push(chunk);
      else upstream.write(chunk);
    });
    upstream.on('data', (chunk: Buffer) => client.write(chunk));
    client.on('close', () => upstream.destroy());
    upstream.on('close', () => client.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as net.AddressInfo).port;
  const close = () =>
    new Promise<void>((resolve) => {
      for (const socket of sockets) socket.destroy();
      if (!server.listening) return resolve();
      server.close(() => resolve());
    });
  return {
    port,
    /** Resolves once `count` messages in all have been held. */
    held: async (count: number) => {
      while (holding < count) await new Promise<void>((resolve) => arrivals.push(resolve));
    },
    release: () => {
      released = true;
      releases.splice(0).forEach((release) => release());
    },
    /** The server goes away: connections closed, new ones refused. */
    cut: close,
    close,
  };
}

/** A MongoDB URI for the test database reached through a proxy on `port` (one server, directly). */
export function mongoUriThrough(port: number): string {
  return `mongodb://127.0.0.1:${port}/?directConnection=true`;
}
