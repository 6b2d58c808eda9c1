import { createHash } from 'node:crypto';
import { LRUCache } from 'lru-cache';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { Logger } from '@linepack/lib/logger';
import { isCluster, type RedisClient } from '@linepack/lib/redis';
import type { Tier } from './credentials';

/** Requests per window by tier (README, Rate limits); enterprise is unlimited and never counted. */
export const tierLimits: Readonly<Record<Exclude<Tier, 'enterprise'>, { minute: number; day: number }>> = {
  free: { minute: 60, day: 1_000 },
  pro: { minute: 300, day: 10_000 },
};

/**
 * Operation cost per minute by tier (gateway/src/cost.ts prices each operation): a heavy query spends more of
 * the minute than `{ __typename }`. Enterprise, like its request count, is not counted.
 */
export const tierCostPerMinute: Readonly<Record<Exclude<Tier, 'enterprise'>, number>> = {
  free: 1_000_000,
  pro: 10_000_000,
};

export interface CostDecision {
  allowed: boolean;
  /** Budget per minute; null when not counted. */
  limit: number | null;
  /** What is left of this minute's budget after this operation; null when not counted. */
  remaining: number | null;
  retryAfterSeconds: number;
}

export interface RateLimitWindows {
  /** Length of the short window in seconds (60 in production; shorter in tests). */
  minuteSeconds: number;
  /** Length of the long window in seconds (86,400 in production). */
  daySeconds: number;
}

export const productionWindows: RateLimitWindows = { minuteSeconds: 60, daySeconds: 86_400 };

export type RateLimitBackend = 'redis' | 'in-process' | 'degraded';

export interface RateLimitDecision {
  allowed: boolean;
  /** RateLimit-* headers (IETF draft-07 style): the window closest to refusing is reported. */
  headers: Record<string, string>;
}

/** What admit() decided for a verified credential, in one Redis round trip. */
export interface Admission {
  /** Seconds before this credential, which kept failing, is accepted again; null when it is not blocked. */
  credentialBlockedSeconds: number | null;
  decision: RateLimitDecision;
  /**
   * The tenant's write counter when the request arrived (bumped after every mutation, recordWrite): in-flight
   * de-duplication only joins requests that saw the same value. Undefined when it cannot be known (Redis away).
   */
  writeEpoch: string | undefined;
}

/**
 * One round trip for everything a verified request needs from Redis before it runs: the per-credential failure
 * check, both windows, and the tenant's write counter. The windows are counted exactly as rate-limiter-flexible's
 * RateLimiterRedis counts them (its keys, its SET NX EX + INCRBY + PTTL, the minute before the day and the day left
 * alone when the minute refuses), so replicas running either path share one count.
 * KEYS: tenant write counter, minute key, day key (one hash slot: tenantKeyTag), and on one server the
 *   credential-failure counter; a cluster keeps that one in the credential's own slot, so it is read before the script.
 * ARGV: failures allowed, minute seconds, minute points, day seconds
 * Returns: {blocked (0|1), failure pttl | write epoch, minute consumed, minute pttl, day consumed, day pttl}
 */
const ADMIT_SCRIPT = `
if KEYS[4] then
  local failed = redis.call('get', KEYS[4])
  if failed and tonumber(failed) > tonumber(ARGV[1]) then
    return {1, redis.call('pttl', KEYS[4])}
  end
end
local epoch = redis.call('get', KEYS[1]) or '0'
local function count(key, seconds)
  redis.call('set', key, 0, 'EX', seconds, 'NX')
  local consumed = redis.call('incrby', key, 1)
  local ttl = redis.call('pttl', key)
  if ttl == -1 then
    redis.call('expire', key, seconds)
    ttl = 1000 * seconds
  end
  return consumed, ttl
end
local minute, minuteTtl = count(KEYS[2], ARGV[2])
if minute > tonumber(ARGV[3]) then return {0, epoch, minute, minuteTtl} end
local day, dayTtl = count(KEYS[3], ARGV[4])
return {0, epoch, minute, minuteTtl, day, dayTtl}
`;

