/** Helpers for the local servers the project launches itself (embedded MongoDB, redis-server). */
import type { ChildProcess } from 'node:child_process';
import { constants as fsConstants } from 'node:fs';
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
