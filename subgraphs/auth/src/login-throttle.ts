import { createHash } from 'node:crypto';
import type Redis from 'ioredis';
import { RateLimiterMemory, RateLimiterRedis, type RateLimiterAbstract } from 'rate-limiter-flexible';

export interface ThrottleWindow {
  failures: number;
  seconds: number;
}

export const defaultLoginThrottle = {
  perEmail: { failures: 5, seconds: 15 * 60 },
  perIp: { failures: 50, seconds: 15 * 60 },
} as const;

/**
 * Counts login attempts per email and per client IP, in Redis when configured so all
 * auth replicas share the count, with an in-process fallback. Emails are hashed before they become
 * counter keys: the counters never hold personal data.
 */
export class LoginThrottle {
  private readonly byEmail: RateLimiterAbstract;
  private readonly byIp: RateLimiterAbstract;

  constructor(redis: Redis | null, windows: { perEmail: ThrottleWindow; perIp: ThrottleWindow } = defaultLoginThrottle) {
    const build = (name: string, w: ThrottleWindow): RateLimiterAbstract => {
      const options = { points: w.failures, duration: w.seconds, keyPrefix: `linepack:login:${name}` };
      return redis
        ? new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(options) })
        : new RateLimiterMemory(options);
    };
    this.byEmail = build('email', windows.perEmail);
    this.byIp = build('ip', windows.perIp);
  }

  private static emailKey(email: string): string {
    return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
  }

  /**
   * Counts an attempt *before* the password is checked, atomically, so concurrent guesses cannot
   * slip past the limit. Returns the seconds to wait when over it, or null when the attempt may
   * proceed. A successful login then clears the email's count (recordSuccess).
   */
  async admit(ip: string, email: string): Promise<number | null> {
    const results = await Promise.allSettled([this.byEmail.consume(LoginThrottle.emailKey(email)), this.byIp.consume(ip)]);
    const waits = results.map((r) => (r.status === 'rejected' && typeof r.reason?.msBeforeNext === 'number' ? (r.reason.msBeforeNext as number) : 0));
    const failure = results.find((r) => r.status === 'rejected' && typeof r.reason?.msBeforeNext !== 'number');
    if (failure) throw (failure as PromiseRejectedResult).reason;
    const wait = Math.max(...waits);
    return wait > 0 ? Math.max(1, Math.ceil(wait / 1000)) : null;
  }

  /** A successful login gives its attempt back: the counters measure failures. */
  async recordSuccess(ip: string, email: string): Promise<void> {
    await Promise.all([this.byEmail.delete(LoginThrottle.emailKey(email)), this.byIp.reward(ip, 1)]);
  }
}
