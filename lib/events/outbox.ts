import { randomUUID } from 'node:crypto';
import type { ChainableCommander } from 'ioredis';
import type { Collection, Document } from 'mongodb';
import type { Logger } from '../logger';
import { isCluster, type RedisClient } from '../redis';

/**
 * Domain events leave a subgraph through an outbox stored *inside the document they
 * describe*, written by the same single-document write as the change itself. No transaction is
 * needed (the embedded server has none) and no event can be lost: if the process dies after the
 * write, the entry is still there for the relay. The relay publishes only what is durable (it reads with
 * readConcern majority; the embedded server never shows a read what it has not fsynced), so no event
 * describes a write a crash took back.
 *
 * Delivery is at-least-once: a crash between publishing and removing the entry publishes it again, with
 * the same `id`. Consumers must de-duplicate on the event `id` (lib/events/consumer.ts handlers are
 * idempotent), never on the Redis stream entry id.
 */
export interface OutboxEntry {
  id: string;
  type: string;
  occurredAt: Date;
  /** The event body when it differs from the document (e.g. a snapshot at this version). */
  data?: Record<string, unknown>;
}

export interface OutboxDocument extends Document {
  _id: string;
  tenantId: string;
  outbox?: OutboxEntry[];
}

export function outboxEntry(type: string, data?: Record<string, unknown>): OutboxEntry {
  return { id: randomUUID(), type, occurredAt: new Date(), ...(data ? { data } : {}) };
}

/**
 * Streams are per (producer, tenant): `<prefix>:events:<producer>:<tenantId>` (e.g. `linepack:events:measurements:<tenant>`),
 * named under the deployment's database prefix so stacks sharing one Redis — parallel developers, tests — never read
 * each other's events. A consumer group reads every tenant's stream with one XREADGROUP and a per-stream COUNT, so a
 * tenant with a backlog of 100,000 events gets at most COUNT of them handled before another tenant's next event: with
 * one shared stream the group's position is one line for everybody, and one tenant's backlog delays every tenant.
 *
 * Without `tenantId` this is the producer's stream from before per-tenant streams (`<prefix>:events:<producer>`):
 * nothing writes it any more, consumers keep reading it so what it held at the upgrade still drains, and it is the
 * base the tenant streams and the registry are named after (and the `stream` label of the metrics).
 *
 * Each stream is capped (maxLen, about a million entries) so Redis memory stays bounded, which means a consumer must
 * not fall further behind than that on any one tenant.
 */
export function eventStream(prefix: string, producer: string, tenantId?: string): string {
  const base = `${prefix}:events:${producer}`;
  return tenantId === undefined ? base : tenantStream(base, tenantId);
}

/** A tenant's stream of a producer whose (pre-upgrade, shared) stream is `base`. */
export function tenantStream(base: string, tenantId: string): string {
  return `${base}:${tenantId}`;
}

/**
 * The Redis SET naming every tenant stream of the producer whose shared stream is `base`: consumers discover tenants
 * from it (SCAN over the keyspace would be slow and cross-prefix). A `#` cannot clash with a tenant stream's `:<id>`.
 */
export function streamRegistry(base: string): string {
  return `${base}#streams`;
}

/** The streams a producer's events are on: the pre-upgrade shared stream first (its events are older), then every registered tenant stream. */
export async function producerStreams(redis: RedisClient, base: string, tenantId?: string): Promise<string[]> {
  if (tenantId !== undefined) return [base, tenantStream(base, tenantId)];
  return [base, ...(await redis.smembers(streamRegistry(base))).sort()];
}

/** Redis stream entry fields; `data` is JSON. */
export interface StreamEvent {
  id: string;
  type: string;
  tenantId: string;
  occurredAt: string;
  data: string;
}

/**
 * The relay index is cross-tenant by design (it drains every tenant's outbox): the one index in the
 * domain databases that does not start with tenantId.
 */
export async function ensureOutboxIndex<D extends OutboxDocument>(collection: Collection<D>): Promise<void> {
  await collection.createIndex({ 'outbox.id': 1 }, { name: 'outbox_pending', sparse: true });
}

export interface OutboxRelayOptions<D extends OutboxDocument> {
  collection: Collection<D>;
  redis: RedisClient;
  /** The producer's base stream (eventStream(prefix, producer)); each tenant's events go to tenantStream(stream, tenantId). */
  stream: string;
  logger: Logger;
  /** The event body for an entry: its own `data`, or something derived from the document. */
  dataOf(doc: D, entry: OutboxEntry): Record<string, unknown>;
  batchSize?: number;
  idleMs?: number;
  /** Approximate cap on each tenant stream's length, so Redis memory stays bounded. */
  maxLen?: number;
  /**
   * Replicas that must hold an event before it leaves the outbox (WAIT after the XADDs; default 0). Replication is
   * asynchronous: a master that fails right after answering an XADD takes the entry with it unless a replica had it,
   * and a removed outbox entry could not be published again.
   */
  replicasToAcknowledge?: number;
}

