/**
 * Durability under crashes (issue 17): the file-backed embedded MongoDB is killed with SIGKILL at random points
 * while clients record measurement batches through the gateway, then restarted on the same file, many times.
 * Afterwards every acknowledged measurement must be there, every unique index must still be unique (also after
 * every batch is retried), and every event the outbox relay published must name a document that exists.
 *
 * Against the embedded server's H2 store before the fix this lost acknowledged writes (and their published
 * events) and let a retried batch store one idempotency key twice; see tools/mongo EmbeddedMongo.java.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import type { Db, MongoClient } from 'mongodb';
import { eventStream } from '@linepack/lib/events/outbox';
import { connectMongo } from '@linepack/lib/mongo';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { processAlive } from '@linepack/lib/infra/child-process';
import { until, waitFor } from '@linepack/lib/testing/until';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';
import { eventually } from '../support/wait';

const ITERATIONS = Number(process.env['CRASH_ITERATIONS'] ?? 10);
const BATCH = 200;

// A bound for a machine that is stuck, not a speed requirement: each round waits for its own progress.
jest.setTimeout(ITERATIONS * 60_000 + 180_000);

const recordMutation = 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount duplicateCount ids } }';

interface Batch {
  keys: string[];
  /** The ids the gateway answered with; absent when the request failed (not acknowledged). */
  ids?: string[];
}

/** kill -9 the database's whole process group, as a crash or the OOM killer would, and wait until it is gone. */
async function crash(db: EmbeddedMongo): Promise<void> {
  process.kill(-db.pid, 'SIGKILL');
  if (!(await eventually(async () => !processAlive(db.pid), 10_000, 20))) throw new Error(`embedded MongoDB ${db.pid} survived SIGKILL`);
}

