/**
 * The analytics subgraph alone: its event consumer reads the real Redis streams (events are added here
 * the way the assets and measurements relays add them), projects into its own database, assesses, and
 * answers through GraphQL with identities minted as the gateway mints them.
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { createLogger } from '@linepack/lib/logger';
import { consumedAll, publishEvent } from '@linepack/lib/testing/publish-event';
import { startSubgraphHarness, type SubgraphHarness } from '@linepack/lib/testing/subgraph-harness';
import { until, waitFor } from '@linepack/lib/testing/until';
import { ANALYTICS_CONSUMER_GROUP, subgraph } from '../src';
import { Analyzer } from '../src/compute';
import { ANALYTICS_COLLECTIONS, type AnomalyProjection } from '../src/documents';
import { insertNewAnomalies } from '../src/projections';

let harness: SubgraphHarness;
let redis: Redis;
const tenantId: string = randomUUID();
let version = 0;

beforeAll(async () => {
  harness = await startSubgraphHarness(subgraph, { defaultScopes: ['analytics:read'] });
  redis = new Redis(process.env['REDIS_URL']!);
});
afterAll(async () => {
  redis?.disconnect();
  await harness?.stop();
});

const me = () => harness.identity(['analytics:read'], tenantId);
const publish = (producer: 'assets' | 'measurements', type: string, data: Record<string, unknown>, tenant = tenantId) =>
  publishEvent(redis, harness.dbPrefix, producer, type, tenant, data);

/** A 20-inch gas segment: 508 mm × 7.9 mm, X52 (SMYS 359 MPa), MAOP 6,200 kPa. */
const gasSegment = {
  type: 'SEGMENT',
  regulation: 'CFR_192',
  product: 'NATURAL_GAS',
  status: 'ACTIVE',
  outsideDiameterMm: 508,
  wallThicknessMm: 7.9,
  smysMpa: 359,
  maopKpa: 6200,
};
const upsertAsset = (id: string, fields: Record<string, unknown>, tenant = tenantId) =>
  publish('assets', 'asset.upserted', { id, name: id, parentId: null, inHca: false, version: ++version, ...fields }, tenant);
const anomaly = (assetId: string, fields: Record<string, unknown>, tenant = tenantId) => {
  const id = randomUUID();
  return publish(
    'measurements',
    'measurement.recorded',
    { id, assetId, type: 'ILI_ANOMALY', source: 'ILI', featureType: 'METAL_LOSS', surface: 'EXTERNAL', ...fields },
    tenant,
  ).then(() => id);
};

const assessmentsQuery = `query($r: [_Any!]!, $filter: AnomalyAssessmentFilter) { _entities(representations: $r) { ... on Asset { id
  anomalyAssessments(filter: $filter) { totalCount edges { node { measurement { id } assessable notAssessableReason depthPctWt depthWithTolerancePctWt failurePressureKpa
    safePressureKpa failurePressureRatio erf responseCategory ruleRef categoryReason discoveredAt repairDueAt growthRateMmPerYear growthBasis matchedMeasurementId
    remainingLifeYears remainingLifeLimit modelVersion computedAt sourceEventId } } }
  risk { likelihood consequence score band drivers potentialImpactRadiusM modelVersion } } } }`;
const assessments = async (assetId: string, filter: Record<string, unknown> | null = null, identity = me()) => {
  const res = await harness.request(assessmentsQuery, { identity, variables: { r: [{ __typename: 'Asset', id: assetId }], filter } });
  if (res.errors) throw new Error(JSON.stringify(res.errors));
  return res.data!['_entities'][0];
};

