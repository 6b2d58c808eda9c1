import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { Db, MongoClient } from 'mongodb';
import { StreamConsumer, type DomainEvent } from '../events/consumer';
import { streamRegistry, tenantStream } from '../events/outbox';
import { createLogger } from '../logger';
import { connectMongo } from '../mongo';
import { createRedisClient, redisReady } from '../redis';

/**
 * StreamConsumerOptions.backlogBatchSize: a tenant's backlog is handled in larger batches only while handling slots are
 * to spare, so the fairness bound between tenants (one batchSize of each busy tenant) holds whenever slots are contended.
 */
const logger = createLogger('test', 'silent');
let redis: Redis;
let mongo: MongoClient;
let db: Db;
let stream: string;

beforeAll(async () => {
  redis = createRedisClient(process.env['REDIS_URL']!, logger);
  await redisReady(redis, 10_000);
  mongo = await connectMongo(process.env['MONGODB_URI']!);
});
afterAll(async () => {
  redis.disconnect();
  await mongo.close();
});
beforeEach(() => {
  stream = `test:events:${randomUUID()}`;
  db = mongo.db(`t${randomUUID().slice(0, 8)}_backlog`);
});

async function publishTenant(tenantId: string, n: number): Promise<void> {
  const target = tenantStream(stream, tenantId);
  for (let from = 0; from < n; from += 1_000) {
    const pipeline = redis.pipeline().sadd(streamRegistry(stream), target);
    for (let i = from; i < Math.min(n, from + 1_000); i++) {
      pipeline.xadd(
        target,
        '*',
        'id',
        randomUUID(),
        'type',
        'thing.happened',
        'tenantId',
        tenantId,
        'occurredAt',
        new Date().toISOString(),
        'data',
        JSON.stringify({ i }),
      );
    }
    await pipeline.exec();
  }
}

const pendingOf = async (s: string) => ((await redis.xpending(s, 'g')) as [number])[0];

/** Drains with pollOnce and returns the size of every batch the handler saw, and the events in handling order. */
async function drain(options: { concurrency?: number }): Promise<{ batches: number[]; order: DomainEvent[] }> {
  const batches: number[] = [];
  const order: DomainEvent[] = [];
  const consumer = new StreamConsumer({
    redis,
    db,
    logger,
    streams: [stream],
    group: 'g',
    batchSize: 100,
    backlogBatchSize: 1_000,
    ...options,
    handle: async (events) => {
      batches.push(events.length);
      order.push(...events);
    },
  });
  await consumer.ensureGroups();
  while ((await consumer.pollOnce(10)) > 0);
  return { batches, order };
}

it('takes one tenant’s backlog 1,000 at a time while slots are free, each event once and in stream order', async () => {
  await publishTenant('a', 2_500);
  const { batches, order } = await drain({});
  expect(batches).toEqual([1_000, 1_000, 500]);
  expect(order.map((e) => (e.data as { i: number }).i)).toEqual(Array.from({ length: 2_500 }, (_, i) => i));
  expect(new Set(order.map((e) => e.id)).size).toBe(2_500);
  expect(await pendingOf(tenantStream(stream, 'a'))).toBe(0);
});

it('keeps batchSize when the busy tenants fill the slots: another tenant waits for at most one batch of each', async () => {
  for (const tenant of ['a', 'b', 'c']) await publishTenant(tenant, 500);
  await publishTenant('d', 1);
  // Three streams with work and three slots: none is spare, so no batch grows.
  const { batches, order } = await drain({ concurrency: 3 });
  expect(Math.max(...batches)).toBe(100);
  const d = order.findIndex((e) => e.tenantId === 'd');
  expect(d).toBeGreaterThanOrEqual(0);
  for (const tenant of ['a', 'b', 'c']) expect(order.slice(0, d).filter((e) => e.tenantId === tenant).length).toBeLessThanOrEqual(100);
  expect(order).toHaveLength(1_501);
});
