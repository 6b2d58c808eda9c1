import { createHash } from 'node:crypto';
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, type RateLimiterAbstract } from 'rate-limiter-flexible';
import type { RedisClient } from '@linepack/lib/redis';

export interface ThrottleWindow {
  failures: number;
  seconds: number;
}

/** Past `softAfter` failures for one email (from any address) in `seconds`, each attempt waits longer. */
export interface BackOff {
  softAfter: number;
  seconds: number;
  maxDelaySeconds: number;
}

export interface LoginThrottleWindows {
  /** One address guessing one account's password: the hard limit, aimed at that attacker only. */
  perEmailAndIp: ThrottleWindow;
  /** One address trying many accounts (credential stuffing). */
  perIp: ThrottleWindow;
  /** Many addresses against one account: slowed down, never locked out (OWASP authentication guidance). */
  perEmail: BackOff;
}

export const defaultLoginThrottle: LoginThrottleWindows = {
  perEmailAndIp: { failures: 5, seconds: 15 * 60 },
  perIp: { failures: 50, seconds: 15 * 60 },
  perEmail: { softAfter: 10, seconds: 15 * 60, maxDelaySeconds: 60 },
};

/** The wait before the next attempt after `failures` failures for one email: 1, 2, 4 … seconds, capped. */
export function backOffSeconds(failures: number, policy: BackOff): number {
  if (failures < policy.softAfter) return 0;
  return Math.min(policy.maxDelaySeconds, 2 ** Math.min(30, failures - policy.softAfter));
}

const secondsOf = (res: RateLimiterRes) => Math.max(1, Math.ceil(res.msBeforeNext / 1000));

/** Seconds to wait when the counter refused the attempt, null when it was counted; other errors are thrown. */
async function refusal(consumed: Promise<RateLimiterRes>): Promise<number | null> {
  try {
    await consumed;
    return null;
  } catch (err) {
    if (err instanceof RateLimiterRes) return secondsOf(err);
    throw err;
  }
}

/**
 * Counts login attempts in Redis when configured (all auth replicas share the counts), with an in-process
 * fallback. Emails are hashed before they become counter keys: the counters never hold personal data.
 *
 * Someone guessing a password from one address is stopped after `perEmailAndIp.failures` tries for that
 * account and `perIp.failures` overall; the account's owner, from their own address, is not locked out by
 * it — past `perEmail.softAfter` failures from everywhere each attempt only waits a little longer.
 */
export class LoginThrottle {
  private readonly byEmailAndIp: RateLimiterAbstract;
  private readonly byIp: RateLimiterAbstract;
  private readonly byEmail: RateLimiterAbstract;
  private readonly emailCoolDown: RateLimiterAbstract;

  constructor(
    redis: RedisClient | null,
    private readonly windows: LoginThrottleWindows = defaultLoginThrottle,
  ) {
    const build = (name: string, points: number, duration: number): RateLimiterAbstract => {
      const options = { points, duration, keyPrefix: `linepack:login:${name}` };
      return redis
        ? new RateLimiterRedis({ ...options, storeClient: redis, rejectIfRedisNotReady: true, insuranceLimiter: new RateLimiterMemory(options) })
        : new RateLimiterMemory(options);
    };
    this.byEmailAndIp = build('email-ip', windows.perEmailAndIp.failures, windows.perEmailAndIp.seconds);
    this.byIp = build('ip', windows.perIp.failures, windows.perIp.seconds);
    // A counter only (never refuses by itself): its count sets the back-off.
    this.byEmail = build('email', Number.MAX_SAFE_INTEGER, windows.perEmail.seconds);
    this.emailCoolDown = build('email-wait', 1, windows.perEmail.maxDelaySeconds);
  }

  private static emailKey(email: string): string {
    return createHash('sha256').update(email.trim().toLowerCase()).digest('hex');
  }

  /**
   * Counts an attempt *before* the password is checked, atomically, so concurrent guesses cannot slip past
   * the limits. Returns the seconds to wait when over one, or null when the attempt may proceed. A
   * successful login then gives its attempts back (recordSuccess).
   */
  async admit(ip: string, email: string): Promise<number | null> {
    const key = LoginThrottle.emailKey(email);
    const pair = `${key}:${ip}`;
    const waiting = await this.emailCoolDown.get(key);
    if (waiting && waiting.consumedPoints > 1) return secondsOf(waiting);
    // One after the other, so a refused attempt counts nowhere else: an attacker's refused tries must not
    // slow the account's owner down any further.
    const refusedPair = await refusal(this.byEmailAndIp.consume(pair));
    if (refusedPair !== null) return refusedPair;
    const refusedIp = await refusal(this.byIp.consume(ip));
    if (refusedIp !== null) {
      await this.byEmailAndIp.reward(pair, 1);
      return refusedIp;
    }
    // This attempt goes ahead; if the account has been failing from everywhere, the next one waits.
    const attempts = (await this.byEmail.consume(key)).consumedPoints;
    const delay = backOffSeconds(attempts, this.windows.perEmail);
    if (delay > 0) await this.emailCoolDown.block(key, delay);
    return null;
  }

  /** A successful login gives its attempts back: the counters measure failures. */
  async recordSuccess(ip: string, email: string): Promise<void> {
    const key = LoginThrottle.emailKey(email);
    await Promise.all([this.byEmailAndIp.delete(`${key}:${ip}`), this.byEmail.delete(key), this.emailCoolDown.delete(key), this.byIp.reward(ip, 1)]);
  }
}