it('answers IMMEDIATE for metal loss deeper than 80 % of wall on a gas segment in an HCA, with the rule and the segment risk', async () => {
  const seg = randomUUID();
  await upsertAsset(seg, { ...gasSegment, inHca: true, classLocation: 3 });
  const id = await anomaly(seg, {
    runId: 'r1',
    observedAt: '2026-03-02T00:00:00.000Z',
    odometerM: 120,
    clockDeg: 90,
    depthPctWt: 82,
    lengthMm: 60,
    widthMm: 40,
  });
  const result = await until(
    () => assessments(seg),
    // The segment has a risk as soon as it is known; wait for the one that counts this anomaly.
    (a) => a.anomalyAssessments.totalCount === 1 && (a.risk?.drivers ?? []).some((d: string) => d.includes('IMMEDIATE')),
  );
  const node = result.anomalyAssessments.edges[0].node;
  expect(node).toMatchObject({
    measurement: { id },
    assessable: true,
    depthPctWt: 82,
    depthWithTolerancePctWt: 92,
    failurePressureKpa: null,
    responseCategory: 'IMMEDIATE',
    ruleRef: '§192.933(d)(1)(iii)',
    repairDueAt: '2026-03-02T00:00:00.000Z',
    remainingLifeYears: 0,
  });
  expect(node.modelVersion).toContain('modified-b31g-0.85dL/2.0.0+SMYS_PLUS_69_MPA');
  expect(node.sourceEventId).toMatch(/[0-9a-f-]{36}/);
  expect(result.risk).toMatchObject({ likelihood: 5, band: 'VERY_HIGH' });
  expect(result.risk.drivers.join(' | ')).toContain('1 IMMEDIATE anomaly');
});

it('assesses a shallow feature with tolerance, grows it from the matching feature of the previous run, and reassesses when the segment changes', async () => {
  const seg = randomUUID();
  await upsertAsset(seg, { ...gasSegment, classLocation: 1 });
  const older = await anomaly(seg, { runId: 'r2021', observedAt: '2021-03-01T00:00:00.000Z', odometerM: 500.0, clockDeg: 350, depthPctWt: 20, lengthMm: 80 });
  const newer = await anomaly(seg, { runId: 'r2026', observedAt: '2026-03-01T00:00:00.000Z', odometerM: 500.4, clockDeg: 10, depthPctWt: 50, lengthMm: 80 });
  const read = () => assessments(seg);
  const result = await until(read, (a) => a.anomalyAssessments.totalCount === 2);
  const byId = Object.fromEntries(result.anomalyAssessments.edges.map((e: { node: { measurement: { id: string } } }) => [e.node.measurement.id, e.node]));
  // Matched across 0.4 m and 20° (clock wraps at 360°): 30 % of 7.9 mm = 2.37 mm in 1,826 days = 0.474 mm/year,
  // above the 0.3 mm/year floor. At 50 % + 10 % tolerance the failure-pressure ratio is 1.65; class 1 metal loss above
  // 1.1 × MAOP follows the operator's B31.8S schedule (§192.714(d)(2)(iv) via (c)): OTHER, no due date.
  expect(byId[newer]).toMatchObject({
    growthBasis: 'MATCHED',
    matchedMeasurementId: older,
    responseCategory: 'OTHER',
    ruleRef: '§192.714(c)',
    repairDueAt: null,
    depthWithTolerancePctWt: 60,
  });
  expect(byId[newer].growthRateMmPerYear).toBeCloseTo(2.37 / (1826 / 365.25), 6);
  expect(byId[newer].failurePressureRatio).toBeCloseTo(1.647, 3);
  expect(byId[older]).toMatchObject({ growthBasis: 'FLOOR', matchedMeasurementId: null });
  expect(byId[newer].remainingLifeYears).toBeGreaterThan(0);

  // The segment reclassed to class 2 and its MAOP raised so the same feature's failure-pressure ratio falls to 1.3, below
  // class 2's 1.39: TWO_YEAR outside an HCA (§192.714(d)(2)(iv)).
  const pf = byId[newer].failurePressureKpa as number;
  await upsertAsset(seg, { ...gasSegment, classLocation: 2, maopKpa: Math.round(pf / 1.3) });
  const raised = await until(read, (a) =>
    a.anomalyAssessments.edges.some((e: { node: { responseCategory: string } }) => e.node.responseCategory === 'TWO_YEAR'),
  );
  const two = raised.anomalyAssessments.edges.find((e: { node: { measurement: { id: string } } }) => e.node.measurement.id === newer).node;
  expect(two).toMatchObject({ responseCategory: 'TWO_YEAR', ruleRef: '§192.714(d)(2)(iv)', repairDueAt: '2028-03-01T00:00:00.000Z' });
});

