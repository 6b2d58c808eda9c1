/**
 * Digs end to end through the gateway (issue 25 item 6): the dig list across a tenant's segments and its filters,
 * field (NDE) results that supersede the tool's call, repairs that close anomalies (off the dig list, out of the
 * segment's risk, history kept), pressure reductions for immediate conditions, bad input refused whole, and tenant
 * isolation tried from another tenant.
 *
 * The expected categories are those of the Modified B31G and §192.933(d) rules this repository already tests
 * against published examples (subgraphs/analytics/test): here they only show which way a record moves an anomaly.
 * Every record asserts "at once": the mutation's answer is already true, so nothing below waits after a record.
 */
import { until } from '@linepack/lib/testing/until';
import { databaseName } from '@linepack/lib/mongo';
import { Analyzer } from '@linepack/subgraph-analytics/compute';
import { effectiveArea } from '@linepack/subgraph-analytics/model/rstreng';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
});
afterAll(() => stack?.stop());

type Call = (query: string, variables?: Record<string, unknown>) => ReturnType<typeof graphql<Record<string, any>>>;
const caller =
  (apiKey: string): Call =>
  (query, variables = {}) =>
    graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey, variables });

/** 610 mm × 9.5 mm, SMYS 359 MPa, MAOP 6900 kPa gas pipe, as analytics.test.ts uses. */
const GAS_PIPE = { status: 'ACTIVE', regulation: 'CFR_192', product: 'NATURAL_GAS', outsideDiameterMm: 610, wallThicknessMm: 9.5, smysMpa: 359, maopKpa: 6900 };

async function pipeline(apiKey: string, name: string) {
  return createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name, status: 'ACTIVE', regulation: 'CFR_192', product: 'NATURAL_GAS' });
}
async function segment(apiKey: string, name: string, parentId: string, place: { classLocation: number; inHca: boolean }) {
  return createAsset(stack.gatewayUrl, apiKey, { type: 'SEGMENT', name, parentId, ...GAS_PIPE, ...place });
}

interface AnomalySpec {
  key: string;
  assetId: string;
  depthPctWt: number;
  lengthMm: number;
  observedAt?: string;
}
/** Records metal-loss anomalies through the gateway and waits until analytics has assessed every one. */
async function anomalies(call: Call, specs: AnomalySpec[]): Promise<Record<string, string>> {
  const res = await call(`mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { ids } }`, {
    i: specs.map((s, n) => ({
      idempotencyKey: s.key,
      assetId: s.assetId,
      type: 'ILI_ANOMALY',
      source: 'ILI',
      observedAt: s.observedAt ?? '2026-03-02T00:00:00Z',
      runId: 'run-2026-digs',
      featureType: 'METAL_LOSS',
      surface: 'EXTERNAL',
      odometerM: 100 + 50 * n,
      clockDeg: 90,
      depthPctWt: s.depthPctWt,
      lengthMm: s.lengthMm,
      widthMm: 30,
      value: s.depthPctWt,
      unit: 'PERCENT_WT',
    })),
  });
  expect(res.body.errors).toBeUndefined();
  const ids: string[] = res.body.data!['recordMeasurements'].ids;
  await until(
    () => Promise.all(ids.map((id) => call(`query($id: ID!) { measurement(id: $id) { assessment { responseCategory } } }`, { id }))),
    (all) => all.every((r) => r.body.data?.['measurement']?.assessment != null),
    20_000,
  );
  return Object.fromEntries(specs.map((s, n) => [s.key, ids[n]!]));
}

const DIG_LIST = `query($filter: DigListFilter, $first: Int, $after: String) {
  digList(filter: $filter, first: $first, after: $after) {
    totalCount pageInfo { hasNextPage endCursor }
    edges { node { measurement { id } asset { id name } responseCategory repairDueAt status overdue depthSource
      pressureReductions { reducedPressureKpa inForce } } }
  }
}`;
const digIds = async (call: Call, filter: Record<string, unknown> = {}) => {
  const res = await call(DIG_LIST, { filter });
  expect(res.body.errors).toBeUndefined();
  return (res.body.data!['digList'].edges as { node: { measurement: { id: string } } }[]).map((e) => e.node.measurement.id);
};
const ASSESSMENT = `query($id: ID!) { measurement(id: $id) { assessment {
  responseCategory ruleRef status depthSource depthPctWt depthWithTolerancePctWt failurePressureKpa repairDueAt runId
  fieldResult { id method measuredDepthPctWt measuredLengthMm recordedBy }
  repair { id repairType measurements { id } }
  pressureReductions { id reducedPressureKpa inForce liftedAt }
} } }`;
const assessmentOf = async (call: Call, id: string) => {
  const res = await call(ASSESSMENT, { id });
  expect(res.body.errors).toBeUndefined();
  return res.body.data!['measurement'].assessment;
};
const riskOf = async (call: Call, assetId: string) =>
  (await call(`query($id: ID!) { asset(id: $id) { risk { likelihood score drivers expectedAnomaliesBeyondLimit } } }`, { id: assetId })).body.data!['asset']
    .risk;