type AdmitReply = [blocked: number, epochOrTtl: string | number, minute?: number, minuteTtl?: number, day?: number, dayTtl?: number];
type RedisWithAdmit = RedisClient & { linepackAdmit(...args: (string | number)[]): Promise<AdmitReply> };

/**
 * The Redis Cluster hash tag of a tenant's keys: its write counter and its credentials' windows share one hash slot,
 * so the admission script may touch them together (keys of different slots are refused with CROSSSLOT). One server
 * ignores the braces.
 */
function tenantKeyTag(tenantId: string): string {
  return `{${tenantId}}`;
}

/** The tenant's write counter (recordWrite). Before cluster support it was linepack:writes:<tenant>. */
function writeEpochKey(tenantId: string): string {
  return `linepack:writes:${tenantKeyTag(tenantId)}`;
}

/** What a credential's request windows are counted under: `<prefix>:{<tenant>}:<rate-limit key>`, in its tenant's slot. */
function windowCounterKey(tenantId: string, rateLimitKey: string): string {
  return `${tenantKeyTag(tenantId)}:${rateLimitKey}`;
}

type WindowName = 'minute' | 'day';
interface CountedWindow {
  shared: RateLimiterAbstract | null;
  /** The Redis key prefix (rate-limiter-flexible's keyPrefix). */
  prefix: string;
  local: RateLimiterMemory;
  /** The limit, counted in Redis for every gateway process at once. */
  points: number;
  /** This process's share of it when counting in its own memory: points ÷ in-process shares (at least 1). */
  localPoints: number;
  seconds: number;
}
type TierLimiters = Record<WindowName, CountedWindow>;

/**
 * Failed authentications per client address per minute: past it, that address's *failing* requests are
 * answered 429 instead of 401, and so is every request from it whose credential the gateway could only verify by
 * asking the auth service (an API key it has not cached, a token naming a key it does not know) — refused before that
 * lookup, so guessing costs the guesser, not the auth service and its database. A credential the gateway verifies on
 * its own (a cached key, an access token) is never refused for it: behind a load balancer (or a NAT) one address is
 * many clients, and one of them guessing must not lock the others out.
 */
export const FAILED_AUTH_PER_MINUTE = 60;
/**
 * Failures of one presented credential (a revoked key still in a script, an expired token replayed), from any
 * address: past it, that credential is refused before it is verified again, sparing the auth service.
 */
export const FAILED_AUTH_PER_CREDENTIAL_PER_MINUTE = 10;

/**
 * What a credential is called in counters and logs: a hash prefix, never the secret. `sha256Hex` when the caller has
 * the token's SHA-256 already (it is also how API keys are looked up), so a request hashes its credential once.
 */
export function credentialFingerprint(token: string, sha256Hex: string = createHash('sha256').update(token).digest('hex')): string {
  return sha256Hex.slice(0, 32);
}

/** Why a request was refused before its credential was verified: the address, or the credential, kept failing. */
export interface FailureBlock {
  seconds: number;
  by: 'address' | 'credential';
}

/**
 * Two windows per credential, counted atomically in Redis so every gateway replica shares one
 * budget. When Redis fails or is slow, each gateway process falls back to its own in-memory counters with
 * its share of each limit (limit ÷ `inProcessShares`, GATEWAY_REPLICAS × workers: bounded, never unlimited, and the
 * processes together never give more than the limit), logs the change once, and returns to Redis as soon as a Redis
 * call succeeds again.
 */
export class TieredRateLimiter {
  private readonly limiters: Record<Exclude<Tier, 'enterprise'>, TierLimiters>;
  private readonly failedAuth: CountedWindow;
  private readonly failedCredential: CountedWindow;
  private readonly costBudgets: Record<Exclude<Tier, 'enterprise'>, CountedWindow>;
  private degraded = false;
  /** Window keys that spent their budget, refused from memory until the window ends (as inMemoryBlockOnConsumed does). */
  private readonly spentUntil = new LRUCache<string, number>({ max: 10_000 });
  /** Without Redis, one process is the whole deployment: its own count of writes per tenant is the truth. */
  private readonly localWriteEpochs = new LRUCache<string, number>({ max: 10_000 });

