/**
 * `npm run bench:events [-- --backlog <n>] [-- --samples <k>]`: how long another tenant waits while one tenant's event
 * backlog drains. The analytics subgraph's own consumer (StreamConsumer.start(), production defaults, group
 * `analytics`) with analyticsEventHandler follows the streams; tenant A publishes the ILI workload bench:analytics
 * uses (bench/analytics-workload.ts: one segment per 500 anomalies, n anomalies, XADDed to A's streams as the relay
 * writes them). Tenant B then publishes one segment and one anomaly, and B's latency is the time from that XADD to
 * B's anomaly being in `assessments` (what `anomalyAssessments` serves).
 *   1. No backlog: k fresh B tenants one after the other on an idle consumer (the baseline).
 *   2. Backlog: the same with A's n events waiting (measured while A drains; A's events still unread are reported).
 * Real servers: embedded MongoDB (or MONGODB_URI) and redis-server (or REDIS_URL), fresh names per run.
 */
import { randomBytes, randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import type Redis from 'ioredis';
import type { Collection } from 'mongodb';
import { StreamConsumer } from '@linepack/lib/events/consumer';
import { ASSET_UPSERTED } from '@linepack/subgraph-assets/events';
import { MEASUREMENT_RECORDED } from '@linepack/subgraph-measurements/events';
import { eventStream, producerStreams, streamRegistry, tenantStream } from '@linepack/lib/events/outbox';
import { createLogger } from '@linepack/lib/logger';
import { databaseName } from '@linepack/lib/mongo';
import { waitFor } from '@linepack/lib/testing/until';
import { ANALYTICS_CONSUMER_GROUP } from '@linepack/subgraph-analytics';
import { ANALYTICS_COLLECTIONS } from '@linepack/subgraph-analytics/documents';
import { analyticsEventHandler, ensureAnalyticsIndexes } from '@linepack/subgraph-analytics/projections';
import { median, printColumns } from './harness';
import { startEventBenchServers, workload, xaddAll } from './analytics-workload';

/** Far above any sane latency: a B that never gets its turn fails the run rather than hanging it. */
const B_TIMEOUT_MS = 600_000;

/** A's events the group has not acknowledged yet, over A's tenant streams (lag + pending, as the metric sums them). */
async function unacknowledged(redis: Redis, streams: readonly string[], group: string): Promise<number> {
  let total = 0;
  for (const stream of streams) {
    const groups = (await redis.xinfo('GROUPS', stream).catch(() => [])) as unknown[][];
    for (const fields of groups) {
      const info: Record<string, unknown> = {};
      for (let i = 0; i + 1 < fields.length; i += 2) info[String(fields[i])] = fields[i + 1];
      if (info['name'] === group) total += Number(info['lag'] ?? 0) + Number(info['pending'] ?? 0);
    }
  }
  return total;
}

/** One B tenant: its segment and first anomaly published together, then the wait for the anomaly's assessment. */
async function bLatencyMs(redis: Redis, bases: readonly [string, string], assessments: Collection<{ _id: string }>): Promise<number> {
  const tenant = randomUUID();
  const w = workload(2);
  const anomaly = w.anomalies[0]!;
  const started = performance.now();
  await xaddAll(redis, bases[0], tenant, ASSET_UPSERTED, w.segments);
  await xaddAll(redis, bases[1], tenant, MEASUREMENT_RECORDED, [anomaly]);
  await waitFor(async () => (await assessments.countDocuments({ _id: anomaly['id'] as string })) === 1, B_TIMEOUT_MS, `tenant B's anomaly assessed`, 10);
  return performance.now() - started;
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { backlog: { type: 'string', default: '100000' }, samples: { type: 'string', default: '5' } } });
  const n = Number(values.backlog);
  const samples = Number(values.samples);
  if (!Number.isInteger(n) || n < 2) throw new Error(`--backlog must be an integer ≥ 2 (got ${values.backlog})`);
  if (!Number.isInteger(samples) || samples < 1) throw new Error(`--samples must be a positive integer (got ${values.samples})`);

  const { mongo, redis, consumerRedis, mongoLabel, cleanups, stop } = await startEventBenchServers('bench-events');
  try {
    const prefix = `bench${randomBytes(4).toString('hex')}`;
    const bases = [eventStream(prefix, 'assets'), eventStream(prefix, 'measurements')] as const;
    const db = mongo.db(databaseName(prefix, 'analytics'));
    // External servers are shared: remove what this run created (every tenant stream, the registries), whatever happens.
    cleanups.unshift(async () => {
      await db.dropDatabase();
      for (const base of bases) await redis.del(...(await producerStreams(redis, base)), streamRegistry(base));
    });
    await ensureAnalyticsIndexes(db);
    const assessments = db.collection<{ _id: string }>(ANALYTICS_COLLECTIONS.assessments);
    const consumer = new StreamConsumer({
      redis: consumerRedis,
      db,
      streams: bases,
      group: ANALYTICS_CONSUMER_GROUP,
      handle: analyticsEventHandler(db),
      logger: createLogger('bench-events', 'warn', process.stderr),
    });
    await consumer.ensureGroups();
    await consumer.start();
    cleanups.unshift(() => consumer.stop());

    // Warm-up (JIT, pools), untimed.
    await bLatencyMs(redis, bases, assessments);
    const idle: number[] = [];
    for (let i = 0; i < samples; i++) idle.push(await bLatencyMs(redis, bases, assessments));

    const a = workload(n);
    const aTenant = randomUUID();
    const publishStarted = performance.now();
    await xaddAll(redis, bases[0], aTenant, ASSET_UPSERTED, a.segments);
    await xaddAll(redis, bases[1], aTenant, MEASUREMENT_RECORDED, a.anomalies);
    const publishS = (performance.now() - publishStarted) / 1000;
    const aEvents = a.segments.length + a.anomalies.length;
    const aStreams = bases.map((b) => tenantStream(b, aTenant));
    const busy: number[] = [];
    const aLeft: number[] = [];
    for (let i = 0; i < samples; i++) {
      busy.push(await bLatencyMs(redis, bases, assessments));
      aLeft.push(await unacknowledged(redis, aStreams, ANALYTICS_CONSUMER_GROUP));
    }
    // A's drain rate over the same time, for what one shared stream (read in order) would have made B wait.
    const drainS = (performance.now() - publishStarted) / 1000;
    const drainRate = (aEvents - aLeft[aLeft.length - 1]!) / drainS;

    const base = median(idle);
    const row = (name: string, ms: number[], left: string) => [
      name,
      String(ms.length),
      (median(ms) / 1000).toFixed(3),
      (Math.max(...ms) / 1000).toFixed(3),
      (median(ms) / base).toPrecision(3) + '×',
      left,
    ];
    printColumns(
      `Tenant B's first anomaly, XADD → assessed, while tenant A's backlog drains (analytics consumer, real handler)`,
      ['scenario', 'samples', 'median s', 'max s', 'vs no backlog', "A's events unacknowledged after each B"],
      [
        row('B alone (baseline)', idle, '—'),
        row(`B behind A's ${aEvents.toLocaleString('en-US')}-event backlog`, busy, aLeft.map((v) => v.toLocaleString('en-US')).join(' / ')),
      ],
      [
        `A published ${aEvents.toLocaleString('en-US')} events (${a.segments.length} segments, ${n.toLocaleString('en-US')} anomalies) in ${publishS.toFixed(1)} s; mongo ${mongoLabel}.`,
        `A drained ${drainRate.toFixed(0)} events/s meanwhile: behind one shared stream, read in order, B's anomaly would have waited about ${(aEvents / drainRate).toFixed(0)} s (estimate).`,
        'baseline: B alone. Ratios compare runs of this invocation only; absolute times depend on the machine.',
      ],
    );
    // B must not have waited for the backlog: A still had events left when the last B was assessed.
    const ok = aLeft[aLeft.length - 1]! > 0;
    if (!ok) console.error('FAILED: A had drained before the last B was assessed; use a larger --backlog to measure anything.');
    return ok ? 0 : 1;
  } finally {
    await stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
