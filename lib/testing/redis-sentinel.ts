/**
 * A real Sentinel-managed primary on 127.0.0.1 for tests: a primary and `replicas` replicas (Debian `redis-server`),
 * watched by `sentinels` Sentinels — the same binary started with `--sentinel` (Debian's redis-sentinel package only
 * adds a symlink and a service unit). Throwaway: no persistence, its files in a temporary directory removed on stop.
 */
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { freePort } from '../infra/free-port';
import type { RedisSentinelTarget } from '../redis';
import { ask, redisNodes, type RedisNode, type ReplicatedRedis } from './redis-node';
import { waitFor } from './until';

/** The name the Sentinels know the primary by (REDIS_SENTINEL_NAME). */
const PRIMARY_NAME = 'linepack';
/** A primary that has not answered for this long is down; one Sentinel's word is enough (quorum 1). */
const DOWN_AFTER_MS = 1_000;
const READY_TIMEOUT_MS = 30_000;

export interface RedisSentinelSet extends ReplicatedRedis {
  /** What a client is configured with (REDIS_SENTINELS + REDIS_SENTINEL_NAME). */
  target: RedisSentinelTarget;
  /** The primary now (every key's), as the Sentinels say. */
  masterOf(key?: string): Promise<RedisNode>;
  sentinels: RedisNode[];
}

/** ROLE: `['master', offset, replicas]` or `['slave', host, port, state, offset]`. */
type Role = ['master', number, unknown[]] | ['slave', string, number, string, number];

export async function startRedisSentinel(options: { replicas?: number; sentinels?: number } = {}): Promise<RedisSentinelSet> {
  const { replicas = 1, sentinels: sentinelCount = 1 } = options;
  const processes = await redisNodes('redis-sentinel');
  const nodes: RedisNode[] = [];
  const sentinels: RedisNode[] = [];
  try {
    // Diskless replication without its default 5 s delay: a replica still waiting for its first copy is not promoted.
    const dataArgs = (port: number) => ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--repl-diskless-sync-delay', '0'];
    const primaryPort = await freePort();
    nodes.push(await processes.start(primaryPort, dataArgs(primaryPort)));
    for (let i = 0; i < replicas; i++) {
      const port = await freePort();
      nodes.push(await processes.start(port, [...dataArgs(port), '--replicaof', '127.0.0.1', String(primaryPort)]));
    }
    for (let i = 0; i < sentinelCount; i++) {
      const port = await freePort();
      // A Sentinel rewrites its configuration file as it learns (replicas, other Sentinels, failovers): one of its own.
      const config = path.join(processes.dir, `sentinel-${port}.conf`);
      await writeFile(
        config,
        [
          `port ${port}`,
          'bind 127.0.0.1',
          `sentinel monitor ${PRIMARY_NAME} 127.0.0.1 ${primaryPort} 1`,
          `sentinel down-after-milliseconds ${PRIMARY_NAME} ${DOWN_AFTER_MS}`,
          `sentinel failover-timeout ${PRIMARY_NAME} 10000`,
          '',
        ].join('\n'),
      );
      sentinels.push(await processes.start(port, [config, '--sentinel']));
    }
  } catch (err) {
    await processes.stop();
    throw err;
  }

  const nodeOn = (port: number) => nodes.find((n) => n.port === port);
  const primaryPort = async (): Promise<number> => {
    for (const sentinel of sentinels.filter((s) => s.running)) {
      const address = await ask<[string, string] | null>(sentinel.port, 'SENTINEL', 'GET-MASTER-ADDR-BY-NAME', PRIMARY_NAME).catch(() => null);
      if (address) return Number(address[1]);
    }
    throw new Error('no Sentinel names a primary');
  };
  const roleOf = (node: RedisNode) => ask<Role>(node.port, 'ROLE');

  const set: RedisSentinelSet = {
    target: { sentinels: sentinels.map((s) => ({ host: '127.0.0.1', port: s.port })), sentinelName: PRIMARY_NAME },
    nodes,
    sentinels,
    async masterOf() {
      const port = await primaryPort();
      const node = nodeOn(port);
      if (!node) throw new Error(`the Sentinels name a primary on port ${port}, not one of this set's nodes`);
      return node;
    },
    async replicasOf(port) {
      const found: RedisNode[] = [];
      for (const node of nodes.filter((n) => n.running && n.port !== port)) {
        const role = await roleOf(node).catch(() => null);
        if (role?.[0] === 'slave' && role[2] === port) found.push(node);
      }
      return found;
    },
    async waitUntilHealthy(timeoutMs = READY_TIMEOUT_MS) {
      await waitFor(
        async () => {
          // The primary the Sentinels name runs and says it is one, and every other running node replicates it, in sync.
          const primary = nodeOn(await primaryPort());
          if (!primary?.running || (await roleOf(primary))[0] !== 'master') return false;
          for (const node of nodes.filter((n) => n.running && n !== primary)) {
            const role = await roleOf(node);
            if (role[0] !== 'slave' || role[2] !== primary.port || role[3] !== 'connected') return false;
          }
          return true;
        },
        timeoutMs,
        'the Sentinels to name a running primary that every running replica follows',
      );
    },
    stop: () => processes.stop(),
  };
  try {
    await set.waitUntilHealthy();
  } catch (err) {
    await processes.stop();
    throw err;
  }
  return set;
}
