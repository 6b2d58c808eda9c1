import { randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Collection, Db } from 'mongodb';
import { z } from 'zod';
import type { Role } from '@linepack/lib/scopes';
import type { TenantRecord, Tier, UserDocument } from './documents';
import { checkAccessToken, DEFAULT_MAX_ACCESS_TOKEN_AGE_SECONDS, type AccessTokenVerdict } from '@linepack/lib/access-tokens';
import { USER_TOKEN_ALGORITHM, USER_TOKEN_AUDIENCE, USER_TOKEN_ISSUER } from '@linepack/lib/identity';
import type { TokenKeys } from './signing-key-ring';
import type { RevocationPublisher } from '@linepack/lib/revocations';

/** Refresh tokens are audience-bound to the auth service, so a gateway never accepts one as an access token. */
const REFRESH_AUDIENCE = 'linepack-auth';

/** What an access token says about each tenant the user belongs to. */
export interface TenantClaim {
  id: string;
  role: Role;
  tier: Lowercase<Tier>;
}

/** Collection `refreshTokens`: one document per issued refresh token; a rotation chain shares a family. */
interface RefreshTokenDocument {
  _id: string;
  familyId: string;
  userId: string;
  createdAt: Date;
  expiresAt: Date;
  rotatedAt: Date | null;
  revokedAt: Date | null;
  /** The refresh token (jti) issued when this one was rotated: a retry within the grace gets that same one. */
  successorId?: string;
}

export interface TokenPair {
  access_token: string;
  refresh_token: string;
  token_type: 'Bearer';
  expires_in: number;
}

export type RefreshOutcome =
  | { ok: true; userId: string; familyId: string; successorId: string; graceRetry: boolean }
  | { ok: false; reason: 'invalid' | 'expired' | 'revoked' }
  | { ok: false; reason: 'reused'; userId: string };

const refreshClaims = z.object({ sub: z.string(), fam: z.string(), jti: z.string(), typ: z.literal('refresh') });
export interface TokenLifetimes {
  accessTokenTtlSeconds: number;
  refreshTokenTtlSeconds: number;
  /**
   * How long a just-rotated refresh token is still accepted (default 30 s; 0: never). A browser whose refresh
   * answer was lost (a reload, a closed laptop) or two console tabs refreshing at once present the same token twice
   * within seconds; without this that counts as theft and signs the user out everywhere.
   */
  refreshReuseGraceSeconds?: number;
  /**
   * The longest-lived access token introspection calls active (MAX_ACCESS_TOKEN_AGE_SECONDS, as the gateways have it;
   * default DEFAULT_MAX_ACCESS_TOKEN_AGE_SECONDS): introspection answers by the gateways' rules.
   */
  maxAccessTokenAgeSeconds?: number;
}

export const DEFAULT_REFRESH_REUSE_GRACE_SECONDS = 30;

/**
 * Issues and rotates user tokens. Refresh tokens rotate on every use; presenting one that was
 * already rotated means it was copied, so the whole family is revoked (RFC 9700 §4.14.2) — unless it was rotated
 * within the last refreshReuseGraceSeconds (a lost answer or a concurrent refresh by the same client, as identity
 * providers' rotation grace periods allow): then the answer carries the same successor refresh token as the first
 * one, so there is still one chain and a copy used later is still detected.
 */
export class TokenService {
  private readonly refreshTokens: Collection<RefreshTokenDocument>;

  constructor(
    db: Db,
    private readonly keys: TokenKeys,
    private readonly lifetimes: TokenLifetimes,
    private readonly revocations: RevocationPublisher | null = null,
  ) {
    this.refreshTokens = db.collection('refreshTokens');
  }

  /** How long a refresh token (and so a browser session's cookie) lives. */
  get refreshTokenTtlSeconds(): number {
    return this.lifetimes.refreshTokenTtlSeconds;
  }

  async ensureIndexes(): Promise<void> {
    await this.refreshTokens.createIndexes([
      { key: { familyId: 1 }, name: 'family' },
      // Sessions ended lately, for gateways that pull the revocation list (AuthStore.revokedSince).
      { key: { revokedAt: 1 }, name: 'revoked_at' },
    ]);
  }

