import { randomUUID } from 'node:crypto';
import type { Collection, Db, Filter } from 'mongodb';
import { DEFAULT_JOB_LEASE_SECONDS } from './config';
import { isDatabaseUnavailable } from './errors';
import { IdleBackoff } from './idle-backoff';
import { errorSummary, type Logger } from './logger';
import { isDuplicateKeyError } from './mongo';

/**
 * Durable jobs: bulk work (an ILI listing import) that outlives the request that started it and the process that
 * runs it. A job is a document — state, progress, counts, the first errors, and a checkpoint its handler commits after
 * each chunk it has durably written — so a job killed half-way resumes from its last committed chunk on the next
 * runner that claims it (its lease expired). Handlers write idempotently (every item under a key of its own), so the
 * chunk a crash interrupted is written again without duplicates.
 *
 * Fairness: a runner takes at most one job of a tenant at a time (across every replica: a tenant with a job under a
 * live lease is skipped), so one tenant's queue of imports waits behind its own, never in front of another tenant's.
 */
export const JOBS_COLLECTION = 'jobs';

/**
 * How soon a job that met a database outage is taken up again (from its checkpoint). Not at once: the outage (a server
 * that stalled past the driver's monitor timeout, a failover) is likely still there.
 */
const DATABASE_OUTAGE_RETRY_MS = 2_000;

export type JobState = 'QUEUED' | 'RUNNING' | 'SUCCEEDED' | 'FAILED';

/** One rejected item, e.g. a row of a listing: where it is, which column, and the rule it broke. */
export interface JobItemError {
  rowNumber: number;
  column: string | null;
  rule: string;
  value: string | null;
}

/** Errors kept on the job document; `errorCount` has them all (a 100,000-row file of errors is no report to read). */
export const MAX_KEPT_ERRORS = 1_000;

export interface JobProgress {
  /** Items handled so far (rows read, features written: the handler says which). */
  done: number;
  /** Items in all; null until known. */
  total: number | null;
  /** What is being done now, in words ("validating", "writing features"). */
  phase: string;
}

export interface JobDocument<Input = Record<string, unknown>, Checkpoint = Record<string, unknown>> {
  _id: string;
  tenantId: string;
  kind: string;
  /** The client's idempotency key: starting the same job again answers with this one. */
  key: string;
  state: JobState;
  input: Input;
  checkpoint: Checkpoint | null;
  progress: JobProgress;
  counts: Record<string, number>;
  errors: JobItemError[];
  errorCount: number;
  /** Why the job failed as a whole (e.g. "3 rows were rejected; nothing was stored"); null otherwise. */
  failure: string | null;
  /** A FAILED job that stopped on an internal error rather than on its input: starting it again resumes it. */
  retryable?: boolean;
  lease: { owner: string; until: Date } | null;
  /** How many times a runner has claimed it: more than one means it was resumed. */
  attempts: number;
  createdAt: Date;
  updatedAt: Date;
  finishedAt: Date | null;
}

export interface JobCommit<Checkpoint> {
  /** Null while the job has written nothing a resume could skip (it starts over). */
  checkpoint: Checkpoint | null;
  progress: JobProgress;
  counts?: Record<string, number>;
  errors?: readonly JobItemError[];
  errorCount?: number;
}

export type JobOutcome =
  { state: 'SUCCEEDED'; counts?: Record<string, number> } | { state: 'FAILED'; failure: string; counts?: Record<string, number>; retryable?: boolean };

export interface JobHandler<Input, Checkpoint> {
  /**
   * Does the job from `job.checkpoint` (null: from the start), calling `commit` after each chunk it has durably
   * written. `signal` aborts when the runner stops or loses the lease: stop at the next chunk.
   */
  run(job: JobDocument<Input, Checkpoint>, commit: (step: JobCommit<Checkpoint>) => Promise<void>, signal: AbortSignal): Promise<JobOutcome>;
}

export async function ensureJobIndexes(db: Db): Promise<void> {
  const jobs = db.collection<JobDocument>(JOBS_COLLECTION);
  await jobs.createIndex({ tenantId: 1, kind: 1, key: 1 }, { unique: true, name: 'tenant_kind_key' });
  await jobs.createIndex({ state: 1, createdAt: 1 }, { name: 'state_created' });
}

/** Starting and reading jobs, for the resolvers. */
export class JobStore {
  private readonly jobs: Collection<JobDocument>;

  constructor(db: Db) {
    this.jobs = db.collection<JobDocument>(JOBS_COLLECTION);
  }

