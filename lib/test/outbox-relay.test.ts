/**
 * The outbox relay's pace: an idle relay looks for work less and less often (a read a second at most, instead of five),
 * and an outbox entry made anywhere in the process — the request loop, a lane or the job runner's thread — brings it
 * back at once. Real MongoDB-protocol and Redis servers (the suite's); the announcing thread is a real worker thread.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Db, MongoClient } from 'mongodb';
import { OutboxRelay, outboxEntry, tenantStream, type OutboxDocument } from '../events/outbox';
import { createLogger } from '../logger';
import { connectMongo } from '../mongo';
import { createRedisClient, redisReady, type RedisClient } from '../redis';
import { until } from '../testing/until';

const logger = createLogger('test', 'silent');
let mongo: MongoClient;
let redis: RedisClient;
let db: Db;
let stream: string;
/** The relay's reads of its collection (`find` commands), by command monitoring on the relay's own client. */
let finds: number;

beforeAll(async () => {
  mongo = await connectMongo(process.env['MONGODB_URI']!, { monitorCommands: true });
  mongo.on('commandSucceeded', (event) => {
    if (event.commandName === 'find' && event.databaseName === db?.databaseName) finds++;
  });
  redis = createRedisClient(process.env['REDIS_URL']!, logger);
  await redisReady(redis, 10_000);
});
afterAll(async () => {
  redis.disconnect();
  await mongo.close();
});
beforeEach(() => {
  finds = 0;
  stream = `test:events:${randomUUID()}`;
  db = mongo.db(`t${randomUUID().slice(0, 8)}_relay`);
});

/** An entry as stored, made without outboxEntry (which announces it): only what the test announces reaches the relay. */
const silentEntry = () => ({ id: randomUUID(), type: 'thing.happened', occurredAt: new Date() });

/** Calls outboxEntry on a worker thread of this process, as the job runner or a lane does, and waits for it to exit. */
async function outboxEntryOnAnotherThread(): Promise<void> {
  const worker = new Worker(path.join(__dirname, 'fixtures', 'outbox-entry-thread.ts'), { execArgv: ['--import', 'tsx'] });
  const code = await new Promise<number>((resolve, reject) => {
    worker.once('error', reject);
    worker.once('exit', resolve);
  });
  expect(code).toBe(0);
}

it('an idle relay reads its collection less and less often: at most about once per maxIdleMs, not every idleMs', async () => {
  const collection = db.collection<OutboxDocument>('things');
  const relay = new OutboxRelay<OutboxDocument>({ collection, redis, stream, logger, dataOf: () => ({}), idleMs: 20, maxIdleMs: 400 });
  relay.start();
  await new Promise((r) => setTimeout(r, 3_000));
  await relay.stop();
  // Every 20 ms this would be about 150 reads in 3 s; backing off (20, 40, … 400 ms) it is about 11, fewer on a busy machine.
  expect(finds).toBeGreaterThanOrEqual(1);
  expect(finds).toBeLessThanOrEqual(20);
});

it('an outbox entry made on another thread of the process brings an idle relay back at once', async () => {
  const collection = db.collection<OutboxDocument>('things');
  // Idle waits of 10 minutes from the first: without the announcement, the entry below would wait for the test's timeout.
  const relay = new OutboxRelay<OutboxDocument>({ collection, redis, stream, logger, dataOf: () => ({}), idleMs: 600_000, maxIdleMs: 600_000 });
  relay.start();
  try {
    // The relay's first round (nothing there) is over: it is now in its 10-minute wait.
    await until(
      async () => finds,
      (n) => n >= 1,
    );
    await collection.insertOne({ _id: randomUUID(), tenantId: 'a', outbox: [silentEntry()] });
    await outboxEntryOnAnotherThread();
    const published = await until(
      () => redis.xlen(tenantStream(stream, 'a')),
      (n) => n === 1,
    );
    expect(published).toBe(1);
    // And one made on this thread (the request loop's) does the same.
    await collection.insertOne({ _id: randomUUID(), tenantId: 'b', outbox: [silentEntry()] });
    outboxEntry('thing.happened');
    expect(
      await until(
        () => redis.xlen(tenantStream(stream, 'b')),
        (n) => n === 1,
      ),
    ).toBe(1);
  } finally {
    await relay.stop();
  }
});

it.each([
  ['an empty outbox (idle)', false],
  ['an entry it then publishes', true],
])('an entry announced while a round is reading is published at once, though that round read %s before it was written', async (_, before) => {
  const things = db.collection<OutboxDocument>('things');
  /** Each read of the outbox runs at once; its answer is held until the test lets it go. */
  const held: (() => void)[] = [];
  const reads = Object.create(things) as typeof things;
  reads.find = ((...args: Parameters<typeof things.find>) => {
    const cursor = things.find(...args);
    return {
      toArray: async () => {
        const docs = await cursor.toArray();
        await new Promise<void>((release) => held.push(release));
        return docs;
      },
    };
  }) as never;
  if (before) await things.insertOne({ _id: randomUUID(), tenantId: 'a', outbox: [silentEntry()] });
  const relay = new OutboxRelay<OutboxDocument>({ collection: reads, redis, stream, logger, dataOf: () => ({}), idleMs: 600_000, maxIdleMs: 600_000 });
  relay.start();
  try {
    // The first round has read the outbox; before it ends, an entry is written and announced.
    await until(
      async () => held.length,
      (n) => n === 1,
    );
    await things.insertOne({ _id: randomUUID(), tenantId: 'b', outbox: [silentEntry()] });
    // The announcement reaches the relay (a message on this loop, as on a listener of the test's own) while the round
    // still holds its answer.
    const listener = new BroadcastChannel('linepack:outbox-entries');
    const heard = new Promise((resolve) => (listener.onmessage = resolve));
    outboxEntry('thing.happened');
    await heard;
    listener.close();
    await new Promise((r) => setImmediate(r));
    held.shift()!();
    // Without looking again the relay would now wait 10 minutes (idle, or pacing after what it published); it reads
    // again, and publishes.
    await until(
      async () => held.length,
      (n) => n === 1,
    );
    held.shift()!();
    expect(
      await until(
        () => redis.xlen(tenantStream(stream, 'b')),
        (n) => n === 1,
      ),
    ).toBe(1);
    if (before) expect(await redis.xlen(tenantStream(stream, 'a'))).toBe(1);
  } finally {
    while (held.length > 0) held.shift()!();
    await relay.stop();
  }
});
