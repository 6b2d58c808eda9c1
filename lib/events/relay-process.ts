import { watchOutbox, watchRedis } from '../metrics';
import { createRedisClient, replicasToAcknowledgeOf } from '../redis';
import type { Collection } from 'mongodb';
import type { SubgraphStartOptions } from '../subgraph-types';
import { OutboxRelay, type OutboxDocument, type OutboxEntry } from './outbox';

/**
 * Starts a subgraph's outbox relay when it has somewhere to publish. Without Redis the events wait
 * in their documents, and the relay publishes them once a process with REDIS_URL runs.
 */
export function startOutboxRelay<D extends OutboxDocument>(
  options: SubgraphStartOptions,
  collection: Collection<D>,
  stream: string,
  dataOf: (doc: D, entry: OutboxEntry) => Record<string, unknown>,
): { stop(): Promise<void> } {
  if (!options.redisUrl || options.eventRelay === false) {
    if (!options.redisUrl) options.logger.warn({ stream }, 'domain events are not published: no REDIS_URL (they wait in the outbox)');
    return { stop: async () => undefined };
  }
  const redis = createRedisClient(options.redisUrl, options.logger);
  const relay = new OutboxRelay<D>({
    collection,
    redis,
    stream,
    logger: options.logger,
    dataOf,
    replicasToAcknowledge: replicasToAcknowledgeOf(options.redisUrl),
  });
  relay.start();
  const unwatch = [
    watchRedis(redis, `outbox-relay:${stream}`),
    watchOutbox(stream, () => collection.countDocuments({ 'outbox.id': { $exists: true } } as never, { maxTimeMS: 1_000 })),
  ];
  return {
    async stop() {
      for (const stop of unwatch) stop();
      await relay.stop();
      redis.disconnect();
    },
  };
}
