import { existsSync, readdirSync, readFileSync } from 'node:fs';
import net from 'node:net';

export { eventually, waitFor } from '@linepack/lib/testing/until';

/** Whether something accepts TCP connections on 127.0.0.1:`port`. */
export function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

/**
 * Stops a process group (SIGSTOP) and resolves once every thread of its leader `pid` is stopped. A stop is not
 * instantaneous for a process of many threads: the kernel wakes one thread to take it, and that thread stops the
 * others, so on a loaded machine a thread of the JVM already running can still answer a request sent just after
 * kill() returned. A request sent once this resolves waits for SIGCONT. (Linux: it reads /proc; elsewhere it only signals.)
 */
export async function stopProcessGroup(pid: number): Promise<void> {
  process.kill(-pid, 'SIGSTOP');
  const tasks = `/proc/${pid}/task`;
  if (!existsSync(tasks)) return;
  const stopped = (tid: string) => {
    try {
      // The state is the field after the command name in parentheses (which may itself hold spaces or parentheses).
      const stat = readFileSync(`${tasks}/${tid}/stat`, 'utf8');
      const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3);
      return 'TtZX'.includes(state); // stopped, or ending
    } catch {
      return true; // ended meanwhile
    }
  };
  while (!readdirSync(tasks).every(stopped)) await new Promise((resolve) => setImmediate(resolve));
}
