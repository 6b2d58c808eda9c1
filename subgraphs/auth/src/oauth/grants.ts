import { createHash, randomBytes, randomUUID } from 'node:crypto';
import jwt from 'jsonwebtoken';
import type { Collection, Db } from 'mongodb';
import { z } from 'zod';
import { USER_TOKEN_ALGORITHM, USER_TOKEN_AUDIENCE, USER_TOKEN_ISSUER } from '@linepack/lib/identity';
import { ADMIN_SCOPE, canonicalScope, scopesByRole, type Role, type Scope } from '@linepack/lib/scopes';
import type { TenantRecord, UserDocument } from '../documents';
import type { TokenKeys } from '../signing-key-ring';
import type { TokenService } from '../tokens';
import { canonicalResource, type OAuthConfig } from './config';

/** An OAuth error (RFC 6749 §5.2 codes), answered as {error, error_description}. */
export class OAuthError extends Error {
  constructor(
    readonly error: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
  }
}

/** Collection `oauthCodes`: one document per authorization code, keyed by the code's hash, spent once. */
interface AuthorizationCodeDocument {
  _id: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  userId: string;
  tenantId: string;
  scopes: Scope[];
  resource: string;
  expiresAt: Date;
  spentAt: Date | null;
  /** The refresh family the code was exchanged for: revoked if the code is presented again (RFC 6749 §4.1.2). */
  familyId: string | null;
}

/** Collection `oauthGrants`: what a sign-in through OAuth (one refresh family) was consented to. */
interface OAuthGrantDocument {
  _id: string;
  clientId: string;
  userId: string;
  tenantId: string;
  scopes: Scope[];
  resource: string;
  createdAt: Date;
}

/** OAuth 2.1 §4.1.1: an authorization code lives at most a few minutes; one is plenty for a redirect. */
const CODE_TTL_MS = 60_000;
export const TOKEN_EXCHANGE_GRANT = 'urn:ietf:params:oauth:grant-type:token-exchange';
export const ACCESS_TOKEN_TYPE = 'urn:ietf:params:oauth:token-type:access_token';

const hashOf = (value: string) => createHash('sha256').update(value).digest('base64url');

/** RFC 7636 §4.1: 43–128 unreserved characters. */
const codeVerifierPattern = /^[A-Za-z0-9\-._~]{43,128}$/;
/** A base64url SHA-256 (43 characters, no padding). */
const s256ChallengePattern = /^[A-Za-z0-9_-]{43}$/;

/** RFC 7636 §4.6, S256: BASE64URL(SHA256(ASCII(code_verifier))) == code_challenge. */
export function pkceS256Matches(verifier: string, challenge: string): boolean {
  return codeVerifierPattern.test(verifier) && hashOf(verifier) === challenge;
}

/** The resource a request names (RFC 8707 §2), one the server issues tokens for; the gateway when none is named. */
export function resolveResource(config: OAuthConfig, raw: string | undefined): string {
  if (raw === undefined || raw === '') return config.gatewayResource;
  const resource = canonicalResource(raw);
  const known = [config.gatewayResource, ...config.protectedResources.map((r) => r.resource)];
  if (!resource || !known.includes(resource)) throw new OAuthError('invalid_target', `unknown resource ${raw}; known: ${known.join(', ')}`);
  return resource;
}

/** Requested scopes in canonical spelling; none asked means every scope the user's role holds. */
export function requestedScopes(raw: string | undefined): Scope[] | null {
  if (!raw?.trim()) return null;
  const out = new Set<Scope>();
  for (const s of raw.trim().split(/\s+/)) {
    const c = canonicalScope(s);
    if (!c) throw new OAuthError('invalid_scope', `unknown scope "${s}"`);
    out.add(c);
  }
  return [...out].sort();
}

/** What the user grants: the scopes asked that their role in the tenant holds (all of the role's when none were asked). */
export function grantedScopes(asked: readonly Scope[] | null, role: Role): Scope[] {
  const held = scopesByRole[role];
  // admin:* grants every other scope, so an admin may grant any of them.
  return (asked ?? [...held]).filter((s) => held.includes(s) || held.includes(ADMIN_SCOPE)).sort();
}

