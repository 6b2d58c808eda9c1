import os from 'node:os';
import type Redis from 'ioredis';
import type { Collection, Db } from 'mongodb';
import type { Logger } from '../logger';
import { redisReady } from '../redis';
import type { StreamEvent } from './outbox';

/**
 * The consuming side of domain events: a Redis Streams consumer group per subgraph, at-least-once
 * delivery (an entry is acknowledged only after its handler finished), recovery of entries a dead
 * consumer left pending (XAUTOCLAIM), a dead-letter record for events that cannot be applied, and
 * a replay of everything a stream still holds for rebuilding projections.
 *
 * Handlers must be idempotent: the same event can arrive twice (a crash between the handler and the
 * XACK, a replay), and events of different streams arrive in no particular order.
 */
export interface DomainEvent<T = Record<string, unknown>> {
  /** The event id (dedupe on this), not the stream entry id. */
  id: string;
  type: string;
  tenantId: string;
  occurredAt: Date;
  data: T;
  stream: string;
  /** The Redis stream entry id, e.g. 1700000000000-0. */
  entryId: string;
}

/** Applies a batch of events; events of one batch may be grouped (e.g. one recomputation per segment). */
export type EventBatchHandler = (events: readonly DomainEvent[]) => Promise<void>;

export interface DeadLetter {
  _id: string;
  tenantId: string | null;
  stream: string;
  entryId: string;
  type: string | null;
  error: string;
  fields: Record<string, string>;
  failedAt: Date;
}

export const DEAD_LETTERS_COLLECTION = 'dead_letters';

export interface StreamConsumerOptions {
  redis: Redis;
  streams: readonly string[];
  /** The consumer group: one per consuming subgraph, so each subgraph sees every event once. */
  group: string;
  handle: EventBatchHandler;
  /** Where events that cannot be applied are recorded (the consumer's own database). */
  db: Db;
  logger: Logger;
  batchSize?: number;
  blockMs?: number;
  /** Entries another consumer has held unacknowledged this long are taken over (it probably died). */
  claimIdleMs?: number;
  /** Tries per event before it is dead-lettered. */
  attempts?: number;
}

/** Parses a stream entry's flat field list; throws on entries that are not domain events. */
export function parseStreamEntry(stream: string, entryId: string, flat: readonly string[]): DomainEvent {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i]!] = flat[i + 1]!;
  const { id, type, tenantId, occurredAt, data } = fields as Partial<StreamEvent>;
  if (!id || !type || !tenantId || !occurredAt || data === undefined) throw new Error('not a domain event: missing id, type, tenantId, occurredAt or data');
  const parsed = JSON.parse(data) as unknown;
  if (typeof parsed !== 'object' || parsed === null) throw new Error('event data is not a JSON object');
  const when = new Date(occurredAt);
  if (Number.isNaN(when.getTime())) throw new Error('occurredAt is not a date');
  return { id, type, tenantId, occurredAt: when, data: parsed as Record<string, unknown>, stream, entryId };
}

type RawEntry = [entryId: string, fields: string[]];

function fieldsOf(flat: readonly string[]): Record<string, string> {
  const out: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[flat[i]!] = flat[i + 1]!;
  return out;
}

/**
 * How long one XREADGROUP waits for new entries. Short, because stopping waits for the read in progress (shutdown
 * must finish in a few seconds); an idle consumer costs Redis a few cheap commands a second.
 */
const DEFAULT_BLOCK_MS = 250;