  constructor(
    private readonly redis: RedisClient | null,
    windows: RateLimitWindows,
    private readonly logger: Logger,
    inProcessShares = 1,
  ) {
    // Once a key has spent its window, this replica refuses it from memory until the window ends: a client that
    // keeps sending after its 429 costs no Redis round trips (it would otherwise slow everyone else down).
    const shares = Math.max(1, Math.floor(inProcessShares));
    const counted = (points: number, seconds: number, keyPrefix: string, blockInMemory = true): CountedWindow => ({
      points,
      localPoints: Math.max(1, Math.floor(points / shares)),
      seconds,
      prefix: keyPrefix,
      local: new RateLimiterMemory({ points: Math.max(1, Math.floor(points / shares)), duration: seconds, keyPrefix }),
      shared: redis
        ? new RateLimiterRedis({
            storeClient: redis,
            points,
            duration: seconds,
            keyPrefix,
            rejectIfRedisNotReady: true,
            ...(blockInMemory ? { inMemoryBlockOnConsumed: points } : {}),
          })
        : null,
    });
    const build = (tier: Exclude<Tier, 'enterprise'>): TierLimiters => {
      const one = (window: WindowName) => {
        const seconds = window === 'minute' ? windows.minuteSeconds : windows.daySeconds;
        return counted(tierLimits[tier][window], seconds, `linepack:rl:${tier}:${window}:${seconds}`);
      };
      return { minute: one('minute'), day: one('day') };
    };
    this.limiters = { free: build('free'), pro: build('pro') };
    const costWindow = (tier: Exclude<Tier, 'enterprise'>) =>
      // Not blocked in memory: a refused operation gives its cost back, and a cheaper one may still fit.
      counted(tierCostPerMinute[tier], windows.minuteSeconds, `linepack:rl:${tier}:cost:${windows.minuteSeconds}`, false);
    this.costBudgets = { free: costWindow('free'), pro: costWindow('pro') };
    this.failedAuth = counted(FAILED_AUTH_PER_MINUTE, windows.minuteSeconds, `linepack:rl:auth-failures:${windows.minuteSeconds}`, false);
    this.failedCredential = counted(
      FAILED_AUTH_PER_CREDENTIAL_PER_MINUTE,
      windows.minuteSeconds,
      `linepack:rl:credential-failures:${windows.minuteSeconds}`,
      false,
    );
    if (!redis) logger.warn('rate limits: no REDIS_URL, counting in process memory (not shared between gateway replicas)');
    redis?.defineCommand('linepackAdmit', { lua: ADMIT_SCRIPT });
    redis?.on('ready', this.onReady);
    redis?.on('close', this.onClose);
  }

  private readonly onReady = () => this.setDegraded(false);
  private readonly onClose = () => this.setDegraded(true, new Error('connection closed'));

  /** Disconnects quietly: a deliberate shutdown is not a degradation. */
  close(): void {
    this.redis?.off('ready', this.onReady).off('close', this.onClose);
    this.redis?.disconnect();
  }

  get backend(): RateLimitBackend {
    if (!this.redis) return 'in-process';
    return this.degraded || this.redis.status !== 'ready' ? 'degraded' : 'redis';
  }

  private setDegraded(degraded: boolean, err?: unknown): void {
    if (degraded === this.degraded) return;
    this.degraded = degraded;
    if (degraded) this.logger.error({ err: (err as Error | undefined)?.message }, 'rate limits: Redis unavailable, falling back to in-process limits');
    else this.logger.warn('rate limits: Redis is back, shared counting resumed');
  }

  /**
   * Runs a counter operation on Redis first, on this process's memory when Redis fails; `points` is the limit of the
   * counter that answers (the whole limit in Redis, this process's share in memory).
   */
  private async counted<T>(window: CountedWindow, operation: (limiter: RateLimiterAbstract, points: number) => Promise<T>): Promise<T> {
    if (window.shared) {
      try {
        const result = await operation(window.shared, window.points);
        this.setDegraded(false);
        return result;
      } catch (err) {
        if (err instanceof RateLimiterRes) {
          this.setDegraded(false);
          throw err;
        }
        this.setDegraded(true, err);
      }
    }
    return operation(window.local, window.localPoints);
  }

