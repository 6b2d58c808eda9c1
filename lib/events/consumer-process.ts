import type { Db } from 'mongodb';
import { BULK_WORK_REST_RATIO } from '../fair-share';
import { watchConsumerGroup, watchRedis } from '../metrics';
import { createRedisClient } from '../redis';
import type { SubgraphStartOptions } from '../subgraph-types';
import { StreamConsumer, type EventBatchHandler } from './consumer';

const BACKLOG_BATCH_SIZE = 1_000;

/**
 * Starts a subgraph's event consumer when there is a Redis to read. Without one the subgraph
 * serves what it has already projected and says, once, that it is not following events.
 */
export function startEventConsumer(
  options: SubgraphStartOptions,
  db: Db,
  consumer: { group: string; streams: readonly string[]; handle: EventBatchHandler; claimIdleMs?: number; batchSize?: number; backlogBatchSize?: number },
): { following: boolean; stop(): Promise<void> } {
  if (!options.redisUrl || options.eventRelay === false) {
    if (!options.redisUrl) options.logger.warn({ group: consumer.group }, 'not following domain events: no REDIS_URL (projections stay as they are)');
    return { following: false, stop: async () => undefined };
  }
  const redis = createRedisClient(options.redisUrl, options.logger);
  // A tenant's backlog (an ILI import: one event per feature) is taken 1,000 at a time while slots are free, so each
  // handler's per-batch reads are paid per thousand events rather than per hundred (StreamConsumerOptions.backlogBatchSize).
  // A tenant's stream rests after each batch as long as the batch took, as bulk work does (BULK_WORK_REST_RATIO).
  const streamConsumer = new StreamConsumer({
    redis,
    db,
    logger: options.logger,
    backlogBatchSize: BACKLOG_BATCH_SIZE,
    restRatio: BULK_WORK_REST_RATIO,
    ...consumer,
  });
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
