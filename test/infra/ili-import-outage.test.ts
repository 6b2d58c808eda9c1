/**
 * An ILI import whose database stops answering half-way through the write — the server stalls (a long GC pause, a
 * starved machine, a failover) until the driver's monitor gives up on it and interrupts every operation in flight —
 * is paused, not failed: the runner takes the job up again from its checkpoint once the database answers, the run
 * stays IMPORTING meanwhile (no ili.run.failed), and the import ends SUCCEEDED with exactly the listing's counts.
 * Its user does not have to start it again. (Before, such an import ended FAILED "on an internal error", and a CI run
 * lost the ILI-cycle test to it.)
 *
 * The stall is a SIGSTOP of a MongoDB of this file's own, the commit sent once every thread of it has stopped, held
 * until that commit has failed (the driver gave up on the server): nothing is timed.
 */
import { randomBytes } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import { ILI_RUN_IMPORTED, ILI_RUN_STARTED } from '@linepack/subgraph-measurements/events';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { TALLY_KINDS } from '@linepack/lib/ili/listing';
import { ensureJobIndexes, JOBS_COLLECTION, JobRunner, type JobHandler } from '@linepack/lib/jobs';
import { createLogger } from '@linepack/lib/logger';
import { connectMongo } from '@linepack/lib/mongo';
import { ensureIliIndexes, ILI_COLLECTIONS } from '@linepack/subgraph-measurements/ili/documents';
import { ILI_IMPORT_JOB, iliImportHandler, type IliImportCheckpoint, type IliImportInput } from '@linepack/subgraph-measurements/ili/import-job';
import { IliStore } from '@linepack/subgraph-measurements/ili/store';
import { ensureMeasurementIndexes, MEASUREMENTS_COLLECTION } from '@linepack/subgraph-measurements/repository';
import { listingCsv, outboxTypes, queueImport, storeUpload, type IliImportJobDocument } from '../support/ili-job';
import { eventually, stopProcessGroup } from '../support/wait';
import { testTempDir } from '../support/temp-dir';

jest.setTimeout(5 * 60_000);

const PART_BYTES = 32 * 1024;
let database: EmbeddedMongo;
let mongo: MongoClient;
let db: Db;
let runner: JobRunner | undefined;
const dir = testTempDir('ili-outage-');
/** Resolves at the driver's next failed heartbeat: it then interrupts the operations in flight on that server. */
let nextFailedHeartbeat: () => Promise<void>;

beforeAll(async () => {
  database = await startEmbeddedMongo();
  // The driver's monitor as configured in production, only quicker to look and to give up (the services' defaults:
  // a look every 10 s, given up after MONGODB_CONNECT_TIMEOUT_MS, 5 s), so that the stall is short. Server selection
  // gives up after 5 s (3 s in production, 20 s elsewhere in the suite).
  mongo = await connectMongo(database.uri, { heartbeatFrequencyMS: 500, connectTimeoutMS: 1_000, serverSelectionTimeoutMS: 5_000 });
  nextFailedHeartbeat = () => new Promise((resolve) => mongo.once('serverHeartbeatFailed', () => resolve()));
  db = mongo.db(`t${randomBytes(4).toString('hex')}_measurements`);
  // As the subgraph starts: a feature written again on resumption is refused by its key (tenant_idempotency_key).
  await ensureMeasurementIndexes(db);
  await ensureIliIndexes(db);
  await ensureJobIndexes(db);
});
// Each case's runner stops with it: left running, the first case's runner (its handler past the stall) claimed the
// second case's job.
afterEach(async () => {
  if (database) process.kill(-database.pid, 'SIGCONT');
  await runner?.stop();
});
afterAll(async () => {
  await mongo?.close();
  await database?.stop();
});

