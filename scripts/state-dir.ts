/**
 * The state directory `npm start` keeps its database, Redis data, signing key and dev.json in: private to its
 * owner, and used by one running Linepack at a time.
 */
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, rmSync, writeSync } from 'node:fs';
import path from 'node:path';
import { processAlive } from '@linepack/lib/infra/child-process';

export class StateDirInUseError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `${dir} is in use by another Linepack (pid ${pid}); nothing was changed. ` +
        'Stop that one first (Ctrl-C in its terminal), or start this one with --state-dir <another directory>.',
    );
    this.name = 'StateDirInUseError';
  }
}

/** The lock file's content, or null when it is gone. */
function readLock(file: string): string | null {
  try {
    return readFileSync(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw err;
  }
}

/**
 * Creates `dir` (0700; an existing one is made 0700: it holds password and key hashes) and takes its lock, a
 * `lock` file holding this process's pid. A lock whose process is gone (kill -9, a crash) is taken over.
 * Throws StateDirInUseError, having changed nothing, while another live process holds it. Returns the release.
 */
export function lockStateDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  chmodSync(dir, 0o700);
  const lockFile = path.join(dir, 'lock');
  for (;;) {
    let fd: number;
    try {
      fd = openSync(lockFile, 'wx', 0o600);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
      let content = readLock(lockFile);
      if (content === '') {
        // Another start may have just created it and not yet written its pid.
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 200);
        content = readLock(lockFile);
      }
      if (content === null) continue; // released meanwhile
      const owner = Number(content.trim());
      if (Number.isInteger(owner) && owner > 0 && owner !== process.pid && processAlive(owner)) throw new StateDirInUseError(dir, owner);
      rmSync(lockFile, { force: true });
      continue;
    }
    writeSync(fd, `${process.pid}\n`);
    closeSync(fd);
    return () => {
      try {
        if (readFileSync(lockFile, 'utf8').trim() === String(process.pid)) rmSync(lockFile, { force: true });
      } catch {
        // Already gone.
      }
    };
  }
}
