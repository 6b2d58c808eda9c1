import { LRUCache } from 'lru-cache';
import { hashApiKeySecret } from '@linepack/lib/api-keys';
import { z } from 'zod';
import { knownScopes, type Scope } from '@linepack/lib/scopes';
import type { Logger } from '@linepack/lib/logger';
import { credentialCacheLookups } from '@linepack/lib/metrics';

export type Tier = 'free' | 'pro' | 'enterprise';

/** A credential the gateway has verified: who, in which tenant, with what, at which tier. */
export interface VerifiedCredential {
  subject: string;
  kind: 'api_key' | 'user';
  tenantId: string;
  scopes: Scope[];
  tier: Tier;
  /**
   * What rate limits count against: one budget per user, and per API key *lineage* — a rotated key keeps the
   * budget its predecessor spent (rotating is not a way to multiply limits).
   */
  rateLimitKey: string;
  /** A user's sign-in (the access token's sid), passed on so "change password" can keep this session. */
  sessionId?: string;
}

const introspectionSchema = z.union([
  z.object({
    active: z.literal(true),
    sub: z.string(),
    tenant_id: z.string().uuid(),
    scopes: z.array(z.string()),
    tier: z.enum(['free', 'pro', 'enterprise']),
    expires_at: z.string().nullable(),
    /** The key's lineage (kept by rotation): what its rate limits count against. Absent from older auth services. */
    lineage_id: z.string().min(1).max(100).optional(),
  }),
  z.object({ active: z.literal(false) }),
]);

export class CredentialServiceUnavailableError extends Error {}

/**
 * Verifies API keys with the auth service's introspection, caching each answer (keyed by the
 * key's hash, never the key) for a short TTL so the hot path costs no round trip. The TTL is the
 * longest a revoked key keeps working.
 */
export class ApiKeyVerifier {
  private readonly cache: LRUCache<string, { credential: VerifiedCredential | null }>;
  /**
   * Keys known to be revoked (by their hash), from the revocation list the gateway pulls while the Redis channel is
   * away (revocation-pull.ts): refused without asking the auth service — a short negative cache, as long as a
   * positive cache entry could have outlived the revocation.
   */
  private readonly revoked: LRUCache<string, true>;

  constructor(
    private readonly authUrl: string,
    ttlSeconds: number,
    private readonly logger: Logger,
    private readonly timeoutMs: number,
  ) {
    this.cache = new LRUCache({ max: 10_000, ttl: Math.max(ttlSeconds, 0.001) * 1000 });
    this.revoked = new LRUCache({ max: 100_000, ttl: Math.max(ttlSeconds, 1) * 1000 + 60_000 });
  }

  /** A revoked key (named by its hash, as the revocation channel sends it) is verified afresh next time. */
  forget(secretHash: string): void {
    this.cache.delete(secretHash);
  }

  /** A key the revocation list names: dropped from the cache and refused from memory. */
  revoke(secretHash: string): void {
    this.cache.delete(secretHash);
    this.revoked.set(secretHash, true);
  }

  forgetAll(): void {
    this.cache.clear();
  }

  /** Whether verify() would answer from the cache, without calling the auth service (by the key's hash). */
  answersLocally(secretHash: string): boolean {
    return this.cache.has(secretHash) || this.revoked.has(secretHash);
  }

  /** `secretHash`: hashApiKeySecret(apiKey), when the caller has it already. */
  async verify(apiKey: string, requestId: string, secretHash: string = hashApiKeySecret(apiKey)): Promise<VerifiedCredential | null> {
    const cacheKey = secretHash;
    if (this.revoked.has(cacheKey)) {
      credentialCacheLookups.inc({ result: 'hit' });
      return null;
    }
    const cached = this.cache.get(cacheKey);
    credentialCacheLookups.inc({ result: cached ? 'hit' : 'miss' });
    if (cached) return cached.credential;
    let response: Response;
    try {
      response = await fetch(`${this.authUrl}/auth/introspect`, {
        headers: { authorization: `Bearer ${apiKey}`, 'x-request-id': requestId },
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (err) {
      this.logger.error({ err: (err as Error).message, requestId }, 'auth service unreachable for key introspection');
      throw new CredentialServiceUnavailableError('auth service unreachable');
    }
    if (!response.ok) {
      this.logger.error({ status: response.status, requestId }, 'key introspection failed');
      throw new CredentialServiceUnavailableError(`introspection answered ${response.status}`);
    }
    const parsed = introspectionSchema.safeParse(await response.json());
    if (!parsed.success) throw new CredentialServiceUnavailableError('introspection answer malformed');
    const body = parsed.data;
    const credential: VerifiedCredential | null = body.active
      ? {
          subject: body.sub,
          kind: 'api_key',
          tenantId: body.tenant_id,
          scopes: knownScopes(body.scopes),
          tier: body.tier,
          rateLimitKey: `key:${body.lineage_id ?? body.sub}`,
        }
      : null;
    const expiresInMs = body.active && body.expires_at ? Date.parse(body.expires_at) - Date.now() : undefined;
    // A key about to expire is not cached beyond its expiry.
    this.cache.set(cacheKey, { credential }, expiresInMs !== undefined ? { ttl: Math.max(1, Math.min(expiresInMs, this.cache.ttl)) } : {});
    return credential;
  }
}
