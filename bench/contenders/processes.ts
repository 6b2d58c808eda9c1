/**
 * The benchmark's own processes: every subgraph and every contender is a separate OS process (as in
 * scripts/scale-out.ts), so its CPU can be read from /proc before and after each load run. Each is started in its
 * own process group with Linux's parent-death signal (setpriv --pdeathsig KILL), so not even a SIGKILL of the
 * benchmark leaves one running; clean-up stops the groups, last started first.
 */
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { closeSync, openSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { exited, processAlive } from '@linepack/lib/infra/child-process';
import { waitFor } from '@linepack/lib/testing/until';

/** Clock ticks per second of /proc/<pid>/stat's utime and stime (100 on Linux, asked once). */
export const clockTicksPerSecond: number = (() => {
  try {
    const value = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim());
    return Number.isFinite(value) && value > 0 ? value : 100;
  } catch {
    return 100;
  }
})();

/** Threads of `pid` and, recursively, its child processes (a contender that forks workers is counted whole). */
export function processTree(pid: number): number[] {
  const out: number[] = [];
  const visit = (p: number) => {
    out.push(p);
    let tasks: string[] = [];
    try {
      tasks = readdirSync(`/proc/${p}/task`);
    } catch {
      return; // gone
    }
    for (const tid of tasks) {
      let children = '';
      try {
        children = readFileSync(`/proc/${p}/task/${tid}/children`, 'utf8');
      } catch {
        continue;
      }
      for (const child of children.trim().split(/\s+/).filter(Boolean)) visit(Number(child));
    }
  };
  visit(pid);
  return out;
}

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

/** CPU ms of a process and every descendant alive now. */
export function treeCpuMs(pid: number): number {
  return processTree(pid).reduce((sum, p) => sum + processCpuMs(p), 0);
}

function tailOf(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Env for a child: only what a process needs from ours (no stray PORT, SUBGRAPH_URL_*, NODE_OPTIONS from the caller). */
export function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'USER', 'LANG', 'TZ', 'TMPDIR', 'JAVA_HOME']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

export interface ServiceSpec {
  name: string;
  /** Arguments after `node` (the same Node binary as the benchmark: every contender runs on one Node version). */
  nodeArgs: string[];
  port: number;
  env: Record<string, string>;
  cwd: string;
}

export class Service {
  child: ChildProcess | null = null;
  readonly logFile: string;

  constructor(
    readonly spec: ServiceSpec,
    private readonly set: ProcessSet,
  ) {
    this.logFile = path.join(set.dir, `${spec.name}.log`);
  }

  get name(): string {
    return this.spec.name;
  }

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.spec.port}`;
  }

  /** CPU ms of this process and its children so far. */
  cpuMs(): number {
    return this.child?.pid ? treeCpuMs(this.child.pid) : 0;
  }

  /** Child processes it runs now (a contender that forks workers). */
  childPids(): number[] {
    return this.child?.pid ? processTree(this.child.pid).slice(1) : [];
  }

  start(): void {
    const fd = openSync(this.logFile, 'a');
    const nodeArgs = [`--title=linepack-gateway-bench[${this.set.runId}] ${this.name}`, ...this.spec.nodeArgs];
    const setpriv = this.set.setpriv;
    const [command, args] = setpriv ? [setpriv, ['--pdeathsig', 'KILL', '--', process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
    const child = spawn(command, args, {
      cwd: this.spec.cwd,
      env: { ...baseEnv(), ...this.spec.env },
      stdio: ['ignore', fd, fd],
      detached: true,
    });
    closeSync(fd);
    child.on('error', () => {}); // reported through readiness and the log
    const pid = child.pid;
    if (pid) {
      this.set.pids.add(pid);
      // Once it is gone its pid may be reused by anything: never signalled again (stop() has killed its group).
      child.once('exit', () => setImmediate(() => this.set.pids.delete(pid)));
    }
    this.child = child;
  }

  /** Polls `origin + path` until it answers 2xx; fails with the log's tail if the process exits first. */
  async waitReady(readyPath: string, timeoutMs = 90_000): Promise<void> {
    const child = this.child;
    await waitFor(
      async () => {
        if (child && (child.exitCode !== null || child.signalCode !== null)) {
          throw new Error(`${this.name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tailOf(this.logFile)}`);
        }
        return (await fetch(`${this.origin}${readyPath}`, { signal: AbortSignal.timeout(2_000) })).ok;
      },
      timeoutMs,
      `${this.name} (${this.origin}${readyPath})`,
      200,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- ${this.logFile} ---\n${tailOf(this.logFile)}`);
    });
  }

  /** The last lines it logged (for error reports). */
  logTail(lines = 20): string {
    return tailOf(this.logFile, lines);
  }

  alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** SIGTERM its process group (SIGKILL after 10 s); resolves once it is gone. */
  async stop(): Promise<void> {
    const child = this.child;
    if (!child?.pid || child.exitCode !== null || child.signalCode !== null) return;
    const done = exited(child);
    try {
      process.kill(-child.pid, 'SIGTERM');
    } catch {
      child.kill('SIGTERM');
    }
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([done.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), 10_000)))]);
    clearTimeout(timer);
    try {
      process.kill(-child.pid, 'SIGKILL'); // what is left of its group (workers it forked), or itself after the timeout
    } catch {
      // none
    }
    if (timedOut) await done;
  }
}

/** Every process one benchmark run starts, so clean-up — also a synchronous last resort at exit — reaches each. */
export class ProcessSet {
  readonly pids = new Set<number>();
  private readonly services: Service[] = [];

  constructor(
    readonly dir: string,
    readonly runId: string,
    readonly setpriv: string | null,
  ) {}

  add(spec: ServiceSpec): Service {
    const service = new Service(spec, this);
    this.services.push(service);
    return service;
  }

  /** Stops every service, the last started first (contenders before the subgraphs they call). */
  async stopAll(): Promise<void> {
    for (const service of [...this.services].reverse()) await service.stop().catch(() => undefined);
  }

  /** SIGKILL every process group still alive (process 'exit', a second Ctrl-C). Synchronous. */
  killAllNow(): void {
    for (const pid of this.pids) {
      try {
        process.kill(-pid, 'SIGKILL');
      } catch {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {
          // already gone
        }
      }
    }
  }

  /** Processes this run started that are still alive (must be none after stopAll). */
  leftovers(): number[] {
    return [...this.pids].filter((pid) => processAlive(pid));
  }
}
