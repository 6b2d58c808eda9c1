/**
 * `npm run bench:scale`: growth curves. Each workload runs at every size of --sizes (default 1,000, 10,000 and
 * 100,000), each time on fresh databases, and prints its per-item cost at each size and its growth factor: per-item
 * cost at the largest size ÷ at the smallest. Work that grows linearly with its input keeps a factor near 1; the
 * target is ≤ 2. A factor near the size ratio (100× from 1,000 to 100,000) means every item pays for every other.
 *
 *   analytics  N ILI anomalies (bench/analytics-workload.ts, the workload of bench:analytics) published as the outbox
 *              relay publishes them and assessed by the analytics subgraph's consumer and handler; beside it the
 *              driver's insertMany of the same anomaly documents (target at the largest size: ≤ 20× its time).
 *   listing    N readings of one asset among N readings of nine others; every page (first: 100) read through
 *              MeasurementRepository.list, then one page at the start and one at the end of the walk timed again
 *              (target: a page costs the same wherever it is and however large the collection).
 *   summary    N/10 assets (pipelines of nine segments) with their anomalies, CP readings and inspection records,
 *   register   written by the repositories, published by the real outbox relay and projected by the real analytics
 *   status     and compliance consumers; then what pipelineSummary reads (every subgraph's summary methods), the
 *              riskRegister first page and the complianceStatus first page, through the subgraphs' repositories.
 *   ingest     N×10 readings through MeasurementRepository.record in batches of 1,000, as recordMeasurements stores
 *              them; after each size, the embedded server's resident set size.
 *
 *   npm run bench:scale [-- --sizes 1000,10000,100000] [--workloads analytics,listing,summary,register,status,ingest]
 *                          [--quick] [--json] [--plain]
 *
 * Without MONGODB_URI it runs the embedded server as `npm start` does (file-backed H2), on a file of its own under
 * .linepack/ that is deleted at the end (--plain: without Linepack's secondary indexes and query planner, for a
 * before/after comparison); with MONGODB_URI, fresh database names per run, dropped afterwards. Redis
 * (REDIS_URL, or a redis-server of its own) only for the workloads that publish events. Every answer is checked:
 * exit status 1 when one is wrong, never because of a time (ratios only; the machine is shared).
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type Redis from 'ioredis';
import type { Collection, Db, MongoClient } from 'mongodb';
import { DEAD_LETTERS_COLLECTION, StreamConsumer, type DeadLetter, type EventBatchHandler } from '@linepack/lib/events/consumer';
import { eventStream, OutboxRelay, outboxEntry, streamRegistry, tenantStream, type OutboxEntry } from '@linepack/lib/events/outbox';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { createLogger } from '@linepack/lib/logger';
import { connectMongo, databaseName } from '@linepack/lib/mongo';
import { pageSize } from '@linepack/lib/pagination';
import { createRedisClient, redisReady } from '@linepack/lib/redis';
import { repoRoot } from '@linepack/lib/repo-root';
import { ANALYTICS_CONSUMER_GROUP } from '@linepack/subgraph-analytics';
import { ANALYTICS_COLLECTIONS } from '@linepack/subgraph-analytics/documents';
import { analyticsEventHandler, ensureAnalyticsIndexes } from '@linepack/subgraph-analytics/projections';
import { AnalyticsRepository } from '@linepack/subgraph-analytics/repository';
import { ASSET_UPSERTED, assetEventData, type AssetDocument } from '@linepack/subgraph-assets/documents';
import { AssetRepository, ASSETS_COLLECTION, ensureAssetIndexes } from '@linepack/subgraph-assets/repository';
import { checkAssetConsistency, createAssetSchema } from '@linepack/subgraph-assets/validation';
import { COMPLIANCE_CONSUMER_GROUP } from '@linepack/subgraph-compliance';
import type { AssetProjection } from '@linepack/subgraph-compliance/documents';
import { complianceEventHandler, ensureComplianceIndexes } from '@linepack/subgraph-compliance/projections';
import { ComplianceRepository } from '@linepack/subgraph-compliance/repository';
import { obligationsFor } from '@linepack/subgraph-compliance/rules';
import { measurementEventData, type MeasurementDocument } from '@linepack/subgraph-measurements/documents';
import { ensureMeasurementIndexes, MEASUREMENTS_COLLECTION, MeasurementRepository } from '@linepack/subgraph-measurements/repository';
import { validateBatch } from '@linepack/subgraph-measurements/validation';
import { assessFromEvents, checkAnalytics, insertDirectly, prng, workload, type Created } from './analytics-workload';
import { median, printColumns } from './harness';

const WORKLOADS = ['analytics', 'listing', 'summary', 'register', 'status', 'ingest'] as const;
type WorkloadName = (typeof WORKLOADS)[number];

const DEFAULT_SIZES = [1_000, 10_000, 100_000];
const QUICK_SIZES = [1_000, 5_000];
/** Untimed first run of every workload: JIT, connection pools, the server's first collections. */
const WARMUP_SIZE = 200;
const GROWTH_TARGET = 2;
const ANALYTICS_VS_INSERT_TARGET = 20;
/** recordMeasurements' batches as a client sends them, and what the repository inserts per command. */
const BATCH = 1_000;
const LIST_PAGE = 100;
const OTHER_ASSETS = 9;
const SEGMENTS_PER_PIPELINE = 9;
const INGEST_ASSETS = 100;
/** Timed repetitions of one read (after one untimed): its median is the read's time. */
const READ_REPETITIONS = 5;
const DAY_MS = 86_400_000;

const log = (line: string) => process.stderr.write(`bench:scale: ${line}\n`);
const int = (n: number) => n.toLocaleString('en-US');
const quiet = createLogger('bench-scale', 'silent');

