import { createPublicKey, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { z } from 'zod';
import { accessTokenClaims, USER_TOKEN_ALGORITHM, USER_TOKEN_AUDIENCE, USER_TOKEN_ISSUER, type AccessTokenClaims } from '@linepack/lib/identity';
import type { Logger } from '@linepack/lib/logger';
import { scopesByRole } from '@linepack/lib/scopes';
import { CredentialServiceUnavailableError, type VerifiedCredential } from './credentials';

/** An unknown kid triggers a JWKS refetch at most this often, so forged kids cannot hammer the auth service. */
const MIN_REFETCH_INTERVAL_MS = 5_000;
/** Keys are re-read at least this often (the JWKS's max-age), so a key dropped from it stops being trusted. */
const MAX_KEY_AGE_MS = 300_000;

/** A token may say it was issued this far in the future (the auth service's clock a little ahead of ours). */
export const CLOCK_SKEW_SECONDS = 30;

const jwksSchema = z.object({ keys: z.array(z.object({ kid: z.string(), kty: z.string() }).passthrough()) });

export type UserTokenVerdict = { ok: true; claims: AccessTokenClaims } | { ok: false };

/**
 * Verifies user access tokens locally against the auth service's JWKS: cached, refetched when a
 * token names a key the cache does not know (key rotation without downtime).
 */
export class UserTokenVerifier {
  private keys = new Map<string, KeyObject>();
  private lastFetch = 0;
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly jwksUrl: string,
    private readonly logger: Logger,
    private readonly maxTokenAgeSeconds = 3_600,
  ) {}

  private async refresh(): Promise<void> {
    this.inflight ??= (async () => {
      try {
        const res = await fetch(this.jwksUrl, { signal: AbortSignal.timeout(5_000) });
        if (!res.ok) throw new Error(`JWKS answered ${res.status}`);
        const jwks = jwksSchema.parse(await res.json());
        const next = new Map<string, KeyObject>();
        for (const jwk of jwks.keys) next.set(jwk.kid, createPublicKey({ key: jwk as import('node:crypto').JsonWebKey, format: 'jwk' }));
        this.keys = next;
        this.lastFetch = Date.now();
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'could not load the auth service JWKS');
        throw new CredentialServiceUnavailableError('JWKS unavailable');
      } finally {
        this.inflight = null;
      }
    })();
    return this.inflight;
  }

  private async keyFor(kid: string): Promise<KeyObject | null> {
    const age = Date.now() - this.lastFetch;
    const known = this.keys.get(kid);
    if (known && age < MAX_KEY_AGE_MS) return known;
    if (this.lastFetch === 0 || age >= MIN_REFETCH_INTERVAL_MS) await this.refresh();
    return this.keys.get(kid) ?? null;
  }

  async verify(token: string): Promise<UserTokenVerdict> {
    const decoded = jwt.decode(token, { complete: true });
    const kid = decoded?.header.kid;
    if (!decoded || decoded.header.alg !== USER_TOKEN_ALGORITHM || !kid) return { ok: false };
    const key = await this.keyFor(kid);
    if (!key) return { ok: false };
    try {
      const payload = jwt.verify(token, key, {
        algorithms: [USER_TOKEN_ALGORITHM],
        issuer: USER_TOKEN_ISSUER,
        audience: USER_TOKEN_AUDIENCE,
        // No tolerance on exp: a token ends exactly when the auth service said; the skew allowance is for iat only.
        maxAge: this.maxTokenAgeSeconds,
      });
      const claims = accessTokenClaims.safeParse(payload);
      if (!claims.success) return { ok: false };
      const now = Math.floor(Date.now() / 1000);
      const { iat, exp } = claims.data;
      // Issued in the future, or meant to live longer than any access token the auth service issues.
      if (iat > now + CLOCK_SKEW_SECONDS || exp - iat > this.maxTokenAgeSeconds) return { ok: false };
      return { ok: true, claims: claims.data };
    } catch {
      return { ok: false };
    }
  }
}

export type TenantSelection = { ok: true; credential: VerifiedCredential } | { ok: false; reason: string };

/** Picks the tenant a user acts in: X-Tenant-ID when given (must be one of theirs), else their first. */
export function userCredential(claims: AccessTokenClaims, requestedTenant: string | undefined): TenantSelection {
  const membership = requestedTenant ? claims.tenants.find((t) => t.id === requestedTenant) : claims.tenants[0];
  if (!membership) {
    return { ok: false, reason: requestedTenant ? `not a member of tenant ${requestedTenant}` : 'the user belongs to no tenant' };
  }
  return {
    ok: true,
    credential: {
      subject: claims.sub,
      kind: 'user',
      tenantId: membership.id,
      scopes: [...scopesByRole[membership.role]],
      tier: membership.tier,
      rateLimitKey: `user:${claims.sub}`,
      ...(claims.sid ? { sessionId: claims.sid } : {}),
    },
  };
}
