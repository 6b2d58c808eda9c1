import type { ChildProcess } from 'node:child_process';
import { redisBackends, type RedisBackend } from '@linepack/lib/testing/redis-backends';
import { startGatewayProcess } from '../support/gateway-process';
import { eventually } from '@linepack/lib/testing/until';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * Revocation reaches every gateway replica at once: a second gateway process that has just verified (and
 * cached) a key, or holds a user's access token, refuses it within a second of the revocation at the first — not
 * when the cache entry (CREDENTIAL_CACHE_TTL_SECONDS) or the token (15 minutes) runs out. Here the replica caches for
 * the longest the gateway allows (300 s), so a refusal well before that (a 60 s bound, which only a lost revocation or
 * a hung machine reaches) is the revocation message and nothing else; how fast it is on a quiet machine is not asserted.
 */
const typename = (url: string, token: string) => graphql(url, '{ __typename }', { apiKey: token });

const REPLICA_CACHE_TTL_SECONDS = 300;

/** Whether `url` refuses `token` (401) before a fraction of the replica's cache lifetime has passed. */
const refusedLongBeforeCacheExpiry = (url: string, token: string) =>
  eventually(async () => (await typename(url, token)).status === 401, (REPLICA_CACHE_TTL_SECONDS * 1000) / 5, 50);

/** Every case with the gateways and auth on one redis-server and on a Redis Cluster. */
describe.each(redisBackends())('on %s', (_name, startBackend) => {
  let backend: RedisBackend;
  let stack: TestStack;
  let replica: { url: string; origin: string; process: ChildProcess };
  let tenantId: string;
  let adminKey: string;
  const children: ChildProcess[] = [];

  beforeAll(async () => {
    backend = await startBackend();
    stack = await startTestStack({ redisUrl: backend.target });
    ({ tenantId, apiKey: adminKey } = await stack.tenantWithKey({ scopes: ['admin:*'] }));
    replica = await startGatewayProcess(stack, backend.target, { CREDENTIAL_CACHE_TTL_SECONDS: String(REPLICA_CACHE_TTL_SECONDS) });
    children.push(replica.process);
  }, 120_000);
  afterAll(async () => {
    for (const child of children) child.kill('SIGTERM');
    await stack?.stop();
    await backend?.close();
  });

  it('a key revoked by its tenant admin through the first gateway is refused by the second long before its cached verification expires', async () => {
    const key = await stack.authStore.createApiKey({ tenantId, name: 'revoked at once', scopes: ['assets:read'], tier: 'PRO' });
    expect((await typename(replica.url, key.secret)).status).toBe(200);
    const revoked = await graphql(stack.gatewayUrl, `mutation { revokeApiKey(id: "${key.apiKey._id}") { id } }`, { apiKey: adminKey });
    expect(revoked.body.errors).toBeUndefined();
    expect(await refusedLongBeforeCacheExpiry(replica.url, key.secret)).toBe(true);
  }, 120_000);

  const introspect = async (token: string) =>
    (await (await fetch(`${stack.gatewayOrigin}/auth/introspect`, { headers: { authorization: `Bearer ${token}` } })).json()) as Record<string, unknown>;

  describe('signed-out sessions', () => {
    const password = 'a long enough password';
    async function login(email: string) {
      const res = await fetch(`${stack.gatewayOrigin}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email, password }),
      });
      return (await res.json()) as { access_token: string; refresh_token: string };
    }

    it('logout revokes the session’s access token at every gateway long before it expires, and only that session', async () => {
      await stack.authStore.createUser({ tenantId, email: 'signs-out@example.com', password, role: 'VIEWER' });
      const session = await login('signs-out@example.com');
      const other = await login('signs-out@example.com');
      expect((await typename(replica.url, session.access_token)).status).toBe(200);
      const out = await fetch(`${stack.gatewayOrigin}/auth/logout`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ refresh_token: session.refresh_token }),
      });
      expect(out.status).toBe(204);
      expect(await refusedLongBeforeCacheExpiry(replica.url, session.access_token)).toBe(true);
      expect((await typename(stack.gatewayUrl, session.access_token)).status).toBe(401);
      // The same user's other login is untouched.
      expect((await typename(replica.url, other.access_token)).status).toBe(200);
      // Introspection says what the gateways do: the signed-out session's token is inactive, the other one active.
      expect(await introspect(session.access_token)).toEqual({ active: false });
      expect(await introspect(other.access_token)).toMatchObject({ active: true, role: 'VIEWER' });

      // A gateway that starts after the logout (a new replica, a restart) reads the revoked session back from Redis.
      const late = await startGatewayProcess(stack, backend.target);
      children.push(late.process);
      expect((await typename(late.url, session.access_token)).status).toBe(401);
      expect((await typename(late.url, other.access_token)).status).toBe(200);
    }, 120_000);

    it('a role change ends the member’s sessions at the gateways and at introspection alike', async () => {
      const user = await stack.authStore.createUser({ tenantId, email: 'promoted@example.com', password, role: 'VIEWER' });
      const session = await login('promoted@example.com');
      expect(await introspect(session.access_token)).toMatchObject({ active: true, role: 'VIEWER' });
      const changed = await graphql(stack.gatewayUrl, `mutation { changeUserRole(userId: "${user._id}", role: ENGINEER) { role } }`, { apiKey: adminKey });
      expect(changed.body.errors).toBeUndefined();
      // Refused at the other gateway (how fast is the logout test's business; this one is about agreeing).
      expect(await refusedLongBeforeCacheExpiry(replica.url, session.access_token)).toBe(true);
      // The token still says VIEWER and is properly signed; introspection no longer calls it active.
      expect(await introspect(session.access_token)).toEqual({ active: false });
    });
  });
});