interface Settings {
  sizes: number[];
  workloads: Set<WorkloadName>;
  json: boolean;
  /** The embedded server without Linepack's indexes and planner (mongo-java-server's own path): the "before". */
  plain: boolean;
}

function parseSettings(): Settings {
  const { values } = parseArgs({
    options: {
      sizes: { type: 'string' },
      workloads: { type: 'string', default: WORKLOADS.join(',') },
      quick: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      plain: { type: 'boolean', default: false },
      help: { type: 'boolean', default: false },
    },
  });
  if (values.help) {
    console.error(`usage: bench:scale [--sizes 1000,10000,100000] [--workloads ${WORKLOADS.join(',')}] [--quick] [--json] [--plain]`);
    process.exit(0);
  }
  const sizes = values.sizes ? values.sizes.split(',').map(Number) : values.quick ? QUICK_SIZES : DEFAULT_SIZES;
  // Ten is the least that gives the summary workloads (N/10 assets) one asset.
  if (sizes.length === 0 || sizes.some((n) => !Number.isInteger(n) || n < 10)) throw new Error(`--sizes takes integers ≥ 10 (got ${values.sizes})`);
  const names = values.workloads.split(',').map((w) => w.trim());
  const unknown = names.filter((w) => !(WORKLOADS as readonly string[]).includes(w));
  if (unknown.length > 0) throw new Error(`unknown workload ${unknown.join(', ')}: choose from ${WORKLOADS.join(', ')}`);
  return { sizes: [...new Set(sizes)].sort((a, b) => a - b), workloads: new Set(names as WorkloadName[]), json: values.json, plain: values.plain };
}

/** The servers of the whole run; every workload and size gets fresh databases (and streams) on them. */
interface Servers {
  mongo: MongoClient;
  embedded: EmbeddedMongo | null;
  dataFile: string | null;
  /** Publisher and consumer on separate connections, as the relay and a subgraph are: XREADGROUP blocks its connection. */
  redis: Redis | null;
  consumerRedis: Redis | null;
}

/** One measurement: its size, what the per-item cost is over, and the workload's own figures. */
interface Point {
  size: number;
  items: number;
  ms: number;
  perItemUs: number;
  extra: Record<string, number | null>;
}

interface WorkloadResult {
  name: WorkloadName;
  points: Point[];
  /** Per-item cost at the largest size ÷ at the smallest; null with one size, or when a size failed. */
  growth: number | null;
}

const point = (size: number, items: number, ms: number, extra: Record<string, number | null> = {}): Point => ({
  size,
  items,
  ms,
  perItemUs: (ms * 1000) / items,
  extra,
});

/**
 * The databases and streams of one workload at one size, dropped when it is done: a shared server keeps nothing
 * of ours, and a workload never reads what the previous one left (on the embedded server a larger collection costs
 * more to scan).
 */
class Scratch implements Created {
  dbs: Db[] = [];
  streams: string[] = [];

  constructor(private readonly servers: Servers) {}

  prefix(): string {
    return `scale${randomBytes(4).toString('hex')}`;
  }

  db(prefix: string, subgraph: string): Db {
    const db = this.servers.mongo.db(databaseName(prefix, subgraph));
    this.dbs.push(db);
    return db;
  }

  async drop(): Promise<void> {
    for (const db of this.dbs.splice(0)) await db.dropDatabase();
    const streams = this.streams.splice(0);
    if (streams.length > 0) await this.servers.redis?.del(...streams);
  }
}

/** A wrong answer, kept with where it happened; any makes the exit status 1. */
class Problems {
  readonly list: string[] = [];

  expect(where: string, what: string, actual: unknown, expected: unknown): void {
    if (actual !== expected) this.list.push(`${where}: ${what} ${String(actual)}, expected ${String(expected)}`);
  }

  check(where: string, ok: boolean, message: string): void {
    if (!ok) this.list.push(`${where}: ${message}`);
  }
}

/** One untimed call, then the median of READ_REPETITIONS timed ones; returns the first answer to check. */
async function timeRead<T>(read: () => Promise<T>): Promise<{ ms: number; answer: T }> {
  const answer = await read();
  const times: number[] = [];
  for (let i = 0; i < READ_REPETITIONS; i++) {
    const started = performance.now();
    await read();
    times.push(performance.now() - started);
  }
  return { ms: median(times), answer };
}

/**
 * A page's total: counted with the page (Connection.totalCount) or on demand (count(), which the resolvers call only
 * when totalCount is selected, so the timed page read leaves it out), whichever the repository answers with.
 */
function totalOf(page: { totalCount?: number; count?: () => Promise<number> }): Promise<number> {
  return page.count ? page.count() : Promise.resolve(page.totalCount ?? Number.NaN);
}

/** Validated as recordMeasurements validates its input: a benchmark item the API would refuse measures nothing. */
function validItems(raw: readonly Record<string, unknown>[]): ReturnType<typeof validateBatch>['items'] {
  const { items, violations } = validateBatch(raw);
  if (violations.length > 0) throw new Error(`benchmark readings are invalid: ${JSON.stringify(violations.slice(0, 3))}`);
  return items;
}

/** Stores readings in batches of BATCH through the repository; returns the ms spent in record() alone. */
async function recordAll(
  repo: MeasurementRepository,
  total: number,
  itemAt: (i: number) => Record<string, unknown>,
  problems: Problems,
  where: string,
  progress = false,
): Promise<number> {
  let ms = 0;
  let inserted = 0;
  let nextReport = total / 10;
  for (let start = 0; start < total; start += BATCH) {
    const items = validItems(Array.from({ length: Math.min(BATCH, total - start) }, (_, k) => itemAt(start + k)));
    const started = performance.now();
    const result = await repo.record(items);
    ms += performance.now() - started;
    inserted += result.insertedCount;
    if (progress && start + items.length >= nextReport) {
      log(`  ${int(start + items.length)}/${int(total)} readings after ${(ms / 1000).toFixed(1)} s`);
      nextReport += total / 10;
    }
  }
  problems.expect(where, 'readings stored', inserted, total);
  return ms;
}