export const authorizationRequest = z.object({
  response_type: z.string(),
  client_id: z.string().min(1).max(2000),
  redirect_uri: z.string().min(1).max(2000).optional(),
  code_challenge: z.string().optional(),
  code_challenge_method: z.string().optional(),
  scope: z.string().max(2000).optional(),
  state: z.string().max(2000).optional(),
  resource: z.string().max(2000).optional(),
});
export type AuthorizationRequest = z.output<typeof authorizationRequest>;

/** Checks an authorization request past its client and redirect URI (RFC 6749 §4.1.2.1 errors go to the redirect). */
export function checkAuthorizationParameters(
  request: AuthorizationRequest,
  config: OAuthConfig,
): { scopes: Scope[] | null; resource: string; codeChallenge: string } {
  if (request.response_type !== 'code') throw new OAuthError('unsupported_response_type', 'only response_type=code');
  // OAuth 2.1 §4.1.1 requires PKCE; S256 only, as the MCP authorization spec requires of clients that can.
  if (request.code_challenge_method !== 'S256') throw new OAuthError('invalid_request', 'code_challenge_method must be S256');
  if (!request.code_challenge || !s256ChallengePattern.test(request.code_challenge))
    throw new OAuthError('invalid_request', 'code_challenge must be a base64url SHA-256');
  return { scopes: requestedScopes(request.scope), resource: resolveResource(config, request.resource), codeChallenge: request.code_challenge };
}

/** A redirect back to the client carrying `params`, with `iss` (RFC 9207) so a client can tell which server answered. */
export function redirectTo(redirectUri: string, params: Record<string, string | undefined>, issuer: string): string {
  const url = new URL(redirectUri);
  for (const [k, v] of Object.entries({ ...params, iss: issuer })) if (v !== undefined) url.searchParams.set(k, v);
  return url.href;
}

export interface IssuedTokens {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token?: string;
  scope: string;
  issued_token_type?: string;
}

const subjectTokenClaims = z.object({
  sub: z.string(),
  typ: z.literal('access'),
  exp: z.number().int(),
  sid: z.string(),
  email: z.string(),
  scope: z.string(),
  client_id: z.string(),
  tenants: z.array(z.object({ id: z.string(), role: z.string(), tier: z.string() })).length(1),
});

/**
 * Authorization codes, consented grants and the tokens issued for them. Refresh tokens are the auth service's own
 * (TokenService): same rotation, same reuse detection, same sign-out; the grant (client, tenant, scopes, resource) is
 * kept per refresh family. Access tokens carry only the tenant chosen at consent and the scopes granted, and are
 * audience-bound to the resource asked for (RFC 8707): the gateway's tokens carry its usual audience, any other
 * resource's token carries that resource's URL, which no gateway accepts.
 */
export class OAuthGrants {
  private readonly codes: Collection<AuthorizationCodeDocument>;
  private readonly grants: Collection<OAuthGrantDocument>;

  constructor(
    db: Db,
    private readonly tokens: TokenService,
    private readonly keys: TokenKeys,
  ) {
    this.codes = db.collection('oauthCodes');
    this.grants = db.collection('oauthGrants');
  }

  async ensureIndexes(): Promise<void> {
    await this.codes.createIndex({ expiresAt: 1 }, { name: 'expiry', expireAfterSeconds: 3_600 });
  }

  /** The code for an approved request; only its hash is stored. */
  async createCode(input: Omit<AuthorizationCodeDocument, '_id' | 'expiresAt' | 'spentAt' | 'familyId'>): Promise<string> {
    const code = randomBytes(32).toString('base64url');
    await this.codes.insertOne({ ...input, _id: hashOf(code), expiresAt: new Date(Date.now() + CODE_TTL_MS), spentAt: null, familyId: null });
    return code;
  }

  /** Whether a refresh family is an OAuth grant (its refresh token must not be used at /auth/refresh, which would widen it). */
  async isOAuthFamily(familyId: string): Promise<boolean> {
    return (await this.grants.countDocuments({ _id: familyId }, { limit: 1 })) > 0;
  }

