import { INTERNAL_IDENTITY_HEADER, mintInternalToken } from '@linepack/lib/identity';
import { until } from '@linepack/lib/testing/until';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

/** Tenant A's data, attacked from tenant B through every read path. */
let stack: TestStack;
let a: { tenantId: string; apiKey: string };
let b: { tenantId: string; apiKey: string };
let assetOfA: string;
const password = 'a long enough password';

beforeAll(async () => {
  // Redis carries the domain events analytics and compliance build their results from.
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  a = await stack.tenantWithKey({ name: 'A' });
  b = await stack.tenantWithKey({ name: 'B' });
  assetOfA = (await createAsset(stack.gatewayUrl, a.apiKey, { type: 'PIPELINE', name: 'Secret line of A' })).id;
  const rec = await graphql(
    stack.gatewayUrl,
    `mutation { recordMeasurements(input: [{ idempotencyKey: "a-1", assetId: "${assetOfA}", type: PRESSURE, value: 5000, unit: KPA, observedAt: "2026-01-01T00:00:00Z", source: SCADA }]) { ids } }`,
    { apiKey: a.apiKey },
  );
  expect(rec.body.errors).toBeUndefined();
});
afterAll(async () => {
  await stack?.stop();
});

/** `_entities` sent straight to a subgraph with a genuine identity token for tenant B (admin:*). */
const entitiesAsB = async (subgraph: 'assets' | 'measurements' | 'analytics' | 'compliance', representations: object[], selection: string) => {
  const token = mintInternalToken(
    { subject: 'b-user', kind: 'api_key', tenantId: b.tenantId, scopes: ['admin:*'], requestId: 'r' },
    subgraph,
    stack.internalKeys.privateKeyPem,
  );
  const res = await fetch(stack.subgraphs[subgraph].url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [INTERNAL_IDENTITY_HEADER]: token },
    body: JSON.stringify({ query: `query($r: [_Any!]!) { _entities(representations: $r) { ${selection} } }`, variables: { r: representations } }),
  });
  return (await res.json()) as { data?: { _entities: unknown[] }; errors?: { extensions?: { code?: string } }[] };
};

it('lists: B sees none of A’s assets', async () => {
  const res = await graphql<{ assets: { totalCount: number; edges: unknown[] } }>(stack.gatewayUrl, '{ assets { totalCount edges { node { id } } } }', {
    apiKey: b.apiKey,
  });
  expect(res.body.data?.assets).toEqual({ totalCount: 0, edges: [] });
});

it('lookups by id: A’s asset does not exist for B', async () => {
  const res = await graphql<{ asset: unknown }>(stack.gatewayUrl, `{ asset(id: "${assetOfA}") { id name } }`, { apiKey: b.apiKey });
  expect(res.body.errors).toBeUndefined();
  expect(res.body.data?.asset).toBeNull();
  const own = await graphql<{ asset: { name: string } }>(stack.gatewayUrl, `{ asset(id: "${assetOfA}") { name } }`, { apiKey: a.apiKey });
  expect(own.body.data?.asset.name).toBe('Secret line of A');
});

it('search: B finds nothing by A’s asset name', async () => {
  const res = await graphql<{ assets: { totalCount: number } }>(stack.gatewayUrl, '{ assets(filter: { nameContains: "secret" }) { totalCount } }', {
    apiKey: b.apiKey,
  });
  expect(res.body.data?.assets.totalCount).toBe(0);
});

