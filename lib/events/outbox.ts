import { randomUUID } from 'node:crypto';
import { BroadcastChannel } from 'node:worker_threads';
import type { Collection, Document } from 'mongodb';
import { IdleBackoff } from '../idle-backoff';
import type { Logger } from '../logger';
import { keysByServer, serverName, type RedisClient } from '../redis';

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
  announceOutboxEntries();
  return { id: randomUUID(), type, occurredAt: new Date(), ...(data ? { data } : {}) };
}

/**
 * Outbox entries made in this process are announced on this channel, which reaches every thread of the process: an
 * idle relay (which looks for work less and less often, see OutboxRelayOptions.maxIdleMs) goes back to its usual pace
 * at once, wherever the write was made (the request loop, a lane, the job runner) and wherever it runs (the loop, a
 * relay thread). Entries written by another process wait for that process's relay, or for this one's next look.
 */
const OUTBOX_ENTRIES_CHANNEL = 'linepack:outbox-entries';
/** Announcements per thread at most this often: a 10,000-item batch makes 10,000 entries at once. */
const ANNOUNCE_EVERY_MS = 100;
let announcer: BroadcastChannel | null = null;
let lastAnnouncedAt = -Infinity;

function announceOutboxEntries(): void {
  const now = performance.now();
  if (now - lastAnnouncedAt < ANNOUNCE_EVERY_MS) return;
  lastAnnouncedAt = now;
  if (!announcer) {
    announcer = new BroadcastChannel(OUTBOX_ENTRIES_CHANNEL);
    announcer.unref();
  }
  announcer.postMessage(null);
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
  /** The wait between rounds while there are events to publish (default 200 ms). */
  idleMs?: number;
  /**
   * While rounds find nothing the wait doubles from idleMs up to this (default 1 s): an idle relay costs its database
   * a read a second instead of five. An outbox entry made in this process brings it back to idleMs at once.
   */
  maxIdleMs?: number;
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
/**
 * How long a server that lately fell short of replicas is asked whether they are back (a WAIT with nothing new written)
 * before anything is added to it again. Replicas acknowledge at once when asked, so this only bounds the wait for none.
 */
const REPLICA_PROBE_MS = 250;

/**
 * Documents whose published entries one update removes. One update per document made the relay's removals most of
 * what the embedded server ran during an import (jstack samples); the server updates holding the collection's lock,
 * so a slice also bounds how long another request's read of the collection waits behind the relay. Another tenant's
 * readings p99 during a 100,000-feature import (bench:fairness --phases import, one or two runs each): one document
 * 95–98 ms, 100 documents 108–112 ms, 25 documents 82–91 ms.
 */
const REMOVAL_SLICE = 25;

/** Reads that serve clients leave pending events out: they can be large and are not the client's business. */
export const withoutOutbox = { projection: { outbox: 0 } } as const;

/** What one round of the relay came to. */
interface RelayRound {
  /** Events now in their streams (and, with replicasToAcknowledge, on enough replicas), removed from the outbox. */
  published: number;
  /** Events left in the outbox for a later round, their tenants' streams, and why (the first reason met). */
  stalled: number;
  stalledStreams: number;
  reason?: string;
}

/** Thrown by drainOnce when events had to stay in the outbox; those of the other streams were published. */
export class OutboxRelayError extends Error {
  constructor(readonly round: RelayRound) {
    super(`${round.stalled} events of ${round.stalledStreams} tenant streams stay in the outbox: ${round.reason}`);
    this.name = 'OutboxRelayError';
  }
}

/**
 * Moves outbox entries to their tenant's Redis stream: XADD first, then remove them from their documents.
 *
 * Each round sends one pipeline per server holding some of its streams (one server, or each master of a cluster): the
 * registry's SADD where the registry lives, the XADDs, and with replicasToAcknowledge a WAIT, which covers exactly the
 * writes of that pipeline's connection. A server that fails or cannot confirm its replicas keeps its own tenants'
 * events in the outbox; the other servers' tenants go on.
 */
export class OutboxRelay<D extends OutboxDocument> {
  private running = false;
  private loop: Promise<void> | null = null;
  private wake: (() => void) | null = null;
  private failing = false;
  /** Servers (serverName) whose last WAIT fell short: nothing is added to them until a probe finds the replicas back. */
  private readonly shortOfReplicas = new Set<string>();
  /**
   * Tenant streams whose registration this process has seen kept (on enough replicas): their events may leave the
   * outbox while the registry's own server is failing. Every round registers its streams again all the same, which is
   * what puts back a registry a Redis restarted without persistence has lost.
   */
  private readonly registered = new Set<string>();
  /**
   * Tenants whose events could not be published, and when to try them again: until then rounds leave them out, so
   * their documents (which would come back first in every batch) do not crowd out the tenants that can be published.
   */
  private readonly stalledTenants = new Map<string, number>();

  constructor(private readonly options: OutboxRelayOptions<D>) {}

  /** Publishes one batch; returns how many events went out. Throws OutboxRelayError when some had to stay. */
  async drainOnce(): Promise<number> {
    const round = await this.round();
    if (round.stalled > 0) throw new OutboxRelayError(round);
    return round.published;
  }

  private async round(): Promise<RelayRound> {
    const { collection, redis, stream, batchSize = 500, maxLen = 1_000_000, replicasToAcknowledge = 0, idleMs = 200 } = this.options;
    const now = Date.now();
    // Tenants due for another try are back in the round (and stalled again if they fail again).
    for (const [tenantId, retryAt] of this.stalledTenants) if (retryAt <= now) this.stalledTenants.delete(tenantId);
    const waiting = [...this.stalledTenants.keys()];
    // Majority-committed documents only: an event must never describe a write that a failover could roll back.
    const pending = (await collection
      .find({ 'outbox.id': { $exists: true }, ...(waiting.length > 0 ? { tenantId: { $nin: waiting } } : {}) } as never, {
        limit: batchSize,
        readConcern: { level: 'majority' },
      })
      .toArray()) as unknown as D[];
    if (pending.length === 0) return { published: 0, stalled: 0, stalledStreams: 0 };
    const docsOf = new Map<string, D[]>();
    for (const doc of pending) {
      const key = tenantStream(stream, doc.tenantId);
      const docs = docsOf.get(key);
      if (docs) docs.push(doc);
      else docsOf.set(key, [doc]);
    }
    const streams = [...docsOf.keys()];
    // Why each stream's events stay; the registry's own failure is kept apart (it holds back unregistered streams only).
    const failed = new Map<string, string>();
    const registry = streamRegistry(stream);
    let registryFailure: string | undefined = 'not written';
    const servers = keysByServer(redis, [registry, ...streams]);
    await Promise.all(
      [...servers].map(async ([server, keys]) => {
        const fail = (reason: string) => {
          for (const key of keys) {
            if (key === registry) registryFailure = reason;
            else failed.set(key, reason);
          }
        };
        if (!server) return fail('no connection to the master serving their hash slots (a failover under way?)');
        const name = serverName(server);
        if (replicasToAcknowledge > 0 && this.shortOfReplicas.has(name)) {
          // Adding the same events to a server without replicas round after round would fill its streams with copies.
          const replicas = await server.wait(replicasToAcknowledge, REPLICA_PROBE_MS).catch(() => 0);
          if (replicas < replicasToAcknowledge) return fail(`waiting for replicas of ${name}: ${replicas} of ${replicasToAcknowledge}`);
          this.shortOfReplicas.delete(name);
        }
        // Registered before the XADDs where the registry shares their server (Redis runs one connection's commands in
        // order), so no tenant stream can exist there without consumers finding it.
        const pipeline = server.pipeline();
        const owners: (string | null)[] = [];
        if (keys.includes(registry)) {
          pipeline.sadd(registry, ...streams);
          owners.push(registry);
        }
        for (const key of keys.filter((k) => k !== registry)) {
          for (const doc of docsOf.get(key)!) {
            for (const entry of doc.outbox!) {
              const event: StreamEvent = {
                id: entry.id,
                type: entry.type,
                tenantId: doc.tenantId,
                occurredAt: entry.occurredAt.toISOString(),
                data: JSON.stringify(this.options.dataOf(doc, entry)),
              };
              pipeline.xadd(key, 'MAXLEN', '~', String(maxLen), '*', ...Object.entries(event).flat());
              owners.push(key);
            }
          }
        }
        if (replicasToAcknowledge > 0) pipeline.wait(replicasToAcknowledge, REPLICA_WAIT_MS);
        let replies: [Error | null, unknown][];
        try {
          replies = ((await pipeline.exec()) ?? []) as [Error | null, unknown][];
        } catch (err) {
          return fail((err as Error).message);
        }
        if (replicasToAcknowledge > 0) {
          const replicas = Number(replies[owners.length]?.[1]);
          if (!(replicas >= replicasToAcknowledge)) {
            this.shortOfReplicas.add(name);
            return fail(`${name} reached ${replicas} of ${replicasToAcknowledge} replicas within ${REPLICA_WAIT_MS} ms`);
          }
        }
        owners.forEach((owner, i) => {
          const err = replies[i]?.[0];
          if (!err) return;
          if (owner === registry) registryFailure = err.message;
          else if (owner !== null && !failed.has(owner)) failed.set(owner, err.message);
        });
        if (keys.includes(registry) && !replies[0]?.[0]) registryFailure = undefined;
      }),
    );
    if (registryFailure === undefined) for (const key of streams) this.registered.add(key);
    else for (const key of streams) if (!this.registered.has(key) && !failed.has(key)) failed.set(key, `not registered: ${registryFailure}`);
    const kept = streams.filter((key) => !failed.has(key));
    const keptDocs = kept.flatMap((key) => docsOf.get(key)!);
    // Only the entries just published are removed; entries added meanwhile stay for the next round.
    // One update per slice of documents, not one per document: entry ids are unique, so pulling a slice's published
    // ids from each of its documents removes exactly what went out (one command instead of a hundred for the server).
    for (let start = 0; start < keptDocs.length; start += REMOVAL_SLICE) {
      const slice = keptDocs.slice(start, start + REMOVAL_SLICE);
      await collection.updateMany(
        { _id: { $in: slice.map((doc) => doc._id) } } as never,
        { $pull: { outbox: { id: { $in: slice.flatMap((doc) => doc.outbox!.map((e) => e.id)) } } } } as never,
      );
    }
    for (const key of kept) this.stalledTenants.delete(docsOf.get(key)![0]!.tenantId);
    for (const key of failed.keys()) this.stalledTenants.set(docsOf.get(key)![0]!.tenantId, now + idleMs * 10);
    const events = (key: string) => docsOf.get(key)!.reduce((sum, doc) => sum + doc.outbox!.length, 0);
    return {
      published: kept.reduce((sum, key) => sum + events(key), 0),
      stalled: [...failed.keys()].reduce((sum, key) => sum + events(key), 0),
      stalledStreams: failed.size,
      ...(failed.size > 0 ? { reason: [...failed.values()][0] } : {}),
    };
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const { idleMs = 200, maxIdleMs = 1_000, batchSize = 500, logger } = this.options;
    const backoff = new IdleBackoff(idleMs, Math.max(idleMs, maxIdleMs));
    /** Ends the wait under way, unless it is a failing round's. */
    let pacedWait: (() => void) | null = null;
    /** An entry was announced while a round ran: it may have been written after the round read the outbox. */
    let announcedDuringRound = false;
    const announcements = new BroadcastChannel(OUTBOX_ENTRIES_CHANNEL);
    announcements.unref();
    announcements.onmessage = () => {
      backoff.busy();
      if (pacedWait) pacedWait();
      else announcedDuringRound = true;
    };
    this.loop = (async () => {
      while (this.running) {
        let round: RelayRound;
        announcedDuringRound = false;
        try {
          round = await this.round();
        } catch (err) {
          // MongoDB failed (reading the outbox or removing published entries): everything stays for the next round.
          round = { published: 0, stalled: 1, stalledStreams: 0, reason: (err as Error).message };
        }
        // Failing until every tenant's events go out again (a round that left the stalled tenants out is not a recovery).
        const failing = round.stalled > 0 || this.stalledTenants.size > 0;
        if (failing && !this.failing)
          logger.error({ err: round.reason, stream: this.options.stream, stalled: round.stalled }, 'event relay failing; events stay in the outbox');
        if (!failing && this.failing) logger.warn({ stream: this.options.stream }, 'event relay recovered');
        this.failing = failing;
        // An announcement ends the wait; one that came while the round ran (its entry perhaps written after the round's
        // read) ends the wait after it before it begins. Lost, the entry would wait out a whole wait.
        if (announcedDuringRound && round.stalled === 0) continue;
        if (round.published + round.stalled < batchSize && this.running) {
          let waitMs: number;
          if (round.published === 0 && round.stalled === 0) waitMs = backoff.idle();
          else {
            backoff.busy();
            // Slower while nothing goes out at all; while other tenants still publish, at the usual pace.
            waitMs = round.published === 0 ? idleMs * 10 : idleMs;
          }
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, waitMs);
            this.wake = () => {
              clearTimeout(timer);
              resolve();
            };
            // Not while failing: the failing tenants' documents would only be read again, and fail again.
            if (round.stalled === 0) pacedWait = this.wake;
          });
          pacedWait = null;
        }
      }
      announcements.close();
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.wake?.();
    await this.loop;
  }
}
