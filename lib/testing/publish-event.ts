import { randomUUID } from 'node:crypto';
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
