import jwt from 'jsonwebtoken';
import { generateInternalKeyPair, INTERNAL_IDENTITY_HEADER, mintInternalToken } from '@linepack/lib/identity';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let tenantA: { tenantId: string; apiKey: string };
let tenantB: { tenantId: string; apiKey: string };

beforeAll(async () => {
  stack = await startTestStack();
  tenantA = await stack.tenantWithKey({ name: 'Tenant A' });
  tenantB = await stack.tenantWithKey({ name: 'Tenant B' });
  for (const name of ['Line 1', 'Line 2', 'Line 3']) await createAsset(stack.gatewayUrl, tenantA.apiKey, { type: 'PIPELINE', name });
  await createAsset(stack.gatewayUrl, tenantB.apiKey, { type: 'PIPELINE', name: 'Other tenant line' });
});

afterAll(async () => {
  await stack?.stop();
});

describe('gateway authentication', () => {
  it('answers { __typename } for a valid API key', async () => {
    const res = await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: tenantA.apiKey });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ data: { __typename: 'Query' }, extensions: { cost: { requested: 0, maximum: 250_000 } } });
    expect(res.headers.get('x-request-id')).toBeTruthy();
  });

  it('refuses a request without a credential with 401 UNAUTHENTICATED', async () => {
    const res = await graphql(stack.gatewayUrl, '{ __typename }');
    expect(res.status).toBe(401);
    expect(res.body.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
    expect(res.headers.get('www-authenticate')).toMatch(/^Bearer/);
  });

  it.each([
    ['a well-formed but unknown key', 'lpk_' + 'A'.repeat(40)],
    ['a key with one character changed', () => tenantA.apiKey.slice(0, -1) + (tenantA.apiKey.endsWith('a') ? 'b' : 'a')],
    ['garbage', 'not-a-key'],
  ])('refuses %s with 401', async (_label, key) => {
    const res = await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: typeof key === 'function' ? key() : key });
    expect(res.status).toBe(401);
    expect(res.body.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
  });

  it('refuses a revoked key', async () => {
    const { apiKey, keyId, tenantId } = await stack.tenantWithKey();
    expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey })).status).toBe(200);
    await stack.authStore.revokeApiKey(tenantId, keyId);
    expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey })).status).toBe(401);
  });
});

describe('pipelineSummary', () => {
  it("counts the caller's tenant's assets only", async () => {
    const a = await graphql<{ pipelineSummary: { totalAssets: number } }>(stack.gatewayUrl, '{ pipelineSummary { totalAssets } }', { apiKey: tenantA.apiKey });
    const b = await graphql<{ pipelineSummary: { totalAssets: number } }>(stack.gatewayUrl, '{ pipelineSummary { totalAssets } }', { apiKey: tenantB.apiKey });
    expect(a.body.errors).toBeUndefined();
    expect(a.body.data?.pipelineSummary.totalAssets).toBe(3);
    expect(b.body.data?.pipelineSummary.totalAssets).toBe(1);
  });

  it('combines fields from several subgraphs in one query', async () => {
    const res = await graphql<{ pipelineSummary: { totalAssets: number; measurementCount: number } }>(
      stack.gatewayUrl,
      '{ pipelineSummary { totalAssets measurementCount } }',
      { apiKey: tenantA.apiKey },
    );
    expect(res.body.errors).toBeUndefined();
    expect(res.body.data?.pipelineSummary).toEqual({ totalAssets: 3, measurementCount: 0 });
  });
});

describe('subgraphs reached directly', () => {
  const query = JSON.stringify({ query: '{ pipelineSummary { totalAssets } }' });
  const post = (headers: Record<string, string>) =>
    fetch(stack.subgraphs.assets.url, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: query });
  const identity = () => ({ subject: 'attacker', kind: 'api_key' as const, tenantId: tenantA.tenantId, scopes: ['admin:*' as const], requestId: 'r1' });

  it('refuse a request without an internal identity token', async () => {
    const res = await post({});
    expect(res.status).toBe(401);
    expect(((await res.json()) as { errors: { extensions: { code: string } }[] }).errors[0]?.extensions.code).toBe('UNAUTHENTICATED');
  });

  it("refuse the client's own API key in place of an identity token", async () => {
    expect((await post({ authorization: `Bearer ${tenantA.apiKey}` })).status).toBe(401);
    expect((await post({ [INTERNAL_IDENTITY_HEADER]: tenantA.apiKey })).status).toBe(401);
  });

  it('refuse a token signed with another key', async () => {
    const forged = mintInternalToken(identity(), 'assets', generateInternalKeyPair().privateKeyPem);
    expect((await post({ [INTERNAL_IDENTITY_HEADER]: forged })).status).toBe(401);
  });

  it('refuse an unsigned (alg: none) token', async () => {
    const unsigned = jwt.sign({ tenant_id: tenantA.tenantId, scopes: ['admin:*'], credential_kind: 'api_key', request_id: 'r' }, '', {
      algorithm: 'none',
      audience: 'assets',
      issuer: 'linepack-gateway',
      subject: 'attacker',
    });
    expect((await post({ [INTERNAL_IDENTITY_HEADER]: unsigned })).status).toBe(401);
  });

  it('refuse a genuine token minted for another subgraph', async () => {
    const forMeasurements = mintInternalToken(identity(), 'measurements', stack.internalKeys.privateKeyPem);
    expect((await post({ [INTERNAL_IDENTITY_HEADER]: forMeasurements })).status).toBe(401);
  });

  it('accept a genuine token for this subgraph (the control case)', async () => {
    const genuine = mintInternalToken(identity(), 'assets', stack.internalKeys.privateKeyPem);
    const res = await post({ [INTERNAL_IDENTITY_HEADER]: genuine });
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ data: { pipelineSummary: { totalAssets: 3 } } });
  });
});