it('says why an anomaly cannot be assessed', async () => {
  const seg = randomUUID();
  await upsertAsset(seg, { ...gasSegment, wallThicknessMm: null, classLocation: 2 });
  await anomaly(seg, { runId: 'x', observedAt: '2026-01-01T00:00:00.000Z', depthPctWt: 30, lengthMm: 40 });
  await anomaly(seg, { runId: 'x', observedAt: '2026-01-01T00:00:00.000Z', depthPctWt: 20, featureType: 'CRACK' });
  // A dent needs no wall thickness: it is categorised by the dent conditions (repair-conditions.test.ts).
  await anomaly(seg, { runId: 'x', observedAt: '2026-01-01T00:00:00.000Z', featureType: 'DENT', clockDeg: 180, dentDepthPctOd: 1 });
  const result = await until(
    () => assessments(seg, { assessable: false }),
    (a) => a.anomalyAssessments.totalCount === 2,
  );
  const reasons = result.anomalyAssessments.edges.map((e: { node: { notAssessableReason: string } }) => e.node.notAssessableReason).sort();
  expect(reasons[0]).toMatch(/^a crack 30\.0 % of wall deep .*fracture-mechanics failure pressure \(§192\.712\(d\)\)/);
  expect(reasons[1]).toBe('the asset has no wallThicknessMm');
  const categorised = await until(
    () => assessments(seg, { assessable: true }),
    (a) => a.anomalyAssessments.totalCount === 1,
  );
  // A 1 % dent on the bottom meets no §192.714(d) condition: the operator's schedule under (c).
  expect(categorised.anomalyAssessments.edges[0].node).toMatchObject({ responseCategory: 'OTHER', ruleRef: '§192.714(c)' });
});

it('lists the risk register highest score first, and a second tenant sees none of it', async () => {
  const register = (identity = me()) =>
    harness.request(`{ riskRegister(first: 50) { totalCount edges { node { asset { id } risk { score band } } } } }`, { identity });
  const res = await until(register, (r) => (r.data?.['riskRegister'].totalCount ?? 0) >= 3);
  const scores = res.data!['riskRegister'].edges.map((e: { node: { risk: { score: number } } }) => e.node.risk.score);
  expect(scores).toEqual([...scores].sort((a: number, b: number) => b - a));
  expect(res.data!['riskRegister'].edges[0].node.risk.band).toBe('VERY_HIGH');
  const stranger = harness.identity(['analytics:read']);
  expect((await register(stranger)).data!['riskRegister']).toEqual({ totalCount: 0, edges: [] });
  const seg = res.data!['riskRegister'].edges[0].node.asset.id;
  expect(await assessments(seg, null, stranger)).toEqual({ id: seg, anomalyAssessments: { totalCount: 0, edges: [] }, risk: null });
});

it('filters the risk register to a pipeline and what is below it, and to pipe in or outside an HCA', async () => {
  const line = randomUUID();
  const inside = randomUUID();
  const outside = randomUUID();
  const elsewhere = randomUUID();
  await upsertAsset(line, { ...gasSegment, type: 'PIPELINE', classLocation: 2 });
  await upsertAsset(inside, { ...gasSegment, parentId: line, classLocation: 3, inHca: true });
  await upsertAsset(outside, { ...gasSegment, parentId: line, classLocation: 2 });
  await upsertAsset(elsewhere, { ...gasSegment, classLocation: 2, inHca: true });
  const ids = async (filter: Record<string, unknown>) => {
    const res = await harness.request(`query($f: RiskRegisterFilter) { riskRegister(filter: $f, first: 500) { totalCount edges { node { asset { id } } } } }`, {
      identity: me(),
      variables: { f: filter },
    });
    expect(res.errors).toBeUndefined();
    const register = res.data!['riskRegister'] as { totalCount: number; edges: { node: { asset: { id: string } } }[] };
    return Object.assign(register.edges.map((e) => e.node.asset.id).sort(), { totalCount: register.totalCount });
  };
  // Each asset is scored once its event is projected: wait for all four.
  const every = await until(
    () => ids({}),
    (found) => [line, inside, outside, elsewhere].every((id) => found.includes(id)),
  );
  expect(every).toEqual(expect.arrayContaining([line, inside, outside, elsewhere]));
  const underLine = await ids({ pipelineId: line });
  expect([...underLine]).toEqual([line, inside, outside].sort());
  expect(underLine.totalCount).toBe(3); // counted with the same scope as the rows
  expect([...(await ids({ pipelineId: line, inHca: true }))]).toEqual([inside]);
  expect([...(await ids({ pipelineId: line, inHca: false }))]).toEqual([line, outside].sort());
  const hca = await ids({ inHca: true });
  expect(hca).toEqual(expect.arrayContaining([inside, elsewhere]));
  expect(hca).not.toContain(outside);
  expect([...(await ids({ pipelineId: randomUUID() }))]).toEqual([]);
  // Another tenant's pipeline id scopes nothing of it.
  const stranger = harness.identity(['analytics:read']);
  const theirs = await harness.request(`query($f: RiskRegisterFilter) { riskRegister(filter: $f) { totalCount } }`, {
    identity: stranger,
    variables: { f: { pipelineId: line } },
  });
  expect(theirs.data!['riskRegister']).toEqual({ totalCount: 0 });
});

