import { randomUUID } from 'node:crypto';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken, NO_TENANT, type Identity } from '@linepack/lib/identity';

/**
 * The gateway's calls to the auth service vouch with an identity token (audience auth), as calls to subgraphs
 * do: for a caller (`identity`), or for the gateway itself (no tenant) with, when it proxies, the client address.
 */
export function identityHeaderForAuth(privateKeyPem: string, identity: Identity | { requestId?: string; clientAddress?: string } = {}): Record<string, string> {
  const vouched: Identity =
    'subject' in identity
      ? identity
      : {
          subject: 'gateway',
          kind: 'api_key',
          tenantId: NO_TENANT,
          scopes: [],
          requestId: identity.requestId ?? randomUUID(),
          ...(identity.clientAddress ? { clientAddress: identity.clientAddress } : {}),
        };
  return { [INTERNAL_IDENTITY_HEADER]: mintInternalToken(vouched, 'auth', privateKeyPem) };
}

/** POST to one of the auth service's internal routes (not under /auth, so unreachable through the gateway); throws unless 2xx. */
export async function postToAuthInternal(authUrl: string, path: string, headers: Record<string, string>, body: unknown): Promise<void> {
  const res = await fetch(`${authUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(5_000),
  });
  if (!res.ok) throw new Error(`auth answered ${res.status}`);
}
