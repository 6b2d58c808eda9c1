import type { MessagePort } from 'node:worker_threads';
import { isDatabaseUnavailable } from './errors';
import { IdleBackoff } from './idle-backoff';
import { errorSummary, type Logger } from './logger';
import { BackgroundThread, type ThreadEntry } from './threads';
import { activeTracing } from './tracing';

/**
 * A subgraph's job runner (lib/jobs.ts) on a worker thread of its own, with its own MongoDB client: a job's work —
 * parsing a 100,000-feature listing, validating and writing it in chunks — never holds the event loop that answers
 * the subgraph's requests (issue 31: an ILI import held the measurements subgraph's loop up to 627 ms at a time).
 * The analytics subgraph's run comparison worker runs the same way (`WakeableWork`: started, woken, stopped).
 *
 * Nothing about jobs changes: the runner on the thread claims, leases, checkpoints and resumes exactly as on the loop
 * (a kill -9 of the process takes the thread with it; the lease runs out and the job resumes from its checkpoint).
 * The request loop wakes it when a job is queued; on stop (SIGTERM, after the drain period) the runner stops as
 * before — running jobs are aborted at their next chunk and left RUNNING for their lease to run out — and the thread
 * closes its client and exits. A thread that dies (it should not) is started again after a second (BackgroundThread).
 */

export type JobThreadMessage = { type: 'wake' } | { type: 'stop' };

/** How long stopping work may take to reach its next chunk before its thread is terminated (the work resumes either way). */
const STOP_GRACE_MS = 15_000;

/** Work a thread runs until its service stops, which the loop wakes when it queued some: a job runner, a run comparison worker. */
export interface WakeableWork {
  start(): void;
  /** Work was queued: look for it now instead of at the next poll. */
  wake(): void;
  /** Stops at the next chunk; what was under way is taken up again (by its lease or its request). */
  stop(): Promise<void>;
}

/** How often the loop asks whether there is work for a thread not started yet: as an idle runner polls (lib/jobs.ts). */
const FIRST_WORK_POLL_MS = 500;
const FIRST_WORK_MAX_POLL_MS = 5_000;

/**
 * A `WakeableWork` on a thread of its own (see the file comment); the loop's side. The thread starts with the first
 * work: when the loop wakes it (work queued in this process) or when `hasWork` finds some in the database (queued by
 * another replica, or left RUNNING by a process that died, once its lease ran out). Until then the loop asks `hasWork`
 * as an idle runner would, at most every 5 s. A thread costs its own copy of the driver and the modules it runs
 * (about 0.7 CPU-seconds to start); most replicas of most services, and every test stack, never queue such work.
 * Once started it runs until the service stops.
 */
export class WakeableWorkThread extends BackgroundThread {
  private threadStarted = false;
  private watchStopped = false;
  private watchTimer: NodeJS.Timeout | null = null;
  private watching: Promise<void> | null = null;
  private readonly backoff = new IdleBackoff(FIRST_WORK_POLL_MS, FIRST_WORK_MAX_POLL_MS);

  constructor(
    private readonly work: { what: string; meanwhile: string; entry: ThreadEntry; workerData: unknown; logger: Logger; hasWork: () => Promise<boolean> },
  ) {
    super({ ...work, stopMessage: { type: 'stop' } satisfies JobThreadMessage, stopGraceMs: STOP_GRACE_MS });
  }

  /** Whether the thread has been started (by work found or queued). */
  get started(): boolean {
    return this.threadStarted;
  }

  /** Starts looking for work; the thread itself starts with the first (see the class comment). */
  override start(): void {
    this.watchFor(0);
  }

  /** Work was queued: the thread looks for it now instead of at its next poll (and starts, if it had not). */
  wake(): void {
    if (!this.threadStarted) return this.startThread();
    this.post({ type: 'wake' } satisfies JobThreadMessage);
  }

  override async stop(): Promise<void> {
    this.watchStopped = true;
    if (this.watchTimer) clearTimeout(this.watchTimer);
    await this.watching;
    await super.stop();
  }

  private startThread(): void {
    if (this.threadStarted || this.watchStopped) return;
    this.threadStarted = true;
    if (this.watchTimer) clearTimeout(this.watchTimer);
    super.start();
  }

  private watchFor(waitMs: number): void {
    if (this.threadStarted || this.watchStopped) return;
    this.watchTimer = setTimeout(() => {
      this.watchTimer = null;
      this.watching = this.work
        .hasWork()
        .then((found) => {
          if (found) this.startThread();
          else this.watchFor(this.backoff.idle());
        })
        .catch((err: unknown) => {
          // As the runner on its thread would: an outage is one line without a stack, and the next look retries.
          if (isDatabaseUnavailable(err)) this.work.logger.warn({ error: errorSummary(err) }, `${this.work.what}: database unavailable`);
          else this.work.logger.error({ err }, `${this.work.what}: looking for work failed`);
          this.watchFor(this.backoff.idle());
        })
        .finally(() => (this.watching = null));
    }, waitMs);
  }
}

export class JobRunnerThread extends WakeableWorkThread {
  constructor(entry: ThreadEntry, workerData: unknown, logger: Logger, hasWork: () => Promise<boolean>) {
    super({
      what: 'the job runner thread',
      meanwhile: 'jobs it ran resume when their lease runs out',
      entry,
      workerData,
      logger,
      hasWork,
    });
  }
}

/** The thread's side: runs `work` until the service stops it, then `close`s what it opened (its MongoDB client). */
export function runWakeableWorkThread(port: MessagePort, work: WakeableWork, close: () => Promise<void>): void {
  port.on('message', (message: JobThreadMessage) => {
    if (message.type === 'wake') return work.wake();
    void work
      .stop()
      .then(close)
      .then(() => activeTracing()?.shutdown())
      .finally(() => process.exit(0));
  });
  work.start();
}