  /** RFC 6749 §4.1.3 with PKCE (RFC 7636 §4.6) and RFC 8707 §2.2. */
  async redeemCode(
    input: { code: string; clientId: string; redirectUri: string | undefined; codeVerifier: string | undefined; resource: string | undefined },
    config: OAuthConfig,
    load: (userId: string, tenantId: string) => Promise<{ user: UserDocument; tenant: TenantRecord; role: Role } | null>,
  ): Promise<IssuedTokens> {
    const familyId = randomUUID();
    const claimed = await this.codes.findOneAndUpdate(
      { _id: hashOf(input.code), spentAt: null },
      { $set: { spentAt: new Date(), familyId } },
      { returnDocument: 'before' },
    );
    if (!claimed) {
      // A code presented twice: the tokens the first presentation got are revoked too.
      const spent = await this.codes.findOne({ _id: hashOf(input.code) });
      if (spent?.familyId) await this.tokens.revokeFamily(spent.familyId);
      throw new OAuthError('invalid_grant', 'unknown, expired or already used authorization code');
    }
    if (claimed.expiresAt.getTime() <= Date.now()) throw new OAuthError('invalid_grant', 'the authorization code expired');
    if (claimed.clientId !== input.clientId) throw new OAuthError('invalid_grant', 'the code was issued to another client');
    if (input.redirectUri !== undefined && input.redirectUri !== claimed.redirectUri)
      throw new OAuthError('invalid_grant', 'redirect_uri differs from the authorization request');
    if (!input.codeVerifier || !pkceS256Matches(input.codeVerifier, claimed.codeChallenge))
      throw new OAuthError('invalid_grant', 'code_verifier does not match the code_challenge');
    if (input.resource !== undefined && resolveResource(config, input.resource) !== claimed.resource)
      throw new OAuthError('invalid_target', 'resource differs from the authorization request');
    const loaded = await load(claimed.userId, claimed.tenantId);
    if (!loaded) throw new OAuthError('invalid_grant', 'the user no longer belongs to that tenant');
    const scopes = grantedScopes(claimed.scopes, loaded.role);
    await this.grants.insertOne({
      _id: familyId,
      clientId: claimed.clientId,
      userId: claimed.userId,
      tenantId: claimed.tenantId,
      scopes: claimed.scopes,
      resource: claimed.resource,
      createdAt: new Date(),
    });
    return this.issue(loaded.user, loaded.tenant, scopes, claimed.resource, claimed.clientId, config, familyId);
  }

  /**
   * RFC 6749 §6 through the auth service's rotation: a spent token presented again revokes the family (reported to
   * `onReuse`). Scopes are those granted, less any the user's current role no longer holds.
   */
  async refresh(
    input: { refreshToken: string; clientId: string; resource: string | undefined; scope: string | undefined },
    config: OAuthConfig,
    load: (userId: string, tenantId: string) => Promise<{ user: UserDocument; tenant: TenantRecord; role: Role } | null>,
    onReuse: (userId: string) => Promise<void>,
  ): Promise<IssuedTokens> {
    const outcome = await this.tokens.consume(input.refreshToken);
    if (!outcome.ok) {
      if (outcome.reason === 'reused') await onReuse(outcome.userId);
      throw new OAuthError('invalid_grant', 'invalid, expired or revoked refresh token');
    }
    const grant = await this.grants.findOne({ _id: outcome.familyId });
    if (!grant || grant.clientId !== input.clientId) {
      // A first-party refresh token, or another client's: neither may be refreshed here.
      await this.tokens.revokeFamily(outcome.familyId);
      throw new OAuthError('invalid_grant', 'the refresh token was not issued to this client');
    }
    if (input.resource !== undefined && resolveResource(config, input.resource) !== grant.resource)
      throw new OAuthError('invalid_target', 'resource differs from the grant');
    const loaded = await load(grant.userId, grant.tenantId);
    if (!loaded) {
      await this.tokens.revokeFamily(outcome.familyId);
      throw new OAuthError('invalid_grant', 'the user no longer belongs to that tenant');
    }
    let scopes = grantedScopes(grant.scopes, loaded.role);
    const narrowed = requestedScopes(input.scope);
    if (narrowed) {
      // RFC 6749 §6: a refresh may ask for less, never more.
      if (narrowed.some((s) => !scopes.includes(s))) throw new OAuthError('invalid_scope', 'a refresh cannot widen the granted scopes');
      scopes = narrowed;
    }
    return this.issue(loaded.user, loaded.tenant, scopes, grant.resource, grant.clientId, config, outcome.familyId, outcome.successorId);
  }

