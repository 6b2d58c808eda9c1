import type { MessagePort } from 'node:worker_threads';
import type { JobRunner } from './jobs';
import type { Logger } from './logger';
import { BackgroundThread, type ThreadEntry } from './threads';
import { activeTracing } from './tracing';

/**
 * A subgraph's job runner (lib/jobs.ts) on a worker thread of its own, with its own MongoDB client: a job's work —
 * parsing a 100,000-feature listing, validating and writing it in chunks — never holds the event loop that answers
 * the subgraph's requests (issue 31: an ILI import held the measurements subgraph's loop up to 627 ms at a time).
 *
 * Nothing about jobs changes: the runner on the thread claims, leases, checkpoints and resumes exactly as on the loop
 * (a kill -9 of the process takes the thread with it; the lease runs out and the job resumes from its checkpoint).
 * The request loop wakes it when a job is queued; on stop (SIGTERM, after the drain period) the runner stops as
 * before — running jobs are aborted at their next chunk and left RUNNING for their lease to run out — and the thread
 * closes its client and exits. A thread that dies (it should not) is started again after a second (BackgroundThread).
 */

export type JobThreadMessage = { type: 'wake' } | { type: 'stop' };

/** How long a stopping runner may take to reach its jobs' next chunk before its thread is terminated (the jobs resume either way). */
const STOP_GRACE_MS = 15_000;

export class JobRunnerThread extends BackgroundThread {
  constructor(entry: ThreadEntry, workerData: unknown, logger: Logger) {
    super({
      what: 'the job runner thread',
      meanwhile: 'jobs it ran resume when their lease runs out',
      entry,
      workerData,
      logger,
      stopMessage: { type: 'stop' } satisfies JobThreadMessage,
      stopGraceMs: STOP_GRACE_MS,
    });
  }

  /** A job was queued: the runner looks for work now instead of at its next poll. */
  wake(): void {
    this.post({ type: 'wake' } satisfies JobThreadMessage);
  }
}

/** The thread's side: runs `runner` until the subgraph stops it, then `close`s what it opened (its MongoDB client). */
export function runJobRunnerThread(port: MessagePort, runner: JobRunner, close: () => Promise<void>): void {
  port.on('message', (message: JobThreadMessage) => {
    if (message.type === 'wake') return runner.wake();
    void runner
      .stop()
      .then(close)
      .then(() => activeTracing()?.shutdown())
      .finally(() => process.exit(0));
  });
  runner.start();
}
