import os from 'node:os';
import type { Collection, Db } from 'mongodb';
import type { Logger } from '../logger';
import { commandPerKey, isCluster, redisReady, type RedisClient } from '../redis';
import { restAfter } from '../fair-share';
import { producerStreams, streamRegistry, type StreamEvent } from './outbox';

/**
 * The consuming side of domain events: a Redis Streams consumer group per subgraph, at-least-once
 * delivery (an entry is acknowledged only after its handler finished), recovery of entries a dead
 * consumer left pending (XAUTOCLAIM), a dead-letter record for events that cannot be applied, and
 * a replay of everything a stream still holds for rebuilding projections.
 *
 * Fairness between tenants: every tenant has its own stream (lib/events/outbox.ts), and each read takes at most
 * batchSize entries of each stream, handled as one batch per stream, several at a time. So a tenant's backlog delays
 * another tenant's event by at most one batch of each tenant with work, never by the whole backlog.
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
  redis: RedisClient;
  /**
   * The producers' streams, as eventStream(prefix, producer) names them: the consumer reads each of them (events
   * published before per-tenant streams still drain) and every tenant stream its registry (streamRegistry) lists,
   * including tenants that appear while it runs.
   */
  streams: readonly string[];
  /** The consumer group: one per consuming subgraph, so each subgraph sees every event once. */
  group: string;
  handle: EventBatchHandler;
  /** Where events that cannot be applied are recorded (the consumer's own database). */
  db: Db;
  logger: Logger;
  /**
   * Entries read from each stream per read (XREADGROUP's COUNT applies per stream), and so the fairness bound:
   * another tenant's event waits for at most one batch of this many events of each tenant with work.
   */
  batchSize?: number;
  /**
   * Up to this many entries of a stream in one batch when its read came back full (a backlog) and there are handling
   * slots to spare: with fewer streams busy than slots, no other tenant's batch can be waiting for one, so a larger
   * batch delays nobody and costs its handler's per-batch reads once instead of once per batchSize. Default: batchSize
   * (off).
   */
  backlogBatchSize?: number;
  /** Streams named in one XREADGROUP; more tenants than this are read chunk by chunk, starting at another chunk each round. */
  streamsPerRead?: number;
  /** Batches (each one stream's entries) handled at once, so a slow batch holds neither the other tenants nor the loop. */
  concurrency?: number;
  blockMs?: number;
  /** Entries another consumer has held unacknowledged this long are taken over (it probably died). */
  claimIdleMs?: number;
  /** Tries per event before it is dead-lettered. */
  attempts?: number;
  /**
   * After a batch that took d ms, its stream is not read again for d × restRatio ms (default 0), while the other
   * streams are: a tenant's backlog keeps the handler (and the database) busy at most 1 / (1 + restRatio) of the time,
   * leaving room for every other tenant's requests.
   */
  restRatio?: number;
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

/**
 * Consumer group `group`'s lag and pending count in a stream's XINFO GROUPS reply; null when the group has not joined
 * the stream. lag is null when Redis cannot tell (entries deleted mid-stream).
 */
