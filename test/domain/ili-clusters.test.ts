/**
 * Interacting metal loss of an imported ILI run is assessed as one feature (issue 25 item 3): the cluster's box — from
 * the first member's upstream end to the last member's downstream end, at the deepest member's depth — is what Modified
 * B31G is run on, every member carries the cluster's figures, the dig list shows the cluster once (by its deepest
 * member), a repair of the cluster's lead covers every member, and the tenant can choose the rule.
 *
 * The rule: ASME_B31G_3T (the default) — "The B31G standard recommends a flaw interaction criterion for ILI metal loss
 * predictions within a longitudinal and circumferential spacing of 3 times wall thickness" (abstract of an ASME IPC 2012
 * paper, asmedigitalcollection.asme.org/IPC/proceedings-abstract/IPC2012/45134/51/266577; model/interaction.ts and its
 * tests carry the rule itself). Here t = 10 mm, so features interact within 30 mm.
 */
import path from 'node:path';
import { importListing } from '@linepack/lib/ili/client';
import type { IliListingRow } from '@linepack/lib/ili/listing';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { until } from '@linepack/lib/testing/until';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';
import { testTempDir } from '../support/temp-dir';

let stack: TestStack;
let key: string;
let admin: string;
let segmentId: string;
let runId: string;
const dir = testTempDir('ili-clusters-');
const WALL_MM = 10;
const PIPE = { outsideDiameterMm: 610, wallThicknessMm: WALL_MM, smysMpa: 359, maopKpa: 6900, classLocation: 1 };

const blank = { vendorFeatureId: null, jointNumber: null, jointLengthM: null, wallThicknessMm: null, clockDeg: null, depthPctWt: null };
const rest = { lengthMm: null, widthMm: null, dentDepthPctOd: null, surface: null, markerName: null, comment: null };
let row = 1;
const weld = (logDistanceM: number, jointNumber: number): IliListingRow => ({
  ...blank,
  ...rest,
  rowNumber: ++row,
  kind: 'GIRTH_WELD',
  logDistanceM,
  jointNumber,
  jointLengthM: 12,
  wallThicknessMm: WALL_MM,
});
const pit = (vendorFeatureId: string, logDistanceM: number, lengthMm: number, depthPctWt: number): IliListingRow => ({
  ...blank,
  ...rest,
  rowNumber: ++row,
  kind: 'METAL_LOSS',
  logDistanceM,
  vendorFeatureId,
  jointNumber: 3,
  clockDeg: 90,
  depthPctWt,
  lengthMm,
  widthMm: 30,
  surface: 'EXTERNAL',
});
// Joint 3 runs 24–36 m. A ends at 30.040 m and B starts 30 mm later (= 3t: they interact); C starts 80 mm after B ends
// (alone under 3t, within a 100 mm SPACING rule); D is far away on joint 5.
const rows: IliListingRow[] = [
  weld(0, 1),
  weld(12, 2),
  weld(24, 3),
  pit('A', 30.0, 40, 30),
  pit('B', 30.07, 50, 45),
  pit('C', 30.2, 20, 20),
  weld(36, 4),
  weld(48, 5),
  pit('D', 52.0, 60, 25),
  weld(60, 6),
];

const call = (query: string, variables: Record<string, unknown> = {}, apiKey = key) =>
  graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey, variables });

interface Assessed {
  measurement: { id: string; odometerM: number };
  depthPctWt: number;
  failurePressureKpa: number | null;
  responseCategory: string;
  status: string;
  methodNotes: string[];
  cluster: { lead: { id: string }; members: { id: string }[]; memberCount: number; rule: string; lengthMm: number; maxDepthPctWt: number } | null;
}

