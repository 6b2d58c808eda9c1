/**
 * A thread that runs one tenant's bulk work lowers its own CPU priority (lib/thread-priority.ts, issue 31): on Linux a
 * nice value belongs to a thread, so the worker thread's nice value rises to BULK_THREAD_NICE and the thread that
 * answers everyone else keeps its own.
 */
import { existsSync } from 'node:fs';
import path from 'node:path';
import { Worker } from 'node:worker_threads';
import { BULK_THREAD_NICE } from '../thread-priority';
import { niceOfThisThread } from './fixtures/lowered-thread';

const linux = existsSync('/proc/thread-self/stat');

(linux ? test : test.skip)('a thread that lowers its priority runs at BULK_THREAD_NICE while the main thread keeps its own', async () => {
  const before = niceOfThisThread();
  const worker = new Worker(path.join(__dirname, 'fixtures', 'lowered-thread.ts'), { execArgv: ['--import', 'tsx'] });
  const workerNice = await new Promise<number>((resolve, reject) => {
    worker.once('message', resolve);
    worker.once('error', reject);
  });
  await worker.terminate();
  expect(workerNice).toBe(Math.max(BULK_THREAD_NICE, before));
  expect(niceOfThisThread()).toBe(before);
});
