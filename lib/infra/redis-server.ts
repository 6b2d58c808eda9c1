/**
 * A `redis-server` (Debian package) on 127.0.0.1 for tests and local tooling: a given or free port,
 * stoppable and restartable on the same port; throwaway (no persistence) unless `dataDir` is given, in
 * which case streams and consumer-group positions survive a restart (append-only file, fsync every second).
 */
import { spawn } from 'node:child_process';
import net from 'node:net';
import os from 'node:os';
import { howExited, terminate, which } from './child-process';
import { freePort } from './free-port';

export interface RedisServerProcess {
  /** `redis://127.0.0.1:<port>` */
  url: string;
  port: number;
  /** Resolves when redis-server has exited, for whatever reason, saying how (`signal SIGKILL`). */
  exited: Promise<string>;
  /** SIGTERM, wait for exit (SIGKILL after a timeout); the port is free again afterwards. Idempotent. */
  stop(): Promise<void>;
}

export class RedisServerUnavailableError extends Error {
  constructor(message = 'redis-server not found: apt-get install redis-server, or set REDIS_URL') {
    super(message);
    this.name = 'RedisServerUnavailableError';
  }
}

const READY_TIMEOUT_MS = 15_000;
const STOP_TIMEOUT_MS = 10_000;

/** One PING over a raw socket: true on `+PONG`. */
function ping(port: number, timeoutMs = 1000): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = net.connect({ host: '127.0.0.1', port });
    let reply = '';
    const done = (ok: boolean) => {
      socket.destroy();
      resolve(ok);
    };
    socket.setTimeout(timeoutMs, () => done(false));
    socket.once('error', () => done(false));
    socket.once('connect', () => socket.write('*1\r\n$4\r\nPING\r\n'));
    socket.on('data', (chunk) => {
      reply += chunk.toString('latin1');
      if (reply.includes('\r\n')) done(reply.startsWith('+PONG'));
    });
  });
}

/**
 * Starts redis-server on 127.0.0.1:`port` (a free one when absent) and resolves once it answers PING.
 * Throws RedisServerUnavailableError when redis-server is not installed.
 */
export async function startRedisServer(opts: { port?: number; dataDir?: string } = {}): Promise<RedisServerProcess> {
  const redisServer = await which('redis-server');
  if (!redisServer) throw new RedisServerUnavailableError();
  const port = opts.port ?? (await freePort());

  const redisArgs = [
    '--port',
    String(port),
    '--bind',
    '127.0.0.1',
    '--save',
    '',
    '--appendonly',
    opts.dataDir ? 'yes' : 'no',
    '--appendfsync',
    'everysec',
    '--daemonize',
    'no',
    '--dir',
    opts.dataDir ?? os.tmpdir(),
    '--logfile',
    '',
    '--loglevel',
    'warning',
  ];
  // On Linux, setpriv(1) makes the kernel SIGTERM redis-server if this process dies without stopping it.
  const setpriv = process.platform === 'linux' ? await which('setpriv') : null;
  const [command, args] = setpriv ? [setpriv, ['--pdeathsig', 'TERM', '--', redisServer, ...redisArgs]] : [redisServer, redisArgs];
  // Its own process group, like the embedded MongoDB: Ctrl-C stops the services before their Redis.
  const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'pipe'], detached: true });
  let output = '';
  const collect = (chunk: Buffer) => {
    output = (output + chunk.toString('utf8')).slice(-4000);
  };
  child.stdout.on('data', collect);
  child.stderr.on('data', collect);

  await new Promise<void>((resolve, reject) => {
    let settled = false;
    const settle = (err?: Error) => {
      if (settled) return;
      settled = true;
      child.off('exit', onExit);
      if (err) {
        child.kill('SIGKILL');
        reject(err);
      } else resolve();
    };
    const onExit = (code: number | null, signal: NodeJS.Signals | null) =>
      setImmediate(() => settle(new Error(`redis-server on port ${port} exited before it was ready (exit ${code ?? signal}):\n${output.trimEnd()}`)));
    child.once('exit', onExit);
    child.once('error', (err: NodeJS.ErrnoException) =>
      settle(err.code === 'ENOENT' ? new RedisServerUnavailableError() : new Error(`cannot start redis-server: ${err.message}`)),
    );
    const deadline = Date.now() + READY_TIMEOUT_MS;
    const poll = async () => {
      while (!settled) {
        if (await ping(port)) return settle();
        if (Date.now() > deadline)
          return settle(new Error(`redis-server on port ${port} did not answer PING within ${READY_TIMEOUT_MS / 1000} s:\n${output.trimEnd()}`));
        await new Promise((r) => setTimeout(r, 25));
      }
    };
    void poll();
  });

  // The server does not keep this process alive on its own; whoever started it stops it.
  child.unref();
  for (const stream of [child.stdout, child.stderr]) (stream as unknown as net.Socket).unref?.();

  let stopPromise: Promise<void> | null = null;
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    exited: howExited(child),
    stop() {
      stopPromise ??= (async () => {
        await terminate(child, STOP_TIMEOUT_MS);
      })();
      return stopPromise;
    },
  };
}
