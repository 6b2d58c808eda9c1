import type { Db } from 'mongodb';
import { watchConsumerGroup, watchRedis } from '../metrics';
import { createRedisClient } from '../redis';
import type { SubgraphStartOptions } from '../subgraph-types';
import { StreamConsumer, type EventBatchHandler } from './consumer';

/**
 * Starts a subgraph's event consumer when there is a Redis to read. Without one the subgraph
 * serves what it has already projected and says, once, that it is not following events.
 */
export function startEventConsumer(
  options: SubgraphStartOptions,
  db: Db,
  consumer: { group: string; streams: readonly string[]; handle: EventBatchHandler; claimIdleMs?: number; batchSize?: number },
): { following: boolean; stop(): Promise<void> } {
  if (!options.redisUrl || options.eventRelay === false) {
    if (!options.redisUrl) options.logger.warn({ group: consumer.group }, 'not following domain events: no REDIS_URL (projections stay as they are)');
    return { following: false, stop: async () => undefined };
  }
  const redis = createRedisClient(options.redisUrl, options.logger);
  const streamConsumer = new StreamConsumer({ redis, db, logger: options.logger, ...consumer });
  void streamConsumer.start();
  const unwatch = [watchRedis(redis, `event-consumer:${consumer.group}`), watchConsumerGroup(redis, consumer.streams, consumer.group)];
  return {
    following: true,
    async stop() {
      for (const stop of unwatch) stop();
      await streamConsumer.stop();
      redis.disconnect();
    },
  };
}
