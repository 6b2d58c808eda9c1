/**
 * An ILI import that stops on an error after its second pass began (here: an upload part gone from the store half-way
 * through the write) marks its run FAILED and queues ili.run.failed with the features it wrote — analytics then
 * assesses those instead of holding them for a comparison that will not come — and the job is FAILED but resumable:
 * started again with the same key, it carries on from its checkpoint, puts the run back to IMPORTING (ili.run.started
 * again) and ends with exactly the listing's counts and ili.run.imported.
 * The first pass hashes the bytes it parses: a file whose bytes are not the SHA-256 announced is refused, nothing stored.
 * A job taken up again after its runner died between the completed import and recording it ends SUCCEEDED, as it was.
 * The handler runs in a job runner of this process against the real database; nothing is timed.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import { ILI_RUN_FAILED, ILI_RUN_IMPORTED, ILI_RUN_STARTED } from '@linepack/subgraph-measurements/events';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { TALLY_KINDS } from '@linepack/lib/ili/listing';
import { ensureJobIndexes, JOBS_COLLECTION, JobRunner, type JobHandler } from '@linepack/lib/jobs';
import { createLogger } from '@linepack/lib/logger';
import { connectMongo } from '@linepack/lib/mongo';
import { ensureIliIndexes, ILI_COLLECTIONS } from '@linepack/subgraph-measurements/ili/documents';
import { ILI_IMPORT_JOB, iliImportHandler, type IliImportCheckpoint, type IliImportInput } from '@linepack/subgraph-measurements/ili/import-job';
import { IliStore } from '@linepack/subgraph-measurements/ili/store';
import { ensureMeasurementIndexes, MEASUREMENTS_COLLECTION } from '@linepack/subgraph-measurements/repository';
import { endedJob, listingCsv, outboxTypes, queueImport, storeUpload, type IliImportJobDocument } from '../support/ili-job';
import { testTempDir } from '../support/temp-dir';

jest.setTimeout(5 * 60_000);

const tenantId = `tenant-${randomBytes(4).toString('hex')}`;
/** Small parts, so the write pass reads many of them and one can go missing after the first batches are written. */
const PART_BYTES = 32 * 1024;
let mongo: MongoClient;
let db: Db;
let runner: JobRunner;
const dir = testTempDir('ili-failure-');
const csv = (rows: Parameters<typeof listingCsv>[1]) => listingCsv(dir, rows);
const upload = (ili: IliStore, bytes: Buffer, sha256?: string) => storeUpload(ili, bytes, PART_BYTES, sha256);

beforeAll(async () => {
  mongo = await connectMongo(process.env['MONGODB_URI']!);
  db = mongo.db(`t${randomBytes(4).toString('hex')}_measurements`);
  // As the subgraph starts: a feature written again on resumption is refused by its key (tenant_idempotency_key).
  await ensureMeasurementIndexes(db);
  await ensureIliIndexes(db);
  await ensureJobIndexes(db);
});
afterAll(async () => {
  await runner?.stop();
  await db?.dropDatabase();
  await mongo?.close();
});

test('a failure half-way through the write: run FAILED with ili.run.failed, job resumable, resumed to the exact counts', async () => {
  const { runA } = generateTwoRunListing({ features: 4_000, seed: 77 });
  const features = runA.rows.filter((row) => !TALLY_KINDS.has(row.kind)).length;
  const bytes = await csv(runA.rows);
  const ili = new IliStore(db, tenantId);
  const stored = await upload(ili, bytes);
  expect(stored.receivedParts).toBeGreaterThan(8);
  const lastPart = await db.collection(ILI_COLLECTIONS.uploadParts).findOne({ _id: `${stored._id}:${stored.receivedParts - 1}` } as never);

  // The real handler, with the last part taken away as soon as the first batch of the write pass is committed.
  const real = iliImportHandler(db);
  let removed = false;
  const handler: JobHandler<IliImportInput, IliImportCheckpoint> = {
    run: (job, commit, signal) =>
      real.run(
        job,
        async (step) => {
          await commit(step);
          if (!removed && (step.checkpoint?.batchesWritten ?? 0) >= 1) {
            removed = true;
            await db.collection(ILI_COLLECTIONS.uploadParts).deleteOne({ _id: `${stored._id}:${stored.receivedParts - 1}` } as never);
          }
        },
        signal,
      ),
  };
  runner = new JobRunner(db, { [ILI_IMPORT_JOB]: handler as JobHandler<never, never> }, { logger: createLogger('test', 'silent'), pollMs: 20, maxPollMs: 100 });
  runner.start();
  const start = () => queueImport(db, ili, stored._id, 'segment-1', runA.runDate);
  const queued = await start();
  runner.wake();
  const failed = await endedJob(db, queued._id);
  expect(failed).toMatchObject({ state: 'FAILED', retryable: true });
  const written = failed!.checkpoint!.features;
  expect(written).toBeGreaterThan(0);
  expect(written).toBeLessThan(features);

  const run = await ili.run(queued.input.runId);
  expect(run?.status).toBe('FAILED');
  expect(outboxTypes(run)).toEqual([ILI_RUN_STARTED, ILI_RUN_FAILED]);
  const event = run!.outbox!.find((e) => e.type === ILI_RUN_FAILED)!;
  expect(event.data).toMatchObject({ id: queued.input.runId, assetId: 'segment-1', featuresWritten: written });
  expect(await db.collection(MEASUREMENTS_COLLECTION).countDocuments({ tenantId, runId: queued.input.runId })).toBeGreaterThanOrEqual(written);

  // The part restored (the store is whole again), the same start resumes the job from its checkpoint.
  await db.collection(ILI_COLLECTIONS.uploadParts).insertOne(lastPart!);
  const again = await start();
  expect(again._id).toBe(queued._id);
  runner.wake();
  const done = await endedJob(db, queued._id, (j) => j.state === 'SUCCEEDED' || (j.state === 'FAILED' && j.attempts > 1));
  expect(done).toMatchObject({ state: 'SUCCEEDED', attempts: 2, counts: { features, tallyItems: runA.rows.length - features, rejectedRows: 0 } });
  expect(await db.collection(MEASUREMENTS_COLLECTION).countDocuments({ tenantId, runId: queued.input.runId })).toBe(features);
  const completed = await ili.run(queued.input.runId);
  expect(completed?.status).toBe('COMPLETE');
  expect(outboxTypes(completed)).toEqual([ILI_RUN_STARTED, ILI_RUN_FAILED, ILI_RUN_STARTED, ILI_RUN_IMPORTED]);
});

