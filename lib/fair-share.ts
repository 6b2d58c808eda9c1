import { GraphQLError } from 'graphql';
import { requestError } from './errors';

/**
 * How long a piece may wait: until `signal` aborts (it rejects with the signal's reason) or until `deadline` (epoch ms;
 * it rejects with TIMEOUT when its turn comes after it, and never runs). A bare signal is the same as `{ signal }`.
 */
export type WaitLimit = AbortSignal | { signal?: AbortSignal | undefined; deadline?: number | undefined };

/** A piece whose request's deadline passed before its turn: nobody waits for its result any more. */
export function deadlinePassed(): GraphQLError {
  return new GraphQLError("the request's deadline passed before this work could start; it was not run", { extensions: { code: 'TIMEOUT' } });
}

/** The longest rest after one piece: a piece that hung on a database failover does not keep its tenant waiting as long again. */
export const MAX_REST_MS = 2_000;

/** The rest after a piece that held its slot `elapsedMs` (restRatio): whole milliseconds, at most MAX_REST_MS, 0 below 1 ms. */
export function restAfter(elapsedMs: number, restRatio: number): number {
  const rest = elapsedMs * restRatio;
  return rest < 1 ? 0 : Math.min(Math.ceil(rest), MAX_REST_MS);
}

export interface FairShareOptions {
  /** Pieces one tenant may have running at once (default: every slot); its others wait even when slots are free. */
  maxRunningPerTenant?: number;
  /** The error a tenant over its queue cap is refused with (default: RATE_LIMITED, Retry-After 1 s). */
  refusal?: (tenantId: string) => GraphQLError;
  /**
   * After a piece that held its slot d ms, its tenant starts no other piece for d × restRatio ms (default 0); other
   * tenants' pieces run meanwhile. A tenant's heavy work then keeps the shared database busy at most 1 / (1 + restRatio)
   * of the time, so the cheap requests of every other tenant, which take no slot, find it with room to answer.
   */
  restRatio?: number;
}

/**
 * Slots for heavy work (a slice of a big write, a chunk of an import), handed out round-robin over the tenants
 * waiting for one. At most `slots` pieces run at once whoever sends them, so a cheap request of another tenant
 * competes with those few pieces only, never with a tenant's whole backlog; and a tenant with many pieces queued
 * waits behind its own: another tenant's first piece runs after at most one piece of each tenant ahead of it.
 *
 * A tenant may keep `maxQueuedPerTenant` pieces waiting; more is refused (RATE_LIMITED with Retry-After) rather than queued
 * without bound in memory. With `maxRunningPerTenant`, a tenant never holds more than that many slots, so the other
 * slots stay free for other tenants even when it alone has work.
 */
export class FairShare {
  private running = 0;
  private readonly waiting = new Map<string, Waiter[]>();
  /** When each tenant with work queued or running was last given a slot (a counter): the longest unserved goes next. */
  private readonly lastServed = new Map<string, number>();
  private readonly runningOf = new Map<string, number>();
  /** Tenants resting after a piece (restRatio), until when (epoch ms). */
  private readonly restingUntil = new Map<string, number>();
  private served = 0;
  readonly maxRunningPerTenant: number;
  /** The rest after each piece, as a multiple of its time (options.restRatio); a thread may change its own (heavyWork). */
  restRatio: number;

