/**
 * What the benchmark measures of its processes: every subgraph and every contender is a separate OS process
 * (lib/infra/child-process.ts ProcessSet, as in scripts/scale-out.ts), so its CPU can be read from /proc before and
 * after each load run.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { processTree, type ManagedProcess } from '@linepack/lib/infra/child-process';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (100 on Linux, asked once). */
export const clockTicksPerSecond: number = (() => {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
})();

/** CPU time (user + system, ms) one process has used so far, its threads included; 0 once it is gone. */
export function processCpuMs(pid: number): number {
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  } catch {
    return 0;
  }
  // After "pid (comm) ": state ppid pgrp session tty_nr tpgid flags minflt cminflt majflt cmajflt utime stime …
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return ((Number(fields[11]) + Number(fields[12])) * 1000) / clockTicksPerSecond;
}

/** CPU ms of a process and every descendant alive now (a contender that forks workers is counted whole). */
export function treeCpuMs(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + processCpuMs(p), 0);
}

/** CPU ms a benchmark process and its children have used so far (0 before it started). */
export const cpuMsOf = (service: ManagedProcess): number => (service.pid > 0 ? treeCpuMs(service.pid) : 0);

/** The child processes it runs now (a contender that forks workers). */
export const childPidsOf = (service: ManagedProcess): number[] => (service.pid > 0 ? processTree(service.pid).slice(1) : []);
