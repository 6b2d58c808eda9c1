/**
 * Threads that run one tenant's expensive or bulk work (the gateway's expensive-operation lane, the measurements
 * subgraph's lane and job runner) give way to the threads that answer everyone's cheap requests when the CPU is
 * short: on Linux a nice value belongs to a thread, so such a thread lowers its own. The process's other threads keep
 * theirs. Elsewhere (no /proc/thread-self) nothing changes.
 */
import { readlinkSync } from 'node:fs';
import os from 'node:os';
import type { Logger } from './logger';

/** 10 of 19: under contention the kernel gives such a thread about a tenth of the CPU a normal thread gets. */
export const BULK_THREAD_NICE = 10;

export function lowerThisThreadPriority(logger: Logger, nice = BULK_THREAD_NICE): void {
  let tid: number;
  try {
    tid = Number(readlinkSync('/proc/thread-self').split('/').pop());
  } catch {
    return;
  }
  try {
    // Only ever lower it: a thread of a process already started with a higher nice value keeps that one.
    if (os.getPriority(tid) < nice) os.setPriority(tid, nice);
  } catch (error) {
    logger.warn({ err: error }, 'could not lower this thread’s CPU priority; it runs at the process’s priority');
  }
}
