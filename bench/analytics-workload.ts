/**
 * The ILI-anomaly workload that `npm run bench:analytics` and `npm run bench:scale` share, so both measure the same
 * thing: a seeded two-run line (workload), its events published as the outbox relay publishes them and consumed by
 * the analytics subgraph's own consumer and handler (assessFromEvents), and the driver baseline (insertDirectly).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import type { Db, MongoClient } from 'mongodb';
import { DEAD_LETTERS_COLLECTION, StreamConsumer } from '@linepack/lib/events/consumer';
import { ASSET_UPSERTED } from '@linepack/subgraph-assets/events';
import { MEASUREMENT_RECORDED } from '@linepack/subgraph-measurements/events';
import { eventStream, streamRegistry, tenantStream, type StreamEvent } from '@linepack/lib/events/outbox';
import { createLogger } from '@linepack/lib/logger';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { connectMongo, databaseName } from '@linepack/lib/mongo';
import { createRedisClient, redisReady } from '@linepack/lib/redis';
import { ANALYTICS_CONSUMER_GROUP } from '@linepack/subgraph-analytics';
import { ANALYTICS_COLLECTIONS } from '@linepack/subgraph-analytics/documents';
import { analyticsEventHandler, ensureAnalyticsIndexes } from '@linepack/subgraph-analytics/projections';

const SEGMENTS = 200;
const SEGMENT_LENGTH_M = 1_000;
const RUN_DATES = ['2021-04-12T00:00:00.000Z', '2026-04-14T00:00:00.000Z'];
const XADD_BATCH = 1_000;
const INSERT_BATCH = 1_000;
/** The relay's cap (lib/events/outbox.ts), so XADD costs what it costs in production. */
const STREAM_MAX_LEN = '1000000';

const round = (v: number, digits: number) => Number(v.toFixed(digits));

/** Seeded, so every run assesses the same line. */
export function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export interface Workload {
  segments: Record<string, unknown>[];
  /** measurement.recorded bodies as measurementEventData produces them, run by run, each run in odometer order. */
  anomalies: Record<string, unknown>[];
}

/**
 * Two ILI runs five years apart over the same segments. Four in five features of the second run sit
 * within the match window of one from the first (so growth is measured), the fifth are new; features
 * are 4 m apart so no match is ambiguous. Metal loss 5–69.9 % WT, 10–300 mm long.
 */
export function workload(n: number): Workload {
  const random = prng(20260414);
  const segmentCount = Math.max(1, Math.min(SEGMENTS, Math.ceil(n / 2)));
  const segments = Array.from({ length: segmentCount }, (_, s) => ({
    id: randomUUID(),
    type: 'SEGMENT',
    name: `Bench segment ${s}`,
    parentId: null,
    status: 'ACTIVE',
    product: 'NATURAL_GAS',
    regulation: 'CFR_192',
    beginStationM: s * SEGMENT_LENGTH_M,
    endStationM: (s + 1) * SEGMENT_LENGTH_M,
    // 20-inch X52 and 12-inch X42, so both flow-stress paths and several class locations are exercised.
    ...(s % 2 === 0 ? { outsideDiameterMm: 508, wallThicknessMm: 7.9, smysMpa: 359 } : { outsideDiameterMm: 323.9, wallThicknessMm: 6.4, smysMpa: 290 }),
    maopKpa: 6_200,
    classLocation: 1 + (s % 4),
    inHca: s % 5 === 0,
    version: 1,
  }));
  const perRun = [Math.ceil(n / 2), Math.floor(n / 2)];
  const first = new Map<string, { odometerM: number; clockDeg: number; depthPctWt: number; lengthMm: number; widthMm: number }>();
  const anomalies: Record<string, unknown>[] = [];
  for (let run = 0; run < 2; run++) {
    const count = perRun[run]!;
    for (let i = 0; i < count; i++) {
      const s = Math.floor((i * segmentCount) / count);
      const k = i - Math.ceil((s * count) / segmentCount);
      let feature = {
        odometerM: s * SEGMENT_LENGTH_M + 2 + k * 4 + random() * 0.5,
        clockDeg: Math.floor(random() * 360),
        depthPctWt: 5 + random() * 55,
        lengthMm: 10 + random() * 290,
        widthMm: 10 + random() * 190,
      };
      const was = first.get(`${s}:${k}`);
      if (run === 0) first.set(`${s}:${k}`, feature);
      else if (k % 5 !== 0 && was) {
        feature = {
          odometerM: was.odometerM + (random() - 0.5) * 0.6,
          clockDeg: (was.clockDeg + 350 + Math.floor(random() * 20)) % 360,
          // Up to 25 % WT in five years (about 0.4 mm/year at most), so some rates beat the 0.3 mm/year floor.
          // Capped below 70.0: 70 % + 10 % tool tolerance on the 6.4 mm wall is dead-lettered (d/t rounds above
          // 0.8 in B31G, but 80 % is not "above 80 %" for the response category, which then throws).
          depthPctWt: Math.min(69.9, was.depthPctWt + random() * 25),
          lengthMm: Math.min(300, was.lengthMm + random() * 20),
          widthMm: was.widthMm,
        };
      } else feature.odometerM += 2; // between the first run's features: new
      anomalies.push({
        id: randomUUID(),
        assetId: segments[s]!.id,
        type: 'ILI_ANOMALY',
        observedAt: RUN_DATES[run],
        stationM: null,
        value: null,
        unit: null,
        source: 'ILI',
        idempotencyKey: `bench-${run}-${i}`,
        runId: `ili-${RUN_DATES[run]!.slice(0, 4)}`,
        featureType: 'METAL_LOSS',
        surface: random() < 0.8 ? 'EXTERNAL' : 'INTERNAL',
        odometerM: round(feature.odometerM, 3),
        clockDeg: feature.clockDeg,
        depthPctWt: round(feature.depthPctWt, 1),
        lengthMm: round(feature.lengthMm, 0),
        widthMm: round(feature.widthMm, 0),
        recordedAt: new Date().toISOString(),
      });
    }
  }
  return { segments, anomalies };
}

