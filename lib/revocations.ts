import Redis from 'ioredis';
import type { Logger } from './logger';
import {
  createRedisClient,
  isCluster,
  isClusterTarget,
  keyspaceNodes,
  redisConnectionOptions,
  redisReady,
  type RedisClient,
  type RedisNodeAddress,
  type RedisTarget,
} from './redis';

/**
 * Revocations that every gateway must apply before its next request: the auth service (and the CLI)
 * publish them on a Redis channel the moment a credential dies; gateways keep their caches for speed and
 * drop what a message names.
 *
 * - `api_key`: the key's SHA-256 (what the gateway's verification cache is keyed by); the database already
 *   says the key is revoked, so a gateway that missed the message only has its cache to forget.
 * - `session`: one login's refresh family; its access tokens carry it as `sid`. Access tokens are verified
 *   locally (no database), so sessions are also kept in Redis for as long as any of their access tokens can
 *   live: a gateway that starts or reconnects later reads them back.
 */
export type Revocation = { kind: 'api_key'; secretHash: string } | { kind: 'session'; sessionId: string };

export const REVOCATION_CHANNEL = 'linepack:revocations';
const SESSION_KEY_PREFIX = 'linepack:revoked-session:';

/**
 * Publishes revocations; without Redis it does nothing: gateways then pull the list of what was revoked from the auth
 * service (gateway/src/revocation-pull.ts), which reads the revocations stored with the keys and sessions themselves.
 */
export class RevocationPublisher {
  constructor(
    private readonly redis: RedisClient | null,
    /** How long a revoked session must be remembered: the longest an access token lives. */
    private readonly sessionMemorySeconds: number,
    private readonly logger: Logger,
  ) {}

  async publish(...revocations: Revocation[]): Promise<void> {
    if (!this.redis || revocations.length === 0) return;
    const redis = this.redis;
    try {
      // Remembered before announced, so a gateway that resynchronises on the message finds the session. Not one
      // MULTI: on a cluster the session keys live in different hash slots (CROSSSLOT), and PUBLISH reaches every node.
      await Promise.all(
        revocations.flatMap((r) => (r.kind === 'session' ? [redis.set(`${SESSION_KEY_PREFIX}${r.sessionId}`, '1', 'EX', this.sessionMemorySeconds)] : [])),
      );
      await Promise.all(revocations.map((r) => redis.publish(REVOCATION_CHANNEL, JSON.stringify(r))));
    } catch (err) {
      // The revocation itself is stored; gateways still stop the credential when their cache or the token expires.
      this.logger.error({ err: (err as Error).message, count: revocations.length }, 'could not publish revocations');
    }
  }
}

export interface RevocationHandlers {
  apiKeyRevoked(secretHash: string): void;
  /** Messages may have been missed (a reconnect): forget every cached key. */
  resynchronise(): void;
}

/**
 * Attempts on one cluster node before the channel moves to another: a master that died is replaced by a replica
 * within seconds, and every node of a cluster carries every PUBLISH.
 */
const SUBSCRIBER_ATTEMPTS_PER_NODE = 3;
/** How soon a failed read of the remembered sessions is tried again. */
const RESYNC_RETRY_MS = 1_000;

/** A gateway's view of revoked sessions, kept current from the channel and, after every (re)connect, from Redis. */
export class RevocationListener {
  private readonly sessions = new Map<string, number>();
  private synced!: () => void;
  /** Settles once the remembered sessions have been read for the first time. */
  private readonly firstSync = new Promise<void>((resolve) => (this.synced = resolve));
  private subscriber!: Redis;
  private closed = false;
  /** Cluster mode: the nodes the channel may be read from, and the one tried next. */
  private nextNode = 0;
  /** A resynchronisation that failed, scheduled again. */
  private retry: NodeJS.Timeout | null = null;

  private constructor(
    private readonly target: RedisTarget,
    private readonly reader: RedisClient,
    private readonly handlers: RevocationHandlers,
    private readonly sessionMemoryMs: number,
    private readonly logger: Logger,
  ) {}