// ─── analytics ──────────────────────────────────────────────────────────────────────────────────────────────────

async function runAnalytics(servers: Servers, size: number, scratch: Scratch, problems: Problems, where: string): Promise<Point> {
  const w = workload(size);
  const tenantId = randomUUID();
  // The baseline first, as bench:analytics runs them, so both benchmarks measure the same sequence.
  const b = await insertDirectly(servers.mongo, w, tenantId, scratch);
  const a = await assessFromEvents(servers.mongo, servers.redis!, servers.consumerRedis!, w, tenantId, scratch, size >= 10_000);
  const { counts, ok, expected } = await checkAnalytics(w, tenantId, a, b);
  problems.check(where, ok, `expected ${expected}; got ${JSON.stringify(counts)}`);
  const ms = a.publishMs + a.consumeMs;
  return point(size, size, ms, { segments: w.segments.length, insertManyMs: b.ms, vsInsertMany: ms / b.ms });
}

// ─── listing ────────────────────────────────────────────────────────────────────────────────────────────────────

async function runListing(servers: Servers, size: number, scratch: Scratch, problems: Problems, where: string): Promise<Point> {
  const db = scratch.db(scratch.prefix(), 'measurements');
  await ensureMeasurementIndexes(db);
  const tenantId = randomUUID();
  const repo = new MeasurementRepository(db, tenantId);
  const assetId = randomUUID();
  const others = Array.from({ length: OTHER_ASSETS }, () => randomUUID());
  const newest = Date.now() - DAY_MS;
  // Alternating with the other assets' readings, so the asset's readings are spread over the whole collection as
  // they are when many assets report; two per minute, so pages also break ties on the id.
  await recordAll(
    repo,
    2 * size,
    (i) => {
      const k = Math.floor(i / 2);
      const observedAt = new Date(newest - Math.floor(k / 2) * 60_000);
      return i % 2 === 0
        ? { idempotencyKey: `cp-${k}`, assetId, type: 'CP_PIPE_TO_SOIL', value: -850 - (k % 100), unit: 'MV', observedAt, source: 'FIELD' }
        : { idempotencyKey: `p-${k}`, assetId: others[k % OTHER_ASSETS]!, type: 'PRESSURE', value: 6_000 + (k % 50), unit: 'KPA', observedAt, source: 'SCADA' };
    },
    problems,
    where,
  );

  const seen: MeasurementDocument[] = [];
  let pages = 0;
  /** The cursor the last page was read with, to read that page again. */
  let lastAfter: string | null = null;
  const started = performance.now();
  for (let after: string | null = null, more = true; more; pages++) {
    lastAfter = after;
    const page = await repo.list({ assetId }, LIST_PAGE, after);
    for (const edge of page.edges) seen.push(edge.node);
    [after, more] = [page.pageInfo.endCursor, page.pageInfo.hasNextPage];
  }
  const ms = performance.now() - started;
  // Timed again apart from the walk: the walk's own page times include whatever else the machine did meanwhile.
  const first = await timeRead(() => repo.list({ assetId }, LIST_PAGE, null));
  const last = await timeRead(() => repo.list({ assetId }, LIST_PAGE, lastAfter));

  problems.expect(where, 'readings listed', seen.length, size);
  problems.expect(where, 'distinct readings listed', new Set(seen.map((m) => m._id)).size, size);
  problems.expect(where, 'pages', pages, Math.ceil(size / LIST_PAGE));
  problems.check(
    where,
    seen.every((m) => m.assetId === assetId),
    'a page held another asset’s reading',
  );
  const ordered = seen.every((m, i) => {
    const prev = seen[i - 1];
    if (!prev) return true;
    const [a, b] = [prev.observedAt.getTime(), m.observedAt.getTime()];
    return a > b || (a === b && prev._id > m._id);
  });
  problems.check(where, ordered, 'pages are not newest first (ties by id)');
  problems.expect(where, 'first page rows', first.answer.edges.length, Math.min(LIST_PAGE, size));
  problems.expect(where, 'last page rows', last.answer.edges.length, size - (pages - 1) * LIST_PAGE);
  problems.expect(where, 'totalCount', await totalOf(first.answer), size);
  return point(size, size, ms, { pages, firstPageMs: first.ms, lastPageMs: last.ms });
}

// ─── summary, register, status ──────────────────────────────────────────────────────────────────────────────────

type AssetInput = Record<string, unknown> & { type: 'PIPELINE' | 'SEGMENT' };

/**
 * Pipelines of up to nine segments, `count` assets in all, with what decides their obligations and risk varied:
 * class location, HCA, atmospheric exposure, the two pipe sizes of the analytics workload.
 */
