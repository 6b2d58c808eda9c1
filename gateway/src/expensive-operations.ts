import { Gauge } from 'prom-client';
import { requestError } from '@linepack/lib/errors';
import { BULK_WORK_REST_RATIO, FairShare, restAfter } from '@linepack/lib/fair-share';
import { metricsRegistry } from '@linepack/lib/metrics';

/**
 * Per-tenant concurrency for expensive operations at the gateway (issue 31, item 1). The cost budget (cost.ts)
 * bounds what a tenant spends per minute, not how much of it runs at once: four 240,000-cost queries sent together
 * fill the gateway and the subgraphs for seconds, and every other tenant's small read waits behind them. Here an
 * operation priced at `minCost` or more takes one of `slots` slots, at most `perTenantRunning` of them per tenant,
 * handed out round-robin over the tenants waiting (lib/fair-share.ts): a tenant's expensive work waits behind its
 * own, another tenant's expensive operation waits for at most one of each tenant ahead of it, and cheap operations
 * take no slot at all. A tenant with `perTenantQueued` waiting already is refused with 429 and a Retry-After rather
 * than queued without bound. After an expensive query the tenant rests as long as it ran (BULK_WORK_REST_RATIO, at most
 * MAX_REST_MS) before its next expensive operation starts, as bulk writes rest after each slice where they write: its
 * heaviest queries then keep the stack busy at most half the time, and other tenants' requests find the cores with room
 * to answer. The limits are per gateway process (README: Rate limits › Expensive operations).
 */
export const expensiveOperationLimits = {
  /**
   * From this cost on an operation is expensive: a page of 50 assets costs about 100, a 10,000-item batch 10,011,
   * the most expensive legal query up to 250,000.
   */
  minCost: 10_000,
  /** Expensive operations of all tenants running at once in one gateway process. */
  slots: 4,
  /** Of those, one tenant's. */
  perTenantRunning: 1,
  /** A tenant's expensive operations waiting for a slot; one more is refused (429). */
  perTenantQueued: 4,
} as const;

export type ExpensiveOperationLimits = { [K in keyof typeof expensiveOperationLimits]: number };

/** Summed over the gateways of a process; no tenant label (one series per tenant would grow without bound). */
export const expensiveOperationsGauge = new Gauge({
  name: 'linepack_gateway_expensive_operations',
  help: "Expensive operations (cost at or above the limit) in this gateway process, running or waiting for their tenant's turn",
  labelNames: ['state'] as const,
  registers: [metricsRegistry],
});

/** Until the gateway has timed one, an expensive operation is assumed to take this long (for Retry-After). */
const ASSUMED_DURATION_MS = 2_000;
/**
 * An operation's typical duration is the median of this many latest ones. Not an average: the gateway's first
 * expensive operation also starts the lane's thread (seconds on a busy machine), and an average that slow outlier
 * raised had the gateway refuse the next operations of a tenant with room in its queue, as if each would take as long.
 */
const RECENT_DURATIONS = 9;

export class ExpensiveOperations {
  private readonly share: FairShare;
  /** The latest durations, oldest first. */
  private readonly recentMs: number[] = [];
  /** The requests holding a slot now: they run in the expensive-operation lane (expensive-lane.ts). */
  private readonly admitted = new WeakSet<object>();

  constructor(readonly limits: ExpensiveOperationLimits = expensiveOperationLimits) {
    this.share = new FairShare(limits.slots, limits.perTenantQueued, {
      maxRunningPerTenant: limits.perTenantRunning,
      restRatio: BULK_WORK_REST_RATIO,
      refusal: (tenantId) => this.refusal(tenantId),
    });
  }

  isExpensive(cost: number): boolean {
    return cost >= this.limits.minCost;
  }

  /**
   * Whether the tenant may queue one more expensive operation now; ask before spending its cost budget on it. Not
   * when its queue is full, nor when its rest and the operations ahead of it (each at the typical recent duration and
   * the rest after it) would outlast the request's `remainingMs`: it is refused with a Retry-After now instead of
   * waiting for a 504 at its deadline.
   */
  hasRoomFor(tenantId: string, remainingMs = Infinity): boolean {
    if (!this.share.hasRoomFor(tenantId)) return false;
    const waitMs = this.expectedWaitMs(tenantId);
    // Nothing ahead: it starts at once (a request already past its deadline is answered 504 by deadline.ts, not here).
    return waitMs === 0 || waitMs < remainingMs;
  }

