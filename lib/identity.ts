import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, randomUUID, type KeyObject } from 'node:crypto';
import jwt from 'jsonwebtoken';
import { LRUCache } from 'lru-cache';
import { z } from 'zod';
import { MAX_PUBLIC_KEYS, publicKeyBlocks } from './config';
import { knownScopes, roles, type Scope } from './scopes';

/** The verified caller, as every subgraph sees it. Built only from verified credentials. */
export interface Identity {
  /** API key id or user id. */
  subject: string;
  kind: 'api_key' | 'user';
  tenantId: string;
  scopes: Scope[];
  requestId: string;
  /** When the gateway stops waiting for this request (epoch ms); reads should not outlive it. */
  deadline?: number;
  /** The client's address as the gateway saw it (for the audit log). */
  clientAddress?: string;
  /** For a user's access token: the sign-in (refresh family) it belongs to. */
  sessionId?: string;
}

/** The tenant of a token the gateway mints for itself (reporting key use, vouching for a client address). */
export const NO_TENANT = '00000000-0000-4000-8000-000000000000';

/** What an identity token vouches for; a one-off token may also carry the request id and deadline. */
export type VouchedIdentity = Omit<Identity, 'requestId'> & { requestId?: string };

/** Header that carries the gateway-minted identity token to subgraphs. */
export const INTERNAL_IDENTITY_HEADER = 'x-linepack-identity';

const ISSUER = 'linepack-gateway';
const ALGORITHM = 'ES256';

/** User access tokens: issued by the auth service, verified by gateways from its JWKS. */
export const USER_TOKEN_ALGORITHM = 'ES256';
export const USER_TOKEN_ISSUER = 'linepack-auth';
export const USER_TOKEN_AUDIENCE = 'linepack-api';
/** What a user access token says: the auth service issues it, gateways (and introspection) check it against this. */
export const accessTokenClaims = z.object({
  sub: z.string().min(1),
  typ: z.literal('access'),
  // Required, not optional as in the JWT spec: a token without an expiry would never stop working.
  exp: z.number().int(),
  iat: z.number().int(),
  /** The sign-in (refresh family) the token belongs to: logging out revokes it at once. */
  sid: z.string().optional(),
  /** An OAuth client's token (auth's oauth/grants.ts): the scopes the user consented to, space-separated. */
  scope: z.string().optional(),
  tenants: z.array(z.object({ id: z.string().uuid(), role: z.enum(roles), tier: z.enum(['free', 'pro', 'enterprise']) })),
});
export type AccessTokenClaims = z.output<typeof accessTokenClaims>;

/** A one-off token covers one call, so 30 s is plenty. */
export const INTERNAL_TOKEN_TTL_SECONDS = 30;
/** At most 60 s by agreement (DESIGN §2). */
export const MAX_INTERNAL_TOKEN_TTL_SECONDS = 60;

/**
 * The request's deadline (epoch ms) beside a reused identity token. Not signed: it only bounds how long a subgraph
 * lets the request's reads run, and a subgraph never accepts one further away than MAX_REQUEST_DEADLINE_MS.
 */
export const DEADLINE_HEADER = 'x-linepack-deadline';
export const MAX_REQUEST_DEADLINE_MS = 60_000;

/** A deadline header's value, bounded to MAX_REQUEST_DEADLINE_MS from now; undefined when absent or not a number. */
export function deadlineFromHeader(value: string | undefined, now = Date.now()): number | undefined {
  if (!value || !/^\d{1,15}$/.test(value)) return undefined;
  return Math.min(Number(value), now + MAX_REQUEST_DEADLINE_MS);
}

const claimsSchema = z.object({
  sub: z.string().min(1),
  tenant_id: z.string().uuid(),
  scopes: z.array(z.string()),
  credential_kind: z.enum(['api_key', 'user']),
  exp: z.number().int(),
  /** Only in a one-off token: a reused one leaves the request id to X-Request-ID. */
  request_id: z.string().min(1).optional(),
  deadline: z.number().int().positive().optional(),
  client_address: z.string().max(100).optional(),
  session_id: z.string().max(100).optional(),
});

export interface InternalKeyPair {
  privateKeyPem: string;
  publicKeyPem: string;
}

/** A fresh P-256 key pair for internal identity tokens (development launcher, tests, `linepack internal-keys`). */
export function generateInternalKeyPair(): InternalKeyPair {
  const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'P-256' });
  return {
    privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
    publicKeyPem: publicKey.export({ type: 'spki', format: 'pem' }).toString(),
  };
}