test('the first pass hashes what it parses: bytes that are not the SHA-256 announced are refused and nothing is stored', async () => {
  const { runA } = generateTwoRunListing({ features: 500, seed: 78 });
  const bytes = await csv(runA.rows);
  const ili = new IliStore(db, tenantId);
  const stored = await upload(ili, bytes, createHash('sha256').update('another file').digest('hex'));
  const queued = await queueImport(db, ili, stored._id, 'segment-2', runA.runDate);
  runner.wake();
  const job = await endedJob(db, queued._id);
  expect(job).toMatchObject({ state: 'FAILED', retryable: false });
  expect(job!.failure).toBe(`the uploaded bytes have SHA-256 ${createHash('sha256').update(bytes).digest('hex')}, not the ${stored.sha256} announced`);
  expect(await db.collection(MEASUREMENTS_COLLECTION).countDocuments({ tenantId, runId: queued.input.runId })).toBe(0);
  const run = await ili.run(queued.input.runId);
  expect(run?.status).toBe('FAILED');
  expect((run!.outbox ?? []).find((e) => e.type === ILI_RUN_FAILED)?.data).toMatchObject({ featuresWritten: 0 });
});

test('a job whose runner died after the import was complete, before it recorded so, ends SUCCEEDED when taken up again, nothing written twice', async () => {
  const { runA } = generateTwoRunListing({ features: 1_000, seed: 80 });
  const features = runA.rows.filter((row) => !TALLY_KINDS.has(row.kind)).length;
  const ili = new IliStore(db, tenantId);
  const stored = await upload(ili, await csv(runA.rows));
  await runner?.stop();
  runner = new JobRunner(
    db,
    { [ILI_IMPORT_JOB]: iliImportHandler(db) as JobHandler<never, never> },
    { logger: createLogger('test', 'silent'), pollMs: 20, maxPollMs: 100 },
  );
  runner.start();
  const queued = await queueImport(db, ili, stored._id, 'segment-3', runA.runDate);
  runner.wake();
  const counts = { rows: runA.rows.length, features, tallyItems: runA.rows.length - features, rejectedRows: 0 };
  expect(await endedJob(db, queued._id)).toMatchObject({ state: 'SUCCEEDED', counts });

  // As the job stood had its runner died after the last batch (the run COMPLETE, the stored file deleted) and before
  // it wrote SUCCEEDED: RUNNING under a lease that ran out.
  await db
    .collection<IliImportJobDocument>(JOBS_COLLECTION)
    .updateOne({ _id: queued._id }, { $set: { state: 'RUNNING', lease: { owner: 'a runner that died', until: new Date(0) } }, $unset: { finishedAt: '' } });
  runner.wake();
  const again = await endedJob(db, queued._id);
  expect(again).toMatchObject({ state: 'SUCCEEDED', failure: null, attempts: 2, counts });
  expect(await db.collection(MEASUREMENTS_COLLECTION).countDocuments({ tenantId, runId: queued.input.runId })).toBe(features);
  const run = await ili.run(queued.input.runId);
  expect(run?.status).toBe('COMPLETE');
  expect(outboxTypes(run)).toEqual([ILI_RUN_STARTED, ILI_RUN_IMPORTED]);
});
