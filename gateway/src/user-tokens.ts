import { createPublicKey, type KeyObject } from 'node:crypto';
import { z } from 'zod';
import { tokenScopes, type Membership } from '@linepack/lib/access-tokens';
import type { AccessTokenClaims } from '@linepack/lib/identity';
import type { Logger } from '@linepack/lib/logger';
import { CredentialServiceUnavailableError, type VerifiedCredential } from './credentials';

/** An unknown kid triggers a JWKS refetch at most this often, so forged kids cannot hammer the auth service. */
const MIN_REFETCH_INTERVAL_MS = 5_000;
/** Keys are re-read at least this often (the JWKS's max-age), so a key dropped from it stops being trusted. */
const MAX_KEY_AGE_MS = 300_000;

const jwksSchema = z.object({ keys: z.array(z.object({ kid: z.string(), kty: z.string() }).passthrough()) });

/** The kid in a JWT's header, reading the header only (the request's verification decodes the rest); null if none. */
function kidOf(token: string): string | null {
  const header = token.slice(0, token.indexOf('.'));
  try {
    const kid = (JSON.parse(Buffer.from(header, 'base64url').toString('utf8')) as { kid?: unknown } | null)?.kid;
    return typeof kid === 'string' && kid.length > 0 ? kid : null;
  } catch {
    return null;
  }
}

/**
 * The auth service's token keys for verifying user access tokens locally (the rules themselves are
 * lib/access-tokens.ts, shared with introspection): cached, refetched when a token names a key the cache does not
 * know (key rotation without downtime).
 */
export class UserTokenVerifier {
  private keys = new Map<string, KeyObject>();
  private lastFetch = 0;
  private inflight: Promise<void> | null = null;

  constructor(
    private readonly jwksUrl: string,
    private readonly logger: Logger,
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

  /** The key of `kid` (lib/access-tokens.ts asks), the JWKS fetched again when it is unknown or old. */
  async keyFor(kid: string): Promise<KeyObject | null> {
    const age = Date.now() - this.lastFetch;
    const known = this.keys.get(kid);
    if (known && age < MAX_KEY_AGE_MS) return known;
    if (this.lastFetch === 0 || age >= MIN_REFETCH_INTERVAL_MS) await this.refresh();
    return this.keys.get(kid) ?? null;
  }

  /**
   * Whether tokens naming `kid` are verified without calling the auth service (the key is known and fresh); a token
   * that is not a JWT with a kid is refused without a call too.
   */
  answersLocally(token: string): boolean {
    const kid = kidOf(token);
    const age = Date.now() - this.lastFetch;
    // As keyFor() decides: a known, fresh key; or a refetch it would not make yet.
    return kid === null || (this.keys.has(kid) && age < MAX_KEY_AGE_MS) || (this.lastFetch !== 0 && age < MIN_REFETCH_INTERVAL_MS);
  }
}

/** The credential of a user whose access token passed checkAccessToken, acting in `membership`'s tenant. */
export function userCredential(claims: AccessTokenClaims, membership: Membership): VerifiedCredential {
  return {
    subject: claims.sub,
    kind: 'user',
    tenantId: membership.id,
    scopes: tokenScopes(claims, membership),
    tier: membership.tier,
    rateLimitKey: `user:${claims.sub}`,
    ...(claims.sid ? { sessionId: claims.sid } : {}),
  };
}
