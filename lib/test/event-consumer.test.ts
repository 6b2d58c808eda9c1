import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { Db, MongoClient } from 'mongodb';
import { StreamConsumer, replayStreams, DEAD_LETTERS_COLLECTION, type DomainEvent } from '../events/consumer';
import { createLogger } from '../logger';
import { connectMongo } from '../mongo';
import { createRedisClient, redisReady } from '../redis';

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
  db = mongo.db(`t${randomUUID().slice(0, 8)}_consumer`);
});

const publish = (tenantId: string, n: number, type = 'thing.happened') =>
  Promise.all(
    Array.from({ length: n }, (_, i) =>
      redis.xadd(stream, '*', 'id', randomUUID(), 'type', type, 'tenantId', tenantId, 'occurredAt', new Date().toISOString(), 'data', JSON.stringify({ i })),
    ),
  );

it('delivers every event once to a group and acknowledges only after the handler finished', async () => {
  await publish('t1', 25);
  const seen: DomainEvent[] = [];
  const consumer = new StreamConsumer({ redis, db, logger, streams: [stream], group: 'g', handle: async (events) => void seen.push(...events), batchSize: 10 });
  await consumer.ensureGroups();
  while ((await consumer.pollOnce(10)) > 0);
  expect(seen).toHaveLength(25);
  expect(new Set(seen.map((e) => e.data['i'])).size).toBe(25);
  const pending = (await redis.xpending(stream, 'g')) as [number, ...unknown[]];
  expect(pending[0]).toBe(0);
});

it('hands a dead consumer’s unacknowledged entries to another one', async () => {
  await publish('t1', 5);
  // Simulate a crash after reading, before acknowledging: read without the consumer's apply step.
  const seen: DomainEvent[] = [];
  const survivor = new StreamConsumer({
    redis,
    db,
    logger,
    streams: [stream],
    group: 'g',
    handle: async (events) => void seen.push(...events),
    claimIdleMs: 50,
  });
  await survivor.ensureGroups();
  await redis.xreadgroup('GROUP', 'g', 'dead-consumer', 'COUNT', 10, 'STREAMS', stream, '>');
  await new Promise((r) => setTimeout(r, 80));
  await survivor.pollOnce(10);
  expect(seen).toHaveLength(5);
});

it('dead-letters an event the handler cannot apply and a malformed entry, and goes on with the rest', async () => {
  await publish('t1', 3);
  await redis.xadd(stream, '*', 'garbage', 'yes');
  await publish('t1', 1, 'poison');
  const applied: string[] = [];
  const consumer = new StreamConsumer({
    redis,
    db,
    logger,
    streams: [stream],
    group: 'g',
    handle: async (events) => {
      if (events.some((e) => e.type === 'poison')) throw new Error('cannot apply poison');
      applied.push(...events.map((e) => e.type));
    },
  });
  await consumer.ensureGroups();
  await consumer.pollOnce(10);
  expect(applied).toEqual(['thing.happened', 'thing.happened', 'thing.happened']);
  const dead = await db.collection(DEAD_LETTERS_COLLECTION).find().sort({ entryId: 1 }).toArray();
  expect(dead.map((d) => [d['type'], d['error']])).toEqual([
    [null, 'not a domain event: missing id, type, tenantId, occurredAt or data'],
    ['poison', 'cannot apply poison'],
  ]);
  expect(((await redis.xpending(stream, 'g')) as [number])[0]).toBe(0);
});

it('replays what the stream holds, for one tenant, without moving any group', async () => {
  await publish('t1', 1200);
  await publish('t2', 7);
  const seen: DomainEvent[] = [];
  const result = await replayStreams(redis, [stream], async (events) => void seen.push(...events), { tenantId: 't2', pageSize: 500 });
  expect(result.events).toBe(7);
  expect(seen.every((e) => e.tenantId === 't2')).toBe(true);
});
