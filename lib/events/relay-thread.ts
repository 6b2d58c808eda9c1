import type { MessagePort } from 'node:worker_threads';
import type { Collection } from 'mongodb';
import type { Logger } from '../logger';
import { watchOutbox, watchRedisReady } from '../metrics';
import type { RedisClient, RedisTarget } from '../redis';
import { BackgroundThread, type ThreadEntry } from '../threads';
import { activeTracing } from '../tracing';
import type { OutboxDocument, OutboxEntry } from './outbox';
import { countOutboxPending, relayRedisClientName, runOutboxRelay, type RelayHost } from './relay-process';

/**
 * A subgraph's outbox relays on a worker thread of their own, each with its own MongoDB and Redis clients. A relay
 * round reads up to 500 documents, builds their events and pipelines them to Redis: on the measurements subgraph's
 * loop, during a 100,000-feature ILI import, that held the loop up to 190 ms at a time (28 % of it over the import;
 * `bench:fairness --cpu-prof`), and every other tenant's request to the subgraph waited behind it. On a thread the
 * rounds are as before (same batches, same order, same removal of published entries); the loop keeps the metrics:
 * the outbox's pending count (its own query) and the relay's Redis health (which the thread reports).
 */

export type RelayThreadMessage = { type: 'stop' };
/** `relay`: the relay's place in the list both sides were given (two relays may publish to one stream). */
export type RelayThreadReport = { type: 'redis-ready'; relay: number; ready: boolean };

/** A stopping relay finishes its round (a few hundred milliseconds at most) before its thread is terminated. */
const STOP_GRACE_MS = 10_000;

export class OutboxRelayThread extends BackgroundThread<RelayThreadReport> {
  private readonly unwatch: (() => void)[];

  constructor(entry: ThreadEntry, workerData: unknown, logger: Logger, outboxes: readonly Pick<ThreadRelay, 'collection' | 'stream'>[]) {
    /** Each relay's Redis client as the thread last reported it; none while no thread runs. */
    const ready = new Map<number, boolean>();
    super({
      what: 'the outbox relay thread',
      meanwhile: 'events wait in the outbox until it runs',
      entry,
      workerData,
      logger,
      stopMessage: { type: 'stop' } satisfies RelayThreadMessage,
      stopGraceMs: STOP_GRACE_MS,
      onMessage: (report) => ready.set(report.relay, report.ready),
      // A dead thread's clients are gone: down until the next thread reports its own.
      onExit: () => ready.clear(),
    });
    this.unwatch = outboxes.flatMap(({ collection, stream }, relay) => [
      watchOutbox(stream, countOutboxPending(collection)),
      watchRedisReady(relayRedisClientName(stream), () => ready.get(relay) ?? false),
    ]);
  }

  override async stop(): Promise<void> {
    for (const stop of this.unwatch) stop();
    await super.stop();
  }
}

/** One relay a thread runs: a collection (on the thread's own client), its stream and its events' data. */
export interface ThreadRelay {
  collection: Collection<OutboxDocument>;
  stream: string;
  dataOf: (doc: OutboxDocument, entry: OutboxEntry) => Record<string, unknown>;
}

/** A relay of a collection of `D`s, as a thread runs every relay (the documents it reads are that collection's). */
export function threadRelay<D extends OutboxDocument>(
  collection: Collection<D>,
  stream: string,
  dataOf: (doc: D, entry: OutboxEntry) => Record<string, unknown>,
): ThreadRelay {
  return {
    collection: collection as unknown as Collection<OutboxDocument>,
    stream,
    dataOf: dataOf as (doc: OutboxDocument, entry: OutboxEntry) => Record<string, unknown>,
  };
}

/** The thread's side: runs `relays` until the subgraph stops it, then `close`s what it opened (its MongoDB client). */
export function runOutboxRelayThread(
  port: MessagePort,
  host: RelayHost & { redisUrl: RedisTarget },
  relays: readonly ThreadRelay[],
  close: () => Promise<void>,
): void {
  const report = (relay: number, redis: RedisClient) => {
    const post = () => port.postMessage({ type: 'redis-ready', relay, ready: redis.status === 'ready' } satisfies RelayThreadReport);
    for (const event of ['ready', 'close', 'end', 'reconnecting']) redis.on(event, post);
    post();
  };
  const running = relays.map(({ collection, stream, dataOf }, relay) => runOutboxRelay(host, collection, stream, dataOf, (redis) => report(relay, redis)));
  port.on('message', (message: RelayThreadMessage) => {
    if (message.type !== 'stop') return;
    void Promise.all(running.map((relay) => relay.stop()))
      .then(close)
      .then(() => activeTracing()?.shutdown())
      .finally(() => process.exit(0));
  });
}
