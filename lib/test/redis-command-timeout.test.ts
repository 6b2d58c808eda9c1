import Redis from 'ioredis';
import { startRedisServer, type RedisServerProcess } from '../infra/redis-server';
import { createLogger } from '../logger';
import { createRedisClient, redisReady } from '../redis';

/**
 * The gateway counts rate limits in Redis and falls back to in-process counting when a command has no reply within
 * 250 ms. A busy machine stalls the gateway's own process for longer than that; the reply that arrived meanwhile must
 * count as a reply. Before lib/redis.ts timed commands itself, ioredis's timer fired first when the process woke, and
 * exact-count rate-limit tests failed under load (the gateway had quietly switched to counting in memory).
 */
let server: RedisServerProcess;
let client: Redis;

/** Blocks this process's event loop, as a busy machine, a GC pause or a long synchronous task does. */
function stall(ms: number): void {
  const until = Date.now() + ms;
  while (Date.now() < until);
}

beforeAll(async () => {
  // A server of its own: the test pauses it.
  server = await startRedisServer();
  client = createRedisClient(server.url, createLogger('test', 'silent'), { commandTimeoutMs: 250 });
  await redisReady(client);
});

afterAll(async () => {
  client?.disconnect();
  await server?.stop();
});

it('answers a command whose reply arrived while this process was stalled past the timeout', async () => {
  await client.set('stalled', 'here');
  const reply = client.get('stalled');
  stall(2_000);
  await expect(reply).resolves.toBe('here');
});

it('still fails a command Redis does not answer within the timeout', async () => {
  const admin = new Redis(server.url);
  try {
    // Redis holds every client's commands (its own UNPAUSE too) for 5 s: it is there, and slow. Waiting for it would
    // answer "here" then.
    await admin.call('CLIENT', 'PAUSE', '5000', 'ALL');
    await expect(client.get('stalled')).rejects.toThrow('Command timed out');
  } finally {
    admin.disconnect();
  }
});
