import net from 'node:net';
import { freePorts } from '../infra/free-port';
import { redisNodes, RedisNodeExitedError, type RedisNodes } from '../testing/redis-node';

/**
 * The test Redis set-ups (cluster, sentinel) start their nodes on ports chosen a moment before. A CI run once lost a
 * whole suite file to one node that never answered: two ports chosen one after another can be the same, and another
 * process may take a chosen port first. Ports chosen together are distinct, and a node that cannot start says so at
 * once (the cluster then starts it on other ports) instead of being waited for 30 s.
 */
let nodes: RedisNodes;

beforeAll(async () => {
  nodes = await redisNodes('redis-nodes-test');
});
afterAll(async () => {
  await nodes?.stop();
});

test('ports chosen together are distinct and free', async () => {
  const ports = await freePorts(64);
  expect(new Set(ports).size).toBe(64);
  // Every one can be bound again: none is left open.
  const server = net.createServer();
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen({ port: ports[0], host: '127.0.0.1', exclusive: true }, resolve);
  });
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

test('a node whose port is taken is reported as stopped, not waited for', async () => {
  const [port] = await freePorts(1);
  const taken = net.createServer((socket) => socket.destroy());
  await new Promise<void>((resolve) => taken.listen({ port, host: '127.0.0.1' }, resolve));
  try {
    const attempt = nodes.start(port!, ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no']);
    await expect(attempt).rejects.toBeInstanceOf(RedisNodeExitedError);
    await expect(attempt).rejects.toThrow(`redis-server on port ${port} stopped before it answered`);
  } finally {
    await new Promise<void>((resolve) => taken.close(() => resolve()));
  }
});