  /**
   * Subscribes and reads the remembered sessions before answering, so a gateway that starts after a logout never
   * accepts that session's tokens; without Redis it gives up waiting after `syncTimeoutMs` (and catches up later).
   */
  static async start(
    target: RedisTarget,
    handlers: RevocationHandlers,
    sessionMemorySeconds: number,
    logger: Logger,
    syncTimeoutMs = 2_000,
  ): Promise<RevocationListener> {
    // A subscribed connection can run no other command: a second one reads the remembered sessions.
    const reader = createRedisClient(target, logger, { queueWhileDisconnected: true });
    const listener = new RevocationListener(target, reader, handlers, sessionMemorySeconds * 1000, logger);
    listener.subscribe();
    const waited = await Promise.race([listener.firstSync.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), syncTimeoutMs).unref())]);
    if (!waited) logger.warn('revocations: Redis not reachable at start; signed-out sessions are applied once it is');
    return listener;
  }

  /**
   * The channel's own connection, to one server even on a cluster (PUBLISH reaches every node): its every (re)connect
   * is seen here and followed by a resynchronisation. A cluster client's subscriber moves between nodes without
   * saying so, and the messages it misses meanwhile would go unnoticed.
   */
  private subscribe(): void {
    const cluster = isClusterTarget(this.target) ? this.target : null;
    const node = cluster ? this.clusterNode(cluster.clusterNodes) : null;
    const options = {
      ...redisConnectionOptions(this.target, { queueWhileDisconnected: true }),
      ...(node ?? {}),
      // On a cluster a node that stays away is left for another (the 'end' below); one server is waited for.
      retryStrategy: (attempt: number) => (cluster && attempt > SUBSCRIBER_ATTEMPTS_PER_NODE ? null : Math.min(attempt * 200, 2_000)),
    };
    const subscriber = typeof this.target === 'string' ? new Redis(this.target, options) : new Redis(options);
    this.subscriber = subscriber;
    subscriber.on('error', (err: Error) => this.logger.debug({ err: err.message }, 'revocation channel error'));
    subscriber.on('message', (_channel: string, message: string) => this.apply(message));
    subscriber.on('ready', () => void this.resynchronise());
    subscriber.once('end', () => {
      if (!this.closed && this.subscriber === subscriber) this.subscribe();
    });
    // Not awaited: a gateway starts without Redis and subscribes when it comes (ioredis queues the command).
    // Read again once subscribed: a session revoked between the first read and the subscription is not missed.
    void subscriber
      .subscribe(REVOCATION_CHANNEL)
      .then(() => this.resynchronise())
      .catch((err: Error) => !this.closed && this.logger.error({ err: err.message }, 'revocations: cannot subscribe'));
  }

  /** The next cluster node to read the channel from: those the cluster client knows now, else the configured seeds. */
  private clusterNode(seeds: readonly RedisNodeAddress[]): RedisNodeAddress {
    const known = keyspaceNodes(this.reader).concat(isCluster(this.reader) ? this.reader.nodes('slave') : []);
    const nodes: RedisNodeAddress[] = known.length > 0 ? known.map((n) => ({ host: n.options.host!, port: n.options.port! })) : [...seeds];
    return nodes[this.nextNode++ % nodes.length]!;
  }

  private apply(message: string): void {
    let revocation: Revocation;
    try {
      revocation = JSON.parse(message) as Revocation;
    } catch {
      return;
    }
    if (revocation.kind === 'api_key' && typeof revocation.secretHash === 'string') this.handlers.apiKeyRevoked(revocation.secretHash);
    if (revocation.kind === 'session' && typeof revocation.sessionId === 'string') this.sessions.set(revocation.sessionId, Date.now() + this.sessionMemoryMs);
  }

  /**
   * After a (re)connect: messages may have been missed, so caches are dropped and sessions read back. A read that fails
   * (a cluster master failing over, Redis away) is tried again until it succeeds: the subscription may well be up
   * meanwhile, and would not reconnect to ask for it.
   */
  private async resynchronise(again = false): Promise<void> {
    // Dropped once per (re)connect; a retry has missed nothing the first attempt did not already account for.
    if (!again) this.handlers.resynchronise();
    try {
      // A cluster client knows its masters once it is ready (CLUSTER SLOTS): reading before would read no node at all.
      await redisReady(this.reader, RESYNC_RETRY_MS);
      const nodes = keyspaceNodes(this.reader);
      if (this.reader.status !== 'ready' || nodes.length === 0) throw new Error('Redis is not connected');
      // Every master: a cluster spreads the sessions over its slots, and SCAN walks one node's keys.
      for (const node of nodes) {
        let cursor = '0';
        do {
          const [next, keys] = await node.scan(cursor, 'MATCH', `${SESSION_KEY_PREFIX}*`, 'COUNT', 1000);
          cursor = next;
          for (const key of keys) this.sessions.set(key.slice(SESSION_KEY_PREFIX.length), Date.now() + this.sessionMemoryMs);
        } while (cursor !== '0');
      }
    } catch (err) {
      if (this.closed) return;
      if (!again) this.logger.warn({ err: (err as Error).message }, 'revocations: could not read remembered sessions; trying again');
      this.retry ??= setTimeout(() => {
        this.retry = null;
        if (!this.closed) void this.resynchronise(true);
      }, RESYNC_RETRY_MS);
      return;
    }
    this.synced();
  }

  /** Whether a revocation published now reaches this gateway (subscribed, connection up); else it pulls the list. */
  get live(): boolean {
    return this.subscriber.status === 'ready';
  }

  sessionRevoked(sessionId: string | undefined): boolean {
    if (!sessionId) return false;
    const until = this.sessions.get(sessionId);
    if (until === undefined) return false;
    if (until < Date.now()) {
      this.sessions.delete(sessionId);
      return false;
    }
    return true;
  }

  close(): void {
    this.closed = true;
    if (this.retry) clearTimeout(this.retry);
    this.subscriber.disconnect();
    this.reader.disconnect();
  }
}