/**
 * Key objects parsed once per PEM: jsonwebtoken parses a PEM string on every sign and verify, which was a tenth of
 * the gateway's busy time (one token per subgraph request). A process holds a few keys.
 */
const parsedKeys = new Map<string, KeyObject>();
function keyObject(pem: string, kind: 'private' | 'public'): KeyObject {
  let key = parsedKeys.get(pem);
  if (!key) {
    key = kind === 'private' ? createPrivateKey(pem) : createPublicKey(pem);
    if (parsedKeys.size < 16) parsedKeys.set(pem, key);
  }
  return key;
}

/**
 * RFC 7638 JWK thumbprint (SHA-256, base64url) of an EC public key: a key id derived from the key itself, so a
 * gateway and every subgraph name the same key alike without anyone assigning ids.
 */
export function jwkThumbprint(publicKey: KeyObject): string {
  const jwk = publicKey.export({ format: 'jwk' });
  // The required members of an EC key, in lexicographic order, no whitespace (RFC 7638 §3.2).
  return createHash('sha256')
    .update(JSON.stringify({ crv: jwk.crv, kty: jwk.kty, x: jwk.x, y: jwk.y }))
    .digest('base64url');
}

/** The kid a gateway puts in the header of the tokens its private key signs. */
const kidsByPrivatePem = new Map<string, string>();
export function internalKeyId(privateKeyPem: string): string {
  let kid = kidsByPrivatePem.get(privateKeyPem);
  if (!kid) {
    kid = jwkThumbprint(createPublicKey(keyObject(privateKeyPem, 'private')));
    if (kidsByPrivatePem.size < 16) kidsByPrivatePem.set(privateKeyPem, kid);
  }
  return kid;
}

/**
 * The public keys a service accepts identity tokens from, by kid (a JWKS in all but format): one normally, two
 * during a rotation of the gateway's key (README, Rotating keys). A token names its key in its header; a token
 * without a kid (from a gateway older than key sets) is tried against each key.
 */
export class InternalKeySet {
  private readonly byKid: ReadonlyMap<string, KeyObject>;

  constructor(publicKeysPem: string) {
    const blocks = publicKeyBlocks(publicKeysPem);
    if (blocks.length > MAX_PUBLIC_KEYS) throw new Error(`holds ${blocks.length} keys; at most ${MAX_PUBLIC_KEYS}`);
    this.byKid = new Map(blocks.map((pem) => keyObject(pem, 'public')).map((key) => [jwkThumbprint(key), key] as const));
  }

  get kids(): string[] {
    return [...this.byKid.keys()];
  }

  /** The keys to try for a token whose header names `kid`: that key, or none; every key for a token without one. */
  candidates(kid: string | undefined): KeyObject[] {
    if (kid === undefined) return [...this.byKid.values()];
    const key = this.byKid.get(kid);
    return key ? [key] : [];
  }
}

const keySets = new Map<string, InternalKeySet>();
function keySetOf(publicKeys: string | InternalKeySet): InternalKeySet {
  if (publicKeys instanceof InternalKeySet) return publicKeys;
  let set = keySets.get(publicKeys);
  if (!set) {
    set = new InternalKeySet(publicKeys);
    if (keySets.size < 16) keySets.set(publicKeys, set);
  }
  return set;
}

/**
 * Gateway side: a token for one audience (a subgraph, or auth). The gateway's subgraph calls reuse one token per
 * credential and subgraph for part of its lifetime (gateway/src/identity-tokens.ts) and send what differs per request
 * — the request id and the deadline — beside it (X-Request-ID, DEADLINE_HEADER); a one-off call may sign them in.
 */
export function mintInternalToken(
  identity: VouchedIdentity,
  audience: string,
  privateKeyPem: string,
  lifetimeSeconds: number = identity.deadline
    ? // Valid as long as the request may run (the deadline is under 55 s), never beyond the agreed 60 s.
      Math.min(MAX_INTERNAL_TOKEN_TTL_SECONDS, Math.max(1, Math.ceil((identity.deadline - Date.now()) / 1000) + 5))
    : INTERNAL_TOKEN_TTL_SECONDS,
): string {
  return jwt.sign(
    {
      tenant_id: identity.tenantId,
      scopes: identity.scopes,
      credential_kind: identity.kind,
      ...(identity.requestId ? { request_id: identity.requestId } : {}),
      ...(identity.deadline ? { deadline: identity.deadline } : {}),
      ...(identity.clientAddress ? { client_address: identity.clientAddress } : {}),
      ...(identity.sessionId ? { session_id: identity.sessionId } : {}),
    },
    keyObject(privateKeyPem, 'private'),
    {
      algorithm: ALGORITHM,
      // Which of the subgraphs' trusted keys verifies it (InternalKeySet): the thumbprint of this key's public half.
      keyid: internalKeyId(privateKeyPem),
      subject: identity.subject,
      audience,
      issuer: ISSUER,
      expiresIn: Math.min(MAX_INTERNAL_TOKEN_TTL_SECONDS, lifetimeSeconds),
      jwtid: randomUUID(),
    },
  );
}