  /**
   * Queues a job, or answers with the job already started under this key: a client that retries a start never starts
   * the work twice. `created` says which. A job that FAILED on an internal error (not on its input) is queued again,
   * from its checkpoint: starting it again is how it is resumed.
   */
  async start<Input extends Record<string, unknown>>(
    tenantId: string,
    kind: string,
    key: string,
    input: Input,
  ): Promise<{ job: JobDocument<Input>; created: boolean }> {
    const now = new Date();
    const job: JobDocument<Input> = {
      _id: randomUUID(),
      tenantId,
      kind,
      key,
      state: 'QUEUED',
      input,
      checkpoint: null,
      progress: { done: 0, total: null, phase: 'queued' },
      counts: {},
      errors: [],
      errorCount: 0,
      failure: null,
      lease: null,
      attempts: 0,
      createdAt: now,
      updatedAt: now,
      finishedAt: null,
    };
    try {
      await this.jobs.insertOne(job as JobDocument);
      return { job, created: true };
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      const existing = await this.jobs.findOne({ tenantId, kind, key });
      if (!existing) throw err;
      const requeued =
        existing.state === 'FAILED' && existing.retryable
          ? await this.jobs.findOneAndUpdate(
              { _id: existing._id, state: 'FAILED', retryable: true },
              {
                $set: {
                  state: 'QUEUED',
                  failure: null,
                  retryable: false,
                  finishedAt: null,
                  lease: null,
                  updatedAt: now,
                  progress: { ...existing.progress, phase: 'queued' },
                },
              },
              { returnDocument: 'after' },
            )
          : null;
      return { job: (requeued ?? existing) as JobDocument<Input>, created: false };
    }
  }

  get(tenantId: string, id: string): Promise<JobDocument | null> {
    return this.jobs.findOne({ _id: id, tenantId });
  }
}

/** Jobs of `kinds` a runner may claim at `now`: queued, or running under a lease that ran out (its runner died). */
function runnableJobs(kinds: readonly string[], now: Date): Filter<JobDocument> {
  return { kind: { $in: [...kinds] }, $or: [{ state: 'QUEUED' }, { state: 'RUNNING', 'lease.until': { $lte: now } }] };
}

/** Whether a runner of `kinds` would find a job to claim now: the one indexed question an idle runner asks. */
export async function hasRunnableJob(db: Db, kinds: readonly string[]): Promise<boolean> {
  return (await db.collection<JobDocument>(JOBS_COLLECTION).findOne(runnableJobs(kinds, new Date()), { projection: { _id: 1 } })) !== null;
}

export interface JobRunnerOptions {
  /** How long a claim lasts without a commit or heartbeat; a runner that died releases its jobs after this. */
  leaseMs?: number;
  /** How soon a runner looks for work again after finding some; while it finds none the wait doubles up to maxPollMs. */
  pollMs?: number;
  /** The longest wait of an idle runner: a job queued by another replica is claimed within this (one queued here at once). */
  maxPollMs?: number;
  /** Jobs this runner does at once (of different tenants). */
  concurrency?: number;
  logger: Logger;
}

/** Claims queued (or abandoned) jobs of its kinds and runs them with their handlers. */
export class JobRunner {
  private readonly jobs: Collection<JobDocument>;
  private readonly owner = randomUUID();
  private readonly leaseMs: number;
  private readonly backoff: IdleBackoff;
  private readonly concurrency: number;
  private readonly running = new Map<string, { tenantId: string; abort: AbortController; done: Promise<void> }>();
  private stopped = false;
  private timer: NodeJS.Timeout | null = null;
  private polling: Promise<void> | null = null;

  constructor(
    db: Db,
    private readonly handlers: Readonly<Record<string, JobHandler<never, never>>>,
    private readonly options: JobRunnerOptions,
  ) {
    this.jobs = db.collection<JobDocument>(JOBS_COLLECTION);
    this.leaseMs = options.leaseMs ?? DEFAULT_JOB_LEASE_SECONDS * 1000;
    const pollMs = options.pollMs ?? 500;
    this.backoff = new IdleBackoff(pollMs, Math.max(pollMs, options.maxPollMs ?? 5_000));
    this.concurrency = options.concurrency ?? 2;
  }

  start(): void {
    this.schedule(0);
  }

