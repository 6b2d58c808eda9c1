import calculateSlot from 'cluster-key-slot';
import Redis, { Cluster, type ChainableCommander, type ClusterOptions, type Command, type RedisOptions } from 'ioredis';
import { z } from 'zod';
import { booleanSchema, ConfigError, parseConfig, redisUrlSchema } from './config';
import type { Logger } from './logger';

/** A client of whichever Redis the deployment runs: one server (or a Sentinel-managed primary), or a Redis Cluster. */
export type RedisClient = Redis | Cluster;

export interface RedisNodeAddress {
  host: string;
  port: number;
}

/** What a managed cluster or Sentinel set-up needs beyond the node addresses (a redis:// URL carries these itself). */
export interface RedisAccess {
  username?: string;
  password?: string;
  /** TLS to every node (managed services in cluster mode usually require it). */
  tls?: boolean;
  /**
   * Replicas that must have an event before the outbox relay lets it go (REDIS_WAIT_REPLICAS, WAIT): replication is
   * asynchronous, so without it a master that fails over can take the last events it acknowledged with it.
   */
  replicasToAcknowledge?: number;
}

export interface RedisClusterTarget extends RedisAccess {
  /** Seed nodes: the client discovers the others (CLUSTER SLOTS) and follows resharding and failovers. */
  clusterNodes: RedisNodeAddress[];
}

export interface RedisSentinelTarget extends RedisAccess {
  sentinels: RedisNodeAddress[];
  /** The monitored primary's name (sentinel.conf `sentinel monitor <name> …`). */
  sentinelName: string;
  sentinelPassword?: string;
}

/**
 * Where Redis is: a redis:// URL (one server, the default), a Redis Cluster's seed nodes, or Sentinels and the name of
 * the primary they watch. A plain string stays a URL so every caller that passed REDIS_URL keeps working unchanged.
 */
export type RedisTarget = string | RedisClusterTarget | RedisSentinelTarget;

export function isClusterTarget(target: RedisTarget): target is RedisClusterTarget {
  return typeof target === 'object' && 'clusterNodes' in target;
}

/** Whether keys of different hash slots must be touched by separate commands (CROSSSLOT otherwise). */
export function isCluster(redis: RedisClient): redis is Cluster {
  return redis.isCluster;
}

const nodeListSchema = z
  .string()
  .trim()
  .transform((value, ctx) => {
    const nodes: RedisNodeAddress[] = [];
    for (const item of value.split(',').map((s) => s.trim())) {
      const match = /^(\[[0-9a-fA-F:]+\]|[^\s:,[\]]+):(\d{1,5})$/.exec(item);
      const port = Number(match?.[2]);
      if (!match || port < 1 || port > 65535) {
        ctx.addIssue({ code: 'custom', message: `"${item}" is not host:port (comma-separated list, e.g. redis-0:6379,redis-1:6379)` });
        return z.NEVER;
      }
      nodes.push({ host: match[1]!.replace(/^\[|\]$/g, ''), port });
    }
    return nodes;
  });

/**
 * The Redis settings every service reads (spread into its configuration schema): REDIS_URL for one server, or
 * REDIS_CLUSTER_NODES for a Redis Cluster, or REDIS_SENTINELS with REDIS_SENTINEL_NAME for a Sentinel-managed primary.
 * REDIS_USERNAME, REDIS_PASSWORD and REDIS_TLS apply to the cluster and Sentinel modes (a URL carries its own).
 */
export const redisEnvSchema = {
  REDIS_URL: redisUrlSchema.optional(),
  REDIS_CLUSTER_NODES: nodeListSchema.optional(),
  REDIS_SENTINELS: nodeListSchema.optional(),
  REDIS_SENTINEL_NAME: z.string().trim().min(1).optional(),
  REDIS_SENTINEL_PASSWORD: z.string().min(1).optional(),
  REDIS_USERNAME: z.string().min(1).optional(),
  REDIS_PASSWORD: z.string().min(1).optional(),
  REDIS_TLS: booleanSchema.optional(),
  REDIS_WAIT_REPLICAS: z.coerce.number().int().min(0).max(16).optional(),
};

export type RedisEnvConfig = z.output<z.ZodObject<typeof redisEnvSchema>>;

/**
 * The target the parsed settings name, or undefined (no Redis: the services fall back as they always have). Settings
 * that contradict each other are a ConfigError worded as parseConfig words one, naming the variables.
 */