  private async issue(
    user: UserDocument,
    tenant: TenantRecord,
    scopes: Scope[],
    resource: string,
    clientId: string,
    config: OAuthConfig,
    familyId: string,
    refreshId?: string,
  ): Promise<IssuedTokens> {
    // The refresh token and its rotation record are TokenService's; its first-party access token is not handed out.
    const pair = await this.tokens.issue(user, [tenant], familyId, refreshId);
    const membership = user.memberships.find((m) => m.tenantId === tenant._id)!;
    const access_token = this.signAccess(
      { sub: user._id, email: user.email, sid: familyId, clientId, scopes, tenant: { id: tenant._id, role: membership.role, tier: tenant.tier.toLowerCase() } },
      resource,
      config,
      pair.expires_in,
    );
    return { access_token, token_type: 'Bearer', expires_in: pair.expires_in, refresh_token: pair.refresh_token, scope: scopes.join(' ') };
  }

  private signAccess(
    subject: {
      sub: string;
      email: string;
      sid: string;
      clientId: string;
      scopes: readonly string[];
      tenant: { id: string; role: string; tier: string };
      actor?: string;
    },
    resource: string,
    config: OAuthConfig,
    expiresInSeconds: number,
  ): string {
    const forGateway = resource === config.gatewayResource;
    return jwt.sign(
      {
        email: subject.email,
        tenants: [subject.tenant],
        typ: 'access',
        sid: subject.sid,
        scope: subject.scopes.join(' '),
        client_id: subject.clientId,
        ...(subject.actor ? { act: { sub: subject.actor } } : {}),
      },
      this.keys.privateKey,
      {
        algorithm: USER_TOKEN_ALGORITHM,
        keyid: this.keys.kid,
        // Gateways check the auth service's own issuer and audience; other resource servers check the RFC 8414
        // issuer and their own URL (RFC 9068 §4), so neither accepts the other's token.
        issuer: forGateway ? USER_TOKEN_ISSUER : config.issuer,
        audience: forGateway ? USER_TOKEN_AUDIENCE : resource,
        subject: subject.sub,
        expiresIn: expiresInSeconds,
        jwtid: randomUUID(),
      },
    );
  }

  /**
   * RFC 8693 §2.1: a resource server (authenticated as `actor`) exchanges a token bound to it for one bound to the
   * gateway, for the same user, tenant and scopes, living no longer than the token it replaces; no refresh token.
   */
  async exchange(
    input: { subjectToken: string; subjectTokenType: string | undefined; resource: string | undefined; audience: string | undefined },
    actor: string,
    config: OAuthConfig,
    sessionRevoked: (familyId: string) => Promise<boolean>,
  ): Promise<IssuedTokens> {
    if (input.subjectTokenType !== ACCESS_TOKEN_TYPE) throw new OAuthError('invalid_request', `subject_token_type must be ${ACCESS_TOKEN_TYPE}`);
    const target = resolveResource(config, input.resource ?? input.audience);
    if (target !== config.gatewayResource) throw new OAuthError('invalid_target', 'tokens are exchanged for the gateway only');
    const header = jwt.decode(input.subjectToken, { complete: true })?.header;
    const key = this.keys.publicKeyFor(header?.kid);
    let claims: z.output<typeof subjectTokenClaims>;
    try {
      if (!key || header?.alg !== USER_TOKEN_ALGORITHM) throw new Error('unknown key');
      // Only a token audience-bound to the caller itself: a resource server cannot exchange another's tokens.
      const payload = jwt.verify(input.subjectToken, key, { algorithms: [USER_TOKEN_ALGORITHM], issuer: config.issuer, audience: actor });
      claims = subjectTokenClaims.parse(payload);
    } catch {
      throw new OAuthError('invalid_grant', 'the subject token is not a valid access token for this resource server');
    }
    if (await sessionRevoked(claims.sid)) throw new OAuthError('invalid_grant', 'the session of the subject token has been signed out');
    const remaining = claims.exp - Math.floor(Date.now() / 1000);
    if (remaining <= 0) throw new OAuthError('invalid_grant', 'the subject token expired');
    const access_token = this.signAccess(
      {
        sub: claims.sub,
        email: claims.email,
        sid: claims.sid,
        clientId: claims.client_id,
        scopes: claims.scope.split(' ').filter(Boolean),
        tenant: claims.tenants[0]!,
        actor,
      },
      config.gatewayResource,
      config,
      remaining,
    );
    return { access_token, token_type: 'Bearer', expires_in: remaining, scope: claims.scope, issued_token_type: ACCESS_TOKEN_TYPE };
  }
}
