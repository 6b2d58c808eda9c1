import path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { Logger } from './logger';

/** What a worker thread runs: a file, and the Node options it needs (tsx when it is TypeScript source). */
export interface ThreadEntry {
  file: string;
  execArgv: string[];
}

/**
 * A service's worker-thread entry. From source, `sourceFile` (a .ts file beside `moduleFile`) with tsx; in a bundle
 * (scripts/build-package.mjs: one dist/main.js), the bundle itself, whose main.ts requires the thread's module when it
 * finds itself off the main thread (`isMainThread`). `moduleFile` is the caller's `__filename`.
 */
export function threadEntry(moduleFile: string, sourceFile: string): ThreadEntry {
  if (moduleFile.endsWith('.ts')) return { file: path.join(path.dirname(moduleFile), sourceFile), execArgv: ['--import', 'tsx'] };
  return { file: moduleFile, execArgv: [] };
}

/** Asks a worker thread to stop (`message`) and waits until it has exited; one that takes longer than `graceMs` is terminated. */
export async function stopThread(worker: Worker, message: unknown, graceMs: number): Promise<void> {
  if (worker.threadId === -1) return; // exited already
  const exited = new Promise<void>((resolve) => worker.once('exit', () => resolve()));
  worker.postMessage(message);
  const timer = setTimeout(() => void worker.terminate(), graceMs);
  await exited;
  clearTimeout(timer);
}

/**
 * A worker thread that runs for as long as its service does (a job runner, an outbox relay), so its work never holds
 * the loop that answers requests. One that dies (it should not) is started again after RESTART_MS; `stop` sends it
 * `stopMessage` and waits for it to exit (terminated after `stopGraceMs`). `onMessage` receives what it posts.
 */
export class BackgroundThread<FromThread = never> {
  private static readonly RESTART_MS = 1_000;
  private worker: Worker | null = null;
  private stopped = false;
  private restartTimer: NodeJS.Timeout | null = null;

  constructor(
    private readonly options: {
      /** What it is, for the log: "the job runner thread". */
      what: string;
      /** What happens to its work while it is replaced, for the log: "jobs it ran resume when their lease runs out". */
      meanwhile: string;
      entry: ThreadEntry;
      workerData: unknown;
      logger: Logger;
      stopMessage: unknown;
      stopGraceMs: number;
      onMessage?: (message: FromThread) => void;
      /** Each time the thread exits, before a new one starts: what it reported is no longer so. */
      onExit?: () => void;
    },
  ) {}

  start(): void {
    this.launch();
  }

  /** Starts the thread, the first time and after it died (never through an override of `start`). */
  private launch(): void {
    if (this.stopped) return;
    const { what, meanwhile, entry, workerData, logger, onMessage } = this.options;
    const worker = new Worker(entry.file, { execArgv: entry.execArgv, workerData });
    this.worker = worker;
    if (onMessage) worker.on('message', onMessage);
    worker.on('error', (err) => logger.error({ err }, `${what} failed`));
    worker.on('exit', (code) => {
      if (this.worker === worker) this.worker = null;
      this.options.onExit?.();
      if (this.stopped) return;
      logger.error({ code }, `${what} stopped; starting a new one in ${BackgroundThread.RESTART_MS / 1000} s (${meanwhile})`);
      this.restartTimer = setTimeout(() => this.launch(), BackgroundThread.RESTART_MS);
    });
  }

  /** Posts `message` to the thread, if it is running. */
  protected post(message: unknown): void {
    this.worker?.postMessage(message);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.restartTimer) clearTimeout(this.restartTimer);
    if (this.worker) await stopThread(this.worker, this.options.stopMessage, this.options.stopGraceMs);
  }
}

/** After a thread failed to start, its work runs on the loop this long before it is tried again. */
export const THREAD_START_RETRY_MS = 60_000;

/**
 * A worker thread started on first use, for work that may also run on the event loop (the gateway's
 * expensive-operation lane, a subgraph's expensive-request lane): the thread says `{ type: 'ready' }` once it can take
 * work; `ready()` resolves with it, or with null when it cannot start (the caller does the work on the loop; logged,
 * tried again THREAD_START_RETRY_MS later). A thread that exits after it was ready is replaced on next use; `exited`
 * answers what it was running.
 */
export class OnDemandThread<FromThread extends { type: string }> {
  private worker: Worker | null = null;
  private starting: Promise<Worker | null> | null = null;
  private failedAt = -Infinity;
  private stopped = false;

  constructor(
    private readonly options: {
      /** What it is, for the log: "the expensive-operation lane". */
      what: string;
      /** What happens instead while it cannot start, for the log: "expensive operations run on the main event loop". */
      instead: string;
      /** What happens after it stopped, for the log: "the next expensive operation starts a new one". */
      next: string;
      entry: () => ThreadEntry;
      workerData: unknown;
      logger: Logger;
      /** Every message but `ready`. */
      message(message: FromThread): void;
      /** A ready thread exited (it failed, or it was stopped). */
      exited(): void;
    },
  ) {}

  /** The thread that is running, if any (no start). */
  get running(): Worker | null {
    return this.worker;
  }

  ready(): Promise<Worker | null> {
    if (this.worker) return Promise.resolve(this.worker);
    if (this.stopped || performance.now() - this.failedAt < THREAD_START_RETRY_MS) return Promise.resolve(null);
    this.starting ??= this.start().finally(() => (this.starting = null));
    return this.starting;
  }

  private start(): Promise<Worker | null> {
    const { what, instead, next, logger } = this.options;
    const unavailable = (err: unknown) => {
      this.failedAt = performance.now();
      logger.error({ err }, `${what} could not start; ${instead} (next try in ${THREAD_START_RETRY_MS / 1000} s)`);
    };
    return new Promise((resolve) => {
      let worker: Worker;
      try {
        const { file, execArgv } = this.options.entry();
        worker = new Worker(file, { execArgv, workerData: this.options.workerData });
      } catch (err) {
        unavailable(err);
        return resolve(null);
      }
      let ready = false;
      let failure: unknown = null;
      worker.on('message', (message: FromThread | { type: 'ready' }) => {
        if (message.type !== 'ready') return this.options.message(message as FromThread);
        ready = true;
        this.worker = worker;
        resolve(worker);
      });
      worker.on('error', (err) => {
        if (ready) logger.error({ err }, `${what} failed`);
        else failure = err;
      });
      worker.on('exit', (code) => {
        if (this.worker === worker) this.worker = null;
        if (!ready) {
          unavailable(failure ?? new Error(`its thread exited (${code}) before it was ready`));
          return resolve(null);
        }
        if (!this.stopped) logger.error({ code }, `${what} stopped; ${next}`);
        this.options.exited();
      });
    });
  }

  /** Stops the thread (`message` asks it to; terminated after `graceMs`); it is not started again. */
  async stop(message: unknown, graceMs: number): Promise<void> {
    this.stopped = true;
    const worker = this.worker ?? (await this.starting);
    if (worker) await stopThread(worker, message, graceMs);
  }
}
