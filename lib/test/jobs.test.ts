/**
 * The durable job runner against a real database: an idle runner asks one cheap indexed question per look and looks
 * less often the longer it finds nothing; a job queued by another replica is still claimed; a job that failed on an
 * internal error is resumed from its checkpoint by starting it again with the same key, one that failed on its input is
 * not. Order and counts are observed (commands seen by the driver, states read back), never wall-clock windows.
 */
import { randomUUID } from 'node:crypto';
import type { CommandStartedEvent, Db, MongoClient } from 'mongodb';
import { IdleBackoff } from '../idle-backoff';
import { ensureJobIndexes, JOBS_COLLECTION, JobRunner, JobStore, type JobDocument, type JobHandler } from '../jobs';
import { createLogger } from '../logger';
import { connectMongo } from '../mongo';
import { until } from '../testing/until';

const logger = createLogger('test', 'silent');
let mongo: MongoClient;
let db: Db;
const commands: CommandStartedEvent[] = [];
const runners: JobRunner[] = [];

beforeAll(async () => {
  mongo = await connectMongo(process.env['MONGODB_URI']!, { monitorCommands: true }, (client) =>
    client.on('commandStarted', (event) => {
      if (event.databaseName === db?.databaseName) commands.push(event);
    }),
  );
});
afterAll(async () => {
  for (const runner of runners) await runner.stop();
  await db?.dropDatabase();
  await mongo?.close();
});
beforeEach(async () => {
  db = mongo.db(`t${randomUUID().slice(0, 8)}_jobs`);
  await ensureJobIndexes(db);
  commands.length = 0;
});

const jobCommands = (name: string) => commands.filter((c) => c.commandName === name && c.command[name] === JOBS_COLLECTION);

function runner(handlers: Record<string, JobHandler<never, never>>, options: { pollMs?: number; maxPollMs?: number; leaseMs?: number } = {}): JobRunner {
  const r = new JobRunner(db, handlers, { logger, ...options });
  runners.push(r);
  return r;
}

test('the idle wait doubles from pollMs to maxPollMs and starts over when work is found', () => {
  const backoff = new IdleBackoff(100, 1_000);
  expect([backoff.idle(), backoff.idle(), backoff.idle(), backoff.idle(), backoff.idle(), backoff.idle()]).toEqual([100, 200, 400, 800, 1_000, 1_000]);
  expect(backoff.busy()).toBe(100);
  expect(backoff.idle()).toBe(100);
  expect(() => new IdleBackoff(0, 10)).toThrow('0 < minMs ≤ maxMs');
});

test('an idle runner asks one indexed find per look — no distinct, no findAndModify — and still claims a job queued elsewhere', async () => {
  const done: string[] = [];
  const handler: JobHandler<Record<string, unknown>, null> = {
    async run(job) {
      done.push(job._id);
      return { state: 'SUCCEEDED' };
    },
  };
  const r = runner({ TEST: handler as JobHandler<never, never> }, { pollMs: 20, maxPollMs: 80 });
  r.start();
  await until(
    async () => jobCommands('find').length,
    (n) => n >= 5,
    30_000,
    10,
  );
  expect(jobCommands('distinct')).toEqual([]);
  expect(jobCommands('findAndModify')).toEqual([]);

  // Queued by "another replica": no wake() here. The next look claims it.
  const { job } = await new JobStore(db).start('tenant-a', 'TEST', 'k1', {});
  await until(
    async () => done,
    (d) => d.includes(job._id),
    30_000,
    10,
  );
  expect(jobCommands('distinct').length).toBeGreaterThan(0);
  // The handler has returned; the runner records the outcome just after.
  const stored = await until(
    () => db.collection<JobDocument>(JOBS_COLLECTION).findOne({ _id: job._id }),
    (j) => j?.state !== 'RUNNING',
    30_000,
    10,
  );
  expect(stored?.state).toBe('SUCCEEDED');
});