describe('the dig list', () => {
  it('lists every open anomaly with a due date across the tenant, soonest due first, and filters by category, due date, pipeline and HCA', async () => {
    const { apiKey } = await stack.tenantWithKey();
    const call = caller(apiKey);
    const north = await pipeline(apiKey, 'North line');
    const south = await pipeline(apiKey, 'South line');
    const hca = await segment(apiKey, 'North · MP 0–2 (HCA, class 3)', north.id, { classLocation: 3, inHca: true });
    const rural = await segment(apiKey, 'South · MP 4–9 (class 2)', south.id, { classLocation: 2, inHca: false });
    const ids = await anomalies(call, [
      // 85 % (95 % with the tool's 10 %) is deeper than 80 % of wall: IMMEDIATE, due on discovery.
      { key: 'n-worst', assetId: hca.id, depthPctWt: 85, lengthMm: 60 },
      // Failure-pressure ratio 1.28 < 1.50 in a class 3 HCA: ONE_YEAR under §192.933(d)(2)(iv).
      { key: 'n-year', assetId: hca.id, depthPctWt: 40, lengthMm: 300 },
      // Ratio 1.86: no §192.933(d) condition, the operator's B31.8S schedule under (c) — OTHER, no due date, not on the dig list by default.
      { key: 'n-monitored', assetId: hca.id, depthPctWt: 20, lengthMm: 50 },
      // Outside an HCA, ratio 1.13 < 1.39 in class 2: TWO_YEAR under §192.714(d)(2)(iv).
      { key: 's-two-year', assetId: rural.id, depthPctWt: 50, lengthMm: 300 },
      // Ratio 0.96 ≤ 1.1: IMMEDIATE, discovered earlier than the northern one.
      { key: 's-immediate', assetId: rural.id, depthPctWt: 60, lengthMm: 300, observedAt: '2026-01-15T00:00:00Z' },
    ]);

    const all = await call(DIG_LIST, {});
    expect(all.body.errors).toBeUndefined();
    const list = all.body.data!['digList'];
    expect(list.totalCount).toBe(4);
    expect(list.edges.map((e: any) => [e.node.measurement.id, e.node.responseCategory, e.node.repairDueAt])).toEqual([
      [ids['s-immediate'], 'IMMEDIATE', '2026-01-15T00:00:00.000Z'],
      [ids['n-worst'], 'IMMEDIATE', '2026-03-02T00:00:00.000Z'],
      [ids['n-year'], 'ONE_YEAR', '2027-03-02T00:00:00.000Z'],
      [ids['s-two-year'], 'TWO_YEAR', '2028-03-02T00:00:00.000Z'],
    ]);
    // Resolved by the assets subgraph: one federated answer carries the segment's name.
    expect(list.edges[1].node.asset).toEqual({ id: hca.id, name: 'North · MP 0–2 (HCA, class 3)' });
    expect(list.edges[0].node).toMatchObject({ status: 'OPEN', overdue: true, depthSource: 'TOOL', pressureReductions: [] });
    expect(list.edges[3].node.overdue).toBe(false);

    expect(await digIds(call, { pipelineId: north.id })).toEqual([ids['n-worst'], ids['n-year']]);
    expect(await digIds(call, { pipelineId: rural.id })).toEqual([ids['s-immediate'], ids['s-two-year']]);
    expect(await digIds(call, { inHca: true })).toEqual([ids['n-worst'], ids['n-year']]);
    expect(await digIds(call, { inHca: false, pipelineId: north.id })).toEqual([]);
    expect(await digIds(call, { responseCategories: ['IMMEDIATE'] })).toEqual([ids['s-immediate'], ids['n-worst']]);
    expect(await digIds(call, { dueBefore: '2027-01-01T00:00:00Z' })).toEqual([ids['s-immediate'], ids['n-worst']]);
    expect(await digIds(call, { responseCategories: ['OTHER'] })).toEqual([ids['n-monitored']]);

    const first = await call(DIG_LIST, { first: 3 });
    expect(first.body.data!['digList'].pageInfo.hasNextPage).toBe(true);
    const rest = await call(DIG_LIST, { first: 3, after: first.body.data!['digList'].pageInfo.endCursor });
    expect(rest.body.data!['digList'].edges.map((e: any) => e.node.measurement.id)).toEqual([ids['s-two-year']]);
    expect(rest.body.data!['digList'].pageInfo.hasNextPage).toBe(false);
  });
});

