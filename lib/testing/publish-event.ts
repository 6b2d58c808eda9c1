import { randomUUID } from 'node:crypto';
import { consumerGroupInfo } from '../events/consumer';
import { eventStream, streamRegistry, type StreamEvent } from '../events/outbox';
import type { RedisClient } from '../redis';

/**
 * Adds one domain event to a producer's stream with the fields the outbox relay writes, so a
 * consuming subgraph's tests feed it exactly what production feeds it, without the producer running.
 */
export async function publishEvent(
  redis: RedisClient,
  dbPrefix: string,
  producer: string,
  type: string,
  tenantId: string,
  data: Record<string, unknown>,
): Promise<string | null> {
  const event: StreamEvent = { id: randomUUID(), type, tenantId, occurredAt: new Date().toISOString(), data: JSON.stringify(data) };
  // The tenant's stream, registered first, as the relay does (lib/events/outbox.ts); one after the other, since on a
  // cluster the registry and the stream may live on different nodes.
  const stream = eventStream(dbPrefix, producer, tenantId);
  await redis.sadd(streamRegistry(eventStream(dbPrefix, producer)), stream);
  return redis.xadd(stream, '*', ...Object.entries(event).flat());
}

/**
 * Whether consumer group `group` has been handed every event on the tenant's streams of these producers and has
 * acknowledged each (it acknowledges once its handler has written everything): the group's projections of the
 * tenant are settled. A stream the group has not joined yet counts as not caught up.
 */
export async function consumedAll(redis: RedisClient, dbPrefix: string, producers: readonly string[], tenantId: string, group: string): Promise<boolean> {
  for (const producer of producers) {
    const stream = eventStream(dbPrefix, producer, tenantId);
    if (!(await redis.exists(stream))) continue;
    const mine = consumerGroupInfo(await redis.xinfo('GROUPS', stream), group);
    if (!mine || mine.lag !== 0 || mine.pending !== 0) return false;
  }
  return true;
}