export function redisTargetOf(service: string, env: RedisEnvConfig): RedisTarget | undefined {
  const problems: string[] = [];
  const modes = (['REDIS_URL', 'REDIS_CLUSTER_NODES', 'REDIS_SENTINELS'] as const).filter((name) => env[name] !== undefined);
  if (modes.length > 1) problems.push(`  ${modes.join(', ')}: set only one of REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS`);
  if (env.REDIS_SENTINELS && !env.REDIS_SENTINEL_NAME) problems.push('  REDIS_SENTINEL_NAME: is required with REDIS_SENTINELS');
  if (env.REDIS_SENTINEL_NAME && !env.REDIS_SENTINELS) problems.push('  REDIS_SENTINELS: is required with REDIS_SENTINEL_NAME');
  const clusterOrSentinelOnly = (['REDIS_USERNAME', 'REDIS_PASSWORD', 'REDIS_TLS', 'REDIS_WAIT_REPLICAS'] as const).filter((name) => env[name] !== undefined);
  if (env.REDIS_URL && clusterOrSentinelOnly.length > 0)
    problems.push(`  ${clusterOrSentinelOnly.join(', ')}: for cluster or Sentinel mode only; REDIS_URL carries its own user, password and TLS (rediss://)`);
  if (problems.length > 0) throw new ConfigError(`${service}: invalid configuration\n${problems.join('\n')}`);
  const access: RedisAccess = {
    ...(env.REDIS_USERNAME ? { username: env.REDIS_USERNAME } : {}),
    ...(env.REDIS_PASSWORD ? { password: env.REDIS_PASSWORD } : {}),
    ...(env.REDIS_TLS ? { tls: true } : {}),
    ...(env.REDIS_WAIT_REPLICAS ? { replicasToAcknowledge: env.REDIS_WAIT_REPLICAS } : {}),
  };
  if (env.REDIS_CLUSTER_NODES) return { clusterNodes: env.REDIS_CLUSTER_NODES, ...access };
  if (env.REDIS_SENTINELS && env.REDIS_SENTINEL_NAME)
    return {
      sentinels: env.REDIS_SENTINELS,
      sentinelName: env.REDIS_SENTINEL_NAME,
      ...(env.REDIS_SENTINEL_PASSWORD ? { sentinelPassword: env.REDIS_SENTINEL_PASSWORD } : {}),
      ...access,
    };
  return env.REDIS_URL;
}

/** The target an environment names (REDIS_URL or the cluster or Sentinel settings), checked as a service checks it. */
export function redisTargetFromEnv(service: string, env: Record<string, string | undefined>): RedisTarget | undefined {
  return redisTargetOf(service, parseConfig(service, z.object(redisEnvSchema), env));
}

/** The environment that configures `target` (what redisTargetOf reads back): for a process started with it. */
export function redisEnvOf(target: RedisTarget): Record<string, string> {
  if (typeof target === 'string') return { REDIS_URL: target };
  const list = (nodes: RedisNodeAddress[]) => nodes.map((n) => `${n.host.includes(':') ? `[${n.host}]` : n.host}:${n.port}`).join(',');
  return {
    ...(isClusterTarget(target)
      ? { REDIS_CLUSTER_NODES: list(target.clusterNodes) }
      : {
          REDIS_SENTINELS: list(target.sentinels),
          REDIS_SENTINEL_NAME: target.sentinelName,
          ...(target.sentinelPassword ? { REDIS_SENTINEL_PASSWORD: target.sentinelPassword } : {}),
        }),
    ...(target.username ? { REDIS_USERNAME: target.username } : {}),
    ...(target.password ? { REDIS_PASSWORD: target.password } : {}),
    ...(target.tls ? { REDIS_TLS: 'true' } : {}),
    ...(target.replicasToAcknowledge ? { REDIS_WAIT_REPLICAS: String(target.replicasToAcknowledge) } : {}),
  };
}

/** Where a target is, for logs and start-up banners: never a password. */
export function describeRedisTarget(target: RedisTarget): string {
  if (typeof target === 'string') return target.replace(/\/\/[^@/]*@/, '//***@');
  const list = (nodes: RedisNodeAddress[]) => nodes.map((n) => `${n.host}:${n.port}`).join(',');
  if (isClusterTarget(target)) return `Redis Cluster ${list(target.clusterNodes)}`;
  return `Sentinel ${target.sentinelName} via ${list(target.sentinels)}`;
}

export interface RedisClientOptions {
  commandTimeoutMs?: number;
  autoPipelining?: boolean;
  /** Commands wait while disconnected instead of failing at once (the default fails fast: callers fall back). */
  queueWhileDisconnected?: boolean;
}

