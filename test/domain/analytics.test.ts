/**
 * Analytics end to end, as issue "Done when" reads: a metal-loss anomaly deeper than 80 % of wall is
 * recorded through the gateway on a gas segment in an HCA; within seconds the segment's assessments
 * say IMMEDIATE, and its risk and the risk register reflect it.
 */
import { until } from '@linepack/lib/testing/until';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let apiKey: string;
beforeAll(async () => {
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  ({ apiKey } = await stack.tenantWithKey());
});
afterAll(() => stack?.stop());

const call = (query: string, variables: Record<string, unknown> = {}, key = apiKey) =>
  graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey: key, variables });

it('answers IMMEDIATE within seconds of recording an 85 % anomaly, and the risk register puts the segment first', async () => {
  const line = await createAsset(stack.gatewayUrl, apiKey, {
    type: 'PIPELINE',
    name: 'Line 9',
    regulation: 'CFR_192',
    product: 'NATURAL_GAS',
    status: 'ACTIVE',
  });
  const segment = await createAsset(stack.gatewayUrl, apiKey, {
    type: 'SEGMENT',
    name: 'Line 9 · MP 3–5',
    parentId: line.id,
    status: 'ACTIVE',
    regulation: 'CFR_192',
    product: 'NATURAL_GAS',
    outsideDiameterMm: 610,
    wallThicknessMm: 9.5,
    smysMpa: 359,
    maopKpa: 6900,
    classLocation: 3,
    inHca: true,
  });
  const recorded = await call(`mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { ids } }`, {
    i: [
      {
        idempotencyKey: 'run-2026-a-17',
        assetId: segment.id,
        type: 'ILI_ANOMALY',
        source: 'ILI',
        observedAt: '2026-03-02T00:00:00Z',
        runId: 'run-2026-a',
        featureType: 'METAL_LOSS',
        surface: 'EXTERNAL',
        odometerM: 3120.5,
        clockDeg: 180,
        depthPctWt: 85,
        lengthMm: 60,
        widthMm: 45,
        value: 85,
        unit: 'PERCENT_WT',
      },
    ],
  });
  expect(recorded.body.errors).toBeUndefined();
  const measurementId = recorded.body.data!['recordMeasurements'].ids[0];

  const read = () =>
    call(
      `query($id: ID!) { asset(id: $id) { name anomalyAssessments { totalCount edges { node { responseCategory ruleRef repairDueAt measurement { id depthPctWt } } } }
      risk { likelihood consequence score band drivers } } }`,
      { id: segment.id },
    );
  const started = Date.now();
  const res = await until(read, (r) => r.body.data?.['asset']?.anomalyAssessments.totalCount === 1 && r.body.data['asset'].risk != null, 15_000);
  expect(Date.now() - started).toBeLessThan(10_000);
  const asset = res.body.data!['asset'];
  expect(asset.anomalyAssessments.edges[0].node).toEqual({
    responseCategory: 'IMMEDIATE',
    ruleRef: '§192.933(d)(1)(i)',
    repairDueAt: '2026-03-02T00:00:00.000Z',
    measurement: { id: measurementId, depthPctWt: 85 },
  });
  expect(asset.risk).toMatchObject({ likelihood: 5, band: 'VERY_HIGH' });

  const measurement = await call(`query($id: ID!) { measurement(id: $id) { assessment { responseCategory asset { name } } } }`, { id: measurementId });
  expect(measurement.body.data!['measurement'].assessment).toEqual({ responseCategory: 'IMMEDIATE', asset: { name: 'Line 9 · MP 3–5' } });

  const register = await call(`{ riskRegister(filter: { band: VERY_HIGH }, first: 5) { totalCount edges { node { asset { id name } risk { score } } } } }`);
  expect(register.body.data!['riskRegister'].edges[0].node.asset).toEqual({ id: segment.id, name: 'Line 9 · MP 3–5' });

  const summary = await call(
    `{ pipelineSummary { anomaliesByResponseCategory { responseCategory count } segmentsByRiskBand { band count } maxErf oldestAnalyticsComputedAt } }`,
  );
  const s = summary.body.data!['pipelineSummary'];
  expect(s.anomaliesByResponseCategory).toContainEqual({ responseCategory: 'IMMEDIATE', count: 1 });
  expect(s.segmentsByRiskBand).toContainEqual({ band: 'VERY_HIGH', count: 1 });
  expect(s.oldestAnalyticsComputedAt).not.toBeNull();
});

it('needs analytics:read for every analytics field, checked at the gateway', async () => {
  const key = await stack.keyFor((await stack.tenantWithKey()).tenantId, ['assets:read']);
  const res = await call('{ riskRegister { totalCount } }', {}, key);
  expect(res.status).toBe(403);
  expect(res.body.errors?.[0]?.extensions?.['missingScopes']).toEqual(['analytics:read']);
});