function portfolio(count: number, tenantId: string): { doc: AssetDocument; projection: AssetProjection }[] {
  const out: { doc: AssetDocument; projection: AssetProjection }[] = [];
  const now = new Date();
  for (let line = 0; out.length < count; line++) {
    let parentId: string | null = null;
    for (let s = -1; s < SEGMENTS_PER_PIPELINE && out.length < count; s++) {
      const common = { status: 'ACTIVE', product: 'NATURAL_GAS', regulation: 'CFR_192', maopKpa: 6_200, cathodicallyProtected: true, gasOdorized: true };
      const input: AssetInput =
        s < 0
          ? { ...common, type: 'PIPELINE', name: `Scale line ${line}`, beginStationM: 0, endStationM: SEGMENTS_PER_PIPELINE * 1_000 }
          : {
              ...common,
              type: 'SEGMENT',
              name: `Scale line ${line} segment ${s}`,
              parentId,
              beginStationM: s * 1_000,
              endStationM: (s + 1) * 1_000,
              ...(s % 2 === 0
                ? { outsideDiameterMm: 508, wallThicknessMm: 7.9, smysMpa: 359 }
                : { outsideDiameterMm: 323.9, wallThicknessMm: 6.4, smysMpa: 290 }),
              classLocation: 1 + (s % 4),
              inHca: s % 5 === 0,
              atmosphericExposure: s % 3 === 0,
            };
      // As createAsset builds an asset: the API's defaults and rules, so the events carry what production's carry.
      const values = createAssetSchema.parse(input);
      checkAssetConsistency(values);
      const doc: AssetDocument = {
        _id: randomUUID(),
        tenantId,
        ...values,
        nameLower: values.name.toLowerCase(),
        version: 1,
        createdAt: now,
        updatedAt: now,
      };
      if (s < 0) parentId = doc._id;
      const projection: AssetProjection = {
        _id: doc._id,
        tenantId,
        version: 1,
        type: doc.type,
        name: doc.name,
        parentId: doc.parentId,
        status: doc.status,
        regulation: doc.regulation,
        classLocation: doc.classLocation,
        inHca: doc.inHca,
        couldAffectHca: doc.couldAffectHca ?? null,
        cathodicallyProtected: doc.cathodicallyProtected ?? null,
        atmosphericExposure: doc.atmosphericExposure ?? null,
        offshore: doc.offshore ?? null,
        gasOdorized: doc.gasOdorized ?? null,
        crossing: doc.crossing ?? null,
        sourceEventId: '',
      };
      out.push({ doc, projection });
    }
  }
  return out;
}

/**
 * What each asset has recorded: a segment two ILI anomalies of the last run and a pipe-to-soil reading; a pipeline
 * its ILI run, a patrol and a leak survey — every third line's patrol two years old, so some rows are overdue.
 */
function portfolioReadings(assets: readonly AssetDocument[]): Record<string, unknown>[] {
  const random = prng(20261125);
  const now = Date.now();
  const iliRun = new Date(now - 200 * DAY_MS);
  const out: Record<string, unknown>[] = [];
  let line = -1;
  for (const a of assets) {
    if (a.type === 'PIPELINE') {
      line++;
      out.push(
        { idempotencyKey: `run-${a._id}`, assetId: a._id, type: 'ILI_RUN', observedAt: iliRun, source: 'ILI', runId: 'ili-scale' },
        {
          idempotencyKey: `patrol-${a._id}`,
          assetId: a._id,
          type: 'PATROL',
          observedAt: new Date(now - (line % 3 === 0 ? 730 : 20) * DAY_MS),
          source: 'FIELD',
        },
        { idempotencyKey: `leak-${a._id}`, assetId: a._id, type: 'LEAK_SURVEY', observedAt: new Date(now - 100 * DAY_MS), source: 'FIELD' },
      );
      continue;
    }
    for (let k = 0; k < 2; k++) {
      out.push({
        idempotencyKey: `ili-${a._id}-${k}`,
        assetId: a._id,
        type: 'ILI_ANOMALY',
        observedAt: iliRun,
        source: 'ILI',
        runId: 'ili-scale',
        featureType: 'METAL_LOSS',
        surface: random() < 0.8 ? 'EXTERNAL' : 'INTERNAL',
        odometerM: Math.round((a.beginStationM! + 100 + k * 400 + random() * 300) * 1000) / 1000,
        clockDeg: Math.floor(random() * 360),
        depthPctWt: Math.round((5 + random() * 55) * 10) / 10,
        lengthMm: Math.round(10 + random() * 290),
        widthMm: Math.round(10 + random() * 190),
      });
    }
    out.push({
      idempotencyKey: `cp-${a._id}`,
      assetId: a._id,
      type: 'CP_PIPE_TO_SOIL',
      value: Math.round(-700 - random() * 400),
      unit: 'MV',
      observedAt: new Date(now - (10 + Math.floor(random() * 300)) * DAY_MS),
      source: 'FIELD',
    });
  }
  return out;
}

/** Publishes everything `collection` holds in its outbox with the relay the subgraph runs, until none is left. */
async function relayAll<D extends AssetDocument | MeasurementDocument>(
  servers: Servers,
  collection: Collection<D>,
  stream: string,
  dataOf: (doc: D, entry: OutboxEntry) => Record<string, unknown>,
): Promise<number> {
  const relay = new OutboxRelay<D>({ collection, redis: servers.redis!, stream, logger: quiet, dataOf });
  let published = 0;
  for (let n = await relay.drainOnce(); n > 0; n = await relay.drainOnce()) published += n;
  return published;
}

/** pollOnce is the body of the consumer's own loop; stopping on the count read keeps the last BLOCK out of the run. */
async function consumeAll(consumer: StreamConsumer, total: number): Promise<number> {
  let read = 0;
  for (;;) {
    const n = await consumer.pollOnce();
    read += n;
    if (read >= total || n === 0) return read;
  }
}

type ReadName = 'summary' | 'register' | 'status';

