import type { Db } from 'mongodb';
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
): { stop(): Promise<void>; ready(): Promise<void> } {
  if (!options.redisUrl || options.eventRelay === false) {
    if (!options.redisUrl) options.logger.warn({ group: consumer.group }, 'not following domain events: no REDIS_URL (projections stay as they are)');
    return { stop: async () => undefined, ready: async () => undefined };
  }
  const redis = createRedisClient(options.redisUrl, options.logger);
  const streamConsumer = new StreamConsumer({ redis, db, logger: options.logger, ...consumer });
  const started = streamConsumer.start().catch((err: unknown) => {
    options.logger.error({ err: (err as Error).message, group: consumer.group }, 'event consumer did not start');
  });
  return {
    ready: () => started,
    async stop() {
      await started;
      await streamConsumer.stop();
      redis.disconnect();
    },
  };
}