export async function xaddAll(redis: Redis, base: string, tenantId: string, type: string, bodies: readonly Record<string, unknown>[]): Promise<void> {
  // The tenant's stream, registered first, as the outbox relay writes it.
  const stream = tenantStream(base, tenantId);
  for (let i = 0; i < bodies.length; i += XADD_BATCH) {
    const pipeline = redis.pipeline();
    pipeline.sadd(streamRegistry(base), stream);
    for (const data of bodies.slice(i, i + XADD_BATCH)) {
      const event: StreamEvent = { id: randomUUID(), type, tenantId, occurredAt: new Date().toISOString(), data: JSON.stringify(data) };
      pipeline.xadd(stream, 'MAXLEN', '~', STREAM_MAX_LEN, '*', ...Object.entries(event).flat());
    }
    const failed = ((await pipeline.exec()) ?? []).find(([err]) => err);
    if (failed) throw failed[0];
  }
}

export interface PipelineRun {
  publishMs: number;
  consumeMs: number;
  entriesRead: number;
  db: Db;
}

/** What a run created, so it is removed from shared (external) servers even when the run fails. */
export interface Created {
  dbs: Db[];
  streams: string[];
}

/** Path A. The group exists before the first event, as it does for a running subgraph. */
export async function assessFromEvents(
  mongo: MongoClient,
  redis: Redis,
  consumerRedis: Redis,
  w: Workload,
  tenantId: string,
  created: Created,
  progress = false,
): Promise<PipelineRun> {
  const prefix = `bench${randomBytes(4).toString('hex')}`;
  const db = mongo.db(databaseName(prefix, 'analytics'));
  const [assetsStream, measurementsStream] = [eventStream(prefix, 'assets'), eventStream(prefix, 'measurements')];
  created.dbs.push(db);
  created.streams.push(...[assetsStream, measurementsStream].flatMap((base) => [base, tenantStream(base, tenantId), streamRegistry(base)]));
  await ensureAnalyticsIndexes(db);
  const consumer = new StreamConsumer({
    redis: consumerRedis,
    db,
    streams: [assetsStream, measurementsStream],
    group: ANALYTICS_CONSUMER_GROUP,
    handle: analyticsEventHandler(db),
    logger: createLogger('bench-analytics', 'warn'),
  });
  await consumer.ensureGroups();
  const total = w.segments.length + w.anomalies.length;

  const started = performance.now();
  await xaddAll(redis, assetsStream, tenantId, ASSET_UPSERTED, w.segments);
  await xaddAll(redis, measurementsStream, tenantId, MEASUREMENT_RECORDED, w.anomalies);
  const published = performance.now();
  // pollOnce is the body of the consumer's own loop; stopping on the count read (not on an empty poll)
  // keeps the final BLOCK timeout out of the measurement. A zero means something went missing.
  let entriesRead = 0;
  let nextReport = total / 10;
  for (;;) {
    const n = await consumer.pollOnce();
    entriesRead += n;
    // Progress per tenth shows whether throughput holds as the collections grow.
    if (progress && entriesRead >= nextReport) {
      console.error(
        `  consumed ${entriesRead.toLocaleString('en-US')}/${total.toLocaleString('en-US')} after ${((performance.now() - started) / 1000).toFixed(1)} s`,
      );
      nextReport += total / 10;
    }
    if (entriesRead >= total || n === 0) break;
  }
  const done = performance.now();
  return { publishMs: published - started, consumeMs: done - published, entriesRead, db };
}