/** Options of one connection to one server, whichever the mode. */
function connectionOptions(target: RedisTarget, options: RedisClientOptions): RedisOptions {
  const access: RedisOptions =
    typeof target === 'string'
      ? {}
      : {
          ...(target.username ? { username: target.username } : {}),
          ...(target.password ? { password: target.password } : {}),
          ...(target.tls ? { tls: {} } : {}),
        };
  return {
    ...access,
    enableOfflineQueue: options.queueWhileDisconnected ?? false,
    maxRetriesPerRequest: options.queueWhileDisconnected ? 1 : 0,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    // commandTimeoutMs is not ioredis's commandTimeout: see timeCommands.
    ...(options.autoPipelining ? { enableAutoPipelining: true } : {}),
  };
}

/** One connection (no cluster client) to the server a target names, or to one cluster node: pub/sub and tests. */
export function redisConnectionOptions(target: RedisTarget, options: RedisClientOptions = {}): RedisOptions {
  const base = connectionOptions(target, options);
  if (typeof target === 'string') return base;
  if (isClusterTarget(target)) return { ...base, ...target.clusterNodes[0] };
  return {
    ...base,
    sentinels: target.sentinels,
    name: target.sentinelName,
    ...(target.sentinelPassword ? { sentinelPassword: target.sentinelPassword } : {}),
    ...(target.tls ? { enableTLSForSentinelMode: true } : {}),
  };
}

/**
 * A Redis client that fails fast instead of queueing commands while Redis is away, and keeps
 * reconnecting in the background; callers fall back or retry on their own terms. Connection errors
 * are logged at debug only: callers report the degradation once, in their own words.
 *
 * A cluster client follows MOVED/ASK redirections and, after a master fails, the replica that took its slots; a
 * Sentinel client asks the Sentinels for the current primary on every reconnect.
 */
export function createRedisClient(target: string, logger: Logger, options?: RedisClientOptions): Redis;
export function createRedisClient(target: RedisTarget, logger: Logger, options?: RedisClientOptions): RedisClient;
export function createRedisClient(target: RedisTarget, logger: Logger, options: RedisClientOptions = {}): RedisClient {
  let redis: RedisClient;
  if (isClusterTarget(target)) {
    const clusterOptions: ClusterOptions = {
      redisOptions: connectionOptions(target, options),
      enableOfflineQueue: options.queueWhileDisconnected ?? false,
      clusterRetryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
      // A failover moves slots: ask the cluster again soon rather than waiting for the next MOVED.
      slotsRefreshInterval: 2_000,
      // A command whose master is gone (or that meets CLUSTERDOWN while a failover is under way) fails at once unless
      // the caller asked to wait: ioredis would otherwise retry it every 200 ms up to 16 times, past any commandTimeout
      // (the gateway's limiter waited 4.4 s instead of counting in memory after 250 ms).
      retryDelayOnFailover: options.queueWhileDisconnected ? 200 : 0,
      retryDelayOnClusterDown: options.queueWhileDisconnected ? 200 : 0,
      ...(options.autoPipelining ? { enableAutoPipelining: true } : {}),
      // Managed clusters announce addresses that only resolve inside their network (and need TLS by name).
      ...(target.tls ? { dnsLookup: (address, callback) => callback(null, address) } : {}),
    };
    const cluster = new Cluster(target.clusterNodes, clusterOptions);
    if (!options.queueWhileDisconnected) {
      // Without its offline queue a cluster client refuses a command for a node whose connection is still being made
      // ("Connection is closed."), which is every node on its first use, since ioredis connects them lazily: connect
      // each as soon as the client learns of it, and the ones it had at the start once it is ready.
      const connect = (node: Redis) => void (node.status === 'wait' ? node.connect().catch(() => undefined) : undefined);
      cluster.on('+node', connect);
      cluster.on('ready', () => cluster.nodes('all').forEach(connect));
    }
    redis = cluster;
  } else {
    redis = typeof target === 'string' ? new Redis(target, connectionOptions(target, options)) : new Redis(redisConnectionOptions(target, options));
  }
  redis.on('error', (err: Error) => logger.debug({ err: err.message }, 'redis connection error'));
  if (options.commandTimeoutMs) timeCommands(redis, options.commandTimeoutMs);
  return redis;
}

