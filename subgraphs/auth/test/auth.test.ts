/**
 * The identity team's in-process tests: the auth subgraph alone against its own database. Token flows,
 * JWT attacks and tenant isolation through the gateway stay in test/auth.
 */
import { startSubgraphHarness, type SubgraphHarness } from '@linepack/lib/testing/subgraph-harness';
import type { SubgraphModule } from '@linepack/lib/subgraph-types';
import { defaultTokenLifetimes, descriptor, startAuthSubgraph } from '../src';
import { SigningKeys } from '../src/signing-keys';
import { AuthStore } from '../src/store';

const auth: SubgraphModule = {
  descriptor,
  start: (options) =>
    startAuthSubgraph({ ...options, auth: { ...defaultTokenLifetimes, signingKeyPem: SigningKeys.generatePem(), verifyOnlyPublicKeyPems: [] } }),
};

let harness: SubgraphHarness;
let store: AuthStore;
beforeAll(async () => {
  harness = await startSubgraphHarness(auth, { defaultScopes: ['admin:*'] });
  store = new AuthStore(harness.db);
});
afterAll(() => harness?.stop());

const restUrl = (path: string) => harness.url.replace(/\/graphql$/, path);

it('creates a key over GraphQL, shows the secret once, and lists it without the secret', async () => {
  const tenant = await store.createTenant({ name: 'Acme', tier: 'PRO' });
  const admin = harness.identity(['admin:*'], tenant._id);
  const created = await harness.request(
    `mutation { createApiKey(input: { name: "ci", scopes: ["read:assets"], tier: FREE }) { secret apiKey { id scopes tier } } }`,
    { identity: admin },
  );
  expect(created.errors).toBeUndefined();
  expect(created.data?.['createApiKey'].secret).toMatch(/^lpk_/);
  expect(created.data?.['createApiKey'].apiKey).toMatchObject({ scopes: ['assets:read'], tier: 'FREE' });
  const listed = await harness.request(`{ apiKeys { id prefix } }`, { identity: admin });
  expect(JSON.stringify(listed.data)).not.toContain(created.data?.['createApiKey'].secret);
});

it('refuses key management without admin:*', async () => {
  const viewer = harness.identity(['assets:read']);
  const res = await harness.request(`{ apiKeys { id } }`, { identity: viewer });
  expect(res.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', missingScopes: ['admin:*'] });
});

it('answers a failed login with one problem body whether or not the email exists', async () => {
  const tenant = await store.createTenant({ name: 'Beta', tier: 'FREE' });
  await store.createUser({ tenantId: tenant._id, email: 'eng@beta.example', password: 'correct horse battery staple', role: 'ENGINEER' });
  const login = (email: string) =>
    fetch(restUrl('/auth/login'), {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: 'wrong password!' }),
    });
  const [known, unknown] = await Promise.all([login('eng@beta.example'), login('nobody@beta.example')]);
  expect(known.status).toBe(401);
  expect(known.headers.get('content-type')).toMatch(/application\/problem\+json/);
  expect(await known.json()).toEqual(await unknown.json());
});