  constructor(
    readonly slots: number,
    readonly maxQueuedPerTenant = 1_000,
    private readonly options: FairShareOptions = {},
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`FairShare needs at least one slot, not ${slots}`);
    this.maxRunningPerTenant = options.maxRunningPerTenant ?? slots;
    this.restRatio = options.restRatio ?? 0;
    if (!Number.isInteger(this.maxRunningPerTenant) || this.maxRunningPerTenant < 1)
      throw new Error(`FairShare needs at least one slot per tenant, not ${this.maxRunningPerTenant}`);
  }

  /**
   * Runs `work` in a slot of `tenantId`'s turn. When the piece's wait ends (`limit`) while it is still waiting, it leaves
   * the queue and rejects (a request past its deadline must not hold a place, nor later a slot).
   */
  async run<T>(tenantId: string, work: () => Promise<T>, limit?: WaitLimit): Promise<T> {
    const release = await this.acquire(tenantId, limit);
    let failed = true;
    try {
      const result = await work();
      failed = false;
      return result;
    } finally {
      // A failed piece did not keep the database busy for its time (it waited for a server, or was refused): no rest.
      release(!failed);
    }
  }

  /**
   * Waits for a slot of `tenantId`'s turn and resolves with the function that gives it back (call it once; later
   * calls do nothing), for work whose start and end are not one function (a request's hooks). Given `rests = false`
   * (a failed piece, or one whose work rests where it is done), its tenant does not rest after it.
   */
  async acquire(tenantId: string, limit?: WaitLimit): Promise<(rests?: boolean) => void> {
    const { signal, deadline } = limit instanceof AbortSignal ? { signal: limit, deadline: undefined } : (limit ?? {});
    await this.enter(tenantId, signal, deadline);
    const started = performance.now();
    let held = true;
    return (rests = true) => {
      if (!held) return;
      held = false;
      this.release(tenantId, rests ? restAfter(performance.now() - started, this.restRatio) : 0);
    };
  }

  /** How long `tenantId` still rests after its last piece (ms; 0 when it may start one). */
  restingFor(tenantId: string): number {
    const until = this.restingUntil.get(tenantId);
    return until === undefined ? 0 : Math.max(0, until - Date.now());
  }

  /** Whether `tenantId` may queue one more piece now (false: `acquire` would refuse it). */
  hasRoomFor(tenantId: string): boolean {
    return this.canStartNow(tenantId) || (this.waiting.get(tenantId)?.length ?? 0) < this.maxQueuedPerTenant;
  }

  /** Pieces of `tenantId` waiting now. */
  queuedFor(tenantId: string): number {
    return this.waiting.get(tenantId)?.length ?? 0;
  }

  /** Pieces of `tenantId` running now. */
  runningFor(tenantId: string): number {
    return this.runningOf.get(tenantId) ?? 0;
  }

  /** Pieces waiting now, over all tenants (for metrics and tests). */
  get queued(): number {
    let n = 0;
    for (const queue of this.waiting.values()) n += queue.length;
    return n;
  }

  private canStartNow(tenantId: string): boolean {
    return this.running < this.slots && this.waiting.size === 0 && this.mayStart(tenantId);
  }

  /** Below its own cap and not resting. */
  private mayStart(tenantId: string): boolean {
    return this.runningFor(tenantId) < this.maxRunningPerTenant && !this.restingUntil.has(tenantId);
  }

  private enter(tenantId: string, signal: AbortSignal | undefined, deadline: number | undefined): Promise<void> {
    if (signal?.aborted) return Promise.reject(signal.reason as Error);
    if (deadline !== undefined && Date.now() >= deadline) return Promise.reject(deadlinePassed());
    if (this.canStartNow(tenantId)) {
      this.start(tenantId);
      return Promise.resolve();
    }
    const queue = this.waiting.get(tenantId) ?? [];
    if (queue.length >= this.maxQueuedPerTenant) {
      return Promise.reject(
        this.options.refusal?.(tenantId) ??
          requestError('RATE_LIMITED', 'too much heavy work of your tenant is waiting already; retry when some of it has finished', {}, { 'retry-after': '1' }),
      );
    }
    if (queue.length === 0) this.waiting.set(tenantId, queue);
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { resolve, reject, deadline, leave: null };
      if (signal) {
        const onAbort = () => {
          const index = queue.indexOf(waiter);
          if (index === -1) return;
          queue.splice(index, 1);
          if (queue.length === 0 && this.waiting.get(tenantId) === queue) {
            this.waiting.delete(tenantId);
            if (!this.runningOf.has(tenantId)) this.lastServed.delete(tenantId);
          }
          reject(signal.reason as Error);
          // The tenant that left may have been the only one another tenant was waiting behind.
          this.dispatch();
        };
        signal.addEventListener('abort', onAbort, { once: true });
        waiter.leave = () => signal.removeEventListener('abort', onAbort);
      }
      queue.push(waiter);
      this.dispatch();
    });
  }

  private start(tenantId: string): void {
    this.running++;
    this.runningOf.set(tenantId, (this.runningOf.get(tenantId) ?? 0) + 1);
    this.lastServed.set(tenantId, ++this.served);
  }

  private release(tenantId: string, restMs: number): void {
    this.running--;
    const left = (this.runningOf.get(tenantId) ?? 1) - 1;
    if (left > 0) this.runningOf.set(tenantId, left);
    else {
      this.runningOf.delete(tenantId);
      if (!this.waiting.has(tenantId)) this.lastServed.delete(tenantId);
    }
    if (restMs > 0) {
      const until = Date.now() + restMs;
      if (until > (this.restingUntil.get(tenantId) ?? 0)) {
        this.restingUntil.set(tenantId, until);
        setTimeout(() => {
          if (this.restingUntil.get(tenantId) !== until) return;
          this.restingUntil.delete(tenantId);
          this.dispatch();
        }, restMs).unref();
      }
    }
    this.dispatch();
  }

  /**
   * Gives free slots to waiting tenants below their own cap, the one served longest ago first (ties: the one that
   * queued first).
   */
  private dispatch(): void {
    while (this.running < this.slots && this.waiting.size > 0) {
      let next: string | null = null;
      let oldest = Infinity;
      for (const tenantId of this.waiting.keys()) {
        if (!this.mayStart(tenantId)) continue;
        const at = this.lastServed.get(tenantId) ?? 0;
        if (at < oldest) {
          oldest = at;
          next = tenantId;
        }
      }
      if (next === null) return;
      const queue = this.waiting.get(next)!;
      const waiter = queue.shift()!;
      if (queue.length === 0) this.waiting.delete(next);
      waiter.leave?.();
      // Its request's deadline passed while it waited: it leaves without taking the slot (the next piece does).
      if (waiter.deadline !== undefined && Date.now() >= waiter.deadline) {
        if (!this.waiting.has(next) && !this.runningOf.has(next)) this.lastServed.delete(next);
        waiter.reject(deadlinePassed());
        continue;
      }
      this.start(next);
      waiter.resolve();
    }
  }
}

