/**
 * `npm run bench:analytics [-- --anomalies <n>]`: what assessing ILI anomalies from domain events costs,
 * as a ratio to inserting the same number of anomaly documents with the MongoDB driver.
 *   A. The product: asset.upserted and measurement.recorded events XADDed to the real Redis streams
 *      (fields and MAXLEN as the outbox relay writes them), then the analytics StreamConsumer with
 *      analyticsEventHandler (the subgraph's group and batch settings) until it has read every event.
 *   B. Baseline: insertMany of anomaly-shaped documents, batches of 1,000, unordered, into a fresh collection.
 * Both run once after a small untimed warm-up (JIT, connection pools). Real servers: embedded MongoDB
 * (or MONGODB_URI) and redis-server (or REDIS_URL), fresh database and stream names per run.
 */
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { assessFromEvents, checkAnalytics, insertDirectly, startEventBenchServers, workload, type Created } from './analytics-workload';

const WARMUP_ANOMALIES = 2_000;

function printTable(title: string, rows: { name: string; items: number; ms: number }[], baselineMs: number): void {
  const cells = rows.map((r) => [
    r.name,
    r.items.toLocaleString('en-US'),
    (r.ms / 1000).toFixed(2),
    Math.round((r.items * 1000) / r.ms).toLocaleString('en-US'),
    (r.ms / baselineMs).toFixed(1) + '×',
  ]);
  const header = ['scenario', 'items', 'seconds', 'items/s', 'time vs B'];
  const widths = header.map((h, i) => Math.max(h.length, ...cells.map((c) => c[i]!.length)));
  const line = (c: string[]) => c.map((v, i) => (i === 0 ? v.padEnd(widths[i]!) : v.padStart(widths[i]!))).join('  ');
  console.log(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const c of cells) console.log(line(c));
}

async function main(): Promise<number> {
  const { values } = parseArgs({ options: { anomalies: { type: 'string', default: '100000' } } });
  const n = Number(values.anomalies);
  if (!Number.isInteger(n) || n < 2) throw new Error(`--anomalies must be an integer ≥ 2 (got ${values.anomalies})`);

  const { mongo, redis, consumerRedis, mongoLabel, cleanups, stop } = await startEventBenchServers('bench-analytics');
  try {
    // External servers are shared: remove what this run created, whatever happens.
    const created: Created = { dbs: [], streams: [] };
    cleanups.unshift(async () => {
      for (const db of created.dbs) await db.dropDatabase();
      if (created.streams.length > 0) await redis.del(...created.streams);
    });

    const warm = workload(Math.min(n, WARMUP_ANOMALIES));
    await assessFromEvents(mongo, redis, consumerRedis, warm, randomUUID(), created);
    await insertDirectly(mongo, warm, randomUUID(), created);

    const w = workload(n);
    const tenantId = randomUUID();
    console.log(`N = ${n.toLocaleString('en-US')} ILI anomalies on ${w.segments.length} segments, 2 runs; mongo ${mongoLabel}`);
    const b = await insertDirectly(mongo, w, tenantId, created);
    const a = await assessFromEvents(mongo, redis, consumerRedis, w, tenantId, created, true);

    printTable(
      'Assessing ILI anomalies from domain events vs. inserting them with the driver',
      [
        { name: 'B  insertMany ×1000, unordered (baseline)', items: n, ms: b.ms },
        { name: 'A  events → assessments + risks', items: n, ms: a.publishMs + a.consumeMs },
        { name: '   of which XADD to the streams', items: n, ms: a.publishMs },
        { name: '   of which consume, project, assess', items: n, ms: a.consumeMs },
      ],
      b.ms,
    );
    const { counts, ok, expected } = await checkAnalytics(w, tenantId, a, b);
    console.log('\ncounts', counts);
    console.log('Ratios compare runs of this invocation only; absolute times depend on the machine.');
    if (!ok) console.error(`FAILED: expected ${expected}`);
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
