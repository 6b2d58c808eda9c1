import { INTERNAL_IDENTITY_HEADER, NO_TENANT, type VouchedIdentity } from '@linepack/lib/identity';
import type { IdentityTokenCache } from './identity-tokens';
import type { TieredRateLimiter } from './rate-limit';

/** How long one round of probes is reused: probes arrive every few seconds from every orchestrator, not per request. */
const CACHE_MS = 2_000;
/**
 * How long one probe may take. Generous, because a busy service is still alive (an ingest of thousands of items keeps
 * a subgraph's event loop busy for seconds) and because nobody waits for it: /readyz answers from the last round
 * while the next one runs (report()).
 */
export const PROBE_TIMEOUT_MS = 5_000;
/** Failed probes in a row before a dependency that answered before counts as down: one slow answer is not an outage. */
export const FAILURES_BEFORE_DOWN = 2;

/** Who the readiness probes vouch for: the gateway itself, in no tenant, with no scope. */
const READINESS_IDENTITY: Omit<VouchedIdentity, 'requestId' | 'deadline'> = { subject: 'gateway-readiness', kind: 'api_key', tenantId: NO_TENANT, scopes: [] };

export interface ReadinessReport {
  status: 'ready' | 'degraded' | 'unavailable';
  rateLimits: string;
  /** The kid of the key this gateway signs identity tokens with: every dependency below must trust it. */
  identityKey: string;
  /** The auth service at AUTH_URL (API key introspection, the JWKS, /auth/*): "ready", or why not. */
  authService: string;
  /** Each subgraph as the gateway routes to it (SUBGRAPH_URL_<NAME>): "ready", or why not. */
  subgraphs: Record<string, string>;
}

interface ProbeResult {
  /** What the report says about the dependency. */
  state: string;
  ok: boolean;
  /** The dependency answered and refused this gateway's identity token: its key is not (or no longer) trusted there. */
  identityRefused: boolean;
}

interface Dependency {
  base: string;
  /** The audience of the identity token it is probed with (the subgraph's name; "auth" for the auth service). */
  audience: string;
  last: ProbeResult | null;
  /** Probes failed in a row; 0 after one that succeeded. */
  failures: number;
  everReady: boolean;
}

/**
 * The gateway's readiness: whether this replica can serve. Each dependency (the auth service, every subgraph) is
 * probed on its /readyz with a real identity token of this gateway, so a subgraph that refuses the gateway's key —
 * a gateway rolled out with a new INTERNAL_TOKEN_PRIVATE_KEY before the subgraphs trust it — makes this gateway
 * unavailable (503) at once, and it never enters the load balancer (README, Rotating keys). The subgraphs cache
 * verified tokens and the gateway reuses its token, so a probe costs no signature on either side.
 *
 * What is the same for every replica does not take them all out of the load balancer: one subgraph down, slow, or
 * Redis away is "degraded" (200, naming it); only the auth service down (no credential can be verified) or every
 * subgraph down is "unavailable". A dependency counts as down only after FAILURES_BEFORE_DOWN failed probes in a row
 * (or when it never answered), and /readyz never waits for a probe after the first round.
 */
export class Readiness {
  private readonly authService: Dependency;
  private readonly subgraphs = new Map<string, Dependency>();
  private probedAt = 0;
  private round: Promise<void> | null = null;

  constructor(
    authUrl: string,
    subgraphUrls: ReadonlyMap<string, string>,
    private readonly identityTokens: IdentityTokenCache,
    private readonly rateLimiter: Pick<TieredRateLimiter, 'backend'>,
  ) {
    const dependency = (base: string, audience: string): Dependency => ({ base, audience, last: null, failures: 0, everReady: false });
    this.authService = dependency(authUrl, 'auth');
    for (const [name, url] of subgraphUrls) this.subgraphs.set(name, dependency(url, name));
  }

  private async probe(dependency: Dependency): Promise<ProbeResult> {
    try {
      const res = await fetch(new URL('/readyz', dependency.base), {
        headers: { [INTERNAL_IDENTITY_HEADER]: this.identityTokens.tokenFor(READINESS_IDENTITY, dependency.audience) },
        signal: AbortSignal.timeout(PROBE_TIMEOUT_MS),
      });
      const body = (await res.json().catch(() => null)) as { identity?: unknown; reason?: unknown } | null;
      if (body?.identity === 'refused') {
        return { state: `refuses this gateway's identity token (${String(body.reason ?? 'no reason given')})`, ok: false, identityRefused: true };
      }
      return res.ok ? { state: 'ready', ok: true, identityRefused: false } : { state: `answered ${res.status}`, ok: false, identityRefused: false };
    } catch (err) {
      const reason = (err as Error).name === 'TimeoutError' ? `no answer within ${PROBE_TIMEOUT_MS / 1000} s` : (err as Error).message;
      return { state: `unreachable (${reason})`, ok: false, identityRefused: false };
    }
  }

  private probeAll(): Promise<void> {
    this.round ??= Promise.all(
      [this.authService, ...this.subgraphs.values()].map(async (dependency) => {
        const result = await this.probe(dependency);
        dependency.last = result;
        dependency.failures = result.ok ? 0 : dependency.failures + 1;
        dependency.everReady ||= result.ok;
      }),
    ).then(() => {
      this.probedAt = Date.now();
      this.round = null;
    });
    return this.round;
  }

  /** Down: refuses this gateway's identity, or failed FAILURES_BEFORE_DOWN probes in a row (any failure before it ever answered). */
  private static down(dependency: Dependency): boolean {
    const last = dependency.last;
    if (!last || last.identityRefused) return true;
    return !last.ok && (dependency.failures >= FAILURES_BEFORE_DOWN || !dependency.everReady);
  }

  private static describe(dependency: Dependency): string {
    const last = dependency.last;
    if (!last) return 'not probed yet';
    // Failed, but not yet for long enough to count: still served, and said so.
    return last.ok || Readiness.down(dependency) ? last.state : `ready (last probe: ${last.state})`;
  }

  async report(): Promise<ReadinessReport> {
    if (Date.now() - this.probedAt >= CACHE_MS) {
      const round = this.probeAll();
      // Only the first answer waits for its probes; later ones answer from the last round while the next one runs.
      if (this.probedAt === 0) await round;
    }
    const subgraphs = [...this.subgraphs.values()];
    const backend = this.rateLimiter.backend; // in memory, always current
    // Unavailable only when this gateway can serve nothing: its identity refused (its own key, so its own fault), no
    // auth service (no credential can be verified) or no subgraph at all. One subgraph down is the same for every
    // replica, so taking them all out of the load balancer would turn a partial outage into a whole one.
    const unavailable =
      [this.authService, ...subgraphs].some((d) => d.last?.identityRefused) ||
      Readiness.down(this.authService) ||
      (subgraphs.length > 0 && subgraphs.every(Readiness.down));
    const status = unavailable ? 'unavailable' : subgraphs.some(Readiness.down) || backend === 'degraded' ? 'degraded' : 'ready';
    return {
      status,
      rateLimits: backend,
      identityKey: this.identityTokens.keyId,
      authService: Readiness.describe(this.authService),
      subgraphs: Object.fromEntries([...this.subgraphs].map(([name, dependency]) => [name, Readiness.describe(dependency)])),
    };
  }
}
