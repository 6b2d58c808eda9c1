import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * Every input has a length or range (issue 16): what is stored, matched or echoed is bounded, names are plain
 * text, numbers are physical and dates exist. Each refusal is BAD_USER_INPUT naming the field and the rule.
 */
let stack: TestStack;
let apiKey: string;
let adminKey: string;
let pipelineId: string;
beforeAll(async () => {
  stack = await startTestStack();
  const tenant = await stack.tenantWithKey();
  apiKey = tenant.apiKey;
  adminKey = await stack.keyFor(tenant.tenantId, ['admin:*']);
  pipelineId = (await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Limits line' })).id;
});
afterAll(async () => {
  await stack?.stop();
});

const createMutation = 'mutation($input: CreateAssetInput!) { createAsset(input: $input) { id } }';

async function refusal(query: string, variables: Record<string, unknown> = {}, key = apiKey) {
  const res = await graphql(stack.gatewayUrl, query, { apiKey: key, variables });
  const error = res.body.errors?.[0];
  return { code: error?.extensions?.['code'], field: error?.extensions?.['field'], message: error?.message ?? '', size: JSON.stringify(res.body).length };
}

it.each([
  ['a NUL byte', 'Line\u0000A'],
  ['a newline', 'Line\nA'],
  ['an unpaired surrogate', 'Line \uD800A'],
  ['a right-to-left override', 'Line \u202EA'],
  ['a bidirectional isolate', 'Line \u2066A'],
  ['a line separator', 'Line\u2028A'],
])('refuses an asset name with %s', async (_what, name) => {
  const r = await refusal(createMutation, { input: { type: 'SEGMENT', name, parentId: pipelineId } });
  expect(r).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.name' });
  expect(r.message).toContain('must not contain control characters, unpaired surrogates or bidirectional overrides');
});

it('keeps names with accents, CJK and emoji (surrogate pairs)', async () => {
  const res = await graphql(stack.gatewayUrl, createMutation, {
    apiKey,
    variables: { input: { type: 'SEGMENT', name: 'Tronçon 北 🛢️', parentId: pipelineId } },
  });
  expect(res.body.errors).toBeUndefined();
});

it('refuses stations that are not physical, so sums stay finite', async () => {
  const r = await refusal(createMutation, { input: { type: 'PIPELINE', name: 'Far', beginStationM: 0, endStationM: 1.7e308 } });
  expect(r).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.endStationM' });
  expect(r.message).toContain('must be ≤ 10000000 m');
  const summary = await graphql<{ pipelineSummary: { totalPipelineLengthM: number } }>(stack.gatewayUrl, '{ pipelineSummary { totalPipelineLengthM } }', {
    apiKey,
  });
  expect(summary.body.errors).toBeUndefined();
});

it.each([
  ['2026-02-30T00:00:00Z', 'is not a calendar date'],
  ['2026-13-01T00:00:00Z', 'is not a calendar date'],
  ['2026-01-01T24:00:00Z', 'is not a time of day'],
  ['0000-01-01T00:00:00Z', 'in the years 1900 to 2199'],
  ['9999-12-31T00:00:00Z', 'in the years 1900 to 2199'],
  ['2199-12-31T23:00:00-12:00', 'in the years 1900 to 2199 (UTC)'],
])('refuses the date-time %s', async (installedAt, rule) => {
  const r = await refusal(createMutation, { input: { type: 'PIPELINE', name: 'Dated', installedAt } });
  expect(r.code).toBe('BAD_USER_INPUT');
  expect(r.message).toContain(rule);
});

it('accepts the last day of February in a leap year, with an offset', async () => {
  const res = await graphql<{ createAsset: { id: string } }>(stack.gatewayUrl, createMutation, {
    apiKey,
    variables: { input: { type: 'PIPELINE', name: 'Leap', installedAt: '2028-02-29T23:30:00-05:00' } },
  });
  expect(res.body.errors).toBeUndefined();
});

it('bounds search text, ids and cursors', async () => {
  expect(await refusal('query($s: String) { assets(filter: { nameContains: $s }) { totalCount } }', { s: 'x'.repeat(101) })).toMatchObject({
    code: 'BAD_USER_INPUT',
    field: 'filter.nameContains',
  });
  // Matched as a literal: regular-expression syntax finds nothing instead of everything.
  const literal = await graphql<{ assets: { totalCount: number } }>(stack.gatewayUrl, '{ assets(filter: { nameContains: ".*" }) { totalCount } }', { apiKey });
  expect(literal.body.data?.assets.totalCount).toBe(0);
  expect(await refusal('query($id: ID!) { asset(id: $id) { id } }', { id: 'a'.repeat(101) })).toMatchObject({ code: 'BAD_USER_INPUT', field: 'id' });
  expect(await refusal('query($c: String) { assets(after: $c) { totalCount } }', { c: 'c'.repeat(501) })).toMatchObject({
    code: 'BAD_USER_INPUT',
    field: 'after',
  });
});

it('refuses measurement keys and asset ids that are too long or not plain text, naming the item', async () => {
  const item = {
    idempotencyKey: 'ok-1',
    assetId: pipelineId,
    type: 'PRESSURE',
    value: 5_000,
    unit: 'KPA',
    observedAt: '2026-03-01T00:00:00Z',
    source: 'SCADA',
  };
  const mutation = 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount } }';
  const r = await refusal(mutation, {
    i: [item, { ...item, idempotencyKey: 'ok-2', assetId: 'a'.repeat(101) }, { ...item, idempotencyKey: 'key\u202Egnp.exe' }],
  });
  expect(r.code).toBe('BAD_USER_INPUT');
  expect(r.message).toContain('input[1].assetId: at most 100 characters');
  expect(r.message).toContain('input[2].idempotencyKey: must not contain control characters');
});

it('never echoes a huge value back: 100,000 scopes get a short answer', async () => {
  const scopes = Array.from({ length: 100_000 }, (_, i) => `nope:${i}`);
  const r = await refusal('mutation($s: [String!]!) { createApiKey(input: { name: "k", scopes: $s }) { secret } }', { s: scopes }, adminKey);
  expect(r.code).toBe('BAD_USER_INPUT');
  expect(r.size).toBeLessThan(3_000);
});