test('a job that failed on an internal error resumes from its checkpoint when started again; one refused on its input does not', async () => {
  let failOnce = true;
  const resumedFrom: (number | null)[] = [];
  const handler: JobHandler<{ refuse?: boolean }, { step: number }> = {
    async run(job, commit) {
      resumedFrom.push(job.checkpoint?.step ?? null);
      if (job.input.refuse) return { state: 'FAILED', failure: '3 rows were rejected; nothing was stored' };
      await commit({ checkpoint: { step: 1 }, progress: { done: 1, total: 2, phase: 'writing' } });
      if (failOnce) {
        failOnce = false;
        throw new Error('the disk went away');
      }
      await commit({ checkpoint: { step: 2 }, progress: { done: 2, total: 2, phase: 'writing' } });
      return { state: 'SUCCEEDED' };
    },
  };
  const r = runner({ TEST: handler as JobHandler<never, never> }, { pollMs: 20, maxPollMs: 80 });
  r.start();
  const store = new JobStore(db);
  const read = (id: string) => store.get('tenant-b', id);

  const first = await store.start('tenant-b', 'TEST', 'resumable', {});
  r.wake();
  const failed = await until(
    () => read(first.job._id),
    (j) => j?.state === 'FAILED',
    30_000,
    10,
  );
  expect(failed).toMatchObject({
    state: 'FAILED',
    retryable: true,
    failure: 'the job stopped on an internal error; starting it again with the same key resumes it',
    checkpoint: { step: 1 },
  });

  const again = await store.start('tenant-b', 'TEST', 'resumable', {});
  expect(again).toMatchObject({ created: false, job: { _id: first.job._id, state: 'QUEUED', retryable: false, failure: null } });
  r.wake();
  const resumed = await until(
    () => read(first.job._id),
    (j) => j?.state === 'SUCCEEDED',
    30_000,
    10,
  );
  expect(resumed).toMatchObject({ state: 'SUCCEEDED', attempts: 2, checkpoint: { step: 2 } });
  expect(resumedFrom).toEqual([null, 1]);

  const refused = await store.start('tenant-b', 'TEST', 'refused', { refuse: true });
  r.wake();
  await until(
    () => read(refused.job._id),
    (j) => j?.state === 'FAILED',
    30_000,
    10,
  );
  const startedAgain = await store.start('tenant-b', 'TEST', 'refused', { refuse: true });
  expect(startedAgain).toMatchObject({ created: false, job: { state: 'FAILED', retryable: false, failure: '3 rows were rejected; nothing was stored' } });
});

test('a runner stopped cleanly in the middle of a job hands it back: the next runner resumes it from its checkpoint at once, not after the lease', async () => {
  const resumedFrom: (number | null)[] = [];
  const handler: JobHandler<Record<string, never>, { step: number }> = {
    async run(job, commit, signal) {
      resumedFrom.push(job.checkpoint?.step ?? null);
      if (job.checkpoint) {
        await commit({ checkpoint: { step: 2 }, progress: { done: 2, total: 2, phase: 'writing' } });
        return { state: 'SUCCEEDED' };
      }
      await commit({ checkpoint: { step: 1 }, progress: { done: 1, total: 2, phase: 'writing' } });
      // A long chunk, cut short by the runner's stop (a rollout's SIGTERM).
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      throw new Error('job runner stopping');
    },
  };
  // A lease far longer than the test's wait: only a handed-back lease lets the second runner claim the job in time.
  const options = { pollMs: 20, maxPollMs: 80, leaseMs: 10 * 60_000 };
  const first = runner({ TEST: handler as JobHandler<never, never> }, options);
  first.start();
  const store = new JobStore(db);
  const { job } = await store.start('tenant-c', 'TEST', 'rollout', {});
  first.wake();
  await until(
    () => store.get('tenant-c', job._id),
    (j) => j?.checkpoint != null,
    30_000,
    10,
  );
  await first.stop();
  const stopped = await store.get('tenant-c', job._id);
  expect(stopped).toMatchObject({ state: 'RUNNING', checkpoint: { step: 1 }, failure: null });
  expect(stopped!.lease!.until.getTime()).toBeLessThanOrEqual(Date.now());

  const second = runner({ TEST: handler as JobHandler<never, never> }, options);
  second.start();
  const finished = await until(
    () => store.get('tenant-c', job._id),
    (j) => j?.state === 'SUCCEEDED',
    30_000,
    10,
  );
  expect(finished).toMatchObject({ state: 'SUCCEEDED', attempts: 2, checkpoint: { step: 2 } });
  expect(resumedFrom).toEqual([null, 1]);
});
