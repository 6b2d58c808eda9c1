import type { KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { accessTokenClaims, USER_TOKEN_ALGORITHM, USER_TOKEN_AUDIENCE, USER_TOKEN_ISSUER, type AccessTokenClaims } from './identity';
import { ADMIN_SCOPE, knownScopes, scopesByRole, type Scope } from './scopes';

/**
 * The rules a user's access token must pass, in one place: the gateway applies them to every request and the auth
 * service's `GET /auth/introspect` answers with them, so introspection can never call "active" a token the gateway
 * refuses (a 100-year expiry, a signed-out session, a role that changed). Each side supplies only what it holds
 * itself: the verification key for a kid (the gateway's JWKS cache, the auth service's key ring) and whether a
 * session has been revoked (the gateway's revocation list, the auth service's database).
 */

/** A token may say it was issued this far in the future (the auth service's clock a little ahead of the reader's). */
export const CLOCK_SKEW_SECONDS = 30;

export { DEFAULT_MAX_ACCESS_TOKEN_AGE_SECONDS } from './config';

export interface AccessTokenRules {
  /** The longest an access token may live (exp − iat, and its age since iat), whatever its signature says. */
  maxTokenAgeSeconds: number;
  /** The key that signed tokens naming `kid`, or null when no trusted key has that id. */
  keyFor(kid: string): KeyObject | null | Promise<KeyObject | null>;
  /** Whether the sign-in (refresh family) a token belongs to has ended: logout, sign-out everywhere, a role change. */
  sessionRevoked(sessionId: string): boolean | Promise<boolean>;
}

export type Membership = AccessTokenClaims['tenants'][number];

export type AccessTokenVerdict =
  | { ok: true; claims: AccessTokenClaims; membership: Membership }
  /** `invalid`: forged, expired, too long-lived, from the future, not an access token; the gateway answers 401. */
  | { ok: false; reason: 'invalid' | 'session_revoked'; message: string }
  /** A genuine token, but not for the tenant asked for (X-Tenant-ID): the gateway answers 403. */
  | { ok: false; reason: 'tenant_not_allowed'; message: string };

/** The tenant a user acts in: X-Tenant-ID when given (it must be one of theirs), else their first. */
export function selectMembership(
  claims: AccessTokenClaims,
  requestedTenant: string | undefined,
): { ok: true; membership: Membership } | { ok: false; reason: string } {
  const membership = requestedTenant ? claims.tenants.find((t) => t.id === requestedTenant) : claims.tenants[0];
  if (!membership) return { ok: false, reason: requestedTenant ? `not a member of tenant ${requestedTenant}` : 'the user belongs to no tenant' };
  return { ok: true, membership };
}

/** The claims of a token that passes the signature, issuer, audience and lifetime rules, or null. */
async function verifiedClaims(token: string, rules: AccessTokenRules, nowSeconds: number): Promise<AccessTokenClaims | null> {
  const decoded = jwt.decode(token, { complete: true });
  const kid = decoded?.header.kid;
  if (!decoded || decoded.header.alg !== USER_TOKEN_ALGORITHM || !kid) return null;
  const key = await rules.keyFor(kid);
  if (!key) return null;
  try {
    const payload = jwt.verify(token, key, {
      algorithms: [USER_TOKEN_ALGORITHM],
      issuer: USER_TOKEN_ISSUER,
      audience: USER_TOKEN_AUDIENCE,
      // No tolerance on exp: a token ends exactly when the auth service said; the skew allowance is for iat only.
      maxAge: rules.maxTokenAgeSeconds,
      clockTimestamp: nowSeconds,
    });
    const claims = accessTokenClaims.safeParse(payload);
    if (!claims.success) return null;
    const { iat, exp } = claims.data;
    // Issued in the future, or meant to live longer than any access token the auth service issues.
    if (iat > nowSeconds + CLOCK_SKEW_SECONDS || exp - iat > rules.maxTokenAgeSeconds) return null;
    return claims.data;
  } catch {
    return null;
  }
}

/** Every rule, in the order the gateway applies them; `nowMs` is the reader's clock (tests may move it). */
export async function checkAccessToken(
  token: string,
  requestedTenant: string | undefined,
  rules: AccessTokenRules,
  nowMs = Date.now(),
): Promise<AccessTokenVerdict> {
  const claims = await verifiedClaims(token, rules, Math.floor(nowMs / 1000));
  if (!claims) return { ok: false, reason: 'invalid', message: 'invalid or expired access token' };
  if (claims.sid && (await rules.sessionRevoked(claims.sid))) return { ok: false, reason: 'session_revoked', message: 'this session has been signed out' };
  const selection = selectMembership(claims, requestedTenant);
  if (!selection.ok) return { ok: false, reason: 'tenant_not_allowed', message: selection.reason };
  return { ok: true, claims, membership: selection.membership };
}

/**
 * What a user's token grants in its tenant: the role's scopes, narrowed to those the user consented to when the token
 * carries a `scope` claim (a token issued to an OAuth client, which may do only what the user allowed it, even when
 * the role holds more). Both the gateway and introspection answer with this.
 */
export function tokenScopes(claims: AccessTokenClaims, membership: Membership): Scope[] {
  const held = scopesByRole[membership.role];
  if (claims.scope === undefined) return [...held];
  // admin:* holds every other scope, so an admin's consent to a narrower one is that one alone.
  return knownScopes(claims.scope.split(' ')).filter((s) => held.includes(s) || held.includes(ADMIN_SCOPE));
}