it('writes: B cannot update A’s asset', async () => {
  const res = await graphql(stack.gatewayUrl, `mutation { updateAsset(id: "${assetOfA}", version: 1, input: { name: "pwned" }) { id } }`, { apiKey: b.apiKey });
  expect(res.body.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
});

it('writes: B cannot record measurements against A’s asset', async () => {
  const res = await graphql(
    stack.gatewayUrl,
    `mutation { recordMeasurements(input: [{ idempotencyKey: "b-1", assetId: "${assetOfA}", type: PRESSURE, value: 1, unit: KPA, observedAt: "2026-01-02T00:00:00Z", source: SCADA }]) { ids } }`,
    { apiKey: b.apiKey },
  );
  expect(res.body.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  expect(res.body.errors?.[0]?.message).toBe('input[0].assetId: no asset with this id in your tenant');
});

it('summaries: B’s counts exclude A’s data', async () => {
  const res = await graphql<{ pipelineSummary: { totalAssets: number; measurementCount: number } }>(
    stack.gatewayUrl,
    '{ pipelineSummary { totalAssets measurementCount } }',
    {
      apiKey: b.apiKey,
    },
  );
  expect(res.body.data?.pipelineSummary).toEqual({ totalAssets: 0, measurementCount: 0 });
});

describe('_entities sent straight to a subgraph with a genuine identity for tenant B', () => {
  it('does not resolve A’s asset', async () => {
    const body = await entitiesAsB('assets', [{ __typename: 'Asset', id: assetOfA }], '... on Asset { id name }');
    expect(body.data?._entities).toEqual([null]);
  });

  it('does not return A’s measurements through the Asset entity', async () => {
    const body = await entitiesAsB('measurements', [{ __typename: 'Asset', id: assetOfA }], '... on Asset { measurements { totalCount } }');
    expect(body.data?._entities).toEqual([{ measurements: { totalCount: 0 } }]);
  });

  it('refuses A’s pipeline summary', async () => {
    const body = await entitiesAsB('assets', [{ __typename: 'PipelineSummary', tenantId: a.tenantId }], '... on PipelineSummary { totalAssets }');
    expect(body.errors?.[0]?.extensions?.code).toBe('FORBIDDEN');
    expect(JSON.stringify(body.data ?? null)).not.toContain('totalAssets');
  });
});

describe('X-Tenant-ID tampering', () => {
  it('an API key cannot select another tenant', async () => {
    const res = await graphql(stack.gatewayUrl, '{ assets { totalCount } }', { apiKey: b.apiKey, headers: { 'x-tenant-id': a.tenantId } });
    expect(res.status).toBe(403);
    expect(res.body.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
  });

  it('a user selects among their own tenants and nothing else', async () => {
    const c = await stack.tenantWithKey({ name: 'C' });
    await stack.authStore.createUser({ tenantId: b.tenantId, email: 'multi@example.com', password, role: 'VIEWER' });
    await stack.authStore.createUser({ tenantId: c.tenantId, email: 'multi@example.com', password, role: 'ENGINEER' });
    const login = await fetch(`${stack.gatewayOrigin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'multi@example.com', password }),
    });
    const { access_token } = (await login.json()) as { access_token: string };
    const me = async (tenant?: string) =>
      graphql<{ me: { tenantId: string; scopes: string[] } }>(stack.gatewayUrl, '{ me { tenantId scopes } }', {
        apiKey: access_token,
        headers: tenant ? { 'x-tenant-id': tenant } : {},
      });
    expect((await me(c.tenantId)).body.data?.me.tenantId).toBe(c.tenantId);
    expect((await me(c.tenantId)).body.data?.me.scopes).toContain('assets:write');
    expect((await me(b.tenantId)).body.data?.me.scopes).not.toContain('assets:write');
    const intrusion = await me(a.tenantId);
    expect(intrusion.status).toBe(403);
    expect(intrusion.body.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
  });
});

describe('analytics and compliance results of A, attacked from B', () => {
  let segmentOfA: string;
  let anomalyOfA: string;

  beforeAll(async () => {
    segmentOfA = (
      await createAsset(stack.gatewayUrl, a.apiKey, {
        type: 'SEGMENT',
        name: 'HCA segment of A',
        status: 'ACTIVE',
        product: 'NATURAL_GAS',
        regulation: 'CFR_192',
        outsideDiameterMm: 508,
        wallThicknessMm: 7.9,
        smysMpa: 359,
        maopKpa: 6200,
        classLocation: 3,
        inHca: true,
      })
    ).id;
    const rec = await graphql<{ recordMeasurements: { ids: string[] } }>(
      stack.gatewayUrl,
      `mutation { recordMeasurements(input: [{ idempotencyKey: "a-deep", assetId: "${segmentOfA}", type: ILI_ANOMALY, observedAt: "2026-03-02T00:00:00Z",
        source: ILI, runId: "a-run", featureType: METAL_LOSS, odometerM: 10, clockDeg: 90, depthPctWt: 85, lengthMm: 60 }]) { ids } }`,
      { apiKey: a.apiKey },
    );
    anomalyOfA = rec.body.data!.recordMeasurements.ids[0]!;
    // A sees its own results first, so B seeing nothing means isolation, not lag.
    const own = await until(
      () => graphql<{ riskRegister: { totalCount: number } }>(stack.gatewayUrl, '{ riskRegister { totalCount } }', { apiKey: a.apiKey }),
      (r) => (r.body.data?.riskRegister.totalCount ?? 0) >= 1,
      20_000,
    );
    expect(own.body.data?.riskRegister.totalCount).toBeGreaterThanOrEqual(1);
    const status = await until(
      () => graphql<{ complianceStatus: { totalCount: number } }>(stack.gatewayUrl, '{ complianceStatus { totalCount } }', { apiKey: a.apiKey }),
      (r) => (r.body.data?.complianceStatus.totalCount ?? 0) > 0,
      20_000,
    );
    expect(status.body.data?.complianceStatus.totalCount).toBeGreaterThan(0);
  });

  it('through the gateway: B’s register, status and summary hold none of it', async () => {
    const res = await graphql<Record<string, unknown>>(
      stack.gatewayUrl,
      `{ riskRegister { totalCount } complianceStatus { totalCount } measurement(id: "${anomalyOfA}") { id }
         pipelineSummary { anomaliesByResponseCategory { count } segmentsByRiskBand { count } complianceByState { count } maxErf } }`,
      { apiKey: b.apiKey },
    );
    expect(res.body.errors).toBeUndefined();
    const data = res.body.data as { pipelineSummary: Record<string, { count: number }[] | null> } & Record<string, unknown>;
    expect({ ...data, pipelineSummary: undefined }).toEqual({
      riskRegister: { totalCount: 0 },
      complianceStatus: { totalCount: 0 },
      measurement: null,
      pipelineSummary: undefined,
    });
    // The summary lists every category and band; each count is B's own, so zero.
    const { maxErf, ...counts } = data.pipelineSummary;
    expect(maxErf).toBeNull();
    expect(Object.values(counts).flatMap((rows) => (rows ?? []).map((r) => r.count))).toEqual(expect.arrayContaining([0]));
    expect(Object.values(counts).every((rows) => (rows ?? []).every((r) => r.count === 0))).toBe(true);
  });

  it('straight to the subgraphs: A’s segment and anomaly resolve to nothing for B', async () => {
    expect(
      (await entitiesAsB('analytics', [{ __typename: 'Asset', id: segmentOfA }], '... on Asset { anomalyAssessments { totalCount } risk { score } }')).data
        ?._entities,
    ).toEqual([{ anomalyAssessments: { totalCount: 0 }, risk: null }]);
    expect(
      (await entitiesAsB('analytics', [{ __typename: 'Measurement', id: anomalyOfA }], '... on Measurement { assessment { responseCategory } }')).data
        ?._entities,
    ).toEqual([{ assessment: null }]);
    expect(
      (await entitiesAsB('compliance', [{ __typename: 'Asset', id: segmentOfA }], '... on Asset { compliance { obligations { obligation } } }')).data
        ?._entities,
    ).toEqual([{ compliance: { obligations: [] } }]);
  });
});
