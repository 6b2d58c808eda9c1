/**
 * Helpers for the processes the project launches itself: the local servers (embedded MongoDB, redis-server), and the
 * runs that start a whole stack as separate processes (scripts/scale-out.ts, bench/contenders) — their process
 * groups, log files, readiness and clean-up.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { closeSync, constants as fsConstants, openSync, readdirSync, readFileSync } from 'node:fs';
import { access, stat } from 'node:fs/promises';
import path from 'node:path';

export async function isExecutable(file: string): Promise<boolean> {
  try {
    await access(file, fsConstants.X_OK);
    return (await stat(file)).isFile();
  } catch {
    return false;
  }
}

/** `name` resolved on PATH (absolute path), or null. */
export async function which(name: string): Promise<string | null> {
  for (const dir of (process.env['PATH'] ?? '').split(path.delimiter)) {
    if (!dir) continue;
    const candidate = path.join(dir, name);
    if (await isExecutable(candidate)) return candidate;
  }
  return null;
}

/** Whether a process with this pid exists (EPERM: it does, owned by someone else). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

export function exited(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => child.once('exit', () => resolve()));
}

/** Resolves once `child` has exited, saying how: `exit code 1`, `signal SIGKILL`. */
export function howExited(child: ChildProcess): Promise<string> {
  const how = () => (child.signalCode ? `signal ${child.signalCode}` : `exit code ${child.exitCode}`);
  return exited(child).then(how);
}

