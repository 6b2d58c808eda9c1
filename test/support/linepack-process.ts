import { spawn, type ChildProcess } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@linepack/lib/repo-root';

/** A Linepack started as a user starts it (`npm start`, or its entry scripts/start.ts), as a separate process. */
export interface LinepackProcess {
  child: ChildProcess;
  /** Everything it printed so far, stdout and stderr interleaved. */
  output(): string;
  exited: Promise<number | null>;
}

/**
 * Runs `command` (e.g. [process.execPath, '--import', 'tsx', 'scripts/start.ts', …] or ['npm', 'start', …]) from the
 * repository root and resolves once its banner says it is up ("Ctrl-C stops everything", printed after dev.json is
 * written); throws with its output if it exits or takes longer than `timeoutMs`.
 */
export async function startLinepack(
  command: readonly string[],
  options: { env: NodeJS.ProcessEnv; detached?: boolean; timeoutMs?: number },
): Promise<LinepackProcess> {
  const [file, ...args] = command;
  const child = spawn(file!, args, { cwd: repoRoot, env: options.env, stdio: ['ignore', 'pipe', 'pipe'], detached: options.detached ?? false });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<number | null>((resolve) => (child.exitCode !== null ? resolve(child.exitCode) : child.once('exit', (code) => resolve(code))));
  const deadline = Date.now() + (options.timeoutMs ?? 90_000);
  while (!output.includes('Ctrl-C stops everything')) {
    if (Date.now() > deadline || child.exitCode !== null) throw new Error(`npm start did not come up:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, output: () => output, exited };
}

/** Pids of the processes whose command line has `argument` (e.g. a state directory or a database file) as one of its arguments or within one. */
export function processesWith(argument: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(argument);
      } catch {
        return false; // gone meanwhile
      }
    })
    .map(Number);
}

/** What a process run to its end printed, its exit code and how long it took. */
export interface ProcessRun {
  code: number | null;
  stdout: string;
  stderr: string;
  ms: number;
}

/**
 * Runs `command` from the repository root to its end and collects what it printed. With `input`, its stdin is a pipe
 * that gets `input` and is closed; without, stdin is ignored.
 */
export function runProcess(command: readonly string[], options: { env?: NodeJS.ProcessEnv; input?: string } = {}): Promise<ProcessRun> {
  const [file, ...args] = command;
  const started = Date.now();
  return new Promise((resolve, reject) => {
    const child = spawn(file!, args, {
      cwd: repoRoot,
      env: options.env ?? process.env,
      stdio: [options.input === undefined ? 'ignore' : 'pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout!.on('data', (c: Buffer) => (stdout += c.toString()));
    child.stderr!.on('data', (c: Buffer) => (stderr += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr, ms: Date.now() - started }));
    if (options.input !== undefined) child.stdin!.end(options.input);
  });
}

/**
 * Runs a TypeScript entry of the repository (a script or benchmark) to its end and collects what it printed. `env`
 * defaults to this process's (MONGODB_URI and REDIS_URL from the jest global setup); pass one without MONGODB_URI
 * to run the entry on a database of its own.
 */
export function runEntry(file: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<ProcessRun> {
  return runProcess([process.execPath, '--import', 'tsx', path.join(repoRoot, file), ...args], { env });
}

/** The process's state letter (R, S, Z…) from /proc/<pid>/stat, or null when it is gone. */
export function processState(pid: number): { state: string; parent: number } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // "pid (comm) state ppid …": comm may hold spaces and parentheses, so read after the last ')'.
    const [state, parent] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return { state: state!, parent: Number(parent) };
  } catch {
    return null;
  }
}

export const running = (pid: number) => {
  const state = processState(pid)?.state;
  return state !== undefined && state !== 'Z' && state !== 'X';
};

/** Running processes whose environment carries LINEPACK_TEST_MARKER=`marker` (a test's service: e.g. a gateway's primary and workers). */
export function processesWithMarker(marker: string): number[] {
  return readdirSync('/proc')
    .filter((name) => /^\d+$/.test(name))
    .map(Number)
    .filter((pid) => {
      try {
        return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(`LINEPACK_TEST_MARKER=${marker}`) && running(pid);
      } catch {
        return false; // gone meanwhile, or not ours to read
      }
    });
}
