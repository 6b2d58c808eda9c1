import type { MongoClient } from 'mongodb';
import { connectMongo } from '../mongo';

/**
 * patches/mongodb+6.22.0.patch: when the database goes away, a connection's socket is destroyed a moment before its
 * 'close' event runs. A command written in that moment (the driver's own monitor, woken by the failure, re-checking the
 * server on its kept connection) got `false` from socket.write and waited for a 'drain' that a destroyed socket never
 * emits: the monitor never finished its check, the server stayed Unknown and every operation of that client failed
 * server selection for good, with the database back and answering (test/infra/crash-durability.test.ts caught the auth
 * service so, 2 database restarts in about 700). With the patch the command fails as a network error and the monitor carries on.
 */

interface DriverConnection {
  socket: { destroy(): void; destroyed: boolean };
  command(ns: unknown, cmd: object, options: object): Promise<unknown>;
}
interface DriverServer {
  monitor: { connection: DriverConnection | null };
}

let client: MongoClient;

beforeAll(async () => {
  client = await connectMongo(process.env['MONGODB_URI']!);
});

afterAll(async () => {
  await client.close();
});

it('fails a command written on a socket destroyed before its close event, instead of waiting for ever', async () => {
  await client.db('admin').command({ ping: 1 });
  const servers = (client as unknown as { topology: { s: { servers: Map<string, DriverServer> } } }).topology.s.servers;
  const monitorConnection = [...servers.values()][0]!.monitor.connection;
  expect(monitorConnection).not.toBeNull();
  const { ns } = jest.requireActual<{ ns(namespace: string): unknown }>('mongodb/lib/utils');

  // Destroyed, its 'close' event not yet run: the moment the database's end of the connection went away.
  monitorConnection!.socket.destroy();
  expect(monitorConnection!.socket.destroyed).toBe(true);
  const hello = monitorConnection!.command(ns('admin.$cmd'), { hello: 1 }, { socketTimeoutMS: 1_000 });
  const outcome = await Promise.race([
    hello.then(
      () => 'answered',
      (err: Error) => `${err.name}: ${err.message}`,
    ),
    // Far beyond the command's own socket timeout: only a command that can never end is still pending here.
    new Promise<string>((resolve) => setTimeout(() => resolve('still waiting'), 15_000)),
  ]);
  expect(outcome).toMatch(/^MongoNetworkError: connection .* closed$/);

  // And the client goes on: its monitor checks the server again and operations select it.
  await expect(client.db('admin').command({ ping: 1 })).resolves.toMatchObject({ ok: 1 });
});