/** SIGTERM, then SIGKILL if the process has not exited within `timeoutMs`. Resolves once it is gone; true when it had to be killed. */
export async function terminate(child: ChildProcess, timeoutMs: number): Promise<boolean> {
  if (child.exitCode !== null || child.signalCode !== null) return false;
  const done = exited(child);
  child.kill('SIGTERM');
  let timer: NodeJS.Timeout | undefined;
  const timedOut = await Promise.race([
    done.then(() => false),
    new Promise<boolean>((resolve) => {
      timer = setTimeout(() => resolve(true), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (timedOut) {
    child.kill('SIGKILL');
    await done;
  }
  return timedOut;
}

// ─────────── Runs that start processes of their own (npm run scale-out, npm run bench:gateway) ───────────

/** What a run has to undo, each step once and last added first, also when it fails or is interrupted. */
export class Cleanup {
  private readonly tasks: Array<{ name: string; run: () => Promise<unknown> }> = [];
  private readonly lastResorts: Array<() => void> = [];
  private running: Promise<string[]> | null = null;

  add(name: string, run: () => Promise<unknown>): void {
    this.tasks.push({ name, run });
  }

  /** A synchronous step for when there is no time for the orderly ones (process 'exit', a second Ctrl-C). */
  addLastResort(run: () => void): void {
    this.lastResorts.push(run);
  }

  /** Clean-up has begun (e.g. Ctrl-C mid-run): start nothing new. */
  get begun(): boolean {
    return this.running !== null;
  }

  /** Runs every step; returns the problems, never throws. Idempotent. */
  run(): Promise<string[]> {
    this.running ??= (async () => {
      const problems: string[] = [];
      for (const task of [...this.tasks].reverse()) {
        try {
          await task.run();
        } catch (err) {
          problems.push(`${task.name}: ${(err as Error).message}`);
        }
      }
      return problems;
    })();
    return this.running;
  }

  lastResortNow(): void {
    for (const run of [...this.lastResorts].reverse()) {
      try {
        run();
      } catch {
        // best effort
      }
    }
  }
}

/**
 * Ctrl-C and SIGTERM: the first runs the clean-up and exits 130/143, a second kills at once; the last resorts also run
 * when the process exits any other way. `interrupted()` says whether a signal came (the run's own end then leaves the
 * exit to the handler).
 */
export function stopOnSignals(cleanup: Cleanup, log: (line: string) => void): { interrupted: () => boolean } {
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    const code = signal === 'SIGINT' ? 130 : 143;
    if (interrupted) {
      cleanup.lastResortNow();
      process.exit(code);
    }
    interrupted = true;
    log(`${signal}: stopping everything (again to kill at once)`);
    void cleanup.run().finally(() => process.exit(code));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', () => cleanup.lastResortNow());
  return { interrupted: () => interrupted };
}

/** Env for a child: only what a process needs from ours (no stray PORT, SUBGRAPH_URL_*, NODE_OPTIONS from the caller). */
export function childEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'USER', 'LANG', 'TZ', 'TMPDIR', 'JAVA_HOME']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/** The last lines of a log file, for an error report. */
export function logTail(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** `pid` and, recursively, its child processes (/proc/<pid>/task/<tid>/children; Linux). */
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

export interface ProcessSpec {
  name: string;
  /** Arguments after `node` (the Node binary running this script). */
  nodeArgs: string[];
  /** The port it serves on (its `origin`); the caller puts it in `env` as the process expects it. */
  port: number;
  env: Record<string, string>;
  cwd: string;
}

/**
 * One process of a ProcessSet: `node <nodeArgs>` in a process group of its own (so a terminal's Ctrl-C reaches the
 * run, which stops the parts in order, and a stop reaches the workers it forks), with Linux's parent-death signal
 * (setpriv --pdeathsig KILL) so that not even a SIGKILL of the run leaves it running. Its output goes to
 * `<dir>/<name>.log`; its title is `<titlePrefix> <name>` (pgrep finds a run's processes by it). It can be started
 * again after it stopped or was killed.
 */
export class ManagedProcess {
  child: ChildProcess | null = null;
  readonly logFile: string;

  constructor(
    readonly spec: ProcessSpec,
    private readonly set: ProcessSet,
  ) {
    this.logFile = path.join(set.dir, `${spec.name}.log`);
  }

  get name(): string {
    return this.spec.name;
  }

  get port(): number {
    return this.spec.port;
  }

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.spec.port}`;
  }

  start(): void {
    if (this.set.stopping) throw new Error(`not starting ${this.name}: the run is stopping`);
    const fd = openSync(this.logFile, 'a');
    const nodeArgs = [`--title=${this.set.titlePrefix} ${this.name}`, ...this.spec.nodeArgs];
    const setpriv = this.set.setpriv;
    const [command, args] = setpriv ? [setpriv, ['--pdeathsig', 'KILL', '--', process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
    const child = spawn(command, args, { cwd: this.spec.cwd, env: { ...childEnv(), ...this.spec.env }, stdio: ['ignore', fd, fd], detached: true });
    closeSync(fd);
    child.on('error', () => {}); // reported through readiness and the log
    if (child.pid) this.set.track(child.pid, child);
    this.child = child;
  }

  alive(): boolean {
    return !!this.child && this.child.exitCode === null && this.child.signalCode === null;
  }

  /** Polls `origin + readyPath` until it answers 2xx; fails at once, with the log's tail, if the process exits first. */
  async waitReady(readyPath: string, timeoutMs = 90_000): Promise<void> {
    const child = this.child;
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      if (child && (child.exitCode !== null || child.signalCode !== null)) {
        throw new Error(`${this.name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n--- ${this.logFile} ---\n${logTail(this.logFile)}`);
      }
      const ok = await fetch(`${this.origin}${readyPath}`, { signal: AbortSignal.timeout(2_000) }).then(
        (res) => res.ok,
        () => false,
      );
      if (ok) return;
      if (Date.now() > deadline) {
        throw new Error(
          `timed out after ${timeoutMs / 1000} s waiting for ${this.name} (${this.origin}${readyPath})\n--- ${this.logFile} ---\n${logTail(this.logFile)}`,
        );
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  }

  logTail(lines = 20): string {
    return logTail(this.logFile, lines);
  }

  /** SIGKILL its process group; resolves once it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child?.pid || !this.alive()) return;
    const gone = exited(child);
    signalGroup(child.pid, 'SIGKILL');
    await gone;
  }

  /** SIGTERM its process group, SIGKILL after `timeoutMs`; resolves once it is gone, and what it forked with it. */
  async stop(timeoutMs = 10_000): Promise<void> {
    const child = this.child;
    if (!child?.pid || !this.alive()) return;
    const done = exited(child);
    signalGroup(child.pid, 'SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    const timedOut = await Promise.race([done.then(() => false), new Promise<boolean>((resolve) => (timer = setTimeout(() => resolve(true), timeoutMs)))]);
    clearTimeout(timer);
    signalGroup(child.pid, 'SIGKILL'); // what is left of its group (workers it forked), or itself after the timeout
    if (timedOut) await done;
  }
}

/** Signals a process group, or the process alone when it leads none; false when neither exists. */
function signalGroup(pid: number, signal: NodeJS.Signals): boolean {
  for (const target of [-pid, pid]) {
    try {
      process.kill(target, signal);
      return true;
    } catch {
      // try the next
    }
  }
  return false;
}

/** Every process one run starts, so clean-up — also a synchronous last resort at exit — reaches each. */
export class ProcessSet {
  private readonly pids = new Set<number>();
  private readonly processes: ManagedProcess[] = [];
  stopping = false;

  private constructor(
    /** Where the log files go. */
    readonly dir: string,
    /** The start of every process title, e.g. `linepack-scale-out[<runId>]`. */
    readonly titlePrefix: string,
    readonly setpriv: string | null,
  ) {}

  static async create(dir: string, titlePrefix: string): Promise<ProcessSet> {
    return new ProcessSet(dir, titlePrefix, process.platform === 'linux' ? await which('setpriv') : null);
  }

  add(spec: ProcessSpec): ManagedProcess {
    const managed = new ManagedProcess(spec, this);
    this.processes.push(managed);
    return managed;
  }

  /** Counts a process started otherwise (a database, nginx) among those that must be gone at the end; with its child, until it exits (its pid may then be reused). */
  track(pid: number, child?: ChildProcess): void {
    this.pids.add(pid);
    child?.once('exit', () => setImmediate(() => this.pids.delete(pid)));
  }

  untrack(pid: number): void {
    this.pids.delete(pid);
  }

  /** Stops every process added, the last added first (so callers before what they call), and starts none after. */
  async stopAll(timeoutMs?: number): Promise<void> {
    this.stopping = true;
    for (const managed of [...this.processes].reverse()) await managed.stop(timeoutMs).catch(() => undefined);
  }

  /** SIGKILL every process group still alive (process 'exit', a second Ctrl-C). Synchronous. */
  killAllNow(): void {
    for (const pid of this.pids) signalGroup(pid, 'SIGKILL');
  }

  /** Processes this run started that are still alive (must be none after clean-up). */
  leftovers(): number[] {
    return [...this.pids].filter((pid) => processAlive(pid));
  }
}