interface Waiter {
  resolve: () => void;
  reject: (err: Error) => void;
  /** Epoch ms after which the piece is not run. */
  deadline: number | undefined;
  /** Stops listening for the abort of the request it waits for. */
  leave: (() => void) | null;
}

/**
 * After a piece of bulk work (a slice of a big write, a chunk of an import or a run comparison, a batch of events), its
 * tenant rests as long as the piece took (at most MAX_REST_MS; not after a failed piece): one tenant's bulk work keeps
 * the database busy at most half the time from one thread (or consumer) — each thread of a process (loop, lane, job
 * runner) and each replica has its own heavy-work slot and rests. On the embedded server, which shares the services'
 * two cores, a 100,000-feature import then took 31–35 s instead of 26 s and another tenant's p99 under it fell by half or
 * more (README, bench:fairness).
 */
export const BULK_WORK_REST_RATIO = 1;

/**
 * The rest of bulk work that runs on a thread of its own with nobody waiting for its answer (analytics' run comparisons,
 * subgraphs/analytics/src/threads.ts; the measurements subgraph's job runner, whose imports report progress and hold no
 * request open): three times as long as each piece took, so it keeps the database busy at most a quarter of the time.
 * On the analytics loop a comparison shared its slot with the event consumer's batches; on its own thread it rested as
 * long as it worked and another tenant's reads right after a 100,000-feature import had a p99 of
 * 92–151 ms against 48–74 before the thread, and 54–57 ms resting three times as long (bench:fairness).
 */
export const BACKGROUND_WORK_REST_RATIO = 3;

/**
 * This thread's slots for heavy work. One: a piece is sized to keep the database busy a few tens of milliseconds,
 * and with one running at a time every cheap request (which takes no slot) waits for at most one piece.
 */
export const heavyWork = new FairShare(1, 1_000, { restRatio: BULK_WORK_REST_RATIO });

/** Limits of `databaseReads`. */
export const databaseReadLimits = {
  /** Reads of all tenants in flight at once in one process: below the driver's pool (100 connections). */
  slots: 64,
  /** Of those, one tenant's: a request that fans out into hundreds of reads (500 entities, a query each) sends this many at a time. */
  perTenant: 16,
  /** A tenant's reads waiting; beyond this one is refused (RATE_LIMITED) rather than queued without bound. */
  perTenantQueued: 50_000,
} as const;

/**
 * Every tenant-scoped database read of the process (lib/tenant-collection.ts), round-robin over the tenants waiting.
 * The MongoDB driver queues the operations waiting for a connection in arrival order, whoever sent them: one request
 * that resolved 500 entities with two reads each put 1,000 reads ahead of any other tenant's one read, which then
 * waited seconds. Here a tenant has at most `perTenant` reads in flight, so another tenant's read starts at once (a
 * slot is free) and a tenant's backlog waits behind its own. A read whose request's deadline passed while it waited
 * is not sent (the gateway has answered already): a request the gateway gave up on stops costing the database.
 */
export const databaseReads = new FairShare(databaseReadLimits.slots, databaseReadLimits.perTenantQueued, {
  maxRunningPerTenant: databaseReadLimits.perTenant,
});