describe('field results', () => {
  it('supersede the tool call: assessed on the measured depth with no tool tolerance, shallower or deeper, at once', async () => {
    const { apiKey } = await stack.tenantWithKey();
    const call = caller(apiKey);
    const line = await pipeline(apiKey, 'East line');
    const seg = await segment(apiKey, 'East · MP 1–3 (HCA, class 3)', line.id, { classLocation: 3, inHca: true });
    const ids = await anomalies(call, [
      { key: 'e-called-deep', assetId: seg.id, depthPctWt: 75, lengthMm: 60 },
      { key: 'e-called-shallow', assetId: seg.id, depthPctWt: 20, lengthMm: 50 },
    ]);
    // The tool's 75 % plus its 10 % tolerance is 85 %, deeper than 80 % of wall: IMMEDIATE under §192.933(d)(1)(iii).
    expect(await assessmentOf(call, ids['e-called-deep']!)).toMatchObject({ responseCategory: 'IMMEDIATE', depthSource: 'TOOL', depthWithTolerancePctWt: 85 });
    expect(await assessmentOf(call, ids['e-called-shallow']!)).toMatchObject({ responseCategory: 'OTHER' });

    const RECORD = `mutation($i: FieldResultInput!) { recordFieldResult(input: $i) { id measuredDepthPctWt recordedBy assessment { responseCategory depthSource } } }`;
    const shallower = await call(RECORD, {
      i: {
        idempotencyKey: 'ut-1',
        measurementId: ids['e-called-deep'],
        examinedAt: '2026-04-10T00:00:00Z',
        method: 'UT',
        measuredDepthPctWt: 50,
        measuredLengthMm: 60,
      },
    });
    expect(shallower.body.errors).toBeUndefined();
    const recorded = shallower.body.data!['recordFieldResult'];
    expect(recorded.recordedBy).toMatch(/^api_key:/);
    // The mutation's answer already holds the new assessment.
    // Measured 50 %: ratio 1.74, not under class 3's 1.50 — off the dig list (OTHER, the operator's schedule).
    expect(recorded.assessment).toEqual({ responseCategory: 'OTHER', depthSource: 'FIELD' });
    const measured = await assessmentOf(call, ids['e-called-deep']!);
    expect(measured).toMatchObject({
      responseCategory: 'OTHER',
      depthSource: 'FIELD',
      depthPctWt: 50,
      depthWithTolerancePctWt: 50,
      repairDueAt: null,
      fieldResult: { id: recorded.id, method: 'UT', measuredDepthPctWt: 50, measuredLengthMm: 60 },
    });
    // No tolerance: the failure pressure is the calculator's at exactly the measured 50 % (4.75 mm) over 60 mm.
    const calc = await call(
      `{ modifiedB31G(input: { outsideDiameterMm: 610, wallThicknessMm: 9.5, smysMpa: 359, defectDepthMm: 4.75, defectLengthMm: 60, classLocation: 3, maopKpa: 6900 }) { failurePressureKpa } }`,
    );
    expect(measured.failurePressureKpa).toBeCloseTo(calc.body.data!['modifiedB31G'].failurePressureKpa, 6);
    expect(await digIds(call)).not.toContain(ids['e-called-deep']);

    // Retried with the same key: the record first stored, nothing stored twice.
    const retried = await call(RECORD, {
      i: {
        idempotencyKey: 'ut-1',
        measurementId: ids['e-called-deep'],
        examinedAt: '2026-04-10T00:00:00Z',
        method: 'UT',
        measuredDepthPctWt: 50,
        measuredLengthMm: 60,
      },
    });
    expect(retried.body.data!['recordFieldResult'].id).toBe(recorded.id);

    // Deeper than called: only the remaining wall measured (1.0 mm of 9.5 mm: 89.5 % deep), now IMMEDIATE and on the list.
    const deeper = await call(RECORD, {
      i: { idempotencyKey: 'paut-1', measurementId: ids['e-called-shallow'], examinedAt: '2026-04-11T00:00:00Z', method: 'PAUT', remainingWallMm: 1.0 },
    });
    expect(deeper.body.errors).toBeUndefined();
    expect(deeper.body.data!['recordFieldResult'].measuredDepthPctWt).toBeCloseTo(89.4737, 3);
    expect(await assessmentOf(call, ids['e-called-shallow']!)).toMatchObject({
      responseCategory: 'IMMEDIATE',
      ruleRef: '§192.933(d)(1)(iii)',
      depthSource: 'FIELD',
      repairDueAt: '2026-03-02T00:00:00.000Z',
    });
    expect(await digIds(call)).toEqual([ids['e-called-shallow']]);

    // A later examination supersedes the earlier one.
    await call(RECORD, {
      i: {
        idempotencyKey: 'ut-2',
        measurementId: ids['e-called-shallow'],
        examinedAt: '2026-04-12T00:00:00Z',
        method: 'UT',
        measuredDepthPctWt: 20,
        measuredLengthMm: 50,
      },
    });
    expect(await assessmentOf(call, ids['e-called-shallow']!)).toMatchObject({ responseCategory: 'OTHER', fieldResult: { measuredDepthPctWt: 20 } });
  });
});