/** The segment's assessments by vendor letter (A–D, placed by log distance). */
async function assessed(): Promise<Record<string, Assessed>> {
  const { body } = await call(
    `query($id: ID!) { asset(id: $id) { anomalyAssessments(first: 50) { edges { node { measurement { id odometerM } depthPctWt failurePressureKpa responseCategory
      status methodNotes cluster { lead { id } members { id } memberCount rule lengthMm maxDepthPctWt } } } } } }`,
    { id: segmentId },
  );
  const byLetter: Record<string, Assessed> = {};
  for (const { node } of body.data!['asset'].anomalyAssessments.edges as { node: Assessed }[]) {
    const letter = rows.find((r) => r.vendorFeatureId && Math.abs(r.logDistanceM - node.measurement.odometerM) < 1e-6)!.vendorFeatureId!;
    byLetter[letter] = node;
  }
  return byLetter;
}

const ALL_CATEGORIES = '[IMMEDIATE, SIXTY_DAY, ONE_HUNDRED_EIGHTY_DAY, ONE_YEAR, TWO_YEAR, MONITORED, OTHER]';
async function digListIds(): Promise<string[]> {
  const { body } = await call(
    `query($p: ID!) { digList(filter: { pipelineId: $p, responseCategories: ${ALL_CATEGORIES} }, first: 50) { edges { node { measurement { id } } } } }`,
    { p: segmentId },
  );
  expect(body.errors).toBeUndefined();
  return body.data!['digList'].edges.map((e: { node: { measurement: { id: string } } }) => e.node.measurement.id);
}

/** The Modified B31G failure pressure of the calculator for a depth (% of wall, tool tolerance added) and length. */
async function calculatorFailurePressure(depthPctWt: number, lengthMm: number): Promise<number> {
  const { body } = await call(
    `query($d: Float!, $l: Float!) { modifiedB31G(input: { outsideDiameterMm: 610, wallThicknessMm: 10, smysMpa: 359, classLocation: 1, maopKpa: 6900,
      defectDepthMm: $d, defectLengthMm: $l }) { failurePressureKpa } }`,
    { d: (depthPctWt / 100) * WALL_MM, l: lengthMm },
  );
  return body.data!['modifiedB31G'].failurePressureKpa;
}

beforeAll(async () => {
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  const tenant = await stack.tenantWithKey();
  key = tenant.apiKey;
  admin = await stack.keyFor(tenant.tenantId, ['admin:*']);
  const gas = { regulation: 'CFR_192', product: 'NATURAL_GAS', status: 'ACTIVE' };
  segmentId = (await createAsset(stack.gatewayUrl, key, { type: 'SEGMENT', name: 'Line 30 · joint 1–6', ...gas, ...PIPE })).id;
  const file = path.join(dir, 'run.csv');
  await writePofListingCsv(rows, file);
  const request = {
    gatewayUrl: stack.gatewayUrl,
    apiKey: key,
    file,
    assetId: segmentId,
    run: { vendor: 'Synthetic ILI Co.', toolTechnologies: ['MFL'], runDate: '2025-06-01T00:00:00Z' },
    pollMs: 100,
  };
  await stack.knownToMeasurements(segmentId);
  const imported = await importListing(request);
  expect(imported.state).toBe('SUCCEEDED');
  runId = imported.run.id;
  await until(
    async () => (await call('query($r: ID!) { iliRun(id: $r) { comparison { state } } }', { r: runId })).body.data?.['iliRun']?.comparison?.state,
    (state) => state === 'COMPLETE',
    60_000,
  );
}, 120_000);
afterAll(() => stack?.stop());

