import { randomUUID } from 'node:crypto';
import type Redis from 'ioredis';
import { eventStream, streamRegistry, type StreamEvent } from '../events/outbox';

/**
 * Adds one domain event to a producer's stream with the fields the outbox relay writes, so a
 * consuming subgraph's tests feed it exactly what production feeds it, without the producer running.
 */
export async function publishEvent(
  redis: Redis,
  dbPrefix: string,
  producer: string,
  type: string,
  tenantId: string,
  data: Record<string, unknown>,
): Promise<string | null> {
  const event: StreamEvent = { id: randomUUID(), type, tenantId, occurredAt: new Date().toISOString(), data: JSON.stringify(data) };
  // The tenant's stream, registered in the same round trip first, as the relay does (lib/events/outbox.ts).
  const stream = eventStream(dbPrefix, producer, tenantId);
  const [, added] = await redis
    .multi()
    .sadd(streamRegistry(eventStream(dbPrefix, producer)), stream)
    .xadd(stream, '*', ...Object.entries(event).flat())
    .exec()
    .then(okResults);
  return added as string | null;
}

function okResults(results: [Error | null, unknown][] | null): unknown[] {
  const failed = (results ?? []).find(([err]) => err);
  if (failed) throw failed[0];
  return (results ?? []).map(([, value]) => value);
}
