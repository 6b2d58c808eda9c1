import path from 'node:path';
import type { Worker } from 'node:worker_threads';

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
