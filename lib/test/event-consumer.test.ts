import { randomUUID } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import { StreamConsumer, replayStreams, DEAD_LETTERS_COLLECTION, type DomainEvent } from '../events/consumer';
import { OutboxRelay, outboxEntry, streamRegistry, tenantStream, type OutboxDocument } from '../events/outbox';
import { createLogger } from '../logger';
import { connectMongo } from '../mongo';
import { createRedisClient, redisReady, type RedisClient } from '../redis';
import { redisBackends, type RedisBackend } from '../testing/redis-backends';
import { until } from '../testing/until';

const logger = createLogger('test', 'silent');
let mongo: MongoClient;

beforeAll(async () => {
  mongo = await connectMongo(process.env['MONGODB_URI']!);
});
afterAll(async () => {
  await mongo.close();
});

/** Every case on one redis-server and on a Redis Cluster, where each tenant stream hashes to a slot of its own. */
describe.each(redisBackends())('on %s', (_name, startBackend) => {
  let backend: RedisBackend;
  let redis: RedisClient;
  let db: Db;
  let stream: string;

  beforeAll(async () => {
    backend = await startBackend();
    redis = createRedisClient(backend.target, logger);
    await redisReady(redis, 10_000);
  }, 90_000);
  afterAll(async () => {
    redis?.disconnect();
    await backend?.close();
  });
  beforeEach(() => {
    stream = `test:events:${randomUUID()}`;
    db = mongo.db(`t${randomUUID().slice(0, 8)}_consumer`);
  });

  /** Onto the pre-upgrade shared stream, which nothing writes any more but consumers still drain. */
  const publish = (tenantId: string, n: number, type = 'thing.happened') =>
    Promise.all(
      Array.from({ length: n }, (_, i) =>
        redis.xadd(stream, '*', 'id', randomUUID(), 'type', type, 'tenantId', tenantId, 'occurredAt', new Date().toISOString(), 'data', JSON.stringify({ i })),
      ),
    );

  it('delivers every event once to a group and acknowledges only after the handler finished', async () => {
    await publish('t1', 25);
    const seen: DomainEvent[] = [];
    const consumer = new StreamConsumer({
      redis,
      db,
      logger,
      streams: [stream],
      group: 'g',
      handle: async (events) => void seen.push(...events),
      batchSize: 10,
    });
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

  /** Onto the tenant's own stream, registered first, as OutboxRelay writes it; in pipelined rounds of 1,000. */
  async function publishTenant(tenantId: string, n: number, type = 'thing.happened'): Promise<void> {
    const target = tenantStream(stream, tenantId);
    // The registry and the stream may be on different cluster nodes: one pipeline may only reach one.
    await redis.sadd(streamRegistry(stream), target);
    for (let from = 0; from < n; from += 1_000) {
      const pipeline = redis.pipeline();
      for (let i = from; i < Math.min(n, from + 1_000); i++) {
        pipeline.xadd(
          target,
          '*',
          'id',
          randomUUID(),
          'type',
          type,
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

  describe('per-tenant streams', () => {
    it('the relay publishes each tenant’s events to its own registered stream, nothing to the shared one', async () => {
      const collection = db.collection<OutboxDocument>('things');
      await collection.insertMany([
        { _id: randomUUID(), tenantId: 'a', outbox: [outboxEntry('thing.happened', { n: 1 }), outboxEntry('thing.happened', { n: 2 })] },
        { _id: randomUUID(), tenantId: 'b', outbox: [outboxEntry('thing.happened', { n: 3 })] },
      ]);
      const relay = new OutboxRelay<OutboxDocument>({ collection, redis, stream, logger, dataOf: (_doc, entry) => entry.data ?? {} });
      expect(await relay.drainOnce()).toBe(3);
      expect((await redis.smembers(streamRegistry(stream))).sort()).toEqual([tenantStream(stream, 'a'), tenantStream(stream, 'b')]);
      expect([await redis.xlen(tenantStream(stream, 'a')), await redis.xlen(tenantStream(stream, 'b')), await redis.xlen(stream)]).toEqual([2, 1, 0]);
    });

    it('handles another tenant’s event within the first batch of a 5,000-event backlog, and every event once', async () => {
      await publishTenant('a', 5_000);
      await publishTenant('b', 1);
      const order: DomainEvent[] = [];
      const consumer = new StreamConsumer({ redis, db, logger, streams: [stream], group: 'g', handle: async (events) => void order.push(...events) });
      await consumer.ensureGroups();
      let polls = 0;
      while ((await consumer.pollOnce(10)) > 0) polls++;
      // The bound: before b's event, at most one batch (batchSize 100 by default) of a's.
      const b = order.findIndex((e) => e.tenantId === 'b');
      expect(b).toBeGreaterThanOrEqual(0);
      expect(order.slice(0, b).filter((e) => e.tenantId === 'a').length).toBeLessThanOrEqual(100);
      // Round-robin, not all of a at once: 50 reads of 100 entries each.
      expect(polls).toBe(50);
      expect(order).toHaveLength(5_001);
      expect(new Set(order.map((e) => e.id)).size).toBe(5_001);
      expect([await pendingOf(tenantStream(stream, 'a')), await pendingOf(tenantStream(stream, 'b'))]).toEqual([0, 0]);
    });

    it('handles other tenants while one tenant’s batch is slow', async () => {
      await publishTenant('a', 300);
      let release!: () => void;
      const gate = new Promise<void>((resolve) => (release = resolve));
      let aStarted = false;
      const handled: DomainEvent[] = [];
      const consumer = new StreamConsumer({
        redis,
        db,
        logger,
        streams: [stream],
        group: 'g',
        blockMs: 20,
        handle: async (events) => {
          if (events.some((e) => e.tenantId === 'a')) {
            aStarted = true;
            await gate;
          }
          handled.push(...events);
        },
      });
      await consumer.start();
      try {
        await until(
          async () => aStarted,
          (started) => started,
        );
        // b's stream appears while a's first batch hangs: it is found, its group created, its events handled.
        await publishTenant('b', 3);
        const bHandled = await until(
          async () => handled.filter((e) => e.tenantId === 'b').length,
          (n) => n === 3,
        );
        expect(bHandled).toBe(3);
        expect(handled.filter((e) => e.tenantId === 'a')).toHaveLength(0);
        expect(await pendingOf(tenantStream(stream, 'b'))).toBe(0);
        release();
        expect(
          await until(
            async () => handled.filter((e) => e.tenantId === 'a').length,
            (n) => n === 300,
          ),
        ).toBe(300);
      } finally {
        release();
        await consumer.stop();
      }
      expect(await pendingOf(tenantStream(stream, 'a'))).toBe(0);
    });

    it('rests a tenant’s stream after each batch as long as the batch took (restRatio 1), and handles other tenants meanwhile', async () => {
      await publishTenant('a', 2);
      const spans: { tenant: string; from: number; to: number }[] = [];
      let aBatches = 0;
      // What the consumer logs at warn and above: resting must not make its reads fail (a BLOCK Redis refuses).
      const logged: string[] = [];
      const consumer = new StreamConsumer({
        redis,
        db,
        logger: createLogger('test', 'warn', { write: (line: string) => void logged.push(line) }),
        streams: [stream],
        group: 'g',
        blockMs: 20,
        batchSize: 1,
        restRatio: 1,
        handle: async (events) => {
          const from = performance.now();
          if (events[0]!.tenantId === 'a' && aBatches++ === 0) await new Promise((resolve) => setTimeout(resolve, 200));
          spans.push({ tenant: events[0]!.tenantId, from, to: performance.now() });
        },
      });
      await consumer.start();
      try {
        await until(
          async () => aBatches,
          (n) => n === 1,
        );
        await publishTenant('b', 1);
        await until(
          async () => spans.length,
          (n) => n === 3,
        );
      } finally {
        await consumer.stop();
      }
      spans.sort((x, y) => x.from - y.from);
      // b's event waited for neither a's batch nor a's rest: it was handled before a's second batch.
      expect(spans.map((s) => s.tenant)).toEqual(['a', 'b', 'a']);
      const [a1, , a2] = spans as [(typeof spans)[0], (typeof spans)[0], (typeof spans)[0]];
      // a's second batch started no sooner than a's first took after it ended (a timer may fire a millisecond early).
      expect(a2.from - a1.to).toBeGreaterThanOrEqual(a1.to - a1.from - 2);
      expect(logged).toEqual([]);
    });

    it('goes on with other tenants while one tenant’s events fail, and dead-letters those', async () => {
      await publishTenant('a', 150);
      await publishTenant('b', 5);
      const applied: DomainEvent[] = [];
      const consumer = new StreamConsumer({
        redis,
        db,
        logger,
        streams: [stream],
        group: 'g',
        handle: async (events) => {
          if (events.some((e) => e.tenantId === 'a')) throw new Error('tenant a cannot be applied');
          applied.push(...events);
        },
      });
      await consumer.ensureGroups();
      await consumer.pollOnce(10);
      // b's events went through in the same round as a's failing first batch.
      expect(applied.map((e) => e.tenantId)).toEqual(['b', 'b', 'b', 'b', 'b']);
      while ((await consumer.pollOnce(10)) > 0);
      const dead = await db.collection(DEAD_LETTERS_COLLECTION).find().toArray();
      expect(dead).toHaveLength(150);
      expect(dead.every((d) => d['tenantId'] === 'a' && d['stream'] === tenantStream(stream, 'a'))).toBe(true);
      expect([await pendingOf(tenantStream(stream, 'a')), await pendingOf(tenantStream(stream, 'b'))]).toEqual([0, 0]);
    });

    it('drains the pre-upgrade shared stream beside the tenant streams', async () => {
      await publish('a', 30);
      await publishTenant('a', 20);
      await publishTenant('b', 10);
      const seen: DomainEvent[] = [];
      const consumer = new StreamConsumer({ redis, db, logger, streams: [stream], group: 'g', handle: async (events) => void seen.push(...events) });
      await consumer.ensureGroups();
      while ((await consumer.pollOnce(10)) > 0);
      expect(seen).toHaveLength(60);
      expect(new Set(seen.map((e) => e.id)).size).toBe(60);
      expect(seen.filter((e) => e.stream === stream)).toHaveLength(30);
      expect(await pendingOf(stream)).toBe(0);
    });

    it('reads many tenants chunk by chunk, each event once', async () => {
      const tenants = Array.from({ length: 7 }, (_, i) => `t${i}`);
      for (const t of tenants) await publishTenant(t, 5);
      const seen: DomainEvent[] = [];
      const consumer = new StreamConsumer({
        redis,
        db,
        logger,
        streams: [stream],
        group: 'g',
        batchSize: 2,
        streamsPerRead: 3,
        handle: async (events) => void seen.push(...events),
      });
      await consumer.ensureGroups();
      // Every tenant gets its turn in the first round, though one read names only three streams.
      await consumer.pollOnce(10);
      expect(new Set(seen.map((e) => e.tenantId))).toEqual(new Set(tenants));
      while ((await consumer.pollOnce(10)) > 0);
      expect(seen).toHaveLength(35);
      expect(new Set(seen.map((e) => e.id)).size).toBe(35);
    });

    it('a tenant replay reads only that tenant’s streams; a full replay every registered one', async () => {
      await publish('t1', 3);
      await publish('t2', 2);
      await publishTenant('t1', 1_200);
      await publishTenant('t2', 7);
      const read = jest.spyOn(redis, 'xrange');
      try {
        const seen: DomainEvent[] = [];
        const one = await replayStreams(redis, [stream], async (events) => void seen.push(...events), { tenantId: 't2', pageSize: 500 });
        expect(one.events).toBe(9);
        expect(seen.every((e) => e.tenantId === 't2')).toBe(true);
        expect(new Set(read.mock.calls.map(([key]) => String(key)))).toEqual(new Set([stream, tenantStream(stream, 't2')]));
        const all = await replayStreams(redis, [stream], async () => undefined, { pageSize: 500 });
        expect(all.events).toBe(1_212);
      } finally {
        read.mockRestore();
      }
    });
  });

  /**
   * StreamConsumerOptions.backlogBatchSize: a tenant's backlog is handled in larger batches only while handling slots are
   * to spare, so the fairness bound between tenants (one batchSize of each busy tenant) holds whenever slots are contended.
   */
  describe('backlogBatchSize', () => {
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
  });
});