export class InvalidInternalTokenError extends Error {}

const CLOCK_TOLERANCE_SECONDS = 5;

/**
 * Subgraph side, one per service: each distinct token is verified once and then answered from memory until it
 * expires. The gateway reuses a token for many requests, and an ECDSA verification per request was a subgraph's
 * largest fixed cost. Keyed by the whole token text, so only a token that passed verifyInternalToken is ever
 * answered from the cache, with the same expiry (and tolerance) the check applies. The key set is fixed for the
 * verifier's life (a service's configuration), so a cached answer never outlives the key that verified it.
 */
export class InternalTokenVerifier {
  private readonly verified = new LRUCache<string, VouchedIdentity & { expiresAt: number }>({ max: 10_000 });
  private readonly keys: InternalKeySet;

  constructor(
    private readonly audience: string,
    publicKeys: string | InternalKeySet,
  ) {
    this.keys = keySetOf(publicKeys);
  }

  /** The kids of the keys it trusts (logged at start: which gateway keys this service accepts). */
  get keyIds(): string[] {
    return this.keys.kids;
  }

  verify(token: string, now = Date.now()): VouchedIdentity {
    const known = this.verified.get(token);
    if (known && known.expiresAt + CLOCK_TOLERANCE_SECONDS * 1000 > now) return known;
    if (known) this.verified.delete(token);
    const identity = verifyInternalToken(token, this.audience, this.keys);
    this.verified.set(token, identity);
    return identity;
  }
}

/** The kid of a JWT's header (undefined without one), reading the header only; throws on a token that is not a JWT. */
function headerKid(token: string): string | undefined {
  const dot = token.indexOf('.');
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(token.slice(0, dot), 'base64url').toString('utf8'));
  } catch {
    throw new InvalidInternalTokenError('jwt malformed');
  }
  if (dot <= 0 || typeof header !== 'object' || header === null) throw new InvalidInternalTokenError('jwt malformed');
  const kid = (header as { kid?: unknown }).kid;
  if (kid !== undefined && (typeof kid !== 'string' || kid.length === 0 || kid.length > 100)) throw new InvalidInternalTokenError('jwt kid malformed');
  return kid as string | undefined;
}

/**
 * Subgraph side: verifies signature (with the key of the token's kid among `publicKeys`, one or more PEM blocks or
 * a key set), algorithm, issuer, audience and expiry, then the claim shapes.
 */
export function verifyInternalToken(token: string, audience: string, publicKeys: string | InternalKeySet): VouchedIdentity & { expiresAt: number } {
  const kid = headerKid(token);
  const candidates = keySetOf(publicKeys).candidates(kid);
  if (candidates.length === 0) throw new InvalidInternalTokenError(`signed by a key this service does not trust (kid ${kid})`);
  let payload: unknown;
  let failure: Error | undefined;
  for (const key of candidates) {
    try {
      payload = jwt.verify(token, key, { algorithms: [ALGORITHM], audience, issuer: ISSUER, clockTolerance: CLOCK_TOLERANCE_SECONDS });
      failure = undefined;
      break;
    } catch (err) {
      failure = err as Error;
    }
  }
  if (failure) throw new InvalidInternalTokenError(failure.message);
  const claims = claimsSchema.safeParse(payload);
  if (!claims.success) throw new InvalidInternalTokenError('identity token claims are malformed');
  return {
    expiresAt: claims.data.exp * 1000,
    subject: claims.data.sub,
    kind: claims.data.credential_kind,
    tenantId: claims.data.tenant_id,
    scopes: knownScopes(claims.data.scopes),
    ...(claims.data.request_id ? { requestId: claims.data.request_id } : {}),
    ...(claims.data.deadline ? { deadline: claims.data.deadline } : {}),
    ...(claims.data.client_address ? { clientAddress: claims.data.client_address } : {}),
    ...(claims.data.session_id ? { sessionId: claims.data.session_id } : {}),
  };
}