test.each([
  // The commit sent at once is on a connection when the driver gives up on the server: it is interrupted.
  { commitSent: 'at once', afterFirstFailedHeartbeat: false },
  // Sent once the driver has given up on the server (on a loaded machine, a heartbeat already late when the database
  // stopped: a CI run), it waits for the server and fails when server selection gives up. Its checkpoint is not
  // stored, so the batch before it is written again on resumption: each feature is stored once all the same.
  { commitSent: 'after the first failed heartbeat', afterFirstFailedHeartbeat: true },
])(
  'a database that stalls half-way through the write pauses the import (commit sent $commitSent): it resumes from its checkpoint to the exact counts, the run never FAILED',
  async ({ afterFirstFailedHeartbeat }) => {
    const tenantId = `tenant-${randomBytes(4).toString('hex')}`;
    const { runA } = generateTwoRunListing({ features: 2_000, seed: 79 });
    const features = runA.rows.filter((row) => !TALLY_KINDS.has(row.kind)).length;
    const ili = new IliStore(db, tenantId);
    const upload = await storeUpload(ili, await listingCsv(dir, runA.rows), PART_BYTES);

    // The real handler; once two batches are written, the database stops while the next commit is in flight, and
    // goes on only after the driver has given up on it and that commit has failed.
    const real = iliImportHandler(db);
    let stalled = false;
    const handler: JobHandler<IliImportInput, IliImportCheckpoint> = {
      run: (job, commit, signal) =>
        real.run(
          job,
          async (step) => {
            if (stalled || (step.checkpoint?.batchesWritten ?? 0) < 2) return commit(step);
            stalled = true;
            await stopProcessGroup(database.pid);
            if (afterFirstFailedHeartbeat) await nextFailedHeartbeat();
            const committing = commit(step);
            let settled = false;
            committing.then(
              () => (settled = true),
              () => (settled = true),
            );
            // Held until the commit has failed, not merely until a heartbeat failed: each failed heartbeat interrupts
            // the commit if it is on a connection; waiting for the server instead, it fails once server selection
            // gives up. A commit that went through ends the wait too (the attempts below fail): waiting on for a
            // failure spun this loop, and a CI worker ran out of memory.
            while (!settled) await Promise.race([committing.catch(() => undefined), nextFailedHeartbeat()]);
            process.kill(-database.pid, 'SIGCONT');
            return committing;
          },
          signal,
        ),
    };
    runner = new JobRunner(
      db,
      { [ILI_IMPORT_JOB]: handler as JobHandler<never, never> },
      { logger: createLogger('test', 'silent'), pollMs: 20, maxPollMs: 100 },
    );
    runner.start();
    const queued = await queueImport(db, ili, upload._id, 'segment-1', runA.runDate);
    runner.wake();

    // A read of the job while the database is stopped fails as the commit does: not ended yet. (Failing the test there
    // let the stalled commit through at the SIGCONT after it.)
    const jobs = db.collection<IliImportJobDocument>(JOBS_COLLECTION);
    const ended = await eventually(async () => ['SUCCEEDED', 'FAILED'].includes((await jobs.findOne({ _id: queued._id }))?.state ?? ''), 120_000, 50);
    expect(ended).toBe(true);
    const job = await jobs.findOne({ _id: queued._id });
    expect(stalled).toBe(true);
    // Claimed twice: the stall interrupted the first attempt, the second resumed it.
    expect(job).toMatchObject({
      state: 'SUCCEEDED',
      failure: null,
      attempts: 2,
      counts: { features, tallyItems: runA.rows.length - features, rejectedRows: 0 },
    });
    expect(await db.collection(MEASUREMENTS_COLLECTION).countDocuments({ tenantId, runId: queued.input.runId })).toBe(features);
    const run = await ili.run(queued.input.runId);
    expect(run?.status).toBe('COMPLETE');
    expect(outboxTypes(run)).toEqual([ILI_RUN_STARTED, ILI_RUN_IMPORTED]);
    expect(await db.collection(ILI_COLLECTIONS.uploadParts).countDocuments({ uploadId: upload._id })).toBe(0);
  },
);