describe('field results with a river-bottom profile', () => {
  // RSTRENG's effective area (ASME B31G-2012 level 2; the method itself is tested in
  // subgraphs/analytics/test/model/rstreng.test.ts): here, that a profile measured in the ditch is what is assessed.
  it('are assessed with the effective-area method instead of the 0.85·d·L box', async () => {
    const { apiKey } = await stack.tenantWithKey();
    const call = caller(apiKey);
    const line = await pipeline(apiKey, 'River line');
    const seg = await segment(apiKey, 'River · MP 0–1', line.id, { classLocation: 3, inHca: true });
    const ids = await anomalies(call, [{ key: 'r-pit', assetId: seg.id, depthPctWt: 60, lengthMm: 200 }]);
    // A laser scan along the deepest path: deep at two spots, shallow between (t = 9.5 mm).
    const profile = [
      { axialPositionMm: 0, depthMm: 0 },
      { axialPositionMm: 20, depthMm: 2 },
      { axialPositionMm: 50, depthMm: 5.5 },
      { axialPositionMm: 80, depthMm: 3 },
      { axialPositionMm: 120, depthMm: 5 },
      { axialPositionMm: 160, depthMm: 1 },
      { axialPositionMm: 200, depthMm: 0 },
    ];
    const RECORD = `mutation($i: FieldResultInput!) { recordFieldResult(input: $i) { id profile { axialPositionMm depthMm } } }`;
    const recorded = await call(RECORD, {
      i: {
        idempotencyKey: 'scan-1',
        measurementId: ids['r-pit'],
        examinedAt: '2026-04-10T00:00:00Z',
        method: 'LASER_SCAN',
        measuredDepthPctWt: 57.9,
        measuredLengthMm: 200,
        profile,
      },
    });
    expect(recorded.body.errors).toBeUndefined();
    expect(recorded.body.data!['recordFieldResult'].profile).toEqual(profile);
    const assessed = await call(
      `query($id: ID!) { measurement(id: $id) { assessment { failurePressureKpa safePressureKpa depthSource methodNotes modelVersion } } }`,
      {
        id: ids['r-pit'],
      },
    );
    const a = assessed.body.data!['measurement'].assessment;
    const expected = effectiveArea({
      outsideDiameterMm: 610,
      wallThicknessMm: 9.5,
      smysMpa: 359,
      regulation: 'CFR_192',
      classLocation: 3,
      maopKpa: 6900,
      profile: profile.map((p) => ({ axialMm: p.axialPositionMm, depthMm: p.depthMm })),
    });
    if (!expected.applicable) throw new Error('the profile should be assessable');
    expect(a.failurePressureKpa).toBeCloseTo(expected.failurePressureKpa, 6);
    expect(a.depthSource).toBe('FIELD');
    expect(a.modelVersion).toMatch(/^rstreng-effective-area\//);
    expect(a.methodNotes.join(' ')).toMatch(/RSTRENG effective-area method over the field river-bottom profile \(7 points/);
    // The box (57.9 % over 200 mm, Modified B31G) is more conservative than the profile's effective area.
    const box = await call(
      `{ modifiedB31G(input: { outsideDiameterMm: 610, wallThicknessMm: 9.5, smysMpa: 359, defectDepthMm: 5.5, defectLengthMm: 200, classLocation: 3, maopKpa: 6900 }) { failurePressureKpa } }`,
    );
    expect(a.failurePressureKpa).toBeGreaterThan(box.body.data!['modifiedB31G'].failurePressureKpa);

    const bad = await call(RECORD, {
      i: {
        idempotencyKey: 'scan-bad',
        measurementId: ids['r-pit'],
        examinedAt: '2026-04-10T00:00:00Z',
        method: 'LASER_SCAN',
        measuredDepthPctWt: 57.9,
        profile: [profile[0], profile[2], profile[1]],
      },
    });
    expect(bad.body.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
    expect(JSON.stringify(bad.body.errors)).toMatch(/input\.profile\[2\]\.axialPositionMm.*must be beyond the previous point/);
    const throughWall = await call(RECORD, {
      i: {
        idempotencyKey: 'scan-deep',
        measurementId: ids['r-pit'],
        examinedAt: '2026-04-10T00:00:00Z',
        method: 'LASER_SCAN',
        measuredDepthPctWt: 57.9,
        profile: [profile[0], { axialPositionMm: 30, depthMm: 9.5 }],
      },
    });
    expect(JSON.stringify(throughWall.body.errors)).toMatch(/input\.profile\[1\]\.depthMm.*less than the segment's wall thickness/);
  });
});

describe('a repair racing an event batch', () => {
  // The event consumer reads a batch's context (the records included) and writes its assessments later; a repair
  // recorded in between must not be undone by that late write of what was read before it (Analyzer.write keeps the
  // assessment computed from the newer inputs).
  it('stays REPAIRED when an assessment computed from inputs read before the repair is written after it', async () => {
    const { apiKey, tenantId } = await stack.tenantWithKey();
    const call = caller(apiKey);
    const line = await pipeline(apiKey, 'Race line');
    const seg = await segment(apiKey, 'Race · MP 0–1', line.id, { classLocation: 3, inHca: true });
    const ids = await anomalies(call, [{ key: 'race-deep', assetId: seg.id, depthPctWt: 75, lengthMm: 60 }]);
    const analyzer = new Analyzer(stack.mongo.db(databaseName(stack.dbPrefix, 'analytics')));
    const readBeforeTheRepair = await analyzer.context(tenantId, [seg.id]);
    const repaired = await call(`mutation($i: RepairInput!) { recordRepair(input: $i) { id } }`, {
      i: { idempotencyKey: 'race-cut', measurementIds: [ids['race-deep']], repairType: 'CUT_OUT', repairedAt: '2026-03-20T00:00:00Z' },
    });
    expect(repaired.body.errors).toBeUndefined();
    await analyzer.assessNew(readBeforeTheRepair, seg.id, [ids['race-deep']!]);
    expect(await assessmentOf(call, ids['race-deep']!)).toMatchObject({ status: 'REPAIRED', repair: { id: repaired.body.data!['recordRepair'].id } });
    expect(await digIds(call)).not.toContain(ids['race-deep']);
  });
});

describe('repairs and pressure reductions', () => {
  let call: Call;
  let otherTenant: Call;
  let seg: { id: string };
  let ids: Record<string, string>;
  let reductionId: string;
  beforeAll(async () => {
    const { apiKey } = await stack.tenantWithKey();
    call = caller(apiKey);
    otherTenant = caller((await stack.tenantWithKey()).apiKey);
    const line = await pipeline(apiKey, 'West line');
    // Class 1: a shallow anomaly keeps a safe pressure above MAOP (a remaining life), so the segment's risk can fall.
    seg = await segment(apiKey, 'West · MP 0–4 (HCA, class 1)', line.id, { classLocation: 1, inHca: true });
    const other = await segment(apiKey, 'West · MP 4–8 (HCA, class 3)', line.id, { classLocation: 3, inHca: true });
    ids = await anomalies(call, [
      { key: 'w-worst', assetId: seg.id, depthPctWt: 85, lengthMm: 60 },
      // Discovered by an earlier run; ratio 1.86, remaining life 15.8 years: class 1, the operator's schedule (OTHER).
      { key: 'w-shallow', assetId: seg.id, depthPctWt: 20, lengthMm: 50, observedAt: '2025-01-05T00:00:00Z' },
      { key: 'w-elsewhere', assetId: other.id, depthPctWt: 40, lengthMm: 300 },
    ]);
  });

  const REDUCE = `mutation($i: PressureReductionInput!) { recordPressureReduction(input: $i) { id reducedPressureKpa inForce inForceDays liftedAt measurements { id } } }`;

  it('keeps an immediate anomaly under a pressure reduction on the dig list, showing the reduction', async () => {
    // §192.933(a)(1)(i), current text (eCFR, https://www.ecfr.gov/current/title-49/section-192.933, read from the eCFR's
    // export at github.com/MichalOpoka/ecfr, commit 7483bd4766f0f243d2280756a25dc1c6c2ef402c, as amended through 89 FR
    // 33281, Apr. 29, 2024): "If an operator is unable to respond within the time limits for certain conditions specified
    // in this section, the operator must temporarily reduce the operating pressure of the pipeline or take other action
    // that ensures the safety of the covered segment. An operator must reduce the operating pressure to one of the
    // following: (A) A level not exceeding 80 percent of the operating pressure at the time the condition was
    // discovered; (B) A level not exceeding the predicted failure pressure times the design factor for the class
    // location in which the affected pipeline is located; or (C) A level not exceeding the predicted failure pressure
    // divided by 1.1." Temporary: the condition stays due and listed. 5,520 kPa is (A): 80 % of 6,900 kPa.
    const res = await call(REDUCE, {
      i: {
        idempotencyKey: 'pr-1',
        measurementIds: [ids['w-worst']],
        reducedPressureKpa: 5520,
        effectiveAt: '2026-03-02T06:00:00Z',
        reason: '80 % of the 6900 kPa at discovery, §192.933(a)(1)',
      },
    });
    expect(res.body.errors).toBeUndefined();
    reductionId = res.body.data!['recordPressureReduction'].id;
    expect(res.body.data!['recordPressureReduction']).toMatchObject({
      reducedPressureKpa: 5520,
      inForce: true,
      liftedAt: null,
      measurements: [{ id: ids['w-worst'] }],
    });

    const list = (await call(DIG_LIST, { filter: { pipelineId: seg.id } })).body.data!['digList'];
    expect(list.edges.find((e: any) => e.node.measurement.id === ids['w-worst']).node).toMatchObject({
      measurement: { id: ids['w-worst'] },
      responseCategory: 'IMMEDIATE',
      status: 'OPEN',
      pressureReductions: [{ reducedPressureKpa: 5520, inForce: true }],
    });
  });

  it('refuses a reduction that is not below the segment MAOP, naming the field and storing nothing', async () => {
    const res = await call(REDUCE, {
      i: {
        idempotencyKey: 'pr-bad',
        measurementIds: [ids['w-worst']],
        reducedPressureKpa: 6900,
        effectiveAt: '2026-03-02T06:00:00Z',
        reason: 'not a reduction',
      },
    });
    expect(res.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'input.reducedPressureKpa' });
    expect(res.body.errors?.[0]?.message).toBe("input.reducedPressureKpa: must be below the segment's MAOP (6900 kPa)");
    expect((await assessmentOf(call, ids['w-worst']!)).pressureReductions).toHaveLength(1);
  });

  it('counts how long a lifted reduction was in force (§192.933(a)(2) asks for a justification past 365 days)', async () => {
    // §192.933(a)(2), current text (same source): "Long-term pressure reduction. When a pressure reduction exceeds 365
    // days, an operator must notify PHMSA under § 192.18 and explain the reasons for the remediation delay. This notice
    // must include a technical justification that the continued pressure reduction will not jeopardize the integrity of
    // the pipeline." §195.452(h)(1)(ii) (eCFR, commit e43581862920bce09ed9a142e2cccb9ded381e55): "When a pressure
    // reduction exceeds 365 days, the operator must notify PHMSA in accordance with paragraph (m) of this section and
    // explain the reasons for the delay."
    const long = await call(REDUCE, {
      i: {
        idempotencyKey: 'pr-old',
        measurementIds: [ids['w-shallow']],
        reducedPressureKpa: 6000,
        effectiveAt: '2025-01-10T00:00:00Z',
        reason: 'older restriction',
      },
    });
    const id = long.body.data!['recordPressureReduction'].id;
    const early = await call(`mutation($id: ID!) { liftPressureReduction(id: $id, liftedAt: "2025-01-09T00:00:00Z") { id } }`, { id });
    expect(early.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'liftedAt' });
    const lifted = await call(`mutation($id: ID!) { liftPressureReduction(id: $id, liftedAt: "2026-01-20T00:00:00Z") { inForce inForceDays liftedAt } }`, {
      id,
    });
    expect(lifted.body.data!['liftPressureReduction']).toEqual({ inForce: false, inForceDays: 375, liftedAt: '2026-01-20T00:00:00.000Z' });
    const again = await call(`mutation($id: ID!) { liftPressureReduction(id: $id, liftedAt: "2026-01-21T00:00:00Z") { id } }`, { id });
    expect(again.body.errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
  });

  it('refuses bad records naming each field and rule, and stores nothing', async () => {
    const fieldResult = await call(`mutation($i: FieldResultInput!) { recordFieldResult(input: $i) { id } }`, {
      i: { idempotencyKey: 'bad-ut', measurementId: ids['w-worst'], examinedAt: '2099-01-01T00:00:00Z', method: 'UT', measuredDepthPctWt: 120 },
    });
    expect(fieldResult.body.errors?.[0]?.extensions?.['violations']).toEqual([
      { field: 'input.examinedAt', message: 'must not be in the future' },
      { field: 'input.measuredDepthPctWt', message: 'must be from 0 to 100 % of wall' },
    ]);
    const noDepth = await call(`mutation($i: FieldResultInput!) { recordFieldResult(input: $i) { id } }`, {
      i: { idempotencyKey: 'bad-ut-2', measurementId: ids['w-worst'], examinedAt: '2026-04-01T00:00:00Z', method: 'VISUAL' },
    });
    expect(noDepth.body.errors?.[0]?.message).toBe('input.measuredDepthPctWt: this or remainingWallMm is required (the depth the anomaly is assessed on)');
    const thickerThanPipe = await call(`mutation($i: FieldResultInput!) { recordFieldResult(input: $i) { id } }`, {
      i: { idempotencyKey: 'bad-ut-3', measurementId: ids['w-worst'], examinedAt: '2026-04-01T00:00:00Z', method: 'UT', remainingWallMm: 9.5 },
    });
    expect(thickerThanPipe.body.errors?.[0]?.message).toBe("input.remainingWallMm: must be less than the segment's wall thickness (9.5 mm)");

    const REPAIR = `mutation($i: RepairInput!) { recordRepair(input: $i) { id } }`;
    const mixed = await call(REPAIR, {
      i: {
        idempotencyKey: 'bad-repair',
        measurementIds: [ids['w-worst'], 'no-such-anomaly', ids['w-elsewhere'], ids['w-worst']],
        repairType: 'TYPE_B_SLEEVE',
        repairedAt: '2026-04-01T00:00:00Z',
      },
    });
    expect(mixed.body.errors?.[0]?.extensions?.['violations']).toEqual([{ field: 'input.measurementIds[3]', message: 'is listed twice' }]);
    const unknownAndElsewhere = await call(REPAIR, {
      i: {
        idempotencyKey: 'bad-repair',
        measurementIds: [ids['w-worst'], 'no-such-anomaly', ids['w-elsewhere']],
        repairType: 'TYPE_B_SLEEVE',
        repairedAt: '2026-04-01T00:00:00Z',
      },
    });
    expect(unknownAndElsewhere.body.errors?.[0]?.extensions?.['violations']).toEqual([
      { field: 'input.measurementIds[1]', message: 'is not an assessed ILI anomaly of this tenant' },
      { field: 'input.measurementIds[2]', message: 'is on another segment than the first anomaly (a record covers one segment)' },
    ]);
    // Notes run over lines and tabs, but hold to the rule every name obeys: a line separator (U+2028) or an unpaired
    // surrogate — which the old notes check let through — is refused like a bidirectional override.
    for (const notes of ['sleeve installed\u2028by crew 4', 'cut \uD800 out', 'Type B \u202Esleeve']) {
      const refused = await call(REPAIR, {
        i: { idempotencyKey: 'bad-notes', measurementIds: [ids['w-worst']], repairType: 'RECOAT', repairedAt: '2026-04-01T00:00:00Z', notes },
      });
      expect(refused.body.errors?.[0]?.extensions?.['violations']).toEqual([
        { field: 'input.notes', message: 'must not contain control characters, unpaired surrogates or bidirectional overrides' },
      ]);
    }
    expect(await assessmentOf(call, ids['w-worst']!)).toMatchObject({ status: 'OPEN', depthSource: 'TOOL', fieldResult: null, repair: null });
  });

  it('another tenant can neither record against these anomalies nor see the records', async () => {
    const repair = await otherTenant(`mutation($i: RepairInput!) { recordRepair(input: $i) { id } }`, {
      i: { idempotencyKey: 'foreign', measurementIds: [ids['w-worst']], repairType: 'CUT_OUT', repairedAt: '2026-04-01T00:00:00Z' },
    });
    expect(repair.body.errors?.[0]?.extensions?.['violations']).toEqual([
      { field: 'input.measurementIds[0]', message: 'is not an assessed ILI anomaly of this tenant' },
    ]);
    const lift = await otherTenant(`mutation($id: ID!) { liftPressureReduction(id: $id, liftedAt: "2026-04-01T00:00:00Z") { id } }`, { id: reductionId });
    expect(lift.body.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
    const list = await otherTenant(DIG_LIST, { filter: { includeRepaired: true } });
    expect(list.body.data!['digList']).toMatchObject({ totalCount: 0, edges: [] });
    expect(await assessmentOf(call, ids['w-worst']!)).toMatchObject({ status: 'OPEN', pressureReductions: [{ id: reductionId, inForce: true }] });
  });

  it('a repair takes the worst anomaly off the dig list and out of the segment risk at once; its history stays', async () => {
    const before = await riskOf(call, seg.id);
    expect(before.likelihood).toBe(5);
    const res = await call(
      `mutation($i: RepairInput!) { recordRepair(input: $i) { id repairType repairedAt notes measurements { id }
        assessments { status responseCategory depthWithTolerancePctWt repair { repairType } } } }`,
      {
        i: {
          idempotencyKey: 'sleeve-1',
          measurementIds: [ids['w-worst']],
          repairType: 'TYPE_B_SLEEVE',
          repairedAt: '2026-03-20T00:00:00Z',
          notes: 'Type B sleeve, 1.2 m\n\tcentred on the anomaly',
        },
      },
    );
    expect(res.body.errors).toBeUndefined();
    const repair = res.body.data!['recordRepair'];
    // Figures kept for the audit trail: still the IMMEDIATE call it was, now REPAIRED.
    expect(repair).toMatchObject({
      repairType: 'TYPE_B_SLEEVE',
      notes: 'Type B sleeve, 1.2 m\n\tcentred on the anomaly',
      measurements: [{ id: ids['w-worst'] }],
      assessments: [{ status: 'REPAIRED', responseCategory: 'IMMEDIATE', depthWithTolerancePctWt: 95, repair: { repairType: 'TYPE_B_SLEEVE' } }],
    });

    expect(await digIds(call, { pipelineId: seg.id })).toEqual([]);
    const withRepaired = (await call(DIG_LIST, { filter: { pipelineId: seg.id, includeRepaired: true } })).body.data!['digList'];
    expect(withRepaired.edges.map((e: any) => [e.node.measurement.id, e.node.status, e.node.overdue])).toEqual([[ids['w-worst'], 'REPAIRED', false]]);

    const after = await riskOf(call, seg.id);
    expect(after.likelihood).toBeLessThan(before.likelihood);
    expect(after.score).toBeLessThan(before.score);
    // 85 % called (+10 % tolerance), limit 80 %: 1 − Φ((80 − 85) / 7.8) = 0.74 of the expected count leaves with it.
    expect(before.expectedAnomaliesBeyondLimit - after.expectedAnomaliesBeyondLimit).toBeGreaterThan(0.7);
    expect(after.drivers.join(' ')).not.toContain('IMMEDIATE');

    expect(await assessmentOf(call, ids['w-worst']!)).toMatchObject({
      status: 'REPAIRED',
      responseCategory: 'IMMEDIATE',
      repair: { id: repair.id, repairType: 'TYPE_B_SLEEVE', measurements: [{ id: ids['w-worst'] }] },
      pressureReductions: [{ id: reductionId }],
    });
    // Retried: the repair first stored.
    const retried = await call(`mutation($i: RepairInput!) { recordRepair(input: $i) { id } }`, {
      i: { idempotencyKey: 'sleeve-1', measurementIds: [ids['w-worst']], repairType: 'TYPE_B_SLEEVE', repairedAt: '2026-03-20T00:00:00Z' },
    });
    expect(retried.body.data!['recordRepair'].id).toBe(repair.id);
  });

  it('needs analytics:write to record, checked at the gateway', async () => {
    const { tenantId } = await stack.tenantWithKey();
    const readOnly = caller(await stack.keyFor(tenantId, ['analytics:read', 'measurements:read']));
    const res = await readOnly(
      `mutation { recordRepair(input: { idempotencyKey: "k", measurementIds: ["m"], repairType: RECOAT, repairedAt: "2026-01-01T00:00:00Z" }) { id } }`,
    );
    expect(res.status).toBe(403);
    expect(res.body.errors?.[0]?.extensions?.['missingScopes']).toEqual(['analytics:write']);
  });
});
