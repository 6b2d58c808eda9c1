/**
 * `npm run bench:run-reads [-- --features 100000] [-- --rounds 3]`: what reading a whole ILI run costs another tenant.
 * Analytics' run comparison reads every feature of a run (`subgraphs/analytics/src/run-comparison.ts`). Against the
 * embedded server (in memory, or MONGODB_URI), with analytics' own indexes, tenant A's run of `--features` features
 * is read two ways in each round: one find (the baseline: the server collects every match, holding the collection's
 * lock, before its first batch) and `findInIdPages` (lib/mongo.ts: a query per 1,000 features in _id order). Meanwhile
 * tenant B reads one of its own anomalies by id every 5 ms, as its assessments do. Prints, per way and round, how long
 * A's read took and B's reads' p50 and longest wait.
 */
import { parseArgs } from 'node:util';
import { MongoClient, type Collection, type Document } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { findInIdPages } from '@linepack/lib/mongo';
import { ensureAnalyticsIndexes } from '@linepack/subgraph-analytics/projections';
import { percentile, printColumns } from './harness';

const { values } = parseArgs({ options: { features: { type: 'string', default: '100000' }, rounds: { type: 'string', default: '3' } } });
const FEATURES = Number(values.features);
const ROUNDS = Number(values.rounds);
const DATABASE = `bench_run_reads_${process.pid}`;
/** The fields the comparison reads of each feature. */
const PROJECTION = { _id: 1, odometerM: 1, featureType: 1, clockDeg: 1, depthPctWt: 1, lengthMm: 1, widthMm: 1, surface: 1 };

interface Anomaly {
  _id: string;
  tenantId: string;
  assetId: string;
  runId: string;
  [field: string]: unknown;
}

async function seed(anomalies: Collection<Anomaly>): Promise<void> {
  for (let start = 0; start < FEATURES; start += 2_000) {
    const docs = Array.from({ length: Math.min(2_000, FEATURES - start) }, (_, k) => {
      const i = start + k;
      // Ids in no particular order, as measurement ids are.
      return {
        _id: `m-${(i * 7919) % FEATURES}-${i}`,
        tenantId: 'A',
        assetId: 'line-a',
        runId: 'run-a',
        observedAt: new Date('2026-01-01'),
        odometerM: i * 0.3,
        featureType: 'METAL_LOSS',
        clockDeg: i % 360,
        depthPctWt: i % 60,
        lengthMm: 20 + (i % 50),
        widthMm: 10,
        surface: 'EXTERNAL',
      };
    });
    await anomalies.insertMany(docs);
  }
  await anomalies.insertMany(Array.from({ length: 100 }, (_, k) => ({ _id: `b-${k}`, tenantId: 'B', assetId: 'line-b', runId: 'run-b' })));
}

/** A's read while B reads its own anomalies one at a time: A's time, B's p50 and longest wait (ms). */
async function underRead(b: Collection<Anomaly>, readAll: () => Promise<number>): Promise<{ features: number; ms: number; p50: number; max: number }> {
  let reading = true;
  const waits: number[] = [];
  const probe = (async () => {
    while (reading) {
      const started = performance.now();
      await b.findOne({ _id: `b-${waits.length % 100}`, tenantId: 'B' });
      waits.push(performance.now() - started);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
  })();
  await new Promise((resolve) => setTimeout(resolve, 300));
  const started = performance.now();
  const features = await readAll();
  const ms = performance.now() - started;
  await new Promise((resolve) => setTimeout(resolve, 300));
  reading = false;
  await probe;
  waits.sort((x, y) => x - y);
  return { features, ms, p50: percentile(waits, 0.5), max: waits[waits.length - 1]! };
}

async function count(docs: AsyncIterable<Document>): Promise<number> {
  let n = 0;
  for await (const _ of docs) n += 1;
  return n;
}

async function main(): Promise<void> {
  const embedded: EmbeddedMongo | null = process.env['MONGODB_URI'] ? null : await startEmbeddedMongo();
  const uri = process.env['MONGODB_URI'] ?? embedded!.uri;
  // Two clients, as two tenants' requests reach the server on connections of their own.
  const clientA = await MongoClient.connect(uri);
  const clientB = await MongoClient.connect(uri);
  try {
    const db = clientA.db(DATABASE);
    await ensureAnalyticsIndexes(db);
    const anomalies = db.collection<Anomaly>('anomalies');
    console.log(`Seeding tenant A's run of ${FEATURES.toLocaleString('en')} features (${embedded ? 'embedded mongo-java-server, in memory' : 'MONGODB_URI'})…`);
    await seed(anomalies);
    const ofB = clientB.db(DATABASE).collection<Anomaly>('anomalies');
    const rows: string[][] = [];
    for (let round = 1; round <= ROUNDS; round++) {
      const once = await underRead(ofB, () => count(anomalies.find({ tenantId: 'A', assetId: 'line-a', runId: 'run-a' }, { projection: PROJECTION })));
      const paged = await underRead(ofB, () => count(findInIdPages(anomalies, { tenantId: 'A', runId: 'run-a' }, { projection: PROJECTION })));
      for (const [way, r] of [
        ['one find (baseline)', once],
        ['findInIdPages', paged],
      ] as const) {
        rows.push([
          way,
          String(round),
          r.features.toLocaleString('en'),
          r.ms.toFixed(0),
          (r.ms / once.ms).toFixed(2) + '×',
          r.p50.toFixed(1),
          r.max.toFixed(1),
          (r.max / once.max).toFixed(2) + '×',
        ]);
      }
    }
    printColumns(
      `Reading tenant A's whole run while tenant B reads its own anomalies`,
      ["A's read", 'round', 'features', 'A ms', 'vs one find', 'B p50 ms', 'B longest ms', 'vs one find'],
      rows,
      ['Ratios compare the two ways within each round.'],
    );
  } finally {
    await clientA
      .db(DATABASE)
      .dropDatabase()
      .catch(() => undefined);
    await clientA.close();
    await clientB.close();
    await embedded?.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