  /** One point of `key`'s window: allowed or refused, with the limit of the counter that answered. */
  private consumeOne(window: CountedWindow, key: string, cost = 1): Promise<{ allowed: boolean; res: RateLimiterRes; points: number }> {
    return this.counted(window, async (limiter, points) => {
      try {
        return { allowed: true, res: await limiter.consume(key, cost), points };
      } catch (res) {
        if (res instanceof RateLimiterRes) return { allowed: false, res, points };
        throw res;
      }
    });
  }

  /**
   * Seconds left in `key`'s window once more than its limit + `slack` failures were counted in it, or null. Slack -1:
   * blocked as soon as the limit is used up (asked before verifying); 0: once a failure went past it.
   */
  private async blockOf(window: CountedWindow, key: string, slack: 0 | -1): Promise<number | null> {
    const res = await this.counted(window, async (limiter, points) => {
      const counted = await limiter.get(key);
      return counted && counted.consumedPoints > points + slack ? counted : null;
    });
    return res ? Math.max(1, Math.ceil(res.msBeforeNext / 1000)) : null;
  }

  /** Seconds before a credential that kept failing is verified again, or null. */
  credentialFailureBlock(fingerprint: string): Promise<number | null> {
    // Asked before verifying: once the credential has used up its failures, it is not verified again.
    return this.blockOf(this.failedCredential, fingerprint, -1);
  }

  /**
   * Asked before a credential is verified by a lookup (introspection, the auth service's routes): refused when the
   * client address has used up its failure budget, or the credential its own. Both counters are read together (one
   * socket write: the client auto-pipelines).
   */
  async failureBlock(address: string, fingerprint: string | null): Promise<FailureBlock | null> {
    const [byAddress, byCredential] = await Promise.all([
      this.blockOf(this.failedAuth, address, -1),
      fingerprint ? this.credentialFailureBlock(fingerprint) : null,
    ]);
    if (byCredential !== null) return { seconds: byCredential, by: 'credential' };
    if (byAddress !== null) return { seconds: byAddress, by: 'address' };
    return null;
  }

  /**
   * Counts a failed authentication against the client address and the presented credential; answers the
   * seconds the address must wait when it is over its budget (the failing request then gets 429), or null.
   */
  async recordAuthFailure(address: string, fingerprint: string | null): Promise<number | null> {
    await Promise.all([
      this.counted(this.failedAuth, (limiter) => limiter.penalty(address)),
      fingerprint ? this.counted(this.failedCredential, (limiter) => limiter.penalty(fingerprint)) : null,
    ]);
    // Asked after counting this failure: the request that goes past the budget is the first one refused.
    return this.blockOf(this.failedAuth, address, 0);
  }

  /** Spends `cost` of the credential's per-minute cost budget; an operation costing more than is left is refused whole. */
  async consumeCost(key: string, tier: Tier, cost: number): Promise<CostDecision> {
    if (tier === 'enterprise' || cost <= 0) return { allowed: true, limit: null, remaining: null, retryAfterSeconds: 0 };
    const window = this.costBudgets[tier];
    const { allowed, res, points } = await this.consumeOne(window, key, cost);
    if (allowed) return { allowed: true, limit: points, remaining: Math.max(0, res.remainingPoints), retryAfterSeconds: 0 };
    // A refused operation spent nothing: give back what consume() counted.
    await this.counted(window, (limiter) => limiter.reward(key, cost)).catch(() => undefined);
    return {
      allowed: false,
      limit: points,
      remaining: Math.max(0, points - (res.consumedPoints - cost)),
      retryAfterSeconds: Math.max(1, Math.ceil(res.msBeforeNext / 1000)),
    };
  }