async function runReads(servers: Servers, size: number, scratch: Scratch, problems: Problems, where: string): Promise<Record<ReadName, Point>> {
  const count = Math.max(1, Math.round(size / 10));
  const prefix = scratch.prefix();
  const [assetsDb, measurementsDb, analyticsDb, complianceDb] = ['assets', 'measurements', 'analytics', 'compliance'].map((s) => scratch.db(prefix, s)) as [
    Db,
    Db,
    Db,
    Db,
  ];
  await Promise.all([
    ensureAssetIndexes(assetsDb),
    ensureMeasurementIndexes(measurementsDb),
    ensureAnalyticsIndexes(analyticsDb),
    ensureComplianceIndexes(complianceDb),
  ]);
  const streams = [eventStream(prefix, 'assets'), eventStream(prefix, 'measurements')];
  scratch.streams.push(...streams);
  const consumerOf = (db: Db, group: string, handle: (db: Db) => EventBatchHandler) =>
    // Warnings (a batch retried event by event, a dead letter) on stderr: stdout holds the tables.
    new StreamConsumer({ redis: servers.consumerRedis!, db, streams, group, handle: handle(db), logger: createLogger('bench-scale', 'warn', process.stderr) });
  const consumers = [
    consumerOf(analyticsDb, ANALYTICS_CONSUMER_GROUP, analyticsEventHandler),
    consumerOf(complianceDb, COMPLIANCE_CONSUMER_GROUP, complianceEventHandler),
  ];
  // The groups exist before the first event, as they do for running subgraphs.
  for (const consumer of consumers) await consumer.ensureGroups();

  const tenantId = randomUUID();
  // The relay writes the tenant's streams and registers them: they go with the run's scratch too.
  scratch.streams.push(...streams.flatMap((base) => [tenantStream(base, tenantId), streamRegistry(base)]));
  const assets = portfolio(count, tenantId);
  const readings = portfolioReadings(assets.map((a) => a.doc));
  if (size >= 10_000) log(`  seeding ${int(count)} assets and ${int(readings.length)} measurements`);
  // The documents createAsset inserts, outbox event included; insertMany rather than one insertOne each, which
  // would make seeding 10,000 assets on the durable embedded server a minute of fsyncs.
  const assetDocs = assets.map(({ doc }) => ({ ...doc, outbox: [outboxEntry(ASSET_UPSERTED, assetEventData(doc))] }));
  const assetCollection = assetsDb.collection<AssetDocument>(ASSETS_COLLECTION);
  for (let i = 0; i < assetDocs.length; i += BATCH) await assetCollection.insertMany(assetDocs.slice(i, i + BATCH), { ordered: false });
  const measurements = new MeasurementRepository(measurementsDb, tenantId);
  await recordAll(measurements, readings.length, (i) => readings[i]!, problems, where);
  // Assets first, as they are created before anything is recorded against them.
  const published =
    // The assets subgraph publishes the snapshot its outbox entry holds; measurements publish the document itself.
    (await relayAll<AssetDocument>(servers, assetCollection, streams[0]!, (_asset, entry) => entry.data ?? {})) +
    (await relayAll<MeasurementDocument>(servers, measurementsDb.collection<MeasurementDocument>(MEASUREMENTS_COLLECTION), streams[1]!, measurementEventData));
  problems.expect(where, 'events published', published, count + readings.length);
  for (const [i, consumer] of consumers.entries()) {
    const started = performance.now();
    problems.expect(where, `events consumed (${i === 0 ? 'analytics' : 'compliance'})`, await consumeAll(consumer, published), published);
    if (size >= 10_000)
      log(`  ${i === 0 ? 'analytics' : 'compliance'} projected ${int(published)} events in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  }
  for (const db of [analyticsDb, complianceDb]) {
    const dead = await db.collection<DeadLetter>(DEAD_LETTERS_COLLECTION).findOne({});
    problems.check(where, dead === null, `events dead-lettered in ${db.databaseName}, the first: ${dead?.type} ${dead?.error}`);
  }

  // What the answers must be, from the generator and the rule engine, not from what was stored.
  const byId = new Map(assets.map((a) => [a.doc._id, a.projection]));
  const statusRows = assets.reduce((sum, { projection }) => {
    const lineage = [projection, ...(projection.parentId ? [byId.get(projection.parentId)!] : [])];
    return sum + obligationsFor(lineage).length;
  }, 0);
  const anomalies = readings.filter((r) => r['type'] === 'ILI_ANOMALY').length;
  const assessable = await analyticsDb.collection(ANALYTICS_COLLECTIONS.assessments).countDocuments({ tenantId, assessable: true });
  problems.expect(where, 'assessments', await analyticsDb.collection(ANALYTICS_COLLECTIONS.assessments).countDocuments({ tenantId }), anomalies);
  const inspections = readings
    .filter((r) => ['ILI_RUN', 'PATROL', 'LEAK_SURVEY'].includes(r['type'] as string))
    .map((r) => (r['observedAt'] as Date).getTime());
  const latestInspection = inspections.length > 0 ? Math.max(...inspections) : null;

  const assetRepo = new AssetRepository(assetsDb, tenantId);
  const analytics = new AnalyticsRepository(analyticsDb, tenantId);
  const compliance = new ComplianceRepository(complianceDb, tenantId);
  // Every field of pipelineSummary, all at once: the gateway's plan fetches the four subgraphs' parts side by side.
  const summary = await timeRead(() =>
    Promise.all([
      assetRepo.summary(),
      measurements.count(),
      measurements.latestInspectionAt(),
      analytics.countsByCategory(),
      analytics.countsByBand(),
      analytics.maxErf(),
      analytics.oldestComputedAt(),
      compliance.countsByState(new Date(), 30),
      compliance.nextDueAt(new Date()),
    ]),
  );
  const [assetCounts, measurementCount, latestInspectionAt, byCategory, byBand, , , byState] = summary.answer;
  const sum = (rows: readonly { count: number }[]) => rows.reduce((s, r) => s + r.count, 0);
  problems.expect(where, 'summary totalAssets', assetCounts.totalAssets, count);
  problems.expect(where, 'summary measurementCount', measurementCount, readings.length);
  problems.expect(where, 'summary latestInspectionAt', latestInspectionAt?.getTime() ?? null, latestInspection);
  problems.expect(where, 'summary anomalies by response category', sum(byCategory), assessable);
  problems.expect(where, 'summary segments by risk band', sum(byBand), count);
  problems.expect(where, 'summary compliance by state', sum(byState), statusRows);

  const register = await timeRead(() => analytics.register({}, pageSize(null), null));
  problems.expect(where, 'riskRegister totalCount', await totalOf(register.answer), count);
  problems.expect(where, 'riskRegister first page rows', register.answer.edges.length, Math.min(pageSize(null), count));
  const scores = register.answer.edges.map((e) => e.node.score);
  problems.check(
    where,
    scores.every((s, i) => i === 0 || scores[i - 1]! >= s),
    'riskRegister is not highest score first',
  );

  const status = await timeRead(() => compliance.statusPage({}, new Date(), 30, pageSize(null), null));
  problems.expect(where, 'complianceStatus totalCount', await totalOf(status.answer), statusRows);
  problems.expect(where, 'complianceStatus first page rows', status.answer.edges.length, Math.min(pageSize(null), statusRows));
  const due = status.answer.edges.map((e) => e.node.dueAt?.getTime() ?? Infinity);
  problems.check(
    where,
    due.every((d, i) => i === 0 || due[i - 1]! <= d),
    'complianceStatus is not soonest due first',
  );

  const extra = { measurements: readings.length, statusRows };
  return {
    summary: point(size, count, summary.ms, extra),
    register: point(size, count, register.ms, extra),
    status: point(size, count, status.ms, extra),
  };
}

// ─── ingest ─────────────────────────────────────────────────────────────────────────────────────────────────────

/** VmRSS and VmHWM (its peak) of a process, in kB; null when it cannot be read. */
function residentKb(pid: number): { rss: number; peak: number } | null {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const field = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? Number.NaN);
    return { rss: field('VmRSS'), peak: field('VmHWM') };
  } catch {
    return null;
  }
}

async function runIngest(servers: Servers, size: number, scratch: Scratch, problems: Problems, where: string): Promise<Point> {
  const total = size * 10;
  const db = scratch.db(scratch.prefix(), 'measurements');
  await ensureMeasurementIndexes(db);
  const repo = new MeasurementRepository(db, randomUUID());
  const assetIds = Array.from({ length: INGEST_ASSETS }, () => randomUUID());
  const first = Date.now() - total * 1_000 - DAY_MS;
  const ms = await recordAll(
    repo,
    total,
    (i) => ({
      idempotencyKey: `ingest-${i}`,
      assetId: assetIds[i % INGEST_ASSETS]!,
      type: 'PRESSURE',
      value: 6_000 + (i % 500),
      unit: 'KPA',
      observedAt: new Date(first + i * 1_000),
      source: 'SCADA',
    }),
    problems,
    where,
    total >= 100_000,
  );
  problems.expect(where, 'measurements counted', await repo.count(), total);
  const resident = servers.embedded ? residentKb(servers.embedded.pid) : null;
  const fileBytes = servers.dataFile
    ? await stat(servers.dataFile).then(
        (s) => s.size,
        () => null,
      )
    : null;
  return point(size, total, ms, { rssKb: resident?.rss ?? null, peakRssKb: resident?.peak ?? null, fileBytes });
}

// ─── the run ────────────────────────────────────────────────────────────────────────────────────────────────────

/** Workloads that share one seeded dataset per size run together. */
interface Group {
  names: readonly WorkloadName[];
  run(servers: Servers, size: number, scratch: Scratch, problems: Problems, where: string): Promise<Partial<Record<WorkloadName, Point>>>;
}

const GROUPS: Group[] = [
  { names: ['analytics'], run: async (...args) => ({ analytics: await runAnalytics(...args) }) },
  { names: ['listing'], run: async (...args) => ({ listing: await runListing(...args) }) },
  { names: ['summary', 'register', 'status'], run: (...args) => runReads(...args) },
  // Last: it leaves the embedded server at its largest, which is what its resident size is read for.
  { names: ['ingest'], run: async (...args) => ({ ingest: await runIngest(...args) }) },
];

/** What the size of a workload means, for the table titles and the items column. */
const ITEMS: Record<WorkloadName, { items: string; of: (size: number) => string }> = {
  analytics: { items: 'anomalies', of: (n) => `${int(n)} ILI anomalies` },
  listing: { items: 'readings', of: (n) => `${int(n)} readings` },
  summary: { items: 'assets', of: (n) => `${int(Math.round(n / 10))} assets` },
  register: { items: 'assets', of: (n) => `${int(Math.round(n / 10))} assets` },
  status: { items: 'assets', of: (n) => `${int(Math.round(n / 10))} assets` },
  ingest: { items: 'readings', of: (n) => `${int(n * 10)} readings` },
};

const TITLES: Record<WorkloadName, string> = {
  analytics: 'analytics: ILI anomalies from domain events → assessments and risks (vs. the driver’s insertMany of the same documents)',
  listing: `listing: every page (first: ${LIST_PAGE}) of one asset’s readings, in a collection with as many readings of ${OTHER_ASSETS} other assets`,
  summary: 'pipelineSummary: every subgraph’s summary reads, N/10 assets',
  register: `riskRegister: the first page (${pageSize(null)}), N/10 assets`,
  status: `complianceStatus: the first page (${pageSize(null)}), N/10 assets`,
  ingest: `ingest: N×10 readings through MeasurementRepository.record, batches of ${int(BATCH)}`,
};

const seconds = (ms: number) => (ms / 1000).toFixed(ms < 1_000 ? 4 : 2);
const perItem = (us: number) => us.toFixed(us >= 100 ? 0 : us >= 10 ? 1 : 2);
const times = (r: number) => `${r.toFixed(r >= 10 ? 0 : 2)}×`;
const mark = (ok: boolean) => (ok ? '✓' : '✗');
/** MiB, as /proc reports kB (KiB). */
const mb = (kb: number | null | undefined) => (kb == null || Number.isNaN(kb) ? '—' : (kb / 1024).toFixed(0));

function growthOf(points: readonly Point[], sizes: readonly number[]): number | null {
  const [smallest, largest] = [points.find((p) => p.size === sizes[0]), points.find((p) => p.size === sizes.at(-1))];
  return sizes.length > 1 && smallest && largest ? largest.perItemUs / smallest.perItemUs : null;
}

function printWorkload(result: WorkloadResult, sizes: readonly number[], embedded: boolean): void {
  const { name, points } = result;
  const base = points.find((p) => p.size === sizes[0]);
  const extraHeader: Record<WorkloadName, string[]> = {
    analytics: ['insertMany s', 'vs insertMany'],
    listing: ['pages', 'first page ms', 'last page ms'],
    summary: [],
    register: [],
    status: ['status rows'],
    ingest: embedded ? ['server RSS MB', 'H2 file MB'] : [],
  };
  const extraCells = (p: Point): string[] => {
    switch (name) {
      case 'analytics':
        return [seconds(p.extra['insertManyMs']!), times(p.extra['vsInsertMany']!)];
      case 'listing':
        return [int(p.extra['pages']!), p.extra['firstPageMs']!.toFixed(2), p.extra['lastPageMs']!.toFixed(2)];
      case 'status':
        return [int(p.extra['statusRows']!)];
      case 'ingest':
        return embedded ? [mb(p.extra['rssKb']), mb(p.extra['fileBytes'] == null ? null : p.extra['fileBytes']! / 1024)] : [];
      default:
        return [];
    }
  };
  const rows = points.map((p) => {
    const growth = base ? p.perItemUs / base.perItemUs : Number.NaN;
    const last = p.size === sizes.at(-1) && sizes.length > 1;
    return [
      int(p.size),
      int(p.items),
      seconds(p.ms),
      perItem(p.perItemUs),
      ...extraCells(p),
      Number.isNaN(growth) ? '—' : `${times(growth)}${last ? ` ${mark(growth <= GROWTH_TARGET)}` : ''}`,
    ];
  });
  const notes: string[] = [];
  if (result.growth !== null) {
    notes.push(
      `growth factor (µs/item at ${int(sizes.at(-1)!)} ÷ at ${int(sizes[0]!)}): ${times(result.growth)} ${mark(result.growth <= GROWTH_TARGET)} target ≤ ${GROWTH_TARGET}`,
    );
  }
  printColumns(`${TITLES[name]}`, ['size', ITEMS[name].items, 'seconds', 'µs/item', ...extraHeader[name], 'growth'], rows, notes);
}

interface Target {
  name: string;
  value: number | null;
  target: number;
  met: boolean | null;
}

function targetsOf(results: readonly WorkloadResult[], sizes: readonly number[]): Target[] {
  const targets: Target[] = results.map((r) => ({
    name: `${r.name}: growth factor`,
    value: r.growth,
    target: GROWTH_TARGET,
    met: r.growth === null ? null : r.growth <= GROWTH_TARGET,
  }));
  const at = (name: WorkloadName, size: number | undefined) => results.find((r) => r.name === name)?.points.find((p) => p.size === size);
  const add = (name: string, value: number | null | undefined, target: number) =>
    targets.push({ name, value: value ?? null, target, met: value == null ? null : value <= target });
  const [smallest, largest] = [sizes[0], sizes.at(-1)];
  if (results.some((r) => r.name === 'analytics'))
    add(`analytics ÷ insertMany at ${int(largest!)}`, at('analytics', largest)?.extra['vsInsertMany'], ANALYTICS_VS_INSERT_TARGET);
  const [small, large] = [at('listing', smallest), at('listing', largest)];
  if (results.some((r) => r.name === 'listing')) {
    if (sizes.length > 1)
      add(
        `listing: first page at ${int(largest!)} ÷ at ${int(smallest!)}`,
        large && small ? large.extra['firstPageMs']! / small.extra['firstPageMs']! : null,
        GROWTH_TARGET,
      );
    add(`listing: last page ÷ first page at ${int(largest!)}`, large ? large.extra['lastPageMs']! / large.extra['firstPageMs']! : null, GROWTH_TARGET);
  }
  return targets;
}

async function main(): Promise<number> {
  const settings = parseSettings();
  const { sizes } = settings;
  const needsRedis = ['analytics', 'summary', 'register', 'status'].some((w) => settings.workloads.has(w as WorkloadName));
  const t0 = performance.now();
  const problems = new Problems();
  let embedded: EmbeddedMongo | null = null;
  let redisServer: RedisServerProcess | null = null;
  let dataDir: string | null = null;
  let scratch: Scratch | null = null;
  const cleanups: (() => Promise<unknown>)[] = [];
  let cleaning: Promise<void> | null = null;
  // Run once, from the finally below or from Ctrl-C: whatever this run created goes, on a shared server too.
  const cleanup = () =>
    (cleaning ??= (async () => {
      await scratch?.drop().catch((err: unknown) => log(`dropping the last run's databases: ${String(err)}`));
      for (const step of cleanups) await step().catch((err: unknown) => log(`cleanup: ${String(err)}`));
      await Promise.allSettled([embedded?.stop(), redisServer?.stop()]);
      if (dataDir) await rm(dataDir, { recursive: true, force: true });
    })());
  // The run in progress then fails on its closed clients: what it would print about that is not a result.
  let interrupted = false;
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      interrupted = true;
      log(`${signal}: removing what this run created`);
      void cleanup().finally(() => process.exit(130));
    });
  }

  const results: WorkloadResult[] = [];
  try {
    let mongoUri = process.env['MONGODB_URI'];
    let dataFile: string | null = null;
    if (!mongoUri) {
      // The file-backed server `npm start` runs (every acknowledged write committed and fsynced), on a file of its own.
      await mkdir(path.join(repoRoot, '.linepack'), { recursive: true });
      dataDir = await mkdtemp(path.join(repoRoot, '.linepack', 'bench-scale-'));
      dataFile = path.join(dataDir, 'mongo.h2');
      embedded = await startEmbeddedMongo({ dataFile, log, plain: settings.plain });
      mongoUri = embedded.uri;
    }
    if (needsRedis && !process.env['REDIS_URL']) redisServer = await startRedisServer();
    const mongo = await connectMongo(mongoUri);
    cleanups.push(() => mongo.close());
    let redis: Redis | null = null;
    let consumerRedis: Redis | null = null;
    if (needsRedis) {
      const redisUrl = process.env['REDIS_URL'] ?? redisServer!.url;
      [redis, consumerRedis] = [createRedisClient(redisUrl, quiet), createRedisClient(redisUrl, quiet)];
      cleanups.push(async () => (redis!.disconnect(), consumerRedis!.disconnect()));
      await Promise.all([redisReady(redis), redisReady(consumerRedis)]);
    }
    const mongoLabel = embedded
      ? `embedded mongo-java-server, file-backed (H2, as npm start): ${path.relative(repoRoot, dataFile!)}`
      : mongoUri.replace(/\/\/[^@]*@/, '//');
    const servers: Servers = { mongo, embedded, dataFile, redis, consumerRedis };
    console.log(`bench:scale — sizes ${sizes.map(int).join(', ')}; mongo ${mongoLabel}`);
    console.log('Each workload at each size runs on fresh databases after an untimed warm-up; ratios compare runs of this invocation only.');

    for (const group of GROUPS) {
      const names = group.names.filter((n) => settings.workloads.has(n));
      if (names.length === 0) continue;
      const points: Partial<Record<WorkloadName, Point[]>> = {};
      const label = names.join('/');
      try {
        for (const size of [Math.min(WARMUP_SIZE, sizes[0]!), ...sizes]) {
          const warmup = points[names[0]!] === undefined;
          log(`${label} at ${ITEMS[names[0]!].of(size)}${warmup ? ' (warm-up, untimed)' : ''}`);
          const started = performance.now();
          scratch = new Scratch(servers);
          try {
            const measured = await group.run(servers, size, scratch, problems, `${label} at ${int(size)}${warmup ? ' (warm-up)' : ''}`);
            if (warmup) {
              for (const n of names) points[n] = [];
            } else for (const n of names) points[n]!.push(measured[n]!);
          } finally {
            await scratch.drop();
            scratch = null;
          }
          log(`${label} at ${ITEMS[names[0]!].of(size)} done in ${((performance.now() - started) / 1000).toFixed(1)} s`);
        }
      } catch (err) {
        if (interrupted) return 130;
        // A workload that cannot finish has no answer to check: that is a failure, but the others still run.
        problems.list.push(`${label}: ${(err as Error).stack ?? String(err)}`);
      }
      for (const name of names) {
        const result: WorkloadResult = { name, points: points[name] ?? [], growth: growthOf(points[name] ?? [], sizes) };
        results.push(result);
        printWorkload(result, sizes, embedded !== null);
      }
    }

    const targets = targetsOf(results, sizes);
    const notes: string[] = [];
    const ingest = results.find((r) => r.name === 'ingest')?.points.at(-1);
    if (ingest && embedded) {
      const file = ingest.extra['fileBytes'];
      notes.push(
        `Embedded server after the ${int(ingest.items)}-reading ingest: resident set ${mb(ingest.extra['rssKb'])} MB (peak ${mb(ingest.extra['peakRssKb'])} MB)` +
          `${file == null ? '' : `; H2 file ${mb(file / 1024)} MB, the whole run so far`}.`,
      );
    } else if (ingest) notes.push('Resident set size: not measured (MONGODB_URI: the server is not this process’s child).');
    printColumns(
      'Targets',
      ['target', 'value', 'limit', 'met'],
      targets.map((t) => [t.name, t.value === null ? '—' : times(t.value), `≤ ${t.target}×`, t.met === null ? '—' : mark(t.met)]),
      notes,
    );
    for (const problem of problems.list) console.error(`FAILED: ${problem}`);
    if (problems.list.length === 0) console.log('\nEvery answer checked: counts, pages and orders as expected.');
    if (settings.json) {
      const json = {
        benchmark: 'scale',
        mongo: embedded ? 'embedded-h2' : 'external',
        sizes,
        workloads: results.map((r) => ({ ...r, target: GROWTH_TARGET, met: r.growth === null ? null : r.growth <= GROWTH_TARGET })),
        targets,
        valid: problems.list.length === 0,
        problems: problems.list,
        totalSeconds: Math.round((performance.now() - t0) / 1000),
      };
      console.log(`BENCH_JSON ${JSON.stringify(json, (_k, v: unknown) => (typeof v === 'number' && !Number.isInteger(v) ? Number(v.toPrecision(4)) : v))}`);
    }
    return problems.list.length === 0 ? 0 : 1;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
