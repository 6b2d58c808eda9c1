import type { MessagePort } from 'node:worker_threads';
import type { Logger } from './logger';
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

/** A `WakeableWork` on a thread of its own (see the file comment); the loop's side. */
export class WakeableWorkThread extends BackgroundThread {
  constructor(options: { what: string; meanwhile: string; entry: ThreadEntry; workerData: unknown; logger: Logger }) {
    super({ ...options, stopMessage: { type: 'stop' } satisfies JobThreadMessage, stopGraceMs: STOP_GRACE_MS });
  }

  /** Work was queued: the thread looks for it now instead of at its next poll. */
  wake(): void {
    this.post({ type: 'wake' } satisfies JobThreadMessage);
  }
}

export class JobRunnerThread extends WakeableWorkThread {
  constructor(entry: ThreadEntry, workerData: unknown, logger: Logger) {
    super({
      what: 'the job runner thread',
      meanwhile: 'jobs it ran resume when their lease runs out',
      entry,
      workerData,
      logger,
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
