import { requestError } from './errors';

/**
 * Slots for heavy work (a slice of a big write, a chunk of an import), handed out round-robin over the tenants
 * waiting for one. At most `slots` pieces run at once whoever sends them, so a cheap request of another tenant
 * competes with those few pieces only, never with a tenant's whole backlog; and a tenant with many pieces queued
 * waits behind its own: another tenant's first piece runs after at most one piece of each tenant ahead of it.
 *
 * A tenant may keep `maxQueuedPerTenant` pieces waiting; more is refused (RATE_LIMITED with Retry-After) rather than queued
 * without bound in memory.
 */
export class FairShare {
  private running = 0;
  private readonly waiting = new Map<string, (() => void)[]>();
  /** When each tenant with work queued or running was last given a slot (a counter): the longest unserved goes next. */
  private readonly lastServed = new Map<string, number>();
  private readonly runningOf = new Map<string, number>();
  private served = 0;

  constructor(
    readonly slots: number,
    readonly maxQueuedPerTenant = 1_000,
  ) {
    if (!Number.isInteger(slots) || slots < 1) throw new Error(`FairShare needs at least one slot, not ${slots}`);
  }

  /** Runs `work` in a slot of `tenantId`'s turn. */
  async run<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    await this.acquire(tenantId);
    try {
      return await work();
    } finally {
      this.release(tenantId);
    }
  }

  /** Pieces waiting now, over all tenants (for metrics and tests). */
  get queued(): number {
    let n = 0;
    for (const queue of this.waiting.values()) n += queue.length;
    return n;
  }

  private acquire(tenantId: string): Promise<void> {
    if (this.running < this.slots && this.waiting.size === 0) {
      this.start(tenantId);
      return Promise.resolve();
    }
    const queue = this.waiting.get(tenantId) ?? [];
    if (queue.length >= this.maxQueuedPerTenant) {
      return Promise.reject(
        requestError('RATE_LIMITED', 'too much heavy work of your tenant is waiting already; retry when some of it has finished', {}, { 'retry-after': '1' }),
      );
    }
    if (queue.length === 0) this.waiting.set(tenantId, queue);
    return new Promise((resolve) => {
      queue.push(resolve);
      this.dispatch();
    });
  }

  private start(tenantId: string): void {
    this.running++;
    this.runningOf.set(tenantId, (this.runningOf.get(tenantId) ?? 0) + 1);
    this.lastServed.set(tenantId, ++this.served);
  }

  private release(tenantId: string): void {
    this.running--;
    const left = (this.runningOf.get(tenantId) ?? 1) - 1;
    if (left > 0) this.runningOf.set(tenantId, left);
    else {
      this.runningOf.delete(tenantId);
      if (!this.waiting.has(tenantId)) this.lastServed.delete(tenantId);
    }
    this.dispatch();
  }

  /** Gives free slots to waiting tenants, the one served longest ago first (ties: the one that queued first). */
  private dispatch(): void {
    while (this.running < this.slots && this.waiting.size > 0) {
      let next: string | null = null;
      let oldest = Infinity;
      for (const tenantId of this.waiting.keys()) {
        const at = this.lastServed.get(tenantId) ?? 0;
        if (at < oldest) {
          oldest = at;
          next = tenantId;
        }
      }
      const queue = this.waiting.get(next!)!;
      const resolve = queue.shift()!;
      if (queue.length === 0) this.waiting.delete(next!);
      this.start(next!);
      resolve();
    }
  }
}

/**
 * The process's slots for heavy work. One: a piece is sized to keep the database busy a few tens of milliseconds,
 * and with one running at a time every cheap request (which takes no slot) waits for at most one piece.
 */
export const heavyWork = new FairShare(1);
