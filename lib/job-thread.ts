import { Worker, type MessagePort } from 'node:worker_threads';
import type { JobRunner } from './jobs';
import type { Logger } from './logger';
import { stopThread, type ThreadEntry } from './threads';
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
 * closes its client and exits. A thread that dies (it should not) is started again after a second.
 */

export type JobThreadMessage = { type: 'wake' } | { type: 'stop' };

/** How long a stopping runner may take to reach its jobs' next chunk before its thread is terminated (the jobs resume either way). */
const STOP_GRACE_MS = 15_000;
const RESTART_MS = 1_000;

export class JobRunnerThread {
  private worker: Worker | null = null;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly entry: ThreadEntry,
    private readonly workerData: unknown,
    private readonly logger: Logger,
  ) {}

  start(): void {
    if (this.stopped) return;
    const worker = new Worker(this.entry.file, { execArgv: this.entry.execArgv, workerData: this.workerData });
    this.worker = worker;
    worker.on('error', (err) => this.logger.error({ err }, 'the job runner thread failed'));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      if (this.stopped) return;
      this.logger.error({ code }, `the job runner thread stopped; starting a new one in ${RESTART_MS / 1000} s (jobs it ran resume when their lease runs out)`);
      this.restartTimer = setTimeout(() => this.start(), RESTART_MS);
    });
  }

  /** A job was queued: the runner looks for work now instead of at its next poll. */
  wake(): void {
    this.worker?.postMessage({ type: 'wake' } satisfies JobThreadMessage);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.worker) await stopThread(this.worker, { type: 'stop' } satisfies JobThreadMessage, STOP_GRACE_MS);
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
