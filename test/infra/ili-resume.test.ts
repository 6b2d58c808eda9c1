/**
 * An ILI listing import killed with SIGKILL half-way resumes from its last committed chunk (issue 31, "Done when"): the
 * measurements subgraph runs as a process of its own (its entry, subgraphs/measurements/src/main.ts, as a deployment
 * starts it), a generated listing is uploaded and its import queued, the process is killed with kill -9 once the job
 * reports half of its batches written, and a new process started on the same database. The job must be claimed again
 * (its lease runs out), resume from the batch it had committed, and end with exactly the listing's feature and tally
 * counts, no measurement or tally row twice. The resumed process is then stopped as a deployment stops it (SIGTERM)
 * before the job ends: its job runner thread stops at the next chunk and hands the job back, the process exits 0 with the
 * job left to resume, and a third process finishes it.
 *
 * Half-way is read from the job's own progress, polled; nothing waits a fixed time, nothing asserts how long it took.
 * ILI_RESUME_FEATURES=100000 runs it at the size (the default keeps the suite's time down).
 */
import { randomBytes } from 'node:crypto';
import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import type { Db, MongoClient } from 'mongodb';
import { processAlive } from '@linepack/lib/infra/child-process';
import { connectMongo, databaseName } from '@linepack/lib/mongo';
import { generateInternalKeyPair } from '@linepack/lib/identity';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { TALLY_KINDS } from '@linepack/lib/ili/listing';
import { ensureJobIndexes, JOBS_COLLECTION, type JobDocument } from '@linepack/lib/jobs';
import { MAX_BASE64_BYTES } from '@linepack/lib/scalars';
import { repoRoot } from '@linepack/lib/repo-root';
import { until } from '@linepack/lib/testing/until';
import { ensureIliIndexes, ILI_COLLECTIONS } from '@linepack/subgraph-measurements/ili/documents';
import type { IliImportCheckpoint } from '@linepack/subgraph-measurements/ili/import-job';
import { IliStore } from '@linepack/subgraph-measurements/ili/store';
import { MEASUREMENTS_COLLECTION } from '@linepack/subgraph-measurements/repository';
import { bundle } from '../../bench/contenders/bundle';
import { listingCsv, queueImport, storeUpload } from '../support/ili-job';

const FEATURES = Number(process.env['ILI_RESUME_FEATURES'] ?? 20_000);
/** The import writes the listing 1,000 rows per batch (its checkpoint counts batches). */
const ROWS_PER_BATCH = 1_000;

jest.setTimeout(15 * 60_000);

const dbPrefix = `t${randomBytes(5).toString('hex')}`;
const tenantId = `tenant-${dbPrefix}`;
const keys = generateInternalKeyPair();
let mongo: MongoClient;
let db: Db;
let dir: string;
/** Under the package's dist/ (ignored by git), removed afterwards. */
const bundleDir = path.join(repoRoot, 'subgraphs/measurements/dist', `ili-resume-${dbPrefix}`);
const running: ChildProcess[] = [];

/**
 * The measurements subgraph as its own process, from source or (`bundle`) as its image runs it, one dist/main.js that is
 * also its job runner thread's entry; its output is kept for the job's log lines.
 */
function startMeasurementsProcess(bundle?: string): { child: ChildProcess; output: () => string } {
  const entry = bundle ? [bundle] : ['--import', 'tsx', path.join(repoRoot, 'subgraphs/measurements/src/main.ts')];
  const child = spawn(process.execPath, entry, {
    cwd: repoRoot,
    env: {
      ...process.env,
      PORT: '0',
      HOST: '127.0.0.1',
      LINEPACK_DB_PREFIX: dbPrefix,
      INTERNAL_TOKEN_PUBLIC_KEY: keys.publicKeyPem,
      LOG_LEVEL: 'info',
      METRICS_PORT: '0',
      // SIGTERM stops at once (no drain period): what is measured is the job runner's stop.
      SHUTDOWN_DRAIN_SECONDS: '0',
      // The killed runner's claim runs out in 5 s rather than the default 30 (heartbeats every 1.7 s meanwhile).
      JOB_LEASE_SECONDS: '5',
      ...(bundle ? { NODE_ENV: 'production', LINEPACK_SCHEMA_DIR: path.join(repoRoot, 'schema') } : {}),
    },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, so kill -9 reaches whatever it started too.
    detached: true,
  });
  running.push(child);
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return { child, output: () => output };
}

/** The job runner's "job started" log lines, as JSON. */
const jobStarts = (output: string) =>
  output
    .split('\n')
    .filter((line) => line.includes('"job started"'))
    .map((line) => JSON.parse(line) as { attempt: number; resumedFrom: number | null; thread: string });

beforeAll(async () => {
  mongo = await connectMongo(process.env['MONGODB_URI']!);
  db = mongo.db(databaseName(dbPrefix, 'measurements'));
  dir = await mkdtemp(path.join(os.tmpdir(), 'ili-resume-'));
});

afterAll(async () => {
  for (const child of running) if (child.pid && processAlive(child.pid)) process.kill(-child.pid, 'SIGKILL');
  await mongo?.db(databaseName(dbPrefix, 'measurements')).dropDatabase();
  await mongo?.close();
  await rm(dir, { recursive: true, force: true });
  await rm(bundleDir, { recursive: true, force: true });
});

