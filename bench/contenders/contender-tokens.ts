/**
 * The identity tokens the bare @apollo/gateway and Hive Gateway contenders send their subgraph requests (they have no
 * authentication of their own: the identity is fixed, the benchmark's tenant with every read and write scope).
 *
 * BENCH_TOKEN_MODE:
 *   per-credential (default)  one token per client credential (the request's Authorization) and subgraph, minted
 *                             again every 15 s (it lives 30 s) — as the Linepack gateway reuses its tokens
 *                             (gateway/src/identity-tokens.ts), so no contender pays for an ECDSA signature per
 *                             request (nor its subgraphs for a verification) that another does not.
 *   per-request               a fresh token for every subgraph request, as Linepack minted them before it reused
 *                             them. It also keeps Hive's in-flight de-duplication from ever matching (Hive keys it on
 *                             the subgraph request's headers).
 *
 * Environment: INTERNAL_TOKEN_PRIVATE_KEY, BENCH_TENANT_ID, BENCH_SCOPES (comma-separated), BENCH_TOKEN_MODE.
 */
import { randomUUID } from 'node:crypto';
import { mintInternalToken, type Identity } from '@linepack/lib/identity';
import { knownScopes } from '@linepack/lib/scopes';

export type TokenMode = 'per-credential' | 'per-request';

const REUSE_MS = 15_000;

/** `tokenFor(client, subgraph)`: the identity token for one subgraph request of the client presenting `client`. */
export function contenderTokens(env: NodeJS.ProcessEnv, subject: string): { mode: TokenMode; tokenFor(client: string, subgraph: string): string } {
  const privateKeyPem = env['INTERNAL_TOKEN_PRIVATE_KEY'] ?? '';
  const tenantId = env['BENCH_TENANT_ID'] ?? '';
  const scopes = knownScopes((env['BENCH_SCOPES'] ?? '').split(','));
  const mode: TokenMode = env['BENCH_TOKEN_MODE'] === 'per-request' ? 'per-request' : 'per-credential';
  if (!privateKeyPem || !tenantId) throw new Error(`${subject}: INTERNAL_TOKEN_PRIVATE_KEY and BENCH_TENANT_ID are required`);
  const mint = (subgraph: string) => {
    const identity: Identity = { subject, kind: 'api_key', tenantId, scopes, requestId: randomUUID() };
    return mintInternalToken(identity, subgraph, privateKeyPem);
  };
  const cached = new Map<string, { token: string; until: number }>();
  return {
    mode,
    tokenFor(client, subgraph) {
      if (mode === 'per-request') return mint(subgraph);
      const key = `${subgraph} ${client}`;
      const now = Date.now();
      let entry = cached.get(key);
      if (!entry || entry.until <= now) {
        entry = { token: mint(subgraph), until: now + REUSE_MS };
        cached.set(key, entry);
      }
      return entry.token;
    },
  };
}