it("keeps a segment's risk when a batch that read its context before the asset was known finishes after the asset's batch", async () => {
  // The consumer handles a tenant's assets stream and measurements stream side by side (and replicas split them): a
  // batch of readings can read its context before the segment's asset.upserted is projected by the other, and
  // refresh the segment's risk after that batch has written it.
  const seg = randomUUID();
  const readBeforeTheAsset = await new Analyzer(harness.db).context(tenantId, [seg]);
  await upsertAsset(seg, { ...gasSegment, inHca: true, classLocation: 3 });
  await anomaly(seg, { runId: 'r-race', observedAt: '2026-03-02T00:00:00.000Z', odometerM: 40, clockDeg: 90, depthPctWt: 82, lengthMm: 60, widthMm: 40 });
  const scored = await until(
    () => assessments(seg),
    (a) => a.anomalyAssessments.totalCount === 1 && (a.risk?.drivers ?? []).some((d: string) => d.includes('IMMEDIATE')),
  );
  await new Analyzer(harness.db).refreshRisk(readBeforeTheAsset, seg);
  expect((await assessments(seg)).risk).toEqual(scored.risk);
});

/** A class 1 gas segment with its risk written, and its risk inputs read now (a batch's read). */
async function segmentWithRiskRead() {
  const seg = randomUUID();
  await upsertAsset(seg, { ...gasSegment, classLocation: 1 });
  await until(
    () => assessments(seg),
    (a) => a.risk != null,
  );
  return { seg, read: await new Analyzer(harness.db).riskContext(tenantId, [seg]) };
}

it("keeps a segment's newer risk when a batch that read the segment before it changed refreshes the risk last", async () => {
  // The consumer handles a tenant's assets and measurements streams side by side (and replicas split them): a batch of
  // readings can read the segment, the assets batch then project its new class location and HCA and write its risk, and
  // the readings batch refresh the risk last, from what it read.
  const { seg, read: readBeforeTheChange } = await segmentWithRiskRead();
  await upsertAsset(seg, { ...gasSegment, inHca: true, classLocation: 4 });
  const changed = await until(
    () => assessments(seg),
    (a) => (a.risk?.drivers ?? []).some((d: string) => d.includes('high consequence area')),
  );
  await new Analyzer(harness.db).refreshRisk(readBeforeTheChange, seg);
  expect((await assessments(seg)).risk).toEqual(changed.risk);
});

it('takes no risk back for a segment abandoned after a batch read it as active', async () => {
  const { seg, read: readWhileActive } = await segmentWithRiskRead();
  await upsertAsset(seg, { ...gasSegment, classLocation: 1, status: 'ABANDONED' });
  await until(
    () => assessments(seg),
    (a) => a.risk == null,
  );
  await new Analyzer(harness.db).refreshRisk(readWhileActive, seg);
  expect((await assessments(seg)).risk).toBeNull();
});