  /** Whether the request whose context this is holds a slot now (it was admitted and has not been answered). */
  isAdmitted(context: object): boolean {
    return this.admitted.has(context);
  }

  /**
   * Waits for the tenant's turn (rejects with the 429 of `refusal` when its queue is full, or with the signal's reason
   * when the request ends first) and resolves with the function that frees the slot. `context` names the request to
   * `isAdmitted` while it holds the slot. `rests: false` for a mutation: bulk writes rest after each slice in the
   * subgraph that writes them (lib/fair-share.ts `heavyWork`), and resting here too would pay for the same work twice.
   */
  async admit(tenantId: string, options: { signal?: AbortSignal; context?: object; rests?: boolean } = {}): Promise<() => void> {
    const { signal, context, rests = true } = options;
    expensiveOperationsGauge.inc({ state: 'waiting' });
    let release: (rests?: boolean) => void;
    try {
      release = await this.share.acquire(tenantId, signal);
    } finally {
      expensiveOperationsGauge.dec({ state: 'waiting' });
    }
    expensiveOperationsGauge.inc({ state: 'running' });
    if (context) this.admitted.add(context);
    const started = performance.now();
    // The one guard against a second call: the gauge and the durations must count a release once (FairShare's own
    // release function ignores later calls too, but runs after these).
    let held = true;
    return () => {
      if (!held) return;
      held = false;
      if (context) this.admitted.delete(context);
      expensiveOperationsGauge.dec({ state: 'running' });
      this.recentMs.push(performance.now() - started);
      if (this.recentMs.length > RECENT_DURATIONS) this.recentMs.shift();
      release(rests);
    };
  }

  /** The tenant's expensive operations running or waiting now. */
  private ahead(tenantId: string): number {
    return this.share.runningFor(tenantId) + this.share.queuedFor(tenantId);
  }

  /** The median of the latest durations (the lower of the middle two of an even count), or the assumed one. */
  private typicalMs(): number {
    if (this.recentMs.length === 0) return ASSUMED_DURATION_MS;
    const sorted = [...this.recentMs].sort((x, y) => x - y);
    return sorted[Math.floor((sorted.length - 1) / 2)]!;
  }

  /**
   * One turn of the tenant's: an operation at the typical recent duration and the rest after it (counted after every
   * turn: the queue does not record which waiting operations are mutations, so a wait behind mutations is
   * overestimated, never under).
   */
  private turnMs(): number {
    const typicalMs = this.typicalMs();
    return typicalMs + restAfter(typicalMs, BULK_WORK_REST_RATIO);
  }

  /** How long the tenant's next expensive operation would wait: its rest now, then the turns ahead of it. */
  private expectedWaitMs(tenantId: string): number {
    const turnsBefore = Math.floor(this.ahead(tenantId) / this.limits.perTenantRunning);
    return this.share.restingFor(tenantId) + turnsBefore * this.turnMs();
  }

  /**
   * The refusal names the limit, and its Retry-After is when the tenant's turn would likely come: its rest, then the
   * operations ahead of it, run `perTenantRunning` at a time, each at the typical recent duration and its rest.
   */
  refusal(tenantId: string) {
    const { minCost, perTenantRunning, perTenantQueued } = this.limits;
    const ahead = this.ahead(tenantId);
    const waitMs = this.share.restingFor(tenantId) + Math.max(1, ahead / perTenantRunning) * this.turnMs();
    const seconds = Math.max(1, Math.ceil(waitMs / 1000));
    return requestError(
      'RATE_LIMITED',
      `your tenant's expensive operations (cost ${minCost.toLocaleString('en')} or more) run ${perTenantRunning} at a time in this gateway with at most ${perTenantQueued} waiting; ${ahead} are running or waiting now, so this one would wait too long: retry in ${seconds} s, or ask for less at once`,
      { retryAfterSeconds: seconds, limit: { name: 'expensiveOperationsPerTenant', running: perTenantRunning, queued: perTenantQueued, minCost } },
      { 'Retry-After': String(seconds) },
    );
  }
}
