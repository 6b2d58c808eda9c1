import net from 'node:net';

/**
 * A TCP port on 127.0.0.1 that was free a moment ago: binds port 0, reads the port the kernel chose, closes.
 * (Another process may take it before the caller binds it; fine for tests and local tooling.)
 */
export async function freePort(): Promise<number> {
  return new Promise<number>((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.once('error', reject);
    server.listen({ port: 0, host: '127.0.0.1', exclusive: true }, () => {
      const address = server.address();
      if (address === null || typeof address === 'string') {
        server.close();
        reject(new Error('freePort: could not read the bound port'));
        return;
      }
      const { port } = address;
      server.close((err) => (err ? reject(err) : resolve(port)));
    });
  });
}
