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
 * The gateway is ready when the auth service and every subgraph say they are (their /readyz): a gateway that
 * cannot verify credentials or plan into a subgraph should be taken out of a load balancer. Redis away is
 * "degraded" but still ready: rate limits fall back to in-process counting.
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
    const status = Object.values(dependencies).some((state) => state !== 'ready') ? 'unavailable' : backend === 'degraded' ? 'degraded' : 'ready';
    return { status, rateLimits: backend, dependencies };
  }
}
