import Redis from 'ioredis';
import type { Logger } from './logger';

/**
 * A Redis client that fails fast instead of queueing commands while Redis is away, and keeps
 * reconnecting in the background; callers fall back or retry on their own terms. Connection errors
 * are logged at debug only: callers report the degradation once, in their own words.
 */
export function createRedisClient(url: string, logger: Logger, options: { commandTimeoutMs?: number; autoPipelining?: boolean } = {}): Redis {
  const redis = new Redis(url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    connectTimeout: 2_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    ...(options.commandTimeoutMs ? { commandTimeout: options.commandTimeoutMs } : {}),
    ...(options.autoPipelining ? { enableAutoPipelining: true } : {}),
  });
  redis.on('error', (err: Error) => logger.debug({ err: err.message }, 'redis connection error'));
  return redis;
}

/** Resolves once the client is connected, or after `timeoutMs` (callers then see the fast failure themselves). */
export function redisReady(redis: Redis, timeoutMs = 2_000): Promise<void> {
  if (redis.status === 'ready') return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      redis.off('ready', done);
      resolve();
    };
    const timer = setTimeout(done, timeoutMs);
    redis.once('ready', done);
  });
}