export function consumerGroupInfo(reply: unknown, group: string): { lag: number | null; pending: number } | null {
  for (const fields of reply as unknown[][]) {
    const info: Record<string, unknown> = {};
    for (let i = 0; i + 1 < fields.length; i += 2) info[String(fields[i])] = fields[i + 1];
    if (info['name'] === group) return { lag: typeof info['lag'] === 'number' ? info['lag'] : null, pending: Number(info['pending'] ?? 0) };
  }
  return null;
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
/** Per stream, per read: the fairness bound (see StreamConsumerOptions.batchSize). */
const DEFAULT_BATCH_SIZE = 100;
const DEFAULT_STREAMS_PER_READ = 200;
/** Batches read ahead per handling slot (see dispatch). */
const QUEUED_BATCHES_PER_SLOT = 4;
const DEFAULT_CONCURRENCY = 4;
/** XAUTOCLAIM costs one command per stream: sweeping once a second (not every poll) keeps thousands of tenants cheap. */
const CLAIM_SWEEP_MS = 1_000;
/** While batches run and nothing else was read, how soon to look again (a blocking read would hold the loop). */
const BUSY_POLL_MS = 50;
/** How soon to try again after a read failed (Redis away, a cluster master failing over). */
const FAILURE_RETRY_MS = 500;

/** What handling one stream's batch came to; never a rejection, because the loop does not await every batch. */
interface BatchResult {
  handled: number;
  error?: unknown;
}

/** The values of a batch of commands; the first failure, if any, is thrown. */
function okResults(results: readonly [Error | null, unknown][]): unknown[] {
  const failed = results.find(([err]) => err);
  if (failed) throw failed[0];
  return results.map(([, value]) => value);
}

function chunks<T>(items: readonly T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

export class StreamConsumer {
  private running = false;
  private stopping = false;
  private loop: Promise<void> | null = null;
  private readonly consumer = `${os.hostname()}-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  private readonly deadLetters: Collection<DeadLetter>;
  private failing = false;
  /** Every stream read, base streams first, then tenant streams in registry order. */
  private streamList: string[] = [];
  /** Streams whose group this consumer has made sure of. */
  private readonly grouped = new Set<string>();
  /** Registry sizes at the last SMEMBERS: tenant streams are only ever added, so an unchanged size means nothing new. */
  private readonly registrySizes = new Map<string, number>();
  private rotation = 0;
  private lastClaimSweep = 0;
  /** A stream's batch being handled (or waiting for a slot): its stream is not read again until it is acknowledged. */
  private readonly inFlight = new Map<string, Promise<BatchResult>>();
  /** Streams resting after a batch (restRatio), until when. */
  private readonly restingUntil = new Map<string, number>();
  private active = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(private readonly options: StreamConsumerOptions) {
    this.deadLetters = options.db.collection<DeadLetter>(DEAD_LETTERS_COLLECTION);
  }

  /** Creates the group on every stream known now; later tenant streams get theirs when a poll finds them. */
  async ensureGroups(): Promise<void> {
    await this.refreshStreams(true);
  }

  /** The streams this consumer reads, as of its last poll. */
  get streams(): readonly string[] {
    return this.streamList;
  }

  private async refreshStreams(force = false): Promise<void> {
    const { redis, streams, group } = this.options;
    const registries = streams.map(streamRegistry);
    // SCARD is O(1); SMEMBERS (which grows with the tenants) only when a registry grew.
    const sizes = okResults(await commandPerKey(redis, registries, (p, registry) => p.scard(registry)));
    const grew = registries.some((registry, i) => this.registrySizes.get(registry) !== sizes[i]);
    if (force || grew || this.streamList.length === 0) {
      const members = okResults(await commandPerKey(redis, registries, (p, registry) => p.smembers(registry)));
      const tenantStreams = (members as string[][]).flatMap((m) => [...m].sort());
      this.streamList = [...new Set([...streams, ...tenantStreams])];
      registries.forEach((registry, i) => this.registrySizes.set(registry, sizes[i] as number));
    }
    const missing = this.streamList.filter((stream) => !this.grouped.has(stream));
    if (missing.length === 0) return;
    // From the start of the stream: a new group (or a tenant's first stream) first catches up on everything kept.
    const created = await commandPerKey(redis, missing, (p, stream) => p.xgroup('CREATE', stream, group, '0', 'MKSTREAM'));
    // A stream whose server failed is tried again next round; the others are settled.
    let failed: Error | null = null;
    for (const [i, [err]] of created.entries()) {
      if (err && !String(err.message).includes('BUSYGROUP')) failed ??= err;
      else this.grouped.add(missing[i]!);
    }
    if (failed) throw failed;
  }

  /**
   * Reads what there is and starts handling it, one batch per stream, without waiting for the batches: takes over
   * abandoned entries (at most once a second), then reads up to batchSize entries of every stream not already being
   * handled. Blocks for new entries only when nothing was found and nothing is being handled.
   */
  private async dispatch(blockMs: number): Promise<{ launched: Promise<BatchResult>[]; failures: unknown[] }> {
    const { redis, group, batchSize = DEFAULT_BATCH_SIZE, claimIdleMs = 30_000, streamsPerRead = DEFAULT_STREAMS_PER_READ } = this.options;
    // On a cluster the streams live on several masters: one that fails (a failover under way) holds back its own
    // streams, not the others'. What failed is reported beside what was launched.
    const failures: unknown[] = [];
    try {
      await this.refreshStreams();
    } catch (err) {
      // The registry's server is away: the streams known already are read all the same.
      if (this.streamList.length === 0) throw err;
      failures.push(err);
    }
    const launched: Promise<BatchResult>[] = [];
    if (Date.now() - this.lastClaimSweep >= Math.min(claimIdleMs, CLAIM_SWEEP_MS)) {
      this.lastClaimSweep = Date.now();
      // Not the streams being handled here: their entries are ours, and may well be idle longer than claimIdleMs.
      const sweep = this.streamList.filter((stream) => !this.inFlight.has(stream));
      const claimed = await commandPerKey(redis, sweep, (p, stream) => p.xautoclaim(stream, group, this.consumer, claimIdleMs, '0-0', 'COUNT', batchSize));
      for (const [i, [err, result]] of claimed.entries()) {
        if (err) {
          failures.push(err);
          continue;
        }
        const entries = ((result as [string, RawEntry[]])[1] ?? []).filter((e): e is RawEntry => Array.isArray(e) && Array.isArray(e[1]));
        if (entries.length > 0) launched.push(this.launch(sweep[i]!, entries));
      }
    }
    const now = Date.now();
    let restEnds = Infinity;
    for (const [stream, until] of this.restingUntil) {
      if (until <= now) this.restingUntil.delete(stream);
      else restEnds = Math.min(restEnds, until);
    }
    // A read that blocks wakes when the first resting stream may be read again (whole milliseconds: Redis's BLOCK).
    blockMs = Math.max(1, Math.ceil(Math.min(blockMs, restEnds - now)));
    const idle = this.streamList.filter((stream) => !this.inFlight.has(stream) && !this.restingUntil.has(stream));
    // Only as many streams as there is room for batches: a batch read is pending (delivered) at once, and one that waited
    // here past claimIdleMs would be taken over and handled again by another replica. The streams read take turns (the
    // rotation), so every tenant with work still gets a batch per cycle and a new event waits behind at most one batch
    // of each other busy tenant.
    const room = Math.max(0, (this.options.concurrency ?? DEFAULT_CONCURRENCY) * QUEUED_BATCHES_PER_SLOT - this.inFlight.size);
    const start = idle.length > 0 ? this.rotation % idle.length : 0;
    const chosen = [...idle.slice(start), ...idle.slice(0, start)].slice(0, room);
    this.rotation = idle.length > 0 ? start + chosen.length : 0;
    const found: [string, RawEntry[]][] = [];
    if (isCluster(redis)) {
      // Every tenant stream hashes to its own slot: one XREADGROUP per stream, all sent at once, none blocking (a
      // blocked read would hold one node's answer while the others' events wait).
      const reads = await Promise.allSettled(chosen.map((stream) => this.readGroup([stream], batchSize)));
      for (const read of reads) {
        if (read.status === 'fulfilled') found.push(...read.value);
        else failures.push(read.reason);
      }
      if (launched.length === 0 && found.length === 0 && this.inFlight.size === 0) await new Promise((resolve) => setTimeout(resolve, blockMs));
    } else {
      const parts = chunks(chosen, streamsPerRead);
      // Every stream resting and nothing being handled: wait for the first rest to end rather than spin.
      if (parts.length === 0 && launched.length === 0 && this.inFlight.size === 0) await new Promise((resolve) => setTimeout(resolve, blockMs));
      for (let n = 0; n < parts.length; n++) {
        const block = n === parts.length - 1 && launched.length === 0 && found.length === 0 && this.inFlight.size === 0 ? blockMs : undefined;
        found.push(...(await this.readGroup(parts[n]!, batchSize, block)));
      }
    }
    // Spare slots after this read: the streams found full take more of their backlog into the same batch.
    const backlogBatchSize = this.options.backlogBatchSize ?? batchSize;
    const concurrency = this.options.concurrency ?? DEFAULT_CONCURRENCY;
    if (backlogBatchSize > batchSize && this.inFlight.size + found.length < concurrency) {
      const full = found.filter(([, entries]) => entries.length >= batchSize);
      if (full.length > 0) {
        const streams = full.map(([stream]) => stream);
        // More of a backlog is a bonus: a stream whose server fails meanwhile keeps the batch it has.
        const more = isCluster(redis)
          ? (await Promise.all(streams.map((stream) => this.readGroup([stream], backlogBatchSize - batchSize).catch(() => [])))).flat()
          : await this.readGroup(streams, backlogBatchSize - batchSize);
        const byStream = new Map(more);
        for (const [stream, entries] of full) entries.push(...(byStream.get(stream) ?? []));
      }
    }
    for (const [stream, entries] of found) launched.push(this.launch(stream, entries));
    return { launched, failures };
  }

  /**
   * New entries of `streams` for this consumer, up to `count` per stream (XREADGROUP: the streams must share a hash
   * slot on a cluster); `blockMs` waits that long for one when there is none.
   */
  private async readGroup(streams: readonly string[], count: number, blockMs?: number): Promise<[string, RawEntry[]][]> {
    const { redis, group } = this.options;
    const block = blockMs === undefined ? [] : ['BLOCK', blockMs];
    const read = (await redis.xreadgroup(
      'GROUP',
      group,
      this.consumer,
      'COUNT',
      count,
      ...(block as ['BLOCK', number]),
      'STREAMS',
      ...streams,
      ...streams.map(() => '>'),
    )) as [string, RawEntry[]][] | null;
    return (read ?? []).filter(([, entries]) => entries.length > 0);
  }

  /** Handles one stream's batch when a slot is free; its stream stays out of reads until the batch is acknowledged. */
  private launch(stream: string, entries: readonly RawEntry[]): Promise<BatchResult> {
    const task = (async (): Promise<BatchResult> => {
      await this.acquire();
      try {
        // Stopping: a batch not started yet stays pending (XAUTOCLAIM hands it on), so shutdown waits only for the
        // batches being handled, not for one queued batch per tenant.
        if (this.stopping) return { handled: 0 };
        const started = performance.now();
        const handled = await this.apply(stream, entries);
        // Whole milliseconds: the rest bounds XREADGROUP's BLOCK, which Redis takes only as an integer.
        const rest = restAfter(performance.now() - started, this.options.restRatio ?? 0);
        if (rest > 0) this.restingUntil.set(stream, Date.now() + rest);
        return { handled };
      } catch (error) {
        return { handled: 0, error };
      } finally {
        this.release();
        this.inFlight.delete(stream);
      }
    })();
    this.inFlight.set(stream, task);
    return task;
  }

  private async acquire(): Promise<void> {
    if (this.active < (this.options.concurrency ?? DEFAULT_CONCURRENCY)) {
      this.active++;
      return;
    }
    // First come, first served: a tenant's batch waits for at most the batches queued before it.
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    if (next) next();
    else this.active--;
  }

  /** One round: take over abandoned entries, read new ones, apply, acknowledge. Returns entries handled. */
  async pollOnce(blockMs = this.options.blockMs ?? DEFAULT_BLOCK_MS): Promise<number> {
    const { launched, failures } = await this.dispatch(blockMs);
    const results = await Promise.all(launched);
    const failed = [...failures, ...results.filter((r) => r.error !== undefined).map((r) => r.error)];
    if (failed.length > 0) throw failed[0];
    return results.reduce((sum, r) => sum + r.handled, 0);
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

  private noteFailure(...errors: unknown[]): void {
    const { logger, group } = this.options;
    const messages = errors.map((err) => (err instanceof Error ? err.message : String(err)));
    if (!this.failing) logger.error({ err: messages[0], failures: messages.length, group }, 'event consumer failing; retrying');
    this.failing = true;
    // A group deleted under us (a stream deleted, or a failover that lost its creation) is created again next round.
    if (messages.some((message) => message.includes('NOGROUP'))) this.grouped.clear();
  }

  /**
   * Starts the loop; it creates the groups once Redis answers, and retries whatever fails. Batches run beside the
   * loop, so a slow one (a tenant's large recomputation) does not stop the other tenants' streams being read and
   * handled; a batch that fails before its XACK stays pending and is taken over after claimIdleMs.
   */
  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.stopping = false;
    const { logger, group, blockMs = DEFAULT_BLOCK_MS } = this.options;
    this.loop = (async () => {
      while (this.running) {
        try {
          // The client fails fast while disconnected; wait for it rather than log a failure at start-up.
          await redisReady(this.options.redis);
          const { launched, failures } = await this.dispatch(blockMs);
          for (const task of launched) void task.then(({ error }) => error !== undefined && this.running && this.noteFailure(error));
          if (this.inFlight.size > 0 && launched.length === 0) {
            // Wake when a batch is done (its stream may hold more) or soon anyway (another tenant may have an event).
            let timer: NodeJS.Timeout | undefined;
            await Promise.race([...this.inFlight.values(), new Promise<void>((resolve) => (timer = setTimeout(resolve, BUSY_POLL_MS)))]);
            clearTimeout(timer);
          }
          if (failures.length > 0) {
            // Some streams' server failed; the others' batches were launched and go on.
            this.noteFailure(...failures);
            if (launched.length === 0) await new Promise((r) => setTimeout(r, FAILURE_RETRY_MS));
            continue;
          }
          if (this.failing) logger.warn({ group }, 'event consumer recovered');
          this.failing = false;
        } catch (err) {
          if (!this.running) break;
          this.noteFailure(err);
          await new Promise((r) => setTimeout(r, FAILURE_RETRY_MS));
        }
      }
      // Stopping lets the batches being handled finish and be acknowledged; queued ones return at once (see launch).
      await Promise.all(this.inFlight.values());
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping = this.loop !== null;
    await this.loop;
    this.stopping = false;
  }
}

/**
 * Everything the producers' streams still hold, stream by stream in stream order, through `handle` — for a rebuild.
 * Reads with XRANGE, so no consumer group's position moves. `streams` are base streams (eventStream(prefix, producer)):
 * each is replayed with its tenant streams. `tenantId` limits the replay to that tenant's stream (and its events in the
 * pre-upgrade shared stream); without it every registered tenant stream is replayed.
 */
export async function replayStreams(
  redis: RedisClient,
  streams: readonly string[],
  handle: EventBatchHandler,
  options: { tenantId?: string; pageSize?: number; logger?: Logger } = {},
): Promise<{ events: number; skipped: number }> {
  const pageSize = options.pageSize ?? 1_000;
  let events = 0;
  let skipped = 0;
  const expanded: string[] = [];
  for (const base of streams) expanded.push(...(await producerStreams(redis, base, options.tenantId)));
  for (const stream of expanded) {
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
