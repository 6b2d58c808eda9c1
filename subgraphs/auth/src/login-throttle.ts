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
 * Counts failed logins per email and per client IP (DESIGN §3), in Redis when configured so all
 * auth replicas share the count, with an in-process fallback. Emails are hashed before they become
 * counter keys: the counters never hold personal data.
 */
export class LoginThrottle {
  private readonly byEmail: RateLimiterAbstract;
  private readonly byIp: RateLimiterAbstract;

  constructor(
    redis: Redis | null,
    private readonly windows: { perEmail: ThrottleWindow; perIp: ThrottleWindow } = defaultLoginThrottle,
  ) {
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

  /** Seconds until another attempt is allowed, or null when the attempt may proceed. */
  async blockedFor(ip: string, email: string): Promise<number | null> {
    const [byEmail, byIp] = await Promise.all([this.byEmail.get(LoginThrottle.emailKey(email)), this.byIp.get(ip)]);
    const waits = [
      byEmail && byEmail.consumedPoints >= this.windows.perEmail.failures ? byEmail.msBeforeNext : 0,
      byIp && byIp.consumedPoints >= this.windows.perIp.failures ? byIp.msBeforeNext : 0,
    ];
    const wait = Math.max(...waits);
    return wait > 0 ? Math.ceil(wait / 1000) : null;
  }

  async recordFailure(ip: string, email: string): Promise<void> {
    // penalty() counts without rejecting: the limit is judged by blockedFor before each attempt.
    await Promise.all([this.byEmail.penalty(LoginThrottle.emailKey(email)), this.byIp.penalty(ip)]);
  }

  async recordSuccess(email: string): Promise<void> {
    await this.byEmail.delete(LoginThrottle.emailKey(email));
  }
}
