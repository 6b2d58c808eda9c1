import { graphql, startTestStack, type TestStack } from '../support/stack';

/** Key management over GraphQL by a tenant admin: create (secret once), list (never the secret), revoke. */
let stack: TestStack;
let adminKey: string;
let tenantId: string;

beforeAll(async () => {
  stack = await startTestStack();
  ({ apiKey: adminKey, tenantId } = await stack.tenantWithKey({ tier: 'PRO', scopes: ['admin'] }));
});
afterAll(async () => {
  await stack?.stop();
});

const admin = (query: string, variables: Record<string, unknown> = {}) =>
  graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey: adminKey, variables });

it('creates a key whose secret works once shown, lists it without the secret, and revokes it', async () => {
  const created = await admin('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { secret apiKey { id prefix scopes tier expiresAt } } }', {
    i: { name: 'ingest job', scopes: ['write:measurements', 'read:assets'], tier: 'PRO', expiresInDays: 30 },
  });
  expect(created.body.errors).toBeUndefined();
  const { secret, apiKey } = created.body.data!['createApiKey'];
  expect(secret).toMatch(/^lpk_[0-9A-Za-z]{40}$/);
  expect(apiKey).toMatchObject({ scopes: ['assets:read', 'measurements:write'], tier: 'PRO', prefix: secret.slice(0, 12) });
  expect(Date.parse(apiKey.expiresAt)).toBeGreaterThan(Date.now() + 29 * 86_400_000);

  expect((await graphql(stack.gatewayUrl, '{ assets { totalCount } }', { apiKey: secret })).status).toBe(200);

  const listed = await admin('{ apiKeys { id name prefix lastUsedAt revokedAt } }');
  expect(JSON.stringify(listed.body)).not.toContain(secret);
  expect(listed.body.data!['apiKeys'].find((k: { id: string }) => k.id === apiKey.id)).toMatchObject({ name: 'ingest job', revokedAt: null });

  const revoked = await admin('mutation($id: ID!) { revokeApiKey(id: $id) { revokedAt } }', { id: apiKey.id });
  expect(revoked.body.data!['revokeApiKey'].revokedAt).toBeTruthy();
  expect((await graphql(stack.gatewayUrl, '{ assets { totalCount } }', { apiKey: secret })).status).toBe(401);
});

it.each([
  [{ name: 'k', scopes: ['assets:delete'] }, 'scopes', 'unknown scope'],
  [{ name: 'k', scopes: [] }, 'scopes', 'at least one scope'],
  [{ name: 'k', scopes: ['assets:read'], tier: 'ENTERPRISE' }, 'tier', "exceeds the tenant's plan"],
  [{ name: 'k', scopes: ['assets:read'], expiresInDays: 0 }, 'expiresInDays', 'from 1 to 730'],
  [{ name: 'k', scopes: ['assets:read'], expiresInDays: 1000 }, 'expiresInDays', "from 1 to 730 (the tenant's maximum)"],
])('rejects %j naming the field', async (input, field, rule) => {
  const res = await admin('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { secret } }', { i: input });
  expect(res.body.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  expect(res.body.errors?.[0]?.extensions?.['field']).toBe(field);
  expect(res.body.errors?.[0]?.message).toContain(rule);
});

it('cannot revoke another tenant’s key', async () => {
  const other = await stack.tenantWithKey();
  const res = await admin('mutation($id: ID!) { revokeApiKey(id: $id) { id } }', { id: other.keyId });
  expect(res.body.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
  expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: other.apiKey })).status).toBe(200);
});

