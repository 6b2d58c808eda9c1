import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { eventStream, type StreamEvent } from '../events/outbox';

/**
 * Adds one domain event to a producer's stream with the fields the outbox relay writes, so a
 * consuming subgraph's tests feed it exactly what production feeds it, without the producer running.
 */
export function publishEvent(
  redis: Redis,
  dbPrefix: string,
  producer: string,
  type: string,
  tenantId: string,
  data: Record<string, unknown>,
): Promise<string | null> {
  const event: StreamEvent = { id: randomUUID(), type, tenantId, occurredAt: new Date().toISOString(), data: JSON.stringify(data) };
  return redis.xadd(eventStream(dbPrefix, producer), '*', ...Object.entries(event).flat());
}