  /**
   * A verified credential's request: refused when the credential kept failing (checkFailures; skipped when the
   * caller checked before verifying), otherwise counted against both windows of its tier. One Redis round trip
   * (ADMIT_SCRIPT); when Redis fails, the same decisions from this process's memory.
   */
  async admit(credential: { rateLimitKey: string; tier: Tier; tenantId: string }, fingerprint: string, checkFailures: boolean): Promise<Admission> {
    const { tier, tenantId } = credential;
    const key = windowCounterKey(tenantId, credential.rateLimitKey);
    // Enterprise is never counted, and a credential that has just been verified has not been failing (one that fails
    // is checked on its way to the 401, server.ts refuse): no round trip at all — it was half the latency of a small
    // request at one connection. The write counter is read when a subgraph query needs it.
    if (tier === 'enterprise') return { credentialBlockedSeconds: null, decision: { allowed: true, headers: {} }, writeEpoch: undefined };
    const limiters = this.limiters[tier];
    const spent = this.spentWindow(limiters, key);
    if (spent) return { credentialBlockedSeconds: null, decision: spent, writeEpoch: undefined };
    const redis = this.redis as RedisWithAdmit | null;
    if (redis && redis.status === 'ready') {
      try {
        const keys = [writeEpochKey(tenantId), `${limiters.minute.prefix}:${key}`, `${limiters.day.prefix}:${key}`];
        if (checkFailures && isCluster(redis)) {
          const blocked = await this.credentialFailureBlock(fingerprint);
          if (blocked !== null) return { credentialBlockedSeconds: blocked, decision: { allowed: false, headers: {} }, writeEpoch: undefined };
        } else if (checkFailures) keys.push(`${this.failedCredential.prefix}:${fingerprint}`);
        const args = [this.failedCredential.points - 1, limiters.minute.seconds, limiters.minute.points, limiters.day.seconds];
        const reply = await redis.linepackAdmit(keys.length, ...keys, ...args);
        this.setDegraded(false);
        return this.admission(reply, limiters, key);
      } catch (err) {
        this.setDegraded(true, err);
      }
    }
    // No Redis, or it failed: the per-step path, which falls back to this process's counters.
    const blocked = checkFailures ? await this.credentialFailureBlock(fingerprint) : null;
    if (blocked !== null) return { credentialBlockedSeconds: blocked, decision: { allowed: false, headers: {} }, writeEpoch: undefined };
    return {
      credentialBlockedSeconds: null,
      decision: await this.consume(key, tier),
      writeEpoch: this.redis ? undefined : String(this.localWriteEpochs.get(tenantId) ?? 0),
    };
  }

  /**
   * The tenant's write counter now, for a request admit() did not read it for; undefined when Redis cannot say. Read
   * later than the request's arrival it can only be newer, which can only keep the request from joining another.
   */
  async writeEpoch(tenantId: string): Promise<string | undefined> {
    if (!this.redis) return String(this.localWriteEpochs.get(tenantId) ?? 0);
    if (this.redis.status !== 'ready') return undefined;
    try {
      return (await this.redis.get(writeEpochKey(tenantId))) ?? '0';
    } catch (err) {
      this.setDegraded(true, err);
      return undefined;
    }
  }

  /** Counts a finished mutation against its tenant, so no later read joins a read that began before it (admit). */
  async recordWrite(tenantId: string): Promise<void> {
    if (!this.redis) {
      this.localWriteEpochs.set(tenantId, (this.localWriteEpochs.get(tenantId) ?? 0) + 1);
      return;
    }
    // A day is far longer than any request is in flight; the counter only needs to change, not to last.
    await this.redis
      .multi()
      .incr(writeEpochKey(tenantId))
      .expire(writeEpochKey(tenantId), 86_400)
      .exec()
      .catch((err: unknown) => this.setDegraded(true, err));
  }

  private admission(reply: AdmitReply, limiters: TierLimiters, key: string): Admission {
    const [blocked, epochOrTtl, minute, minuteTtl, day, dayTtl] = reply;
    if (blocked === 1) {
      return { credentialBlockedSeconds: Math.max(1, Math.ceil(Number(epochOrTtl) / 1000)), decision: { allowed: false, headers: {} }, writeEpoch: undefined };
    }
    const writeEpoch = String(epochOrTtl);
    if (minute === undefined || minuteTtl === undefined) throw new Error('rate-limit script answered without the minute window');
    const minuteRes = this.windowResult(limiters.minute, key, minute, minuteTtl);
    if (minute > limiters.minute.points) return { credentialBlockedSeconds: null, decision: this.refusal(limiters, limiters.minute, minuteRes), writeEpoch };
    const dayRes = this.windowResult(limiters.day, key, day!, dayTtl!);
    if (day! > limiters.day.points) return { credentialBlockedSeconds: null, decision: this.refusal(limiters, limiters.day, dayRes), writeEpoch };
    return { credentialBlockedSeconds: null, decision: this.allowance(limiters, minuteRes, dayRes), writeEpoch };
  }