  /** Looks for work now (a job was just queued, or one finished) instead of at the next poll. */
  wake(): void {
    if (this.stopped || this.polling) return;
    this.backoff.busy();
    this.schedule(0);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.polling;
    for (const { abort } of this.running.values()) abort.abort();
    await Promise.allSettled([...this.running.values()].map((r) => r.done));
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      let claimed = false;
      this.polling = this.poll()
        .then((n) => {
          claimed = n > 0;
        })
        .catch((err: unknown) => this.options.logger.error({ err }, 'job runner: claiming a job failed'))
        .finally(() => {
          this.polling = null;
          this.schedule(claimed ? this.backoff.busy() : this.backoff.idle());
        });
    }, ms);
  }

  /** Claims and launches jobs while there are slots and runnable jobs; how many it claimed. */
  private async poll(): Promise<number> {
    let claimed = 0;
    while (!this.stopped && this.running.size < this.concurrency) {
      const job = await this.claim();
      if (!job) return claimed;
      this.launch(job);
      claimed++;
    }
    return claimed;
  }

  /**
   * The oldest runnable job of a tenant no runner is working for now. An idle runner asks one indexed question (is
   * anything QUEUED or abandoned?) and stops there; only when something is does it read the busy tenants and claim.
   */
  private async claim(): Promise<JobDocument | null> {
    const now = new Date();
    const runnable = runnableJobs(Object.keys(this.handlers), now);
    if (!(await this.jobs.findOne(runnable, { projection: { _id: 1 } }))) return null;
    const busyTenants = await this.jobs.distinct('tenantId', { state: 'RUNNING', 'lease.until': { $gt: now } });
    return this.jobs.findOneAndUpdate(
      { ...runnable, tenantId: { $nin: [...new Set([...busyTenants, ...[...this.running.values()].map((r) => r.tenantId)])] } },
      { $set: { state: 'RUNNING', lease: { owner: this.owner, until: new Date(now.getTime() + this.leaseMs) }, updatedAt: now }, $inc: { attempts: 1 } },
      { sort: { createdAt: 1 }, returnDocument: 'after' },
    );
  }

  private launch(job: JobDocument): void {
    const abort = new AbortController();
    const done = this.execute(job, abort)
      .catch((err: unknown) => this.options.logger.error({ err, jobId: job._id, kind: job.kind }, 'job runner: a job stopped on an error'))
      .finally(() => {
        this.running.delete(job._id);
        this.wake();
      });
    this.running.set(job._id, { tenantId: job.tenantId, abort, done });
  }

  /** Writes only while this runner still holds the lease: a runner that lost it (paused past it) must not overwrite another's progress. */
  private async update(job: JobDocument, set: Record<string, unknown>, abort: AbortController): Promise<void> {
    const now = new Date();
    const result = await this.jobs.updateOne(
      { _id: job._id, 'lease.owner': this.owner },
      { $set: { ...set, updatedAt: now, ...(set['lease'] === undefined ? { 'lease.until': new Date(now.getTime() + this.leaseMs) } : {}) } },
    );
    if (result.matchedCount === 0) {
      abort.abort();
      throw new Error(`job ${job._id}: another runner holds it now`);
    }
  }

  /** Ends this runner's claim (only while it still holds it): the job is claimable `afterMs` from now, checkpoint and all. */
  private async release(job: JobDocument, afterMs = 0): Promise<void> {
    const now = new Date();
    await this.jobs.updateOne({ _id: job._id, 'lease.owner': this.owner }, { $set: { 'lease.until': new Date(now.getTime() + afterMs), updatedAt: now } });
  }

  private async execute(job: JobDocument, abort: AbortController): Promise<void> {
    const handler = this.handlers[job.kind] as unknown as JobHandler<Record<string, unknown>, Record<string, unknown>>;
    const heartbeat = setInterval(() => {
      this.update(job, {}, abort).catch(() => undefined);
    }, this.leaseMs / 3);
    const { logger } = this.options;
    logger.info(
      { jobId: job._id, kind: job.kind, tenantId: job.tenantId, attempt: job.attempts, resumedFrom: job.checkpoint ? job.progress.done : null },
      'job started',
    );
    try {
      const commit = async (step: JobCommit<Record<string, unknown>>) => {
        if (abort.signal.aborted) throw new Error('job runner stopping');
        await this.update(
          job,
          {
            checkpoint: step.checkpoint,
            progress: step.progress,
            ...(step.counts ? { counts: step.counts } : {}),
            ...(step.errors ? { errors: step.errors.slice(0, MAX_KEPT_ERRORS) } : {}),
            ...(step.errorCount !== undefined ? { errorCount: step.errorCount } : {}),
          },
          abort,
        );
      };
      let outcome: JobOutcome;
      try {
        outcome = await handler.run(job, commit, abort.signal);
      } catch (err) {
        // Stopping (or a lost lease) leaves the job RUNNING for a runner to resume from its checkpoint. A clean stop (a
        // rollout's SIGTERM) hands the lease back, so the next runner claims it at once instead of after the lease.
        if (abort.signal.aborted) {
          if (this.stopped) await this.release(job);
          return;
        }
        // An outage is not the job's failure (its user would have to start it again): it stays RUNNING and is taken up
        // again from its checkpoint shortly, or when its lease runs out if the database cannot take even that write.
        if (isDatabaseUnavailable(err)) {
          logger.warn({ jobId: job._id, kind: job.kind, error: errorSummary(err) }, 'job paused: database unavailable; it resumes from its checkpoint');
          await this.release(job, DATABASE_OUTAGE_RETRY_MS).catch(() => undefined);
          return;
        }
        logger.error({ err, jobId: job._id }, 'job failed on an unexpected error');
        // Not retried by itself (an error that recurs would loop): FAILED, and a new start with the same key resumes it.
        outcome = { state: 'FAILED', failure: 'the job stopped on an internal error; starting it again with the same key resumes it', retryable: true };
      }
      const now = new Date();
      await this.update(
        job,
        {
          state: outcome.state,
          failure: outcome.state === 'FAILED' ? outcome.failure : null,
          retryable: outcome.state === 'FAILED' && outcome.retryable === true,
          ...(outcome.counts ? { counts: outcome.counts } : {}),
          finishedAt: now,
          lease: null,
        },
        abort,
      );
      logger.info({ jobId: job._id, kind: job.kind, tenantId: job.tenantId, state: outcome.state }, 'job finished');
    } finally {
      clearInterval(heartbeat);
    }
  }
}