/** Every unique index of every collection in `db`, as [collection, index, duplicated key values]. */
async function uniqueIndexViolations(db: Db): Promise<Array<[string, string, unknown]>> {
  const violations: Array<[string, string, unknown]> = [];
  for (const { name: collection } of await db.listCollections().toArray()) {
    for (const index of await db.collection(collection).listIndexes().toArray()) {
      if (!index['unique'] || index['name'] === '_id_') continue;
      const fields = Object.keys(index['key'] as Record<string, number>);
      const groupId = Object.fromEntries(fields.map((f) => [f.replace(/\./g, '_'), `$${f}`]));
      const dupes = await db
        .collection(collection)
        .aggregate([{ $group: { _id: groupId, n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }, { $limit: 5 }])
        .toArray();
      for (const dupe of dupes) violations.push([collection, index['name'] as string, dupe['_id']]);
    }
  }
  return violations;
}

describe('the file-backed embedded MongoDB killed with SIGKILL mid-batch, again and again', () => {
  let dir: string;
  let database: EmbeddedMongo;
  let stack: TestStack;
  /** The test's own reader of what is stored, connected once the crashes are over. */
  let observer: MongoClient | undefined;
  let redis: Redis;
  let apiKey: string;
  let tenantId: string;
  let assetId: string;
  const batches: Batch[] = [];
  /** Why the latest batch was not acknowledged: what a timeout reports. */
  let lastRefusal = 'none';
  const dataFile = () => path.join(dir, 'mongo.h2');
  /** What the database printed since it was last ready (exceptions, GC trouble): what a timeout reports. */
  let databaseLog: string[] = [];
  const startDatabase = (port?: number) => {
    databaseLog = [];
    return startEmbeddedMongo({ dataFile: dataFile(), port, log: (line) => void (databaseLog = [...databaseLog, line].slice(-20)) });
  };

  /**
   * Where a round stuck: what the auth service answers about the key itself (the gateway says only "unavailable"),
   * and whether a new connection to the database is answered at all.
   */
  async function diagnosis(): Promise<string> {
    const introspection = await fetch(`${stack.authUrl}/auth/introspect`, {
      headers: { authorization: `Bearer ${apiKey}` },
      signal: AbortSignal.timeout(10_000),
    })
      .then(async (res) => `HTTP ${res.status} ${(await res.text()).slice(0, 300)}`)
      .catch((err: unknown) => `no answer: ${String(err)}`);
    let ping: string;
    const started = Date.now();
    const probe = await connectMongo(database.uri, { serverSelectionTimeoutMS: 10_000 }).catch((err: unknown) => err as Error);
    if (probe instanceof Error) ping = `no connection: ${probe.message}`;
    else {
      ping = await probe
        .db(`${stack.dbPrefix}_auth`)
        .collection('apiKeys')
        .findOne({}, { maxTimeMS: 10_000 })
        .then(() => `answered a read in ${Date.now() - started} ms`)
        .catch((err: unknown) => `a read failed: ${String(err)}`);
      await probe.close();
    }
    const topology = (
      stack.subgraphs.auth.mongo as unknown as {
        topology?: {
          s: {
            servers: Map<string, { description: { type: string; error?: unknown }; monitor?: { s: { state: string }; monitorId?: { toJSON(): unknown } } }>;
          };
        };
      }
    )?.topology;
    const servers = [...(topology?.s.servers.values() ?? [])].map((server) => ({
      type: server.description.type,
      error: String((server.description.error as Error | undefined)?.message ?? server.description.error ?? ''),
      monitorState: server.monitor?.s.state,
      monitorTimer: server.monitor?.monitorId?.toJSON(),
    }));
    return (
      `auth introspection: ${introspection}; a new database connection: ${ping}; database log: ${databaseLog.join(' | ') || '(nothing)'}; ` +
      `auth's driver: ${JSON.stringify(servers)}; its last heartbeats: ${authHeartbeats.join(' | ')}`
    );
  }

  /** The auth service's client's last monitoring events: whether its monitor still runs when a round sticks. */
  let authHeartbeats: string[] = [];
  const watchAuthHeartbeats = () => {
    for (const event of ['serverHeartbeatStarted', 'serverHeartbeatSucceeded', 'serverHeartbeatFailed'] as const) {
      stack.subgraphs.auth.mongo!.on(event, (e: { failure?: Error }) => {
        authHeartbeats = [...authHeartbeats, `${new Date().toISOString().slice(11, 23)} ${event}${e.failure ? ` ${e.failure.message}` : ''}`].slice(-8);
      });
    }
  };

  beforeAll(async () => {
    dir = await mkdtemp(path.join(os.tmpdir(), 'linepack-crash-'));
    database = await startDatabase();
    redis = new Redis(process.env['REDIS_URL']!);
    stack = await startTestStack({ mongoUri: database.uri, redisUrl: process.env['REDIS_URL'] });
    watchAuthHeartbeats();
    ({ apiKey, tenantId } = await stack.tenantWithKey());
    assetId = (await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Crash-tested line' })).id;
  });

  afterAll(async () => {
    await observer?.close();
    await stack?.stop();
    await database?.stop();
    await redis?.quit();
    await rm(dir, { recursive: true, force: true });
  });

  async function record(batch: Batch): Promise<void> {
    const input = batch.keys.map((idempotencyKey, i) => ({
      idempotencyKey,
      assetId,
      type: 'PRESSURE',
      value: 5_000 + i,
      unit: 'KPA',
      observedAt: '2026-03-01T00:00:00Z',
      source: 'SCADA',
    }));
    const res = await graphql<{ recordMeasurements: { ids: string[] } }>(stack.gatewayUrl, recordMutation, { apiKey, variables: { i: input } }).catch(
      (err: unknown) => {
        lastRefusal = `no answer: ${String(err)}`;
        return null;
      },
    );
    if (res?.status === 200 && !res.body.errors?.length && res.body.data) batch.ids = res.body.data.recordMeasurements.ids;
    else if (res) lastRefusal = `HTTP ${res.status}: ${JSON.stringify(res.body.errors?.[0] ?? res.body).slice(0, 300)}`;
  }

  /**
   * As a client whose request failed does: the same batch again until it is acknowledged. Right after a restart a busy
   * machine's database can answer later than the subgraph waits for it (SUBGRAPH_UNAVAILABLE, 503), as in production.
   */
  async function recordUntilAcknowledged(batch: Batch): Promise<void> {
    for (let attempt = 0; attempt < 20 && !batch.ids; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 1_000));
      await record(batch);
    }
  }

  it('loses no acknowledged write, keeps unique indexes unique and publishes events only for stored documents', async () => {
    for (let iteration = 0; iteration < ITERATIONS; iteration++) {
      let sending = true;
      let acknowledgedNow = 0;
      const client = (async () => {
        for (let n = 0; sending; n++) {
          const batch: Batch = { keys: Array.from({ length: BATCH }, (_, i) => `crash-${iteration}-${n}-${i}`) };
          batches.push(batch);
          await record(batch);
          if (batch.ids) acknowledgedNow++;
        }
      })();
      // The kill lands after a random number of acknowledged batches and a random moment into the next one: by the
      // clients' progress, not the clock, so a slow machine still gets writes acknowledged between crashes.
      const acknowledgedBeforeCrash = 1 + Math.floor(Math.random() * 3);
      // A bound on "never acknowledges again after a restart", not a speed requirement: generous for a loaded machine.
      await waitFor(async () => acknowledgedNow >= acknowledgedBeforeCrash, 120_000, `${acknowledgedBeforeCrash} acknowledged batches`, 5).catch(
        async (err: Error) => {
          throw new Error(
            `round ${iteration + 1} of ${ITERATIONS}: ${err.message}; ${acknowledgedNow} acknowledged, the latest refusal: ${lastRefusal}; ${await diagnosis()}`,
          );
        },
      );
      await new Promise((r) => setTimeout(r, Math.random() * 300));
      await crash(database);
      database = await startDatabase(database.port);
      sending = false;
      await client;
    }

    // The just-restarted database can be slow to answer its first connections on a busy machine: this reader waits for
    // it (the services' own 3 s server selection is what they tell clients; see database-unavailable.test.ts).
    observer = await connectMongo(database.uri, { serverSelectionTimeoutMS: 120_000, connectTimeoutMS: 60_000 });
    const measurementsDb = observer.db(`${stack.dbPrefix}_measurements`);
    const measurements = measurementsDb.collection('measurements');
    const acknowledged = batches.flatMap((b) => b.ids ?? []);
    expect(acknowledged.length).toBeGreaterThanOrEqual(ITERATIONS * BATCH); // by construction: at least a batch per round
    const stored = new Set(
      (await measurements.find({ _id: { $in: acknowledged as never[] } }, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id)),
    );
    const lost = acknowledged.filter((id) => !stored.has(id));
    expect({ lost: lost.length, examples: lost.slice(0, 3) }).toEqual({ lost: 0, examples: [] });

    // The relay drains every outbox; then each published event names a measurement that exists.
    await until(
      () => measurements.countDocuments({ 'outbox.id': { $exists: true } }),
      (pending) => pending === 0,
      120_000,
    );
    const entries = await redis.xrange(eventStream(stack.dbPrefix, 'measurements', tenantId), '-', '+');
    const eventIds = entries.map(([, fields]) => JSON.parse(fields[fields.indexOf('data') + 1]!) as { id: string }).map((data) => data.id);
    const existing = new Set((await measurements.find({ _id: { $in: eventIds as never[] } }, { projection: { _id: 1 } }).toArray()).map((d) => String(d._id)));
    const phantoms = eventIds.filter((id) => !existing.has(id));
    expect({ eventsForMissingDocuments: phantoms.length, examples: phantoms.slice(0, 3) }).toEqual({ eventsForMissingDocuments: 0, examples: [] });
    expect(new Set(eventIds).size).toBe(await measurements.countDocuments({ tenantId }));

    // Retrying every batch (as clients whose request failed would) stores each idempotency key exactly once.
    for (const batch of batches) {
      delete batch.ids;
      await recordUntilAcknowledged(batch);
      expect(batch.ids).toHaveLength(BATCH);
    }
    expect(await measurements.countDocuments({ tenantId })).toBe(batches.length * BATCH);
    for (const subgraph of ['measurements', 'assets', 'auth']) {
      expect(await uniqueIndexViolations(observer.db(`${stack.dbPrefix}_${subgraph}`))).toEqual([]);
    }
  });
});