export class StreamConsumer {
  private running = false;
  private loop: Promise<void> | null = null;
  private readonly consumer = `${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private readonly deadLetters: Collection<DeadLetter>;
  private failing = false;

  constructor(private readonly options: StreamConsumerOptions) {
    this.deadLetters = options.db.collection<DeadLetter>(DEAD_LETTERS_COLLECTION);
  }

  async ensureGroups(): Promise<void> {
    for (const stream of this.options.streams) {
      try {
        // From the start of the stream: a new consumer group first catches up on everything kept.
        await this.options.redis.xgroup('CREATE', stream, this.options.group, '0', 'MKSTREAM');
      } catch (err) {
        if (!String((err as Error).message).includes('BUSYGROUP')) throw err;
      }
    }
  }

  /** One round: take over abandoned entries, read new ones, apply, acknowledge. Returns entries handled. */
  async pollOnce(blockMs = this.options.blockMs ?? DEFAULT_BLOCK_MS): Promise<number> {
    const { redis, streams, group, batchSize = 500, claimIdleMs = 30_000 } = this.options;
    let handled = 0;
    for (const stream of streams) {
      const claimed = (await redis.xautoclaim(stream, group, this.consumer, claimIdleMs, '0-0', 'COUNT', batchSize)) as [string, RawEntry[], string[]?];
      const entries = (claimed[1] ?? []).filter((e): e is RawEntry => Array.isArray(e) && Array.isArray(e[1]));
      if (entries.length > 0) handled += await this.apply(stream, entries);
    }
    const read = (await redis.xreadgroup(
      'GROUP',
      group,
      this.consumer,
      'COUNT',
      batchSize,
      'BLOCK',
      blockMs,
      'STREAMS',
      ...streams,
      ...streams.map(() => '>'),
    )) as [string, RawEntry[]][] | null;
    for (const [stream, entries] of read ?? []) handled += await this.apply(stream, entries);
    return handled;
  }

  private async apply(stream: string, entries: readonly RawEntry[]): Promise<number> {
    const { redis, group, handle, logger, attempts = 3 } = this.options;
    const events: DomainEvent[] = [];
    for (const [entryId, flat] of entries) {
      try {
        events.push(parseStreamEntry(stream, entryId, flat));
      } catch (err) {
        await this.deadLetter(stream, entryId, flat, null, err);
      }
    }
    try {
      await handle(events);
    } catch (batchErr) {
      // Find the event that cannot be applied; the others still go through.
      logger.warn({ err: (batchErr as Error).message, stream, count: events.length }, 'event batch failed; applying one by one');
      for (const event of events) {
        let lastError: unknown = null;
        for (let attempt = 1; attempt <= attempts; attempt++) {
          try {
            await handle([event]);
            lastError = null;
            break;
          } catch (err) {
            lastError = err;
          }
        }
        if (lastError) {
          const flat = entries.find(([id]) => id === event.entryId)?.[1] ?? [];
          await this.deadLetter(stream, event.entryId, flat, event, lastError);
        }
      }
    }
    if (entries.length > 0) await redis.xack(stream, group, ...entries.map(([id]) => id));
    return entries.length;
  }

  private async deadLetter(stream: string, entryId: string, flat: readonly string[], event: DomainEvent | null, err: unknown): Promise<void> {
    const fields = fieldsOf(flat);
    const message = err instanceof Error ? err.message : String(err);
    this.options.logger.error({ stream, entryId, eventId: fields['id'], type: fields['type'], err: message }, 'event dead-lettered: it cannot be applied');
    await this.deadLetters.updateOne(
      { _id: `${stream}:${entryId}` },
      {
        $set: {
          tenantId: event?.tenantId ?? fields['tenantId'] ?? null,
          stream,
          entryId,
          type: event?.type ?? fields['type'] ?? null,
          error: message.slice(0, 2_000),
          fields,
          failedAt: new Date(),
        },
      },
      { upsert: true },
    );
  }

  /** Starts the loop; it creates the groups once Redis answers, and retries whatever fails. */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    const { logger, group } = this.options;
    let grouped = false;
    this.loop = (async () => {
      while (this.running) {
        try {
          // The client fails fast while disconnected; wait for it rather than log a failure at start-up.
          await redisReady(this.options.redis);
          if (!grouped) {
            await this.ensureGroups();
            grouped = true;
          }
          await this.pollOnce();
          if (this.failing) logger.warn({ group }, 'event consumer recovered');
          this.failing = false;
        } catch (err) {
          if (!this.running) break;
          if (!this.failing) logger.error({ err: (err as Error).message, group }, 'event consumer failing; retrying');
          this.failing = true;
          // A group deleted under us (e.g. a stream trimmed away) is created again on the next round.
          if (String((err as Error).message).includes('NOGROUP')) grouped = false;
          await new Promise((r) => setTimeout(r, 500));
        }
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/**
 * Everything the streams still hold, in stream order, through `handle` — for a rebuild. Reads with
 * XRANGE, so no consumer group's position moves. `tenantId` limits the replay to one tenant.
 */
export async function replayStreams(
  redis: Redis,
  streams: readonly string[],
  handle: EventBatchHandler,
  options: { tenantId?: string; pageSize?: number; logger?: Logger } = {},
): Promise<{ events: number; skipped: number }> {
  const pageSize = options.pageSize ?? 1_000;
  let events = 0;
  let skipped = 0;
  for (const stream of streams) {
    let start = '-';
    for (;;) {
      const page = (await redis.xrange(stream, start, '+', 'COUNT', pageSize)) as RawEntry[];
      if (page.length === 0) break;
      const batch: DomainEvent[] = [];
      for (const [entryId, flat] of page) {
        try {
          const event = parseStreamEntry(stream, entryId, flat);
          if (!options.tenantId || event.tenantId === options.tenantId) batch.push(event);
        } catch (err) {
          skipped++;
          options.logger?.warn({ stream, entryId, err: (err as Error).message }, 'replay skipped an entry that is not a domain event');
        }
      }
      if (batch.length > 0) await handle(batch);
      events += batch.length;
      if (page.length < pageSize) break;
      start = `(${page[page.length - 1]![0]}`;
    }
  }
  return { events, skipped };
}