test(`a ${FEATURES.toLocaleString('en')}-feature import killed with kill -9 half-way, then stopped with SIGTERM, resumes from its last chunk each time to exactly the listing's counts`, async () => {
  const { runA } = generateTwoRunListing({ features: FEATURES, seed: 31 });
  const features = runA.rows.filter((row) => !TALLY_KINDS.has(row.kind)).length;
  const tallyItems = runA.rows.length - features;
  const batches = Math.ceil(runA.rows.length / ROWS_PER_BATCH);

  // Uploaded and queued as startIliImport does for a client (the gateway's part is tested in test/domain/ili-import.test.ts).
  await ensureIliIndexes(db);
  await ensureJobIndexes(db);
  const ili = new IliStore(db, tenantId);
  const upload = await storeUpload(ili, await listingCsv(dir, runA.rows), MAX_BASE64_BYTES);
  const queued = await queueImport(db, ili, upload._id, 'segment-1', runA.runDate);
  const jobs = db.collection<JobDocument<Record<string, unknown>, IliImportCheckpoint>>(JOBS_COLLECTION);
  const job = () => jobs.findOne({ _id: queued._id });

  const first = startMeasurementsProcess();
  const halfWay = await until(
    job,
    (j) => j?.state === 'SUCCEEDED' || j?.state === 'FAILED' || (j?.checkpoint?.batchesWritten ?? 0) >= batches / 2,
    10 * 60_000,
    20,
  );
  process.kill(-first.child.pid!, 'SIGKILL');
  await until(
    async () => processAlive(first.child.pid!),
    (alive) => !alive,
    10_000,
    20,
  );
  const atKill = (await job())!;
  // Killed in the middle of writing, not before it started nor after it ended.
  expect(halfWay?.state).toBe('RUNNING');
  expect(atKill.state).toBe('RUNNING');
  expect(atKill.checkpoint!.batchesWritten).toBeGreaterThanOrEqual(batches / 2);
  expect(atKill.checkpoint!.batchesWritten).toBeLessThan(batches);
  expect(jobStarts(first.output())).toEqual([expect.objectContaining({ attempt: 1, resumedFrom: null })]);

  const second = startMeasurementsProcess();
  // Claimed again once the dead runner's lease has run out, and stopped with SIGTERM three quarters in.
  const threeQuarters = await until(
    job,
    (j) => j?.state === 'SUCCEEDED' || j?.state === 'FAILED' || (j?.attempts === 2 && (j?.checkpoint?.batchesWritten ?? 0) >= (batches * 3) / 4),
    10 * 60_000,
    20,
  );
  expect(threeQuarters?.state).toBe('RUNNING');
  // The second runner started from the checkpoint committed before the kill (its progress, in rows), not from row 1.
  expect(jobStarts(second.output())).toEqual([expect.objectContaining({ attempt: 2, resumedFrom: atKill.progress.done })]);
  expect(atKill.progress.done).toBeGreaterThan(0);
  const exitCode = new Promise<number | null>((resolve) => second.child.once('exit', (code) => resolve(code)));
  second.child.kill('SIGTERM');
  // A clean stop: exit 0, the job neither finished nor failed by it, its progress kept for the next runner.
  expect(await exitCode).toBe(0);
  const atStop = (await job())!;
  expect({ state: atStop.state, failure: atStop.failure }).toEqual({ state: 'RUNNING', failure: null });
  expect(atStop.checkpoint!.batchesWritten).toBeGreaterThanOrEqual(threeQuarters!.checkpoint!.batchesWritten);
  expect(atStop.checkpoint!.batchesWritten).toBeLessThan(batches);

  // As scripts/build-package.mjs builds the image's dist/main.js: the @linepack packages inlined, the rest required —
  // from the package's folder, so they resolve to its own dependencies as in its image (uuid 11, not the root's).
  const bundled = path.join(bundleDir, 'main.js');
  await bundle('subgraphs/measurements/src/main.ts', bundled);
  const third = startMeasurementsProcess(bundled);
  // Claimed at once: the stopped runner handed its lease back (lib/jobs.ts). The wait is a guard against a hang.
  const finished = await until(job, (j) => j?.state === 'SUCCEEDED' || j?.state === 'FAILED', 10 * 60_000, 200);
  expect({ state: finished?.state, failure: finished?.failure }).toEqual({ state: 'SUCCEEDED', failure: null });
  expect(finished!.attempts).toBe(3);
  expect(finished!.counts).toEqual({ rows: runA.rows.length, features, tallyItems, rejectedRows: 0 });
  expect(jobStarts(third.output())).toEqual([expect.objectContaining({ attempt: 3, resumedFrom: atStop.progress.done, thread: 'job-runner' })]);

  // Exactly the listing: every feature once as a measurement of the run, every tally row once.
  const measurements = db.collection(MEASUREMENTS_COLLECTION);
  expect(await measurements.countDocuments({ tenantId, runId: queued.input.runId })).toBe(features);
  const repeatedKeys = await measurements
    .aggregate([{ $match: { tenantId, runId: queued.input.runId } }, { $group: { _id: '$idempotencyKey', n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }])
    .toArray();
  expect(repeatedKeys).toEqual([]);
  const tally = db.collection(ILI_COLLECTIONS.tally);
  expect(await tally.countDocuments({ tenantId, runId: queued.input.runId })).toBe(tallyItems);
  const repeatedRows = await tally
    .aggregate([{ $match: { tenantId, runId: queued.input.runId } }, { $group: { _id: '$rowNumber', n: { $sum: 1 } } }, { $match: { n: { $gt: 1 } } }])
    .toArray();
  expect(repeatedRows).toEqual([]);
  expect(await ili.run(queued.input.runId)).toMatchObject({ status: 'COMPLETE', featureCount: features, tallyItemCount: tallyItems });

  const exited = new Promise((resolve) => (third.child.exitCode !== null ? resolve(null) : third.child.once('exit', resolve)));
  third.child.kill('SIGTERM');
  await exited;
});
