import { createPublicKey } from 'node:crypto';
import { createLogger } from '@linepack/lib/logger';
import type { RunningService } from '@linepack/lib/subgraph-server';
import { defaultTokenLifetimes, startAuthSubgraph } from '@linepack/subgraph-auth';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { SigningKeyRing } from '@linepack/subgraph-auth/signing-key-ring';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * Rotating the token signing key without downtime: the auth service is redeployed with a new key
 * (the old one verify-only) while the gateway keeps running; old and new tokens both work.
 */
const oldKeyPem = SigningKeys.generatePem();
const newKeyPem = SigningKeys.generatePem();
const password = 'rotation password 123';
let stack: TestStack;
let replacement: RunningService | null = null;

beforeAll(async () => {
  stack = await startTestStack({ auth: { signingKeyPem: oldKeyPem } });
  const { tenantId } = await stack.tenantWithKey();
  await stack.authStore.createUser({ tenantId, email: 'rotate-key@example.com', password, role: 'VIEWER' });
});
afterAll(async () => {
  await replacement?.stop();
  await stack?.stop();
});

async function login(): Promise<string> {
  const res = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'rotate-key@example.com', password }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

it('keeps old tokens valid and accepts tokens from the new key once the gateway meets its kid', async () => {
  const oldToken = await login();
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: oldToken })).status).toBe(200); // gateway now caches the old JWKS

  // Redeploy auth on the same address: new signing key, the old public key verify-only.
  const port = stack.subgraphs.auth.port;
  await stack.subgraphs.auth.stop();
  const oldPublicPem = createPublicKey(oldKeyPem).export({ type: 'spki', format: 'pem' }).toString();
  replacement = await startAuthSubgraph({
    port,
    host: '127.0.0.1',
    mongoUri: process.env['MONGODB_URI']!,
    dbPrefix: stack.dbPrefix,
    internalTokenPublicKey: stack.internalKeys.publicKeyPem,
    logger: createLogger('auth', 'silent'),
    auth: { ...defaultTokenLifetimes, signingKeyPem: newKeyPem, verifyOnlyPublicKeyPems: [oldPublicPem] },
  });

  const jwks = (await (await fetch(`${stack.gatewayOrigin}/auth/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
  expect(jwks.keys).toHaveLength(2);

  const newToken = await login();
  expect(kidOf(newToken)).not.toBe(kidOf(oldToken));
  expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([kidOf(oldToken), kidOf(newToken)]));
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: oldToken })).status).toBe(200);
  // The gateway refetches the JWKS for an unknown kid (at most every 5 s, against forged-kid floods).
  await new Promise((r) => setTimeout(r, 5_100));
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: newToken })).status).toBe(200);
}, 30_000);

describe('the signing key ring: rotation on a schedule, with overlap, and retirement', () => {
  let ringStack: TestStack;
  const rootPem = SigningKeys.generatePem();
  const jwksKids = async (s: TestStack) =>
    ((await (await fetch(`${s.gatewayOrigin}/auth/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
  const waitFor = async (check: () => Promise<boolean>, ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      if (await check()) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  };
  beforeAll(async () => {
    // Auth replicas re-read the ring every 200 ms here (30 s by default); no automatic rotation in this stack.
    ringStack = await startTestStack({ auth: { signingKeyPem: rootPem, signingKeyRefreshMs: 200, signingKeyRotationMs: 0 } });
    const { tenantId } = await ringStack.tenantWithKey();
    await ringStack.authStore.createUser({ tenantId, email: 'ring@example.com', password, role: 'VIEWER' });
  });
  afterAll(async () => {
    await ringStack?.stop();
  });
  const loginAt = async (s: TestStack) => {
    const res = await fetch(`${s.gatewayOrigin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ring@example.com', password }),
    });
    return (await res.json()) as { access_token: string; refresh_token: string };
  };

  it('rotates (linepack keys rotate-signing): new tokens from the new key, old ones valid until they expire, then retired', async () => {
    const before = await loginAt(ringStack);
    const authDb = ringStack.authStore.users.db;
    const kid = await SigningKeyRing.rotate(authDb, rootPem);
    expect(kid).toBeTruthy();
    // Published from the moment it signs, with the old key beside it.
    expect(await waitFor(async () => kidOf((await loginAt(ringStack)).access_token) === kid, 3_000)).toBe(true);
    expect(await jwksKids(ringStack)).toEqual(expect.arrayContaining([kid!, kidOf(before.access_token)]));
    expect((await graphql(ringStack.gatewayUrl, '{ me { id } }', { apiKey: before.access_token })).status).toBe(200);
    // A refresh token the old key signed still refreshes (into tokens of the new key).
    const refreshed = await fetch(`${ringStack.gatewayOrigin}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: before.refresh_token }),
    });
    expect(refreshed.status).toBe(200);
    expect(kidOf(((await refreshed.json()) as { access_token: string }).access_token)).toBe(kid);

    // Once the last access token it signed has expired, the old key leaves the JWKS; once its last refresh token
    // has, it is deleted. (Its retirement is moved back in time instead of waiting 15 minutes and 30 days.)
    const keys = authDb.collection<{ _id: string; retiredAt: Date | null }>('signingKeys');
    await keys.updateOne({ _id: kidOf(before.access_token) }, { $set: { retiredAt: new Date(Date.now() - 3_600_000) } });
    expect(await waitFor(async () => !(await jwksKids(ringStack)).includes(kidOf(before.access_token)), 3_000)).toBe(true);
    await keys.updateOne({ _id: kidOf(before.access_token) }, { $set: { retiredAt: new Date(Date.now() - 40 * 86_400_000) } });
    expect(await waitFor(async () => (await keys.countDocuments({ _id: kidOf(before.access_token) })) === 0, 3_000)).toBe(true);
  }, 30_000);

  it('keeps private keys encrypted at rest under JWT_SIGNING_KEY', async () => {
    const docs = await ringStack.authStore.users.db.collection('signingKeys').find().toArray();
    expect(docs.length).toBeGreaterThan(0);
    expect(JSON.stringify(docs)).not.toContain('PRIVATE KEY');
  });

  it('rotates on its own when the key is older than the schedule allows', async () => {
    const scheduled = await startTestStack({ auth: { signingKeyRefreshMs: 200, signingKeyRotationMs: 1_500 } });
    try {
      const first = await jwksKids(scheduled);
      expect(first).toHaveLength(1);
      expect(await waitFor(async () => (await jwksKids(scheduled)).length === 2, 6_000)).toBe(true);
      expect(await jwksKids(scheduled)).toContain(first[0]);
    } finally {
      await scheduled.stop();
    }
  }, 30_000);
});

