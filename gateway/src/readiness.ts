import type { TieredRateLimiter } from './rate-limit';

/** How long one answer is reused: probes arrive every few seconds from every orchestrator, not per request. */
const CACHE_MS = 2_000;
const PROBE_TIMEOUT_MS = 1_000;

export interface ReadinessReport {
  status: 'ready' | 'degraded' | 'unavailable';
  rateLimits: string;
  /** Each service the gateway needs: "ready", or why not. */
  dependencies: Record<string, string>;
}

/**
 * The gateway's readiness reflects the services it needs (their /readyz): without the auth service, or without
 * any subgraph, it is unavailable (503) and should leave the load balancer. A subgraph down, or Redis away (rate
 * limits then count in process), is "degraded": still ready (200), naming what is missing.
 */
export class Readiness {
  private probed: { at: number; dependencies: Record<string, string> } | null = null;

  constructor(
    private readonly services: ReadonlyMap<string, string>,
    private readonly rateLimiter: Pick<TieredRateLimiter, 'backend'>,
  ) {}

  private static async probe(base: string): Promise<string> {
    try {
      const res = await fetch(new URL('/readyz', base), { signal: AbortSignal.timeout(PROBE_TIMEOUT_MS) });
      return res.ok ? 'ready' : `answered ${res.status}`;
    } catch (err) {
      return `unreachable (${(err as Error).name === 'TimeoutError' ? 'no answer within 1 s' : (err as Error).message})`;
    }
  }

  async report(): Promise<ReadinessReport> {
    if (!this.probed || Date.now() - this.probed.at >= CACHE_MS) {
      const entries = await Promise.all([...this.services].map(async ([name, base]) => [name, await Readiness.probe(base)] as const));
      this.probed = { at: Date.now(), dependencies: Object.fromEntries(entries) };
    }
    const { dependencies } = this.probed;
    const backend = this.rateLimiter.backend; // in memory, always current
    const subgraphs = Object.entries(dependencies).filter(([name]) => name !== 'auth');
    // Unavailable only when this gateway can serve nothing: no auth service (no credential can be verified) or no
    // subgraph at all. One subgraph down is the same for every replica, so taking them all out of the load
    // balancer would turn a partial outage into a whole one: it is reported as degraded, naming the subgraph.
    const status =
      dependencies['auth'] !== 'ready' || (subgraphs.length > 0 && subgraphs.every(([, state]) => state !== 'ready'))
        ? 'unavailable'
        : subgraphs.some(([, state]) => state !== 'ready') || backend === 'degraded'
          ? 'degraded'
          : 'ready';
    return { status, rateLimits: backend, dependencies };
  }
}