/** How long the relay waits for replicas (replicasToAcknowledge) before the round fails and is published again. */
const REPLICA_WAIT_MS = 2_000;

/** Reads that serve clients leave pending events out: they can be large and are not the client's business. */
export const withoutOutbox = { projection: { outbox: 0 } } as const;

/** Moves outbox entries to their tenant's Redis stream: XADD first, then remove them from their documents. */
export class OutboxRelay<D extends OutboxDocument> {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private failing = false;

  constructor(private readonly options: OutboxRelayOptions<D>) {}

  /** Publishes one batch; returns how many events went out. */
  async drainOnce(): Promise<number> {
    const { collection, redis, stream, batchSize = 500, maxLen = 1_000_000 } = this.options;
    // Majority-committed documents only: an event must never describe a write that a failover could roll back.
    const pending = (await collection
      .find({ 'outbox.id': { $exists: true } } as never, { limit: batchSize, readConcern: { level: 'majority' } })
      .toArray()) as unknown as D[];
    if (pending.length === 0) return 0;
    const { replicasToAcknowledge = 0 } = this.options;
    // Registered before the XADD (Redis runs one connection's commands in order; a cluster keeps the registry on
    // another node, so there it is awaited first), so no tenant stream can exist without consumers finding it. A failed
    // SADD fails the round: the entries stay in the outbox and are published (and registered) again.
    const registry = streamRegistry(stream);
    const streams = [...new Set(pending.map((doc) => tenantStream(stream, doc.tenantId)))];
    const cluster = isCluster(redis);
    if (cluster) await redis.sadd(registry, ...streams);
    // One pipeline per tenant stream on a cluster (each its own slot), so WAIT asks the node that took its XADDs.
    const pipelines = new Map<string, ChainableCommander>();
    const shared = cluster ? null : redis.pipeline();
    if (shared) for (const member of streams) shared.sadd(registry, member);
    const pipelineOf = (key: string) => {
      if (shared) return shared;
      const existing = pipelines.get(key) ?? redis.pipeline();
      pipelines.set(key, existing);
      return existing;
    };
    let count = 0;
    for (const doc of pending) {
      for (const entry of doc.outbox!) {
        const event: StreamEvent = {
          id: entry.id,
          type: entry.type,
          tenantId: doc.tenantId,
          occurredAt: entry.occurredAt.toISOString(),
          data: JSON.stringify(this.options.dataOf(doc, entry)),
        };
        const key = tenantStream(stream, doc.tenantId);
        pipelineOf(key).xadd(key, 'MAXLEN', '~', String(maxLen), '*', ...Object.entries(event).flat());
        count++;
      }
    }
    const batches = shared ? [shared] : [...pipelines.values()];
    if (replicasToAcknowledge > 0) for (const batch of batches) batch.wait(replicasToAcknowledge, REPLICA_WAIT_MS);
    const replies = await Promise.all(batches.map(async (batch) => (await batch.exec()) ?? []));
    const failed = replies.flat().find(([err]) => err);
    if (failed) throw failed[0];
    if (replicasToAcknowledge > 0) {
      const fewest = Math.min(...replies.map((reply) => Number(reply[reply.length - 1]?.[1])));
      if (!(fewest >= replicasToAcknowledge))
        throw new Error(`events reached ${fewest} of ${replicasToAcknowledge} replicas within ${REPLICA_WAIT_MS} ms; they stay in the outbox`);
    }
    // Only the entries just published are removed; entries added meanwhile stay for the next round.
    await collection.bulkWrite(
      pending.map((doc) => ({
        updateOne: { filter: { _id: doc._id } as never, update: { $pull: { outbox: { id: { $in: doc.outbox!.map((e) => e.id) } } } } as never },
      })),
      { ordered: false },
    );
    return count;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const { idleMs = 200, batchSize = 500, logger } = this.options;
    this.loop = (async () => {
      while (this.running) {
        let published = 0;
        try {
          published = await this.drainOnce();
          if (this.failing) logger.warn({ stream: this.options.stream }, 'event relay recovered');
          this.failing = false;
        } catch (err) {
          if (!this.failing) logger.error({ err: (err as Error).message, stream: this.options.stream }, 'event relay failing; events stay in the outbox');
          this.failing = true;
        }
        if (published < batchSize && this.running) {
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, this.failing ? idleMs * 10 : idleMs);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
          });
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }
}