it('caps the active keys of a tenant at 100 (each has its own rate-limit budget); revoking one makes room', async () => {
  const { tenantId, apiKey: capAdmin } = await stack.tenantWithKey({ tier: 'PRO', scopes: ['admin'] });
  // The admin key is the first; a revoked key does not count.
  const revoked = await stack.authStore.createApiKey({ tenantId, name: 'old', scopes: ['assets:read'], tier: 'FREE' });
  await stack.authStore.revokeApiKey(tenantId, revoked.apiKey._id);
  for (let i = 1; i < 100; i++) await stack.authStore.createApiKey({ tenantId, name: `k${i}`, scopes: ['assets:read'], tier: 'FREE' });
  const create = () =>
    graphql<Record<string, any>>(stack.gatewayUrl, 'mutation { createApiKey(input: { name: "one more", scopes: ["assets:read"] }) { apiKey { id } } }', {
      apiKey: capAdmin,
    });
  const refused = await create();
  expect(refused.body.errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
  expect(refused.body.errors?.[0]?.message).toContain('the tenant already has 100 active API keys, the most allowed is 100: revoke one first');
  const victim = (await stack.authStore.listApiKeys(tenantId)).find((k) => k.name === 'k1')!;
  await stack.authStore.revokeApiKey(tenantId, victim._id);
  expect((await create()).body.errors).toBeUndefined();
});

describe('key lifetimes and use', () => {
  const create = (input: Record<string, unknown>) =>
    admin('mutation($i: CreateApiKeyInput!) { createApiKey(input: $i) { secret apiKey { id expiresAt lastUsedAt } } }', { i: input });
  const days = (iso: string) => (Date.parse(iso) - Date.now()) / 86_400_000;

  it('gives a key created without an expiry the tenant default (365 days) rather than none', async () => {
    const res = await create({ name: 'no expiry given', scopes: ['assets:read'] });
    expect(days(res.body.data!['createApiKey'].apiKey.expiresAt)).toBeCloseTo(365, 0);
  });

  it('follows the tenant key policy set with the CLI’s store call: default and maximum', async () => {
    await stack.authStore.setKeyExpiryPolicy(tenantId, { defaultDays: 30, maxDays: 90 });
    try {
      expect(days((await create({ name: 'policy default', scopes: ['assets:read'] })).body.data!['createApiKey'].apiKey.expiresAt)).toBeCloseTo(30, 0);
      const tooLong = await create({ name: 'too long', scopes: ['assets:read'], expiresInDays: 91 });
      expect(tooLong.body.errors?.[0]?.extensions?.['field']).toBe('expiresInDays');
      expect(tooLong.body.errors?.[0]?.message).toContain('from 1 to 90');
    } finally {
      await stack.authStore.setKeyExpiryPolicy(tenantId, { defaultDays: 365, maxDays: 730 });
    }
  });

  it('shows when a key was last used to within seconds (the gateway reports uses in batches)', async () => {
    const { secret, apiKey } = (await create({ name: 'watched', scopes: ['assets:read'] })).body.data!['createApiKey'];
    expect(apiKey.lastUsedAt).toBeNull();
    const usedAt = Date.now();
    for (let i = 0; i < 20; i++) expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: secret })).status).toBe(200);
    const lastUsed = async () =>
      ((await admin('{ apiKeys { id lastUsedAt } }')).body.data!['apiKeys'] as { id: string; lastUsedAt: string | null }[]).find((k) => k.id === apiKey.id)!
        .lastUsedAt;
    const deadline = Date.now() + 10_000;
    let seen: string | null = null;
    while (!seen && Date.now() < deadline) {
      seen = await lastUsed();
      if (!seen) await new Promise((r) => setTimeout(r, 250));
    }
    expect(seen).not.toBeNull();
    expect(Date.parse(seen!)).toBeGreaterThanOrEqual(usedAt - 1_000);
    expect(Date.parse(seen!)).toBeLessThanOrEqual(Date.now());
  }, 20_000);
});

it('rotates a key: a new secret with the same name, scopes and tier; the old one stops at once; both in the audit log', async () => {
  const made = await admin('mutation { createApiKey(input: { name: "rotated job", scopes: ["assets:read"], tier: PRO }) { secret apiKey { id } } }');
  const old = made.body.data!['createApiKey'];
  expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: old.secret })).status).toBe(200);
  const rotated = await admin('mutation($id: ID!) { rotateApiKey(id: $id) { secret apiKey { id name scopes tier } } }', { id: old.apiKey.id });
  const fresh = rotated.body.data!['rotateApiKey'];
  expect(fresh.apiKey).toMatchObject({ name: 'rotated job', scopes: ['assets:read'], tier: 'PRO' });
  expect(fresh.apiKey.id).not.toBe(old.apiKey.id);
  expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: fresh.secret })).status).toBe(200);
  expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: old.secret })).status).toBe(401);
  const again = await admin('mutation($id: ID!) { rotateApiKey(id: $id) { secret } }', { id: old.apiKey.id });
  expect(again.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });
  const audit = await admin('query($t: String) { auditEvents(filter: { targetId: $t }) { edges { node { type } } } }', { t: old.apiKey.id });
  const types = audit.body.data!['auditEvents'].edges.map((e: { node: { type: string } }) => e.node.type);
  expect([...types].sort()).toEqual(['API_KEY_CREATED', 'API_KEY_REVOKED', 'API_KEY_ROTATED']);
});