  /** A window's count as rate-limiter-flexible reports it; a spent window is then refused from memory until it ends. */
  private windowResult(window: CountedWindow, key: string, consumed: number, ttlMs: number): RateLimiterRes {
    if (consumed >= window.points) this.spentUntil.set(`${window.prefix}:${key}`, Date.now() + ttlMs);
    return new RateLimiterRes(Math.max(0, window.points - consumed), ttlMs, consumed, consumed === 1);
  }

  /** The refusal for a window this process already knows is spent, without asking Redis. */
  private spentWindow(limiters: TierLimiters, key: string): RateLimitDecision | null {
    const now = Date.now();
    for (const window of [limiters.minute, limiters.day]) {
      const until = this.spentUntil.get(`${window.prefix}:${key}`);
      if (until === undefined) continue;
      if (until <= now) this.spentUntil.delete(`${window.prefix}:${key}`);
      else return this.refusal(limiters, window, new RateLimiterRes(0, until - now, window.points, false));
    }
    return null;
  }

  /** The policy of the counters that answered: the whole limits in Redis, this process's shares in memory. */
  private policyOf(limiters: TierLimiters, local: boolean): string {
    const points = (window: CountedWindow) => (local ? window.localPoints : window.points);
    return `${points(limiters.minute)};w=${limiters.minute.seconds}, ${points(limiters.day)};w=${limiters.day.seconds}`;
  }

  private headersFor(limiters: TierLimiters, points: number, res: RateLimiterRes, local: boolean): Record<string, string> {
    return {
      'RateLimit-Policy': this.policyOf(limiters, local),
      'RateLimit-Limit': String(points),
      'RateLimit-Remaining': String(Math.max(0, res.remainingPoints)),
      'RateLimit-Reset': String(Math.max(0, Math.ceil(res.msBeforeNext / 1000))),
    };
  }

  /** `points`: the limit of the counter that refused (window.points unless it was this process's share). */
  private refusal(limiters: TierLimiters, window: CountedWindow, res: RateLimiterRes, points = window.points): RateLimitDecision {
    return {
      allowed: false,
      headers: {
        ...this.headersFor(limiters, points, res, points !== window.points),
        'Retry-After': String(Math.max(1, Math.ceil(res.msBeforeNext / 1000))),
      },
    };
  }

  /** The window closest to refusing is reported. */
  private allowance(
    limiters: TierLimiters,
    minute: RateLimiterRes,
    day: RateLimiterRes,
    points = { minute: limiters.minute.points, day: limiters.day.points },
  ): RateLimitDecision {
    const tighter = day.remainingPoints < minute.remainingPoints ? { points: points.day, res: day } : { points: points.minute, res: minute };
    return { allowed: true, headers: this.headersFor(limiters, tighter.points, tighter.res, points.minute !== limiters.minute.points) };
  }

  /** Both windows of `key`, a windowCounterKey (the tenant's hash tag and the credential's rate-limit key). */
  private async consume(key: string, tier: Tier): Promise<RateLimitDecision> {
    if (tier === 'enterprise') return { allowed: true, headers: {} };
    const limiters = this.limiters[tier];
    // The short window is checked first so a refused burst does not eat the daily budget.
    const minute = await this.consumeOne(limiters.minute, key);
    if (!minute.allowed) return this.refusal(limiters, limiters.minute, minute.res, minute.points);
    const day = await this.consumeOne(limiters.day, key);
    if (!day.allowed) return this.refusal(limiters, limiters.day, day.res, day.points);
    return this.allowance(limiters, minute.res, day.res, { minute: minute.points, day: day.points });
  }
}