it("keeps the risk of a segment's latest pipe-to-soil reading when a batch that read the one before refreshes the risk last", async () => {
  const { seg, read: readBeforeTheReading } = await segmentWithRiskRead();
  // −700 mV is less negative than the −850 mV criterion (model/risk.ts): the reading raises the likelihood.
  await publish('measurements', 'measurement.recorded', {
    id: randomUUID(),
    assetId: seg,
    type: 'CP_PIPE_TO_SOIL',
    source: 'FIELD',
    value: -700,
    unit: 'mV',
    observedAt: '2026-02-01T00:00:00.000Z',
  });
  const withReading = await until(
    () => assessments(seg),
    (a) => (a.risk?.drivers ?? []).some((d: string) => d.includes('pipe-to-soil')),
  );
  await new Analyzer(harness.db).refreshRisk(readBeforeTheReading, seg);
  expect((await assessments(seg)).risk).toEqual(withReading.risk);
});

it('rebuilds from the streams to the same results, however often it is replayed', async () => {
  const snapshot = async () => ({
    assessments: await harness.db
      .collection('assessments')
      .find({ tenantId }, { projection: { computedAt: 0 } })
      .sort({ _id: 1 })
      .toArray(),
    risks: await harness.db
      .collection('risks')
      .find({ tenantId }, { projection: { computedAt: 0 } })
      .sort({ _id: 1 })
      .toArray(),
  });
  // Every event handled, so the live consumer writes nothing while the snapshots are taken.
  await waitFor(
    () => consumedAll(redis, harness.dbPrefix, ['assets', 'measurements'], tenantId, ANALYTICS_CONSUMER_GROUP),
    60_000,
    'analytics to handle every event of the tenant',
  );
  const before = await snapshot();
  expect(before.assessments.length).toBeGreaterThanOrEqual(5);
  const context = { db: harness.db, dbPrefix: harness.dbPrefix, redis, tenantId, logger: createLogger('test', 'silent') };
  await subgraph.rebuild!(context);
  await subgraph.rebuild!(context);
  expect(await snapshot()).toEqual(before);
});

it("changes a tenant's tool tolerance, reassesses its anomalies with it, and leaves other tenants on the defaults", async () => {
  const tenant = randomUUID();
  const admin = harness.identity(['admin:*'], tenant);
  const settingsOf = async (identity = admin) =>
    (await harness.request(`{ analyticsSettings { toolTolerancePctWt flowStress floorRateMmPerYear } }`, { identity })).data!['analyticsSettings'];
  expect(await settingsOf()).toEqual({ toolTolerancePctWt: 10, flowStress: 'SMYS_PLUS_69_MPA', floorRateMmPerYear: 0.3 });

  const seg = randomUUID();
  await upsertAsset(seg, { ...gasSegment, classLocation: 1 }, tenant);
  await anomaly(seg, { runId: 'r1', observedAt: '2026-03-02T00:00:00.000Z', odometerM: 10, clockDeg: 0, depthPctWt: 30, lengthMm: 50 }, tenant);
  const depthOf = async () => (await assessments(seg, null, admin)).anomalyAssessments.edges[0]?.node.depthWithTolerancePctWt;
  await until(depthOf, (d) => d === 40);

  const update = (input: Record<string, unknown>) =>
    harness.request(`mutation($input: AnalyticsSettingsInput!) { updateAnalyticsSettings(input: $input) { toolTolerancePctWt flowStress } }`, {
      identity: admin,
      variables: { input },
    });
  const rejected = await update({ toolTolerancePctWt: -5, flowStress: 'SMYS_TIMES_1_1' });
  expect(rejected.errors?.[0]).toMatchObject({
    message: 'input.toolTolerancePctWt: must be from 0 to 50 % of wall',
    extensions: { code: 'BAD_USER_INPUT', field: 'input.toolTolerancePctWt' },
  });
  expect(await settingsOf()).toMatchObject({ toolTolerancePctWt: 10, flowStress: 'SMYS_PLUS_69_MPA' }); // nothing half-written

  expect((await update({ toolTolerancePctWt: 0 })).data!['updateAnalyticsSettings']).toEqual({ toolTolerancePctWt: 0, flowStress: 'SMYS_PLUS_69_MPA' });
  await until(depthOf, (d) => d === 30);
  expect(await settingsOf(harness.identity(['analytics:read']))).toMatchObject({ toolTolerancePctWt: 10 });

  expect((await update({ toolTolerancePctWt: null })).data!['updateAnalyticsSettings']).toMatchObject({ toolTolerancePctWt: 10 });
  await until(depthOf, (d) => d === 40);
});