/**
 * Fails a command that has no reply after `timeoutMs`, as ioredis's commandTimeout does, except when the reply is
 * already here: ioredis's timer fires first when this process wakes from a stall (a busy machine, a GC, a long
 * synchronous task), before the event loop reads the socket where Redis's reply has been waiting, so a Redis that
 * answered in a millisecond counted as slow and the gateway's rate limits fell back to in-process counting. Here the
 * timer lets one round of I/O run (setImmediate runs after the poll phase) before it fails the command. Set once per
 * command, however often a cluster client re-sends it (redirections, retries).
 */
function timeCommands(redis: RedisClient, timeoutMs: number): void {
  const timed = new WeakSet<Command>();
  const send = redis.sendCommand.bind(redis) as (...args: unknown[]) => unknown;
  redis.sendCommand = ((command: Command, ...rest: unknown[]) => {
    if (!timed.has(command)) {
      timed.add(command);
      const timer = setTimeout(() => setImmediate(() => command.isResolved || command.reject(new Error('Command timed out'))), timeoutMs);
      const clear = () => clearTimeout(timer);
      command.promise.then(clear, clear);
    }
    return send(command, ...rest);
  }) as typeof redis.sendCommand;
}

/**
 * Resolves once the client is connected — a cluster client to every master it knows — or after `timeoutMs` (callers
 * then see the fast failure themselves).
 */
export async function redisReady(redis: RedisClient, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  const ready = (client: Redis | Cluster) => {
    if (client.status === 'ready') return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        client.off('ready', done);
        resolve();
      };
      const timer = setTimeout(done, Math.max(0, deadline - Date.now()));
      client.once('ready', done);
    });
  };
  await ready(redis);
  if (isCluster(redis)) await Promise.all(redis.nodes('master').map(ready));
}

/**
 * The servers holding the keyspace: every master of a cluster (SCAN, KEYS and DBSIZE see one node's keys only), or
 * the one server.
 */
export function keyspaceNodes(redis: RedisClient): Redis[] {
  return isCluster(redis) ? redis.nodes('master') : [redis];
}

/** A server as a cluster client names its nodes (`host:port`); a Sentinel client's is the primary's name. */
export function serverName(server: Redis): string {
  return server.options.sentinels ? `Sentinel primary ${server.options.name}` : `${server.options.host}:${server.options.port}`;
}

/**
 * The server each key lives on now: one server (or the Sentinels' primary) holds them all; on a cluster it is the
 * master of the key's hash slot, as the client last learnt (CLUSTER SLOTS, refreshed on redirections and every few
 * seconds). Commands sent to that server directly reach it on the connection the cluster client uses itself, so a
 * WAIT there covers them. Keys whose slot has no master the client is connected to (a failover under way) are under
 * null.
 */
export function keysByServer(redis: RedisClient, keys: readonly string[]): Map<Redis | null, string[]> {
  if (!isCluster(redis)) return new Map([[redis, [...keys]]]);
  const masters = new Map(redis.nodes('master').map((node) => [serverName(node), node]));
  const byServer = new Map<Redis | null, string[]>();
  for (const key of keys) {
    const owner = redis.slots[calculateSlot(key)]?.[0];
    const server = (owner && masters.get(owner)) || null;
    byServer.set(server, [...(byServer.get(server) ?? []), key]);
  }
  return byServer;
}

/**
 * One command per key, sent together: one pipeline on one server; on a cluster one pipeline per key, since a pipeline
 * (like MULTI and a multi-key command) may only touch one node's slots. Results as Pipeline.exec gives them, in key
 * order: a failed command is its own [error, undefined], never a rejection of the others.
 */
export async function commandPerKey(
  redis: RedisClient,
  keys: readonly string[],
  add: (pipeline: ChainableCommander, key: string) => ChainableCommander,
): Promise<[Error | null, unknown][]> {
  if (!isCluster(redis)) return ((await keys.reduce((pipeline, key) => add(pipeline, key), redis.pipeline()).exec()) ?? []) as [Error | null, unknown][];
  return Promise.all(
    keys.map(async (key): Promise<[Error | null, unknown]> => {
      try {
        const [result] = ((await add(redis.pipeline(), key).exec()) ?? []) as [Error | null, unknown][];
        return result ?? [null, undefined];
      } catch (err) {
        return [err as Error, undefined];
      }
    }),
  );
}

/** Replicas an acknowledged write must reach before it counts as kept (RedisAccess.replicasToAcknowledge); 0 for a URL. */
export function replicasToAcknowledgeOf(target: RedisTarget): number {
  return typeof target === 'string' ? 0 : (target.replicasToAcknowledge ?? 0);
}