/** Baseline B: the anomaly projection's documents, straight into a collection with only its _id index. */
export async function insertDirectly(mongo: MongoClient, w: Workload, tenantId: string, created: Created): Promise<{ ms: number; db: Db }> {
  const db = mongo.db(`bench${randomBytes(4).toString('hex')}_baseline`);
  created.dbs.push(db);
  const docs = w.anomalies.map((a) => {
    const { id, type: _type, value: _value, unit: _unit, source: _source, idempotencyKey: _key, recordedAt: _recorded, ...fields } = a;
    return { _id: id as string, tenantId, ...fields, observedAt: new Date(a['observedAt'] as string), sourceEventId: randomUUID() };
  });
  const collection = db.collection<{ _id: string }>(ANALYTICS_COLLECTIONS.anomalies);
  const started = performance.now();
  for (let i = 0; i < docs.length; i += INSERT_BATCH) await collection.insertMany(docs.slice(i, i + INSERT_BATCH), { ordered: false });
  return { ms: performance.now() - started, db };
}

export interface AnalyticsCounts {
  baselineDocs: number;
  entriesRead: number;
  anomalies: number;
  assessments: number;
  matchedToPreviousRun: number;
  measuredGrowth: number;
  risks: number;
  deadLetters: number;
}

/**
 * What both paths stored, read back, and whether it is the whole answer: every anomaly projected and assessed,
 * every segment scored, nothing dead-lettered, every baseline document inserted. A benchmark of a run that lost
 * events would be measuring something else.
 */
export async function checkAnalytics(
  w: Workload,
  tenantId: string,
  a: PipelineRun,
  b: { db: Db },
): Promise<{ counts: AnalyticsCounts; ok: boolean; expected: string }> {
  const n = w.anomalies.length;
  const count = (db: Db, name: string, filter: Record<string, unknown> = {}) => db.collection(name).countDocuments({ tenantId, ...filter });
  const counts: AnalyticsCounts = {
    baselineDocs: await count(b.db, ANALYTICS_COLLECTIONS.anomalies),
    entriesRead: a.entriesRead,
    anomalies: await count(a.db, ANALYTICS_COLLECTIONS.anomalies),
    assessments: await count(a.db, ANALYTICS_COLLECTIONS.assessments),
    matchedToPreviousRun: await count(a.db, ANALYTICS_COLLECTIONS.assessments, { matchedMeasurementId: { $ne: null } }),
    measuredGrowth: await count(a.db, ANALYTICS_COLLECTIONS.assessments, { growthBasis: 'MATCHED' }),
    risks: await count(a.db, ANALYTICS_COLLECTIONS.risks),
    deadLetters: await a.db.collection(DEAD_LETTERS_COLLECTION).countDocuments({}),
  };
  const ok =
    counts.baselineDocs === n &&
    counts.entriesRead === n + w.segments.length &&
    counts.anomalies === n &&
    counts.assessments === n &&
    counts.risks === w.segments.length &&
    counts.deadLetters === 0;
  return { counts, ok, expected: `${n} anomalies, assessments and baseline documents, ${w.segments.length} risks and no dead letters` };
}

/** The servers and clients of an events benchmark (bench:analytics, bench:events). */
export interface EventBenchServers {
  mongo: MongoClient;
  /** Publisher and consumer on separate connections, as the relay and the subgraph are. */
  redis: Redis;
  consumerRedis: Redis;
  /** How the run names its database in its output: embedded, or the URI without credentials. */
  mongoLabel: string;
  /** Run first to last by stop(); a benchmark adds its own clean-ups (unshift to run them before the clients close). */
  cleanups: (() => Promise<unknown>)[];
  stop(): Promise<void>;
}

/**
 * MONGODB_URI and REDIS_URL when set, otherwise an embedded MongoDB (in memory) and a redis-server of its own; stop()
 * runs the clean-ups and stops whatever was started, also after a failed start.
 */
export async function startEventBenchServers(name: string): Promise<EventBenchServers> {
  let embedded: EmbeddedMongo | null = null;
  let redisServer: RedisServerProcess | null = null;
  const cleanups: (() => Promise<unknown>)[] = [];
  const stop = async () => {
    for (const cleanup of cleanups) await cleanup().catch((err: unknown) => console.error('cleanup:', err));
    await Promise.allSettled([embedded?.stop(), redisServer?.stop()]);
  };
  try {
    [embedded, redisServer] = await Promise.all([
      process.env['MONGODB_URI'] ? null : startEmbeddedMongo(),
      process.env['REDIS_URL'] ? null : startRedisServer(),
    ]);
    const mongoUri = process.env['MONGODB_URI'] ?? embedded!.uri;
    const redisUrl = process.env['REDIS_URL'] ?? redisServer!.url;
    const mongo = await connectMongo(mongoUri);
    cleanups.push(() => mongo.close());
    const quiet = createLogger(name, 'silent');
    const [redis, consumerRedis] = [createRedisClient(redisUrl, quiet), createRedisClient(redisUrl, quiet)];
    cleanups.push(async () => (redis.disconnect(), consumerRedis.disconnect()));
    await Promise.all([redisReady(redis), redisReady(consumerRedis)]);
    const mongoLabel = embedded ? 'embedded (mongo-java-server)' : mongoUri.replace(/\/\/[^@]*@/, '//');
    return { mongo, redis, consumerRedis, mongoLabel, cleanups, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}
