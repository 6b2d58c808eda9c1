import type { Collection } from 'mongodb';
import type { Logger } from '../logger';
import { watchOutbox, watchRedis } from '../metrics';
import { createRedisClient, replicasToAcknowledgeOf, type RedisClient, type RedisTarget } from '../redis';
import { OutboxRelay, type OutboxDocument, type OutboxEntry } from './outbox';

/** What a relay needs of the service that runs it: where to publish, whether to, and its log. */
export interface RelayHost {
  redisUrl?: RedisTarget | undefined;
  eventRelay?: boolean;
  logger: Logger;
}

/**
 * Whether `host` publishes its outbox: when it has somewhere to publish and is not told otherwise. Without Redis the
 * events wait in their documents (said once in the log), and a process with REDIS_URL publishes them later.
 */
export function publishesEvents(host: RelayHost, stream: string): host is RelayHost & { redisUrl: RedisTarget } {
  if (!host.redisUrl || host.eventRelay === false) {
    if (!host.redisUrl) host.logger.warn({ stream }, 'domain events are not published: no REDIS_URL (they wait in the outbox)');
    return false;
  }
  return true;
}

/** The client a relay's Redis health is reported under (linepack_redis_up). */
export const relayRedisClientName = (stream: string) => `outbox-relay:${stream}`;

/** How many events wait in a collection's outbox (linepack_outbox_pending_events), bounded for a scrape. */
export const countOutboxPending = (collection: Collection<OutboxDocument>) => () =>
  collection.countDocuments({ 'outbox.id': { $exists: true } }, { maxTimeMS: 1_000 });

/**
 * Starts a relay of `collection`'s outbox to `stream` on this thread, with a Redis client of its own (`onRedis` is
 * given it, e.g. to report its health from a worker thread). The caller has checked `publishesEvents`.
 */
export function runOutboxRelay<D extends OutboxDocument>(
  host: RelayHost & { redisUrl: RedisTarget },
  collection: Collection<D>,
  stream: string,
  dataOf: (doc: D, entry: OutboxEntry) => Record<string, unknown>,
  onRedis?: (redis: RedisClient) => void,
): { stop(): Promise<void> } {
  const redis = createRedisClient(host.redisUrl, host.logger);
  onRedis?.(redis);
  const relay = new OutboxRelay<D>({
    collection,
    redis,
    stream,
    logger: host.logger,
    dataOf,
    replicasToAcknowledge: replicasToAcknowledgeOf(host.redisUrl),
  });
  relay.start();
  return {
    async stop() {
      await relay.stop();
      redis.disconnect();
    },
  };
}

/** Starts a subgraph's outbox relay on its event loop, with its metrics, when it has somewhere to publish. */
export function startOutboxRelay<D extends OutboxDocument>(
  host: RelayHost,
  collection: Collection<D>,
  stream: string,
  dataOf: (doc: D, entry: OutboxEntry) => Record<string, unknown>,
): { stop(): Promise<void> } {
  if (!publishesEvents(host, stream)) return { stop: async () => undefined };
  const unwatch: (() => void)[] = [watchOutbox(stream, countOutboxPending(collection as unknown as Collection<OutboxDocument>))];
  const relay = runOutboxRelay(host, collection, stream, dataOf, (redis) => unwatch.push(watchRedis(redis, relayRedisClientName(stream))));
  return {
    async stop() {
      for (const stop of unwatch) stop();
      await relay.stop();
    },
  };
}