test('interacting pits are assessed as their box at the deepest depth; a pit beyond 3t stands alone', async () => {
  const { A, B, C, D } = await assessed();
  // The box: 30.000 m to 30.120 m = 120 mm long, at B's 45 % of wall.
  const cluster = { lead: { id: B!.measurement.id }, memberCount: 2, rule: 'ASME_B31G_3T', lengthMm: expect.closeTo(120, 6), maxDepthPctWt: 45 };
  expect(A!.cluster).toMatchObject(cluster);
  expect(B!.cluster).toMatchObject(cluster);
  expect(A!.cluster!.members.map((m) => m.id).sort()).toEqual([A!.measurement.id, B!.measurement.id].sort());
  expect(C!.cluster).toBeNull();
  expect(D!.cluster).toBeNull();
  // Each member still reports its own depth; the box's is in the cluster and the figures.
  expect([A!.depthPctWt, B!.depthPctWt]).toEqual([30, 45]);
  // Both members carry the box's failure pressure: 45 % + the 10 % tool tolerance over 120 mm (the calculator's figure).
  const box = await calculatorFailurePressure(55, 120);
  expect(A!.failurePressureKpa).toBeCloseTo(box, 6);
  expect(B!.failurePressureKpa).toBeCloseTo(box, 6);
  // C is assessed on its own 20 % × 20 mm, which fails at a higher pressure than the box.
  expect(C!.failurePressureKpa).toBeCloseTo(await calculatorFailurePressure(30, 20), 6);
  expect(C!.failurePressureKpa!).toBeGreaterThan(box);
  expect(A!.methodNotes.join(' ')).toMatch(/assessed as a cluster of 2 interacting anomalies \(ASME_B31G_3T rule\)/);
});

test('the dig list shows a cluster once, by its deepest member', async () => {
  const { A, B, C, D } = await assessed();
  const listed = await digListIds();
  expect(listed).toContain(B!.measurement.id);
  expect(listed).not.toContain(A!.measurement.id);
  expect(listed).toEqual(expect.arrayContaining([C!.measurement.id, D!.measurement.id]));
  expect(listed).toHaveLength(3);
});

test('SPACING without its limits is refused naming them; with 100 mm limits the run is clustered again and C joins', async () => {
  const refused = await call('mutation { updateAnalyticsSettings(input: { interactionRule: SPACING }) { interactionRule } }', {}, admin);
  expect(refused.body.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  expect(JSON.stringify(refused.body.errors)).toMatch(/interactionAxialGapMm.*is required for the SPACING interaction rule/);
  expect((await call('{ analyticsSettings { interactionRule } }')).body.data!['analyticsSettings'].interactionRule).toBe('ASME_B31G_3T');

  const changed = await call(
    'mutation { updateAnalyticsSettings(input: { interactionRule: SPACING, interactionAxialGapMm: 100, interactionCircumferentialGapMm: 100 }) { interactionRule interactionAxialGapMm interactionCircumferentialGapMm } }',
    {},
    admin,
  );
  expect(changed.body.data!['updateAnalyticsSettings']).toEqual({
    interactionRule: 'SPACING',
    interactionAxialGapMm: 100,
    interactionCircumferentialGapMm: 100,
  });
  const after = await until(
    () => assessed(),
    (byLetter) => byLetter['C']?.cluster?.memberCount === 3,
    60_000,
  );
  // 30.000 m to C's end at 30.220 m.
  expect(after['A']!.cluster).toMatchObject({ rule: 'SPACING', memberCount: 3, lengthMm: expect.closeTo(220, 6), lead: { id: after['B']!.measurement.id } });
  expect(after['D']!.cluster).toBeNull();
});

test("a repair recorded against the cluster's lead covers every member: they leave the dig list together", async () => {
  const { A, B, C } = await assessed();
  const { body } = await call(
    `mutation($ids: [ID!]!) { recordRepair(input: { idempotencyKey: "cluster-sleeve", repairType: TYPE_B_SLEEVE, repairedAt: "2025-09-01T00:00:00Z",
      measurementIds: $ids }) { measurements { id } } }`,
    { ids: [B!.measurement.id] },
  );
  expect(body.errors).toBeUndefined();
  expect(body.data!['recordRepair'].measurements.map((m: { id: string }) => m.id).sort()).toEqual(
    [A!.measurement.id, B!.measurement.id, C!.measurement.id].sort(),
  );
  const now = await assessed();
  expect([now['A']!.status, now['B']!.status, now['C']!.status]).toEqual(['REPAIRED', 'REPAIRED', 'REPAIRED']);
  expect(now['D']!.status).toBe('OPEN');
  expect(await digListIds()).toEqual([now['D']!.measurement.id]);
});