describe('rate limits belong to the key lineage: rotating a key does not give it a fresh budget', () => {
  let limited: TestStack;
  const introspect = async (key: string) =>
    (await (await fetch(`${limited.gatewayOrigin}/auth/introspect`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<string, unknown>;
  const typename = (key: string) => graphql(limited.gatewayUrl, '{ __typename }', { apiKey: key });
  beforeAll(async () => {
    // Counted in Redis as in production; a "minute" of an hour, so no window ends while the test runs.
    limited = await startTestStack({ redisUrl: process.env['REDIS_URL'], rateLimitWindows: { minuteSeconds: 3_600, daySeconds: 86_400 } });
  });
  afterAll(async () => {
    await limited?.stop();
  });

  it('a rotated free key goes on from what its predecessor spent, rotation after rotation', async () => {
    const { tenantId, apiKey: admin } = await limited.tenantWithKey({ scopes: ['admin:*'] });
    const original = await limited.authStore.createApiKey({ tenantId, name: 'nightly export', scopes: ['assets:read'], tier: 'FREE' });
    for (let i = 0; i < 55; i++) expect((await typename(original.secret)).status).toBe(200);

    // Rotated by the tenant's admin through the API: the new key's first request sees the 5 requests left.
    const rotated = await graphql<{ rotateApiKey: { secret: string; apiKey: { id: string } } }>(
      limited.gatewayUrl,
      `mutation { rotateApiKey(id: "${original.apiKey._id}") { secret apiKey { id } } }`,
      { apiKey: admin },
    );
    expect(rotated.body.errors).toBeUndefined();
    const second = rotated.body.data!.rotateApiKey;
    expect(second.apiKey.id).not.toBe(original.apiKey._id);
    const first = await typename(second.secret);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-remaining')).toBe('4');
    for (let i = 0; i < 4; i++) expect((await typename(second.secret)).status).toBe(200);
    expect((await typename(second.secret)).status).toBe(429);

    // Rotating again (the CLI's path) does not reset it either: the lineage is the original key's id.
    const third = await limited.authStore.rotateApiKey(tenantId, second.apiKey.id);
    expect((await typename(third.secret)).status).toBe(429);
    expect(await introspect(third.secret)).toMatchObject({ active: true, sub: third.apiKey._id, lineage_id: original.apiKey._id });
  });

  it('a new key (not a rotation) has a budget of its own', async () => {
    const { tenantId } = await limited.tenantWithKey();
    const created = await limited.authStore.createApiKey({ tenantId, name: 'another script', scopes: ['assets:read'], tier: 'FREE' });
    const res = await typename(created.secret);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-remaining')).toBe('59');
    expect(await introspect(created.secret)).toMatchObject({ lineage_id: created.apiKey._id });
  });
});
