/**
 * Analytics end to end, as issue "Done when" reads: a metal-loss anomaly deeper than 80 % of wall is
 * recorded through the gateway on a gas segment in an HCA; within seconds the segment's assessments
 * say IMMEDIATE, and its risk and the risk register reflect it.
 */
import { until } from '@linepack/lib/testing/until';
import { createAsset, graphql, mongoCommandsDuring, startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let apiKey: string;
let tenantId: string;
beforeAll(async () => {
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'], monitorCommands: true });
  ({ apiKey, tenantId } = await stack.tenantWithKey());
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
  // The segment's risk is computed when the asset arrives (no anomaly yet) and again once the anomaly is assessed: wait
  // for the one that counts it (its drivers name it), not the first risk there is. The bound is for a stuck machine.
  const countsTheAnomaly = (risk: { drivers?: string[] } | null | undefined) => (risk?.drivers ?? []).some((d) => d.includes('IMMEDIATE'));
  const res = await until(read, (r) => r.body.data?.['asset']?.anomalyAssessments.totalCount === 1 && countsTheAnomaly(r.body.data['asset'].risk), 60_000);
  const asset = res.body.data!['asset'];
  expect(asset.anomalyAssessments.edges[0].node).toEqual({
    responseCategory: 'IMMEDIATE',
    ruleRef: '§192.933(d)(1)(iii)',
    repairDueAt: '2026-03-02T00:00:00.000Z',
    measurement: { id: measurementId, depthPctWt: 85 },
  });
  expect(asset.risk).toMatchObject({ likelihood: 5, band: 'VERY_HIGH' });

  let measurement!: Awaited<ReturnType<typeof call>>;
  const commands = await mongoCommandsDuring(stack.subgraphs.analytics.mongo!, async () => {
    measurement = await call(`query($id: ID!) { measurement(id: $id) { assessment { responseCategory overdue asset { name } } } }`, { id: measurementId });
  });
  expect(measurement.body.data!['measurement'].assessment).toEqual({ responseCategory: 'IMMEDIATE', overdue: true, asset: { name: 'Line 9 · MP 3–5' } });
  // Only what the selection reads is read (the along-the-line plot asks 500 assessments a page for their category).
  const assessmentsRead = commands.find((c) => c.commandName === 'find' && c.command['find'] === 'assessments')!;
  expect(Object.keys(assessmentsRead.command['projection'] as object).sort()).toEqual(['_id', 'assetId', 'repairDueAt', 'responseCategory', 'status']);

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

const recordAnomaly = async (input: Record<string, unknown>) => {
  const res = await call(`mutation($i: MeasurementInput!) { recordMeasurement(input: $i) { ids } }`, {
    i: { type: 'ILI_ANOMALY', source: 'ILI', observedAt: '2026-04-01T00:00:00Z', runId: 'run-2026-d', odometerM: 410.2, ...input },
  });
  expect(res.body.errors).toBeUndefined();
  return res.body.data!['recordMeasurement'].ids[0] as string;
};
const assessmentsOf = (assetId: string) =>
  call(
    `query($id: ID!) { asset(id: $id) { anomalyAssessments { totalCount edges { node { assessable notAssessableReason responseCategory ruleRef categoryReason
       repairDueAt methodNotes modelVersion computedAt measurement { id } } } } risk { likelihood drivers } } }`,
    { id: assetId },
  );

/**
 * The assessment and the asset's risk are written by separate steps: a risk scored before the assessment existed
 * ("no assessed anomalies") is there first, and a loaded machine can answer with it after the assessment is stored.
 */
const riskCountsAnAnomaly = (risk: { drivers: string[] } | null | undefined) =>
  risk != null && !risk.drivers.some((driver) => driver.startsWith('no assessed anomalies'));

it('categorises a dent recorded through the gateway by §195.452(h)(4) and scores the segment on it', async () => {
  // §195.452(h)(4)(ii)(A): "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) with a
  // depth greater than 3% of the pipeline diameter (greater than 0.250 inches in depth for a pipeline diameter less
  // than Nominal Pipe Size (NPS) 12)." — a 4 % dent at 1 o'clock on 508 mm pipe.
  const segment = await createAsset(stack.gatewayUrl, apiKey, {
    type: 'SEGMENT',
    name: 'Crude 20 · MP 7–9',
    status: 'ACTIVE',
    regulation: 'CFR_195',
    product: 'CRUDE_OIL',
    outsideDiameterMm: 508,
    wallThicknessMm: 7.9,
    smysMpa: 359,
    maopKpa: 6000,
  });
  const id = await recordAnomaly({ idempotencyKey: 'dent-crude-1', assetId: segment.id, featureType: 'DENT', clockDeg: 30, dentDepthPctOd: 4 });
  const res = await until(
    () => assessmentsOf(segment.id),
    (r) => r.body.data?.['asset']?.anomalyAssessments.totalCount === 1 && riskCountsAnAnomaly(r.body.data['asset'].risk),
    15_000,
  );
  const node = res.body.data!['asset'].anomalyAssessments.edges[0].node;
  expect(node).toMatchObject({
    assessable: true,
    responseCategory: 'SIXTY_DAY',
    ruleRef: '§195.452(h)(4)(ii)(A)',
    repairDueAt: '2026-05-31T00:00:00.000Z',
    measurement: { id },
  });
  expect(node.categoryReason).toContain('with a depth greater than 3% of the pipeline diameter');
  expect(res.body.data!['asset'].risk.drivers[0]).toBe('1 SIXTY_DAY anomaly, a dent: likelihood 4');
});

it('a dent with metal loss on the top of a gas HCA segment is immediate under §192.933(d)(1)(ii)', async () => {
  const segment = await createAsset(stack.gatewayUrl, apiKey, {
    type: 'SEGMENT',
    name: 'Line 12 · MP 1–2',
    status: 'ACTIVE',
    regulation: 'CFR_192',
    product: 'NATURAL_GAS',
    outsideDiameterMm: 610,
    wallThicknessMm: 9.5,
    smysMpa: 359,
    maopKpa: 6900,
    classLocation: 2,
    inHca: true,
  });
  await recordAnomaly({ idempotencyKey: 'dent-gas-1', assetId: segment.id, featureType: 'DENT', clockDeg: 330, dentDepthPctOd: 1.5, dentHasMetalLoss: true });
  const res = await until(
    () => assessmentsOf(segment.id),
    (r) => r.body.data?.['asset']?.anomalyAssessments.totalCount === 1 && riskCountsAnAnomaly(r.body.data['asset'].risk),
    15_000,
  );
  expect(res.body.data!['asset'].anomalyAssessments.edges[0].node).toMatchObject({ responseCategory: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(ii)' });
  expect(res.body.data!['asset'].risk.likelihood).toBe(5);
});

it('switching the tenant to MEAN_OF_SMYS_AND_SMTS reassesses a segment without SMTS with the stated 1.1 × SMYS fallback', async () => {
  const segment = await createAsset(stack.gatewayUrl, apiKey, {
    type: 'SEGMENT',
    name: 'Line 14 · MP 0–3 (no SMTS recorded)',
    status: 'ACTIVE',
    regulation: 'CFR_192',
    product: 'NATURAL_GAS',
    outsideDiameterMm: 610,
    wallThicknessMm: 9.5,
    smysMpa: 359,
    maopKpa: 6900,
    classLocation: 1,
    inHca: false,
  });
  await recordAnomaly({ idempotencyKey: 'ml-nosmts-1', assetId: segment.id, featureType: 'METAL_LOSS', clockDeg: 90, depthPctWt: 30, lengthMm: 120 });
  const first = await until(
    () => assessmentsOf(segment.id),
    (r) => r.body.data?.['asset']?.anomalyAssessments.totalCount === 1,
    15_000,
  );
  const before = first.body.data!['asset'].anomalyAssessments.edges[0].node;
  expect(before.modelVersion).toContain('+SMYS_PLUS_69_MPA');

  const admin = await stack.keyFor(tenantId, ['admin:*']);
  const update = await call(`mutation { updateAnalyticsSettings(input: { flowStress: MEAN_OF_SMYS_AND_SMTS }) { flowStress } }`, {}, admin);
  expect(update.body.errors).toBeUndefined();
  expect(update.body.data!['updateAnalyticsSettings']).toEqual({ flowStress: 'MEAN_OF_SMYS_AND_SMTS' });
  // Reassessed (computedAt moves), neither dead-lettered nor left on the old method: 1.1 × SMYS, and it says why.
  const after = await until(
    () => assessmentsOf(segment.id),
    (r) => r.body.data?.['asset']?.anomalyAssessments.edges[0]?.node.computedAt !== before.computedAt,
    15_000,
  );
  const node = after.body.data!['asset'].anomalyAssessments.edges[0].node;
  expect(node.assessable).toBe(true);
  expect(node.modelVersion).toContain('+SMYS_TIMES_1_1');
  expect(node.methodNotes).toContain('(SMYS + SMTS) / 2 needs the SMTS, which is not recorded for this pipe: the conservative 1.1 × SMYS is used instead');
});
