import { z } from 'zod';
import type { Logger } from '@linepack/lib/logger';
import { identityHeaderForAuth } from './auth-internal';

/** How often a gateway asks the auth service what was revoked, while the Redis channel cannot tell it. */
export const REVOCATION_PULL_INTERVAL_MS = 1_000;

/**
 * Each request asks again for what was revoked this long before the last answer's time: a revocation written by a
 * process whose clock runs behind the auth service's (the CLI, another auth replica) is still seen. Asking twice for
 * one revocation is harmless.
 */
const CURSOR_OVERLAP_MS = 60_000;

/**
 * A long list comes in pages (the auth service answers about 10,000 keys and 10,000 sessions at a time); one round
 * reads at most this many one after the other, and the next round goes on from where it stopped.
 */
const MAX_PAGES_PER_ROUND = 10;

const answerSchema = z.object({
  now: z.number().int(),
  apiKeys: z.array(z.string()),
  sessions: z.array(z.string()),
  truncated: z.boolean(),
  /**
   * When truncated: ask again from here (epoch ms); the answer is complete for what was revoked before it. Absent from
   * an auth service that does not page yet.
   */
  next: z.number().int().nullable().optional(),
});

export interface PulledRevocationTargets {
  /** Refuse this key (by its secret's hash) without asking the auth service. */
  revoke(secretHash: string): void;
  /** The list was cut and cannot be paged (an older auth service): forget every cached key (each is introspected again). */
  forgetAll(): void;
}

/**
 * Revocations when Redis is away. Normally the auth service publishes each revocation on Redis and every gateway
 * applies it at once (lib/revocations.ts); without that channel a revoked key kept working until its cache entry
 * expired (CREDENTIAL_CACHE_TTL_SECONDS) and a signed-out session until its access token did. So whenever the channel
 * is not live (Redis down, or no REDIS_URL at all), the gateway pulls the list of what was revoked lately from the
 * auth service (GET /internal/revocations, vouched for with its identity token) every REVOCATION_PULL_INTERVAL_MS, and
 * refuses those keys and sessions from memory. While the channel is live it asks nothing and only moves its cursor,
 * so when the channel drops it asks from just before. A list longer than one answer is read page by page, each from
 * where the previous one was cut, so no key or session is skipped however many were revoked.
 */
export class RevocationPuller {
  /** Revoked sessions (refresh families) and until when to remember them (the longest an access token lives). */
  private readonly sessions = new Map<string, number>();
  /** Where the next request starts (epoch ms, the auth service's clock). */
  private cursor: number;
  /** The cursor is a page boundary: the list is still being read, and must be read to its end even if Redis is back. */
  private paging = false;
  private readonly timer: NodeJS.Timeout;
  private inflight: Promise<void> | null = null;
  private failing = false;

  constructor(
    private readonly authUrl: string,
    private readonly internalTokenPrivateKey: string,
    /** Whether the Redis revocation channel delivers (then nothing is pulled). */
    private readonly channelLive: () => boolean,
    private readonly keys: PulledRevocationTargets,
    private readonly sessionMemoryMs: number,
    private readonly logger: Logger,
    intervalMs = REVOCATION_PULL_INTERVAL_MS,
  ) {
    // A gateway that starts without the channel learns the sessions ended within an access token's life.
    this.cursor = Date.now() - sessionMemoryMs;
    this.timer = setInterval(() => void this.pull(), intervalMs);
    this.timer.unref();
  }

  /** One round (also called at start-up, so the first request already knows); concurrent calls share it. */
  pull(): Promise<void> {
    // A list read halfway is finished first: what is left of it was revoked while the channel was away and is not on
    // Redis, so moving the cursor past it would forget those keys and sessions.
    if (this.channelLive() && !this.paging) {
      this.cursor = Date.now() - CURSOR_OVERLAP_MS;
      return Promise.resolve();
    }
    this.inflight ??= this.fetchList().finally(() => (this.inflight = null));
    return this.inflight;
  }

  private async fetchList(): Promise<void> {
    try {
      for (let page = 1; page <= MAX_PAGES_PER_ROUND; page++) {
        const answer = await this.fetchPage();
        this.apply(answer);
        if (answer.truncated && typeof answer.next === 'number') {
          // The rest is read from the cut, not from "now": jumping would skip every key and session past it (and the
          // sessions' access tokens would keep working until they expire). The overlap is added back at the end.
          this.cursor = answer.next;
          this.paging = true;
          continue;
        }
        // An auth service that cut the list without saying where: keys are introspected again, as before paging.
        if (answer.truncated) this.keys.forgetAll();
        this.cursor = answer.now - CURSOR_OVERLAP_MS;
        this.paging = false;
        break;
      }
      if (this.failing) this.logger.warn('revocations: the revocation list can be read again');
      this.failing = false;
    } catch (err) {
      // Logged once per outage; keys still expire from the cache and tokens on their own meanwhile. The cursor stays
      // where the last page left it, so the next round asks for the same revocations again.
      if (!this.failing) this.logger.error({ err: (err as Error).message }, 'revocations: cannot read the revocation list from the auth service');
      this.failing = true;
    }
  }

  private async fetchPage(): Promise<z.infer<typeof answerSchema>> {
    const res = await fetch(`${this.authUrl}/internal/revocations?since=${this.cursor}`, {
      headers: identityHeaderForAuth(this.internalTokenPrivateKey),
      signal: AbortSignal.timeout(2_000),
    });
    if (!res.ok) throw new Error(`auth answered ${res.status}`);
    return answerSchema.parse(await res.json());
  }

  private apply(answer: z.infer<typeof answerSchema>): void {
    for (const hash of answer.apiKeys) this.keys.revoke(hash);
    const now = Date.now();
    for (const [sessionId, until] of this.sessions) if (until < now) this.sessions.delete(sessionId);
    for (const sessionId of answer.sessions) if (!this.sessions.has(sessionId)) this.sessions.set(sessionId, now + this.sessionMemoryMs);
  }

  sessionRevoked(sessionId: string): boolean {
    const until = this.sessions.get(sessionId);
    return until !== undefined && until >= Date.now();
  }

  stop(): void {
    clearInterval(this.timer);
  }
}
