/**
 * Throwaway redis-server processes for the replicated set-ups tests run (lib/testing/redis-cluster.ts,
 * lib/testing/redis-sentinel.ts): each on a port of its own, killable like a crash and restartable on the same port
 * and files, as an orchestrator restarts a crashed pod.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import Redis from 'ioredis';
import { terminate, which } from '../infra/child-process';
import { RedisServerUnavailableError } from '../infra/redis-server';
import type { RedisTarget } from '../redis';
import { waitFor } from './until';

const READY_TIMEOUT_MS = 30_000;

export interface RedisNode {
  port: number;
  /** Whether the process is running (a killed node stays in the list, so its port can be named). */
  running: boolean;
  /** SIGKILL: a crash, no chance to hand anything over. */
  kill(): Promise<void>;
  /** Starts a killed node again on its port, with its files (it comes back empty: no persistence). */
  restart(): Promise<void>;
}

/** A primary (or several, a cluster's masters) with replicas that take over, as the tests see it. */
export interface ReplicatedRedis {
  /** What a client is configured with. */
  target: RedisTarget;
  /** The data nodes (not the Sentinels). */
  nodes: RedisNode[];
  /** The node that takes writes to `key` now, as the set-up itself says. */
  masterOf(key: string): Promise<RedisNode>;
  /** The replicas of the master on `port`. */
  replicasOf(port: number): Promise<RedisNode[]>;
  /** Waits until the set-up serves every key from a running master and every running replica is in sync. */
  waitUntilHealthy(timeoutMs?: number): Promise<void>;
  stop(): Promise<void>;
}

/** One command against one node, on a short-lived connection. */
export async function ask<T>(port: number, command: string, ...args: string[]): Promise<T> {
  const connection = new Redis({ port, host: '127.0.0.1', lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null, connectTimeout: 1_000 });
  connection.on('error', () => undefined);
  try {
    await connection.connect();
    return (await connection.call(command, ...args)) as T;
  } finally {
    connection.disconnect();
  }
}

/**
 * A node that stopped before it answered: most often its port was taken between choosing it and binding it (another
 * process's connection may take any free port as its own end). Starting it again on other ports is the remedy.
 */
export class RedisNodeExitedError extends Error {
  constructor(
    readonly port: number,
    how: string,
  ) {
    super(`redis-server on port ${port} stopped before it answered (${how}); its port may have been taken`);
    this.name = 'RedisNodeExitedError';
  }
}

/** Where a set-up's nodes run: a temporary directory for their files, and the processes to stop. */
export interface RedisNodes {
  dir: string;
  /** Starts `redis-server <args…>` (its port is `port`) and resolves once it answers PING; `args` may name files in dir. */
  start(port: number, args: readonly string[]): Promise<RedisNode>;
  stop(): Promise<void>;
}

export async function redisNodes(name: string): Promise<RedisNodes> {
  const redisServer = await which('redis-server');
  if (!redisServer) throw new RedisServerUnavailableError();
  const dir = await mkdtemp(path.join(os.tmpdir(), `linepack-${name}-`));
  const children = new Map<number, ChildProcess>();
  // On Linux, setpriv(1) makes the kernel kill the node if this process dies without stopping it.
  const setpriv = process.platform === 'linux' ? await which('setpriv') : null;

  const launch = async (port: number, args: readonly string[]): Promise<ChildProcess> => {
    const all = [...args, '--dir', dir, '--logfile', '', '--loglevel', 'warning', '--daemonize', 'no'];
    const [command, argv] = setpriv ? [setpriv, ['--pdeathsig', 'KILL', '--', redisServer, ...all]] : [redisServer, all];
    const child = spawn(command, argv, { stdio: 'ignore', detached: true });
    child.unref();
    children.set(port, child);
    let exited: string | null = null;
    child.once('exit', (code, signal) => (exited = `exit ${code ?? signal}`));
    await waitFor(async () => exited !== null || (await ask<string>(port, 'PING')) === 'PONG', READY_TIMEOUT_MS, `redis-server on port ${port}`, 25);
    if (exited !== null) throw new RedisNodeExitedError(port, exited);
    return child;
  };

  return {
    dir,
    async start(port, args) {
      const watch = (child: ChildProcess) => child.once('exit', () => (node.running = false));
      const node: RedisNode = {
        port,
        running: true,
        async kill() {
          const child = children.get(port)!;
          node.running = false;
          child.kill('SIGKILL');
          await terminate(child, 5_000);
        },
        async restart() {
          if (node.running) throw new Error(`redis-server on port ${port} is running`);
          watch(await launch(port, args));
          node.running = true;
        },
      };
      watch(await launch(port, args));
      return node;
    },
    async stop() {
      await Promise.all([...children.values()].map((child) => terminate(child, 5_000)));
      await rm(dir, { recursive: true, force: true });
    },
  };
}
