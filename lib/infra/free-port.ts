import net from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: binds port 0, reads the port the kernel chose, closes.
 * (Another process may take it before the caller binds it; fine for tests and local tooling.)
 */
export async function freePort(): Promise<number> {
  const [port] = await freePorts(1);
  return port!;
}

/**
 * `count` distinct TCP ports on 127.0.0.1 that were free a moment ago. All are bound before any is closed: ports taken
 * one after another (or by concurrent `freePort` calls) may repeat, since each is free again once closed, and two
 * servers told the same port fail to start.
 */
export async function freePorts(count: number): Promise<number[]> {
  const servers: net.Server[] = [];
  try {
    return await Promise.all(
      Array.from(
        { length: count },
        () =>
          new Promise<number>((resolve, reject) => {
            const server = net.createServer();
            servers.push(server);
            server.unref();
            server.once('error', reject);
            server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
              const address = server.address();
              if (address === null || typeof address === 'string') reject(new Error('freePorts: could not read a bound port'));
              else resolve(address.port);
            });
          }),
      ),
    );
  } finally {
    await Promise.all(servers.map((server) => new Promise<void>((resolve) => (server.listening ? server.close(() => resolve()) : resolve()))));
  }
}