it("holds an importing run's features for its comparison, and assesses them one by one once ili.run.failed says the run will not complete", async () => {
  const seg = randomUUID();
  await upsertAsset(seg, { ...gasSegment, classLocation: 2 });
  const runId = `run-${randomUUID()}`;
  const run = {
    id: runId,
    assetId: seg,
    runDate: '2026-02-01T00:00:00.000Z',
    discoveredAt: '2026-02-01T00:00:00.000Z',
    toolTolerancePctWt: null,
    certaintyPct: 80,
  };
  await publish('measurements', 'ili.run.started', run);
  const held = [
    await anomaly(seg, { runId, observedAt: run.runDate, odometerM: 10, clockDeg: 30, depthPctWt: 30, lengthMm: 50 }),
    await anomaly(seg, { runId, observedAt: run.runDate, odometerM: 20, clockDeg: 60, depthPctWt: 35, lengthMm: 60 }),
  ];
  // Hand-recorded after them on the same stream: once it is assessed, the run's features have been projected and held.
  const sentinel = await anomaly(seg, { runId: null, observedAt: '2026-02-02T00:00:00.000Z', odometerM: 500, depthPctWt: 20, lengthMm: 40 });
  const ids = (a: { anomalyAssessments: { edges: { node: { measurement: { id: string } } }[] } }) =>
    a.anomalyAssessments.edges.map((e) => e.node.measurement.id);
  const before = await until(
    () => assessments(seg),
    (a) => ids(a).includes(sentinel),
  );
  expect(ids(before)).toEqual([sentinel]);

  await publish('measurements', 'ili.run.failed', {
    id: runId,
    assetId: seg,
    failure: 'the import stopped on an internal error while writing',
    featuresWritten: 2,
  });
  const after = await until(
    () => assessments(seg),
    (a) => a.anomalyAssessments.totalCount === 3,
  );
  expect(ids(after).sort()).toEqual([...held, sentinel].sort());
});

it('projects an anomaly once: a replay is left as stored, and the same id of another tenant is refused', async () => {
  const anomalies = harness.db.collection<AnomalyProjection>(ANALYTICS_COLLECTIONS.anomalies);
  const projection = (id: string, tenant: string, depthPctWt: number): AnomalyProjection => ({
    _id: id,
    tenantId: tenant,
    assetId: `asset-of-${tenant}`,
    runId: null,
    observedAt: new Date('2026-03-01T00:00:00Z'),
    featureType: 'METAL_LOSS',
    surface: 'EXTERNAL',
    odometerM: 1,
    stationM: null,
    clockDeg: null,
    depthPctWt,
    lengthMm: null,
    widthMm: null,
    sourceEventId: randomUUID(),
  });
  const [stored, fresh] = [randomUUID(), randomUUID()];
  expect(await insertNewAnomalies(anomalies, [projection(stored, tenantId, 30)])).toEqual([0]);
  // The replay of the stored one (with other values) and a new one: only the new one is stored.
  expect(await insertNewAnomalies(anomalies, [projection(stored, tenantId, 70), projection(fresh, tenantId, 40)])).toEqual([1]);
  expect(await anomalies.findOne({ _id: stored })).toMatchObject({ tenantId, depthPctWt: 30 });
  await expect(insertNewAnomalies(anomalies, [projection(stored, randomUUID(), 50)])).rejects.toThrow(`anomaly ${stored} is stored for another tenant`);
  expect(await anomalies.countDocuments({ _id: { $in: [stored, fresh] } })).toBe(2);
  // A backlog batch is inserted in slices: the replays are found and skipped in whichever slice they are.
  const batch = Array.from({ length: 450 }, (_, i) => projection(randomUUID(), tenantId, 10 + (i % 50)));
  batch[0] = projection(stored, tenantId, 80);
  batch[333] = projection(fresh, tenantId, 80);
  const inserted = await insertNewAnomalies(anomalies, batch);
  expect(inserted).toHaveLength(448);
  expect(inserted.includes(0) || inserted.includes(333)).toBe(false);
  expect(await anomalies.countDocuments({ _id: { $in: batch.map((a) => a._id) } })).toBe(450);
  expect(await anomalies.findOne({ _id: fresh })).toMatchObject({ depthPctWt: 40 });
});
