import { LRUCache } from 'lru-cache';
import { internalKeyId, MAX_INTERNAL_TOKEN_TTL_SECONDS, mintInternalToken, type VouchedIdentity } from '@linepack/lib/identity';

/**
 * How long a minted identity token is sent before a fresh one is minted: half its life, so a token always reaches
 * its subgraph with at least 30 s left — more than any request's deadline leaves it to wait in a queue.
 */
const REUSE_SECONDS = MAX_INTERNAL_TOKEN_TTL_SECONDS / 2;

/**
 * Identity tokens for subgraph requests, one per (credential, tenant, scopes, session, client address, subgraph),
 * reused for REUSE_SECONDS. Signing one per subgraph request was the gateway's largest single cost after the query
 * planner. Reuse changes nothing a subgraph can be made to believe: a token was already a bearer for its audience
 * for up to 60 s, and everything it vouches for is in the cache key, so a different scope set, tenant, session or
 * address gets its own token. What differs per request (the request id, the deadline) travels beside it as headers.
 * A revoked credential is refused by the gateway before any token is looked up.
 *
 * Each token names its signing key in its header (`kid`, the key's RFC 7638 thumbprint), so subgraphs that trust
 * several keys during a rotation pick the right one (lib/identity.ts InternalKeySet).
 */
export class IdentityTokenCache {
  private readonly tokens: LRUCache<string, string>;

  constructor(
    private readonly privateKeyPem: string,
    max = 10_000,
  ) {
    this.tokens = new LRUCache({ max, ttl: REUSE_SECONDS * 1000, ttlAutopurge: false });
  }

  /** The kid of the key this gateway signs with: what a subgraph's key set must hold (readiness reports it). */
  get keyId(): string {
    return internalKeyId(this.privateKeyPem);
  }

  tokenFor(identity: Omit<VouchedIdentity, 'requestId' | 'deadline'>, audience: string): string {
    // Unit separators cannot occur in ids, scope names or addresses, so two identities never share a key.
    const key = [
      audience,
      identity.kind,
      identity.subject,
      identity.tenantId,
      identity.sessionId ?? '',
      identity.clientAddress ?? '',
      identity.scopes.join(' '),
    ].join('\u001f');
    let token = this.tokens.get(key);
    if (!token) {
      const { subject, kind, tenantId, scopes, clientAddress, sessionId } = identity;
      const vouched: VouchedIdentity = { subject, kind, tenantId, scopes, ...(clientAddress ? { clientAddress } : {}), ...(sessionId ? { sessionId } : {}) };
      token = mintInternalToken(vouched, audience, this.privateKeyPem, MAX_INTERNAL_TOKEN_TTL_SECONDS);
      this.tokens.set(key, token);
    }
    return token;
  }
}
