/**
 * The measurements team's own tests: this subgraph alone, in-process, against its own database, with
 * identities minted as the gateway mints them. The end-to-end path through the gateway is covered in
 * test/domain/measurements.test.ts.
 */
import { startSubgraphHarness, type SubgraphHarness } from '@linepack/lib/testing/subgraph-harness';
import { subgraph } from '../src';

let harness: SubgraphHarness;
beforeAll(async () => {
  harness = await startSubgraphHarness(subgraph, { defaultScopes: ['measurements:read', 'measurements:write'] });
});
afterAll(() => harness?.stop());

const record = `mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount duplicateCount ids } }`;
const reading = (key: string, assetId: string, observedAt: string) => ({
  idempotencyKey: key,
  assetId,
  type: 'CP_PIPE_TO_SOIL',
  source: 'FIELD',
  observedAt,
  value: -910,
  unit: 'MV',
});
const entities = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Asset { id latestMeasurement { type value observedAt } measurements(first: 10) { totalCount } } } }`;

it('records a batch once and resolves it through Asset entities', async () => {
  const items = [reading('a-1', 'asset-1', '2026-01-01T00:00:00Z'), reading('a-2', 'asset-1', '2026-02-01T00:00:00Z')];
  const first = await harness.request(record, { variables: { i: items } });
  expect(first.data?.['recordMeasurements']).toMatchObject({ insertedCount: 2, duplicateCount: 0 });
  const again = await harness.request(record, { variables: { i: items } });
  expect(again.data?.['recordMeasurements']).toMatchObject({ insertedCount: 0, duplicateCount: 2 });

  const res = await harness.request(entities, { variables: { r: [{ __typename: 'Asset', id: 'asset-1' }] } });
  expect(res.errors).toBeUndefined();
  expect(res.data?.['_entities'][0]).toEqual({
    id: 'asset-1',
    latestMeasurement: { type: 'CP_PIPE_TO_SOIL', value: -910, observedAt: '2026-02-01T00:00:00.000Z' },
    measurements: { totalCount: 2 },
  });
});

it('rejects an invalid batch whole, naming the item and field', async () => {
  const res = await harness.request(record, {
    variables: { i: [reading('b-1', 'asset-2', '2026-01-01T00:00:00Z'), { ...reading('b-2', 'asset-2', '2026-01-01T00:00:00Z'), unit: 'KPA' }] },
  });
  expect(res.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  expect(JSON.stringify(res.errors?.[0]?.extensions?.['violations'])).toContain('input[1]');
  const stored = await harness.request(entities, { variables: { r: [{ __typename: 'Asset', id: 'asset-2' }] } });
  expect(stored.data?.['_entities'][0].measurements.totalCount).toBe(0);
});

it("never shows one tenant's measurements to another, even by entity reference", async () => {
  await harness.request(record, { variables: { i: [reading('c-1', 'asset-3', '2026-01-01T00:00:00Z')] } });
  const other = harness.identity(['measurements:read']);
  const res = await harness.request(entities, { identity: other, variables: { r: [{ __typename: 'Asset', id: 'asset-3' }] } });
  expect(res.data?.['_entities'][0]).toEqual({ id: 'asset-3', latestMeasurement: null, measurements: { totalCount: 0 } });
});

it('checks the scopes in its own SDL again', async () => {
  const readOnly = harness.identity(['measurements:read']);
  const res = await harness.request(record, { identity: readOnly, variables: { i: [reading('d-1', 'asset-4', '2026-01-01T00:00:00Z')] } });
  expect(res.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
});

it('answers 401 without an identity token', async () => {
  const res = await fetch(harness.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
  expect(res.status).toBe(401);
});
