/**
 * The Redis set-ups a suite can run its cases against, each started by the suite for itself: one redis-server (what
 * REDIS_URL names), a 3-master Redis Cluster (REDIS_CLUSTER_NODES) and a Sentinel-managed primary (REDIS_SENTINELS).
 * The suites that touch Redis run their cases on one server and on the cluster with `describe.each(redisBackends())`.
 */
import { startRedisServer, type RedisServerProcess } from '../infra/redis-server';
import { createRedisClient, keyspaceNodes, redisReady, type RedisTarget } from '../redis';
import { createLogger } from '../logger';
import { startRedisCluster } from './redis-cluster';
import type { ReplicatedRedis } from './redis-node';
import { startRedisSentinel } from './redis-sentinel';

export interface RedisBackend {
  /** What the services are configured with. */
  target: RedisTarget;
  /** The keys matching `pattern`, on every server holding keys (a cluster spreads them over its masters). */
  keys(pattern: string): Promise<string[]>;
  /** Every data server down at once: a Redis outage, until start(). */
  stop(): Promise<void>;
  /** Every server back on its address (empty: no persistence), serving again. */
  start(): Promise<void>;
  /** The primaries and replicas, to fail one over; null for one server. */
  replicated: ReplicatedRedis | null;
  /** Stops everything, for good. */
  close(): Promise<void>;
}

export type RedisBackendKind = 'server' | 'cluster' | 'sentinel';

const names: Record<RedisBackendKind, string> = {
  server: 'one redis-server',
  cluster: 'a Redis Cluster (3 masters, a replica each)',
  sentinel: 'a Sentinel-managed primary (one replica)',
};

async function keysOn(target: RedisTarget, pattern: string): Promise<string[]> {
  const redis = createRedisClient(target, createLogger('redis-backend', 'silent'));
  try {
    await redisReady(redis, 10_000);
    const found: string[] = [];
    for (const node of keyspaceNodes(redis)) {
      let cursor = '0';
      do {
        const [next, keys] = await node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000);
        cursor = next;
        found.push(...keys);
      } while (cursor !== '0');
    }
    return found.sort();
  } finally {
    redis.disconnect();
  }
}

async function oneServer(): Promise<RedisBackend> {
  let server: RedisServerProcess = await startRedisServer();
  const port = server.port;
  return {
    target: server.url,
    keys: (pattern) => keysOn(server.url, pattern),
    stop: () => server.stop(),
    async start() {
      server = await startRedisServer({ port });
    },
    replicated: null,
    close: () => server.stop(),
  };
}

function replicatedBackend(set: ReplicatedRedis): RedisBackend {
  return {
    target: set.target,
    keys: (pattern) => keysOn(set.target, pattern),
    async stop() {
      await Promise.all(set.nodes.filter((n) => n.running).map((n) => n.kill()));
    },
    async start() {
      await Promise.all(set.nodes.filter((n) => !n.running).map((n) => n.restart()));
      await set.waitUntilHealthy(60_000);
    },
    replicated: set,
    close: () => set.stop(),
  };
}

const starters: Record<RedisBackendKind, () => Promise<RedisBackend>> = {
  server: oneServer,
  cluster: async () => replicatedBackend(await startRedisCluster({ masters: 3, replicasPerMaster: 1 })),
  sentinel: async () => replicatedBackend(await startRedisSentinel({ replicas: 1, sentinels: 1 })),
};

/** `[name, start]` rows for describe.each: one server and a cluster unless other kinds are asked for. */
export function redisBackends(kinds: readonly RedisBackendKind[] = ['server', 'cluster']): [string, () => Promise<RedisBackend>][] {
  return kinds.map((kind) => [names[kind], starters[kind]]);
}