  /** A new pair; `refreshId` names the refresh token (a rotation's successor, fixed when its predecessor was spent). */
  async issue(user: UserDocument, tenants: readonly TenantRecord[], familyId: string = randomUUID(), refreshId: string = randomUUID()): Promise<TokenPair> {
    const tenantClaims: TenantClaim[] = user.memberships.flatMap((m) => {
      const tenant = tenants.find((t) => t._id === m.tenantId);
      return tenant ? [{ id: tenant._id, role: m.role, tier: tenant.tier.toLowerCase() as Lowercase<Tier> }] : [];
    });
    // sid names the login (the refresh family): logging out revokes its access tokens at every gateway at once.
    const access_token = jwt.sign({ email: user.email, tenants: tenantClaims, typ: 'access', sid: familyId }, this.keys.privateKey, {
      algorithm: USER_TOKEN_ALGORITHM,
      keyid: this.keys.kid,
      issuer: USER_TOKEN_ISSUER,
      audience: USER_TOKEN_AUDIENCE,
      subject: user._id,
      expiresIn: this.lifetimes.accessTokenTtlSeconds,
      jwtid: randomUUID(),
    });
    const jti = refreshId;
    const now = new Date();
    // Once per token: a retry within the grace signs the same successor again, it never adds a second one.
    await this.refreshTokens.updateOne(
      { _id: jti },
      {
        $setOnInsert: {
          _id: jti,
          familyId,
          userId: user._id,
          createdAt: now,
          expiresAt: new Date(now.getTime() + this.lifetimes.refreshTokenTtlSeconds * 1000),
          rotatedAt: null,
          revokedAt: null,
        },
      },
      { upsert: true },
    );
    const refresh_token = jwt.sign({ fam: familyId, typ: 'refresh' }, this.keys.privateKey, {
      algorithm: USER_TOKEN_ALGORITHM,
      keyid: this.keys.kid,
      issuer: USER_TOKEN_ISSUER,
      audience: REFRESH_AUDIENCE,
      subject: user._id,
      expiresIn: this.lifetimes.refreshTokenTtlSeconds,
      jwtid: jti,
    });
    return { access_token, refresh_token, token_type: 'Bearer', expires_in: this.lifetimes.accessTokenTtlSeconds };
  }

  /**
   * An access token judged by the gateway's own rules (lib/access-tokens.ts), for introspection: this service's keys,
   * the same lifetime limits, and the session looked up in its database (`sessionRevoked`).
   */
  checkAccess(token: string, requestedTenant: string | undefined, sessionRevoked: (familyId: string) => Promise<boolean>): Promise<AccessTokenVerdict> {
    return checkAccessToken(token, requestedTenant, {
      maxTokenAgeSeconds: this.lifetimes.maxAccessTokenAgeSeconds ?? DEFAULT_MAX_ACCESS_TOKEN_AGE_SECONDS,
      keyFor: (kid) => this.keys.publicKeyFor(kid),
      sessionRevoked,
    });
  }

  private verifyRefresh(token: string): z.output<typeof refreshClaims> | 'expired' | null {
    const header = jwt.decode(token, { complete: true })?.header;
    const key = this.keys.publicKeyFor(header?.kid);
    if (!key) return null;
    try {
      const payload = jwt.verify(token, key, {
        algorithms: [USER_TOKEN_ALGORITHM],
        issuer: USER_TOKEN_ISSUER,
        audience: REFRESH_AUDIENCE,
      });
      const claims = refreshClaims.safeParse(payload);
      return claims.success ? claims.data : null;
    } catch (err) {
      return err instanceof jwt.TokenExpiredError ? 'expired' : null;
    }
  }

  /** Consumes a refresh token: exactly one presentation of each token can succeed. */
  async consume(token: string): Promise<RefreshOutcome> {
    const claims = this.verifyRefresh(token);
    if (claims === 'expired') return { ok: false, reason: 'expired' };
    if (!claims) return { ok: false, reason: 'invalid' };
    const successorId = randomUUID();
    const claimed = await this.refreshTokens.findOneAndUpdate(
      { _id: claims.jti, rotatedAt: null, revokedAt: null },
      { $set: { rotatedAt: new Date(), successorId } },
      { returnDocument: 'after' },
    );
    if (claimed) return { ok: true, userId: claimed.userId, familyId: claimed.familyId, successorId, graceRetry: false };
    const stored = await this.refreshTokens.findOne({ _id: claims.jti });
    if (!stored) return { ok: false, reason: 'invalid' };
    if (stored.revokedAt) return { ok: false, reason: 'revoked' };
    // Read after the rotation, so a concurrent winner's rotatedAt is never in this request's future.
    const elapsedMs = Date.now() - (stored.rotatedAt?.getTime() ?? 0);
    const graceMs = (this.lifetimes.refreshReuseGraceSeconds ?? DEFAULT_REFRESH_REUSE_GRACE_SECONDS) * 1000;
    if (stored.rotatedAt && stored.successorId && graceMs > 0 && elapsedMs >= -1_000 && elapsedMs < graceMs) {
      // The same successor as the first answer: one chain, so a copy used later is still caught as a reuse.
      return { ok: true, userId: stored.userId, familyId: stored.familyId, successorId: stored.successorId, graceRetry: true };
    }
    await this.revokeFamily(stored.familyId);
    return { ok: false, reason: 'reused', userId: stored.userId };
  }

  async revokeFamily(familyId: string): Promise<void> {
    await this.refreshTokens.updateMany({ familyId, revokedAt: null }, { $set: { revokedAt: new Date() } });
    await this.revocations?.publish({ kind: 'session', sessionId: familyId });
  }

  /** Logout: the family of a still-valid refresh token is revoked; unknown tokens are ignored. The user, if any. */
  async revoke(token: string): Promise<string | null> {
    const claims = this.verifyRefresh(token);
    if (!claims || claims === 'expired') return null;
    await this.revokeFamily(claims.fam);
    return claims.sub;
  }
}
