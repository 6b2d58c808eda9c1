import Redis from 'ioredis';
import type { Logger } from './logger';

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
    private readonly redis: Redis | null,
    /** How long a revoked session must be remembered: the longest an access token lives. */
    private readonly sessionMemorySeconds: number,
    private readonly logger: Logger,
  ) {}

  async publish(...revocations: Revocation[]): Promise<void> {
    if (!this.redis || revocations.length === 0) return;
    try {
      const batch = this.redis.multi();
      for (const r of revocations) {
        if (r.kind === 'session') batch.set(`${SESSION_KEY_PREFIX}${r.sessionId}`, '1', 'EX', this.sessionMemorySeconds);
        batch.publish(REVOCATION_CHANNEL, JSON.stringify(r));
      }
      await batch.exec();
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

/** A gateway's view of revoked sessions, kept current from the channel and, after every (re)connect, from Redis. */
export class RevocationListener {
  private readonly sessions = new Map<string, number>();
  private synced!: () => void;
  /** Settles once the remembered sessions have been read for the first time. */
  private readonly firstSync = new Promise<void>((resolve) => (this.synced = resolve));

  private constructor(
    private readonly subscriber: Redis,
    private readonly reader: Redis,
    private readonly handlers: RevocationHandlers,
    private readonly sessionMemoryMs: number,
    private readonly logger: Logger,
  ) {}

  /**
   * Subscribes and reads the remembered sessions before answering, so a gateway that starts after a logout never
   * accepts that session's tokens; without Redis it gives up waiting after `syncTimeoutMs` (and catches up later).
   */
  static async start(
    url: string,
    handlers: RevocationHandlers,
    sessionMemorySeconds: number,
    logger: Logger,
    syncTimeoutMs = 2_000,
  ): Promise<RevocationListener> {
    // A subscribed connection can run no other command: a second one reads the remembered sessions.
    const options = { connectTimeout: 2_000, retryStrategy: (attempt: number) => Math.min(attempt * 200, 2_000), maxRetriesPerRequest: 1 };
    const listener = new RevocationListener(new Redis(url, options), new Redis(url, options), handlers, sessionMemorySeconds * 1000, logger);
    listener.subscriber.on('error', (err: Error) => logger.debug({ err: err.message }, 'revocation channel error'));
    listener.reader.on('error', (err: Error) => logger.debug({ err: err.message }, 'revocation reader error'));
    listener.subscriber.on('message', (_channel: string, message: string) => listener.apply(message));
    listener.subscriber.on('ready', () => void listener.resynchronise());
    // Not awaited: a gateway starts without Redis and subscribes when it comes (ioredis queues the command).
    // Read again once subscribed: a session revoked between the first read and the subscription is not missed.
    void listener.subscriber
      .subscribe(REVOCATION_CHANNEL)
      .then(() => listener.resynchronise())
      .catch((err: Error) => logger.error({ err: err.message }, 'revocations: cannot subscribe'));
    const waited = await Promise.race([listener.firstSync.then(() => true), new Promise<boolean>((r) => setTimeout(() => r(false), syncTimeoutMs).unref())]);
    if (!waited) logger.warn('revocations: Redis not reachable at start; signed-out sessions are applied once it is');
    return listener;
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

  /** After a (re)connect: messages may have been missed, so caches are dropped and sessions read back. */
  private async resynchronise(): Promise<void> {
    this.handlers.resynchronise();
    try {
      let cursor = '0';
      do {
        const [next, keys] = await this.reader.scan(cursor, 'MATCH', `${SESSION_KEY_PREFIX}*`, 'COUNT', 1000);
        cursor = next;
        for (const key of keys) this.sessions.set(key.slice(SESSION_KEY_PREFIX.length), Date.now() + this.sessionMemoryMs);
      } while (cursor !== '0');
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'revocations: could not read remembered sessions');
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
    this.subscriber.disconnect();
    this.reader.disconnect();
  }
}
