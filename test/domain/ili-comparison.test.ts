/**
 * ILI run comparison end to end (issue 25, "Runs are matched by odometer alone"): two generated runs of one segment
 * (lib/ili/generator.ts) imported through the gateway as listings; analytics aligns them by girth welds, matches their
 * features one to one and assesses the newer run's anomalies with the matched growth. The newer run is imported first,
 * so the older one arriving later must re-evaluate it. The generator's truth (which feature of run A is which of run B,
 * and its true growth) is what the results are checked against.
 */
import path from 'node:path';
import { importListing, type IliImportRequest } from '@linepack/lib/ili/client';
import { GENERATOR_TOOL_NOISE, generateTwoRunListing, type GeneratedRun } from '@linepack/lib/ili/generator';
import { TALLY_KINDS } from '@linepack/lib/ili/listing';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { until } from '@linepack/lib/testing/until';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';
import { testTempDir } from '../support/temp-dir';

let stack: TestStack;
let key: string;
let segmentId: string;
const dir = testTempDir('ili-comparison-');
const WALL_MM = 9.5;
const listing = generateTwoRunListing({ features: 300, seed: 21, wallThicknessMm: WALL_MM });
const { runA, runB, truth } = listing;
const featuresOf = (run: GeneratedRun) => run.rows.filter((row) => !TALLY_KINDS.has(row.kind));
/** Run B's discovery date: 120 days after its run date (§192.933(b) lets discovery come after the assessment). */
const discoveredB = new Date(Date.parse(`${runB.runDate}T00:00:00Z`) + 120 * 86_400_000);

const call = (query: string, variables: Record<string, unknown> = {}) => graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey: key, variables });
const request = (run: GeneratedRun, discoveredAt?: Date): IliImportRequest => ({
  gatewayUrl: stack.gatewayUrl,
  apiKey: key,
  file: path.join(dir, `${run.runId}.csv`),
  assetId: segmentId,
  run: {
    vendor: 'Synthetic ILI Co.',
    toolTechnologies: ['MFL'],
    runDate: `${run.runDate}T00:00:00Z`,
    ...(discoveredAt ? { discoveredAt: discoveredAt.toISOString() } : {}),
  },
  pollMs: 100,
});

const COMPARISON = `query($run: ID!) { iliRun(id: $run) { comparison { state olderRun { id } years matchedCount newFeatureCount unmatchedOlderCount
  weldPairCount unmatchedOlderWeldCount unmatchedNewerWeldCount assessedFeatureCount computedAt } } }`;
const comparisonOf = async (runId: string) => (await call(COMPARISON, { run: runId })).body.data?.['iliRun']?.comparison ?? null;

interface Assessed {
  measurement: { id: string; runId: string | null; odometerM: number };
  growthBasis: string | null;
  growthRateMmPerYear: number | null;
  matchedMeasurementId: string | null;
  methodNotes: string[];
  discoveredAt: string | null;
  repairDueAt: string | null;
  responseCategory: string | null;
  depthPctWt: number | null;
  status: string;
  supersededBy: { id: string } | null;
  cluster: { lead: { id: string } } | null;
}

/** Every assessment of the segment, page by page. */
async function assessments(): Promise<Assessed[]> {
  const all: Assessed[] = [];
  let after: string | null = null;
  for (;;) {
    const { body } = await call(
      `query($id: ID!, $after: String) { asset(id: $id) { anomalyAssessments(first: 500, after: $after) { pageInfo { hasNextPage endCursor }
        edges { node { measurement { id runId odometerM } growthBasis growthRateMmPerYear matchedMeasurementId methodNotes discoveredAt repairDueAt
          responseCategory depthPctWt status supersededBy { id } cluster { lead { id } } } } } } }`,
      { id: segmentId, after },
    );
    const page = body.data!['asset'].anomalyAssessments;
    all.push(...page.edges.map((e: { node: Assessed }) => e.node));
    if (!page.pageInfo.hasNextPage) return all;
    after = page.pageInfo.endCursor;
  }
}

interface Point {
  olderMeasurement: { id: string };
  newerMeasurement: { id: string };
  olderDepthPctWt: number;
  newerDepthPctWt: number;
  growthRateMmPerYear: number | null;
}

async function unityPlot(runId: string): Promise<{ totalCount: number; points: Point[] }> {
  const points: Point[] = [];
  let after: string | null = null;
  let totalCount = 0;
  for (;;) {
    const { body } = await call(
      `query($run: ID!, $after: String) { iliRun(id: $run) { comparison { unityPlot(first: 200, after: $after) { totalCount pageInfo { hasNextPage endCursor }
        edges { node { olderMeasurement { id } newerMeasurement { id } olderDepthPctWt newerDepthPctWt growthRateMmPerYear } } } } } }`,
      { run: runId, after },
    );
    const page = body.data!['iliRun'].comparison.unityPlot;
    totalCount = page.totalCount;
    points.push(...page.edges.map((e: { node: Point }) => e.node));
    if (!page.pageInfo.hasNextPage) return { totalCount, points };
    after = page.pageInfo.endCursor;
  }
}

let runAId: string;
let runBId: string;
/** Measurement id -> the generator's vendorFeatureId, by run and log distance (unique to the millimetre). */
const vendorIdOf = new Map<string, string>();

beforeAll(async () => {
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  key = (await stack.tenantWithKey()).apiKey;
  const gas = { regulation: 'CFR_192', product: 'NATURAL_GAS', status: 'ACTIVE' };
  const line = await createAsset(stack.gatewayUrl, key, { type: 'PIPELINE', name: 'Line 21', ...gas });
  segmentId = (
    await createAsset(stack.gatewayUrl, key, {
      type: 'SEGMENT',
      name: 'Line 21 · MP 0–1',
      parentId: line.id,
      ...gas,
      outsideDiameterMm: 609.6,
      wallThicknessMm: WALL_MM,
      smysMpa: 359,
      maopKpa: 6900,
      classLocation: 3,
      inHca: true,
    })
  ).id;
  await stack.knownToMeasurements(segmentId);
  await writePofListingCsv(runA.rows, path.join(dir, `${runA.runId}.csv`));
  await writePofListingCsv(runB.rows, path.join(dir, `${runB.runId}.csv`));
}, 60_000);
afterAll(() => stack?.stop());

test('the newer run alone is compared with nothing: COMPLETE, every feature at the floor rate and saying why', async () => {
  const imported = await importListing(request(runB, discoveredB));
  expect(imported.state).toBe('SUCCEEDED');
  runBId = imported.run.id;
  const comparison = await until(
    () => comparisonOf(runBId),
    (c) => c?.state === 'COMPLETE',
    60_000,
  );
  expect(comparison).toMatchObject({ state: 'COMPLETE', olderRun: null, matchedCount: 0, assessedFeatureCount: featuresOf(runB).length });
  const ofB = (await assessments()).filter((a) => a.measurement.runId === runBId && a.depthPctWt != null && a.growthBasis != null);
  expect(ofB.length).toBeGreaterThan(100);
  for (const a of ofB) {
    expect(a.growthBasis).toBe('FLOOR');
    expect(a.methodNotes.join(' ')).toMatch(/no earlier imported ILI run of this segment/);
  }
}, 120_000);

test('importing the older run afterwards compares the newer again: aligned by welds, its features MATCHED', async () => {
  const imported = await importListing(request(runA));
  expect(imported.state).toBe('SUCCEEDED');
  runAId = imported.run.id;
  const comparison = await until(
    () => comparisonOf(runBId),
    (c) => c?.state === 'COMPLETE' && c.olderRun?.id === runAId,
    120_000,
  );
  expect(comparison).toMatchObject({ state: 'COMPLETE', olderRun: { id: runAId }, assessedFeatureCount: featuresOf(runB).length });
  expect(comparison.years).toBeCloseTo(5, 1);
  // Every weld both runs reported is paired (the generator's truth lists them).
  expect(comparison.weldPairCount).toBeGreaterThanOrEqual(truth.weldPairs.length * 0.99);
  expect(comparison.matchedCount + comparison.newFeatureCount).toBe(featuresOf(runB).length);
  // The older run is the segment's first: compared with nothing.
  expect(await comparisonOf(runAId)).toMatchObject({ state: 'COMPLETE', olderRun: null });

  // Measurement ids to the generator's feature ids, by run and log distance.
  const byDistance = new Map<string, string>();
  for (const [run, rows] of [
    ['A', featuresOf(runA)],
    ['B', featuresOf(runB)],
  ] as const)
    for (const row of rows) byDistance.set(`${run}:${row.logDistanceM.toFixed(3)}`, row.vendorFeatureId!);
  for (const a of await assessments()) {
    const run = a.measurement.runId === runAId ? 'A' : 'B';
    const vendorId = byDistance.get(`${run}:${a.measurement.odometerM.toFixed(3)}`);
    if (vendorId) vendorIdOf.set(a.measurement.id, vendorId);
  }
  expect(vendorIdOf.size).toBe(featuresOf(runA).length + featuresOf(runB).length);
  const matched = (await assessments()).filter((a) => a.measurement.runId === runBId && a.growthBasis === 'MATCHED');
  expect(matched.length).toBeGreaterThan(50);
}, 240_000);

/**
 * A newer run's call of a feature replaces the older run's: the dig list and the segment's risk must not carry both
 * (an integrity engineer digs on the latest call; the older one stays for the growth between the runs and the audit).
 * Run A arrived after run B here, so this also checks that the marks are made in either order of arrival.
 */
test("run A's features that run B reported again are SUPERSEDED by B's call: off the dig list, kept in the history", async () => {
  const all = await assessments();
  const comparison = await comparisonOf(runBId);
  const ofA = all.filter((a) => a.measurement.runId === runAId);
  const ofB = new Map(all.filter((a) => a.measurement.runId === runBId).map((a) => [a.measurement.id, a]));
  const superseded = ofA.filter((a) => a.status === 'SUPERSEDED');
  expect(superseded.length).toBe(comparison.matchedCount);
  expect(ofA.length - superseded.length).toBe(comparison.unmatchedOlderCount);
  for (const a of superseded) {
    const newer = ofB.get(a.supersededBy!.id)!;
    expect(newer).toBeDefined();
    expect(vendorIdOf.get(a.measurement.id)).toBeDefined();
    // The newer call's growth names this feature as its match (dents and cracks carry no growth figures).
    if (newer.matchedMeasurementId != null) expect(newer.matchedMeasurementId).toBe(a.measurement.id);
  }
  for (const a of ofA.filter((x) => x.status !== 'SUPERSEDED')) expect(a).toMatchObject({ status: 'OPEN', supersededBy: null });
  // Run B is the segment's latest: none of its calls is superseded, and each older feature is superseded at most once.
  for (const b of ofB.values()) expect(b).toMatchObject({ status: 'OPEN', supersededBy: null });
  expect(new Set(superseded.map((a) => a.supersededBy!.id)).size).toBe(superseded.length);

  const DUE = new Set(['IMMEDIATE', 'SIXTY_DAY', 'ONE_HUNDRED_EIGHTY_DAY', 'ONE_YEAR', 'TWO_YEAR']);
  const listed = (a: Assessed) => DUE.has(a.responseCategory ?? '') && (a.cluster == null || a.cluster.lead.id === a.measurement.id);
  const digs = async (includeSuperseded: boolean) => {
    const ids: string[] = [];
    let after: string | null = null;
    for (;;) {
      const { body } = await call(
        `query($f: DigListFilter, $after: String) { digList(filter: $f, first: 200, after: $after) { totalCount pageInfo { hasNextPage endCursor }
          edges { node { measurement { id } status } } } }`,
        { f: { pipelineId: segmentId, includeSuperseded }, after },
      );
      const page = body.data!['digList'];
      ids.push(...page.edges.map((e: { node: { measurement: { id: string } } }) => e.node.measurement.id));
      if (!page.pageInfo.hasNextPage) return { ids, totalCount: page.totalCount as number };
      after = page.pageInfo.endCursor;
    }
  };
  const open = await digs(false);
  const expected = all.filter((a) => a.status === 'OPEN' && listed(a)).map((a) => a.measurement.id);
  expect(new Set(open.ids)).toEqual(new Set(expected));
  expect(open.totalCount).toBe(expected.length);
  expect(superseded.filter(listed).length).toBeGreaterThan(0);
  const withSuperseded = await digs(true);
  expect(withSuperseded.totalCount).toBe(expected.length + superseded.filter(listed).length);

  // The segment's anomaly list filters by status: its open calls, or the history.
  const countOf = async (statuses: string[]) =>
    (
      await call('query($id: ID!, $s: [AnomalyStatus!]) { asset(id: $id) { anomalyAssessments(filter: { statuses: $s }, first: 1) { totalCount } } }', {
        id: segmentId,
        s: statuses,
      })
    ).body.data!['asset'].anomalyAssessments.totalCount;
  expect(await countOf(['OPEN'])).toBe(all.filter((a) => a.status === 'OPEN').length);
  expect(await countOf(['SUPERSEDED'])).toBe(superseded.length);
  expect(await countOf(['OPEN', 'SUPERSEDED', 'REPAIRED'])).toBe(all.length);
});

test("matches are the generator's: ≥ 95 % of its pairs recovered, ≥ 97 % of the pairs right, none many-to-one", async () => {
  const ofB = (await assessments()).filter((a) => a.measurement.runId === runBId && a.matchedMeasurementId);
  const olderIds = ofB.map((a) => a.matchedMeasurementId!);
  expect(new Set(olderIds).size).toBe(olderIds.length);
  const truePairs = new Set(truth.matches.map((m) => `${m.a}>${m.b}`));
  const right = ofB.filter((a) => truePairs.has(`${vendorIdOf.get(a.matchedMeasurementId!)}>${vendorIdOf.get(a.measurement.id)}`));
  expect(right.length / ofB.length).toBeGreaterThanOrEqual(0.97);
  expect(right.length / truth.matches.length).toBeGreaterThanOrEqual(0.95);
});

test("matched growth rates agree with the generator's truth within the tool noise", async () => {
  const { points } = await unityPlot(runBId);
  const truthOf = new Map(truth.matches.map((m) => [`${m.a}>${m.b}`, m.trueDepthGrowthPctWtPerYear]));
  // Each run's depth reading carries noise of sd 4 % of wall (GENERATOR_TOOL_NOISE) and is rounded to 1 %: the
  // measured change over 5 years scatters by √2 × √(4² + 1/12) % of wall.
  const years = 5;
  const sdPctPerYear = (Math.SQRT2 * Math.hypot(GENERATOR_TOOL_NOISE.depthPctWtSd, Math.sqrt(1 / 12))) / years;
  const errors: number[] = [];
  for (const p of points) {
    const trueRate = truthOf.get(`${vendorIdOf.get(p.olderMeasurement.id)}>${vendorIdOf.get(p.newerMeasurement.id)}`);
    // Features the generator capped at 95 % of wall (or clamped at 99 %) grew less than their true rate says.
    if (trueRate === undefined || p.newerDepthPctWt >= 90) continue;
    errors.push(((p.growthRateMmPerYear! / WALL_MM) * 100 - trueRate) / sdPctPerYear);
  }
  expect(errors.length).toBeGreaterThan(50);
  // Every error within 4.5 σ; their mean within 3 standard errors of zero (no bias).
  expect(Math.max(...errors.map(Math.abs))).toBeLessThan(4.5);
  const mean = errors.reduce((s, e) => s + e, 0) / errors.length;
  expect(Math.abs(mean)).toBeLessThan(3 / Math.sqrt(errors.length));
});

test('features new in the newer run take the floor rate and say they are new', async () => {
  const newInB = new Set(truth.newInB);
  const ofB = (await assessments()).filter((a) => a.measurement.runId === runBId && newInB.has(vendorIdOf.get(a.measurement.id)!) && a.depthPctWt != null);
  expect(ofB.length).toBeGreaterThan(3);
  const floor = ofB.filter((a) => a.growthBasis === 'FLOOR' && a.matchedMeasurementId == null);
  expect(floor.length / ofB.length).toBeGreaterThanOrEqual(0.9);
  for (const a of floor) {
    expect(a.growthRateMmPerYear).toBeCloseTo(0.3, 6);
    expect(a.methodNotes.join(' ')).toMatch(/new feature: no match in the run of/);
  }
});

test("the unity plot is the matched pairs with both depths, and each point is its assessment's match", async () => {
  const { totalCount, points } = await unityPlot(runBId);
  const all = await assessments();
  const byId = new Map(all.map((a) => [a.measurement.id, a]));
  // Every assessed match with both depths is a point …
  const pairs = all.filter(
    (a) => a.measurement.runId === runBId && a.matchedMeasurementId && a.depthPctWt != null && byId.get(a.matchedMeasurementId)?.depthPctWt != null,
  );
  const pointKeys = new Set(points.map((p) => `${p.olderMeasurement.id}>${p.newerMeasurement.id}`));
  expect(totalCount).toBe(points.length);
  expect(pairs.length).toBeGreaterThan(50);
  for (const a of pairs) expect(pointKeys).toContain(`${a.matchedMeasurementId}>${a.measurement.id}`);
  // … and every point is its newer feature's match, or a feature Modified B31G does not assess (a crack: no growth).
  for (const p of points) {
    const newer = byId.get(p.newerMeasurement.id)!;
    if (newer.growthBasis != null) expect(newer.matchedMeasurementId).toBe(p.olderMeasurement.id);
    expect(p.olderDepthPctWt).toBe(byId.get(p.olderMeasurement.id)!.depthPctWt);
    expect(p.newerDepthPctWt).toBe(newer.depthPctWt);
  }
});

/**
 * 49 CFR 192.933(b), current text (https://www.ecfr.gov/current/title-49/section-192.933; read from the eCFR's export,
 * github.com/MichalOpoka/ecfr at commit 7483bd4766f0f243d2280756a25dc1c6c2ef402c): "Discovery of condition. Discovery of
 * a condition occurs when an operator has adequate information about a condition to determine that the condition
 * presents a potential threat to the integrity of the pipeline. … An operator must promptly, but no later than 180 days
 * after conducting an integrity assessment, obtain sufficient information about a condition to make that determination,
 * unless the operator demonstrates that the 180-day period is impracticable." §192.933(d)(1): "Immediate repair
 * conditions. An operator's evaluation and remediation schedule must follow ASME/ANSI B31.8S-2004, section 7
 * (incorporated by reference, see § 192.7) in providing for immediate repair conditions." §192.933(d)(2): "One-year
 * conditions. Except for conditions listed in paragraphs (d)(1) and (3) of this section, an operator must remediate any
 * of the following within 1 year of discovery of the condition".
 */
test("§192.933(b): the run's discovery date is the assessments' discoveredAt, and repair due dates count from it", async () => {
  const ofB = (await assessments()).filter((a) => a.measurement.runId === runBId && a.responseCategory != null);
  expect(ofB.length).toBeGreaterThan(100);
  for (const a of ofB) expect(a.discoveredAt).toBe(discoveredB.toISOString());
  const immediate = ofB.filter((a) => a.responseCategory === 'IMMEDIATE');
  const oneYear = ofB.filter((a) => a.responseCategory === 'ONE_YEAR');
  expect(immediate.length + oneYear.length).toBeGreaterThan(0);
  for (const a of immediate) expect(a.repairDueAt).toBe(discoveredB.toISOString());
  const yearLater = new Date(discoveredB);
  yearLater.setUTCFullYear(yearLater.getUTCFullYear() + 1);
  for (const a of oneYear) expect(a.repairDueAt).toBe(yearLater.toISOString());
  // Not the run date: the older run, imported without a discovery date, is discovered on its run date.
  const ofA = (await assessments()).filter((a) => a.measurement.runId === runAId && a.responseCategory != null);
  for (const a of ofA) expect(a.discoveredAt).toBe(`${runA.runDate}T00:00:00.000Z`);
});

/**
 * A repair is of a defect, not of one run's call of it. A sleeve leaves the defect in the pipe, so every later run
 * reports it again and the new call must not return to the dig list; a recoat (or grind, cut-out) made before the
 * later run leaves that run's call to be assessed on what the tool found after the repair; a repair made after the
 * later run also closes that run's call (the crew repaired what both runs reported).
 */
test("a sleeve recorded against run A's call also closes run B's call of the feature; a recoat before run B does not, one after it does", async () => {
  const DUE = new Set(['IMMEDIATE', 'SIXTY_DAY', 'ONE_HUNDRED_EIGHTY_DAY', 'ONE_YEAR', 'TWO_YEAR']);
  const all = await assessments();
  const byId = new Map(all.map((a) => [a.measurement.id, a]));
  const candidates = all
    .filter((a) => a.measurement.runId === runAId && a.status === 'SUPERSEDED' && a.cluster == null)
    .map((a) => ({ a, b: byId.get(a.supersededBy!.id)! }))
    .filter(({ b }) => b.status === 'OPEN' && DUE.has(b.responseCategory ?? '') && b.cluster == null);
  expect(candidates.length).toBeGreaterThanOrEqual(3);
  const [sleeved, recoatedBefore, recoatedAfter] = candidates;
  const repair = async (key: string, id: string, repairType: string, repairedAt: string) => {
    const res = await call(`mutation($i: RepairInput!) { recordRepair(input: $i) { id } }`, {
      i: { idempotencyKey: key, measurementIds: [id], repairType, repairedAt },
    });
    expect(res.body.errors).toBeUndefined();
    return res.body.data!['recordRepair'].id as string;
  };
  // Run A 2021-06-15, run B 2026-06-15 (the generator's dates).
  expect([runA.runDate, runB.runDate]).toEqual(['2021-06-15', '2026-06-15']);
  const sleeve = await repair('carry-sleeve', sleeved!.a.measurement.id, 'TYPE_B_SLEEVE', '2023-05-01T00:00:00Z');
  await repair('carry-recoat-before', recoatedBefore!.a.measurement.id, 'RECOAT', '2023-05-01T00:00:00Z');
  const recoatAfter = await repair('carry-recoat-after', recoatedAfter!.a.measurement.id, 'RECOAT', '2026-08-01T00:00:00Z');

  const assessmentOf = async (id: string) =>
    (await call('query($id: ID!) { measurement(id: $id) { assessment { status repair { id } methodNotes } } }', { id })).body.data!['measurement'].assessment;
  const b1 = await assessmentOf(sleeved!.b.measurement.id);
  expect(b1).toMatchObject({ status: 'REPAIRED', repair: { id: sleeve } });
  expect(b1.methodNotes.join(' ')).toContain(`closed by the type b sleeve of 2023-05-01 recorded against ${sleeved!.a.measurement.id}`);
  expect(await assessmentOf(recoatedBefore!.b.measurement.id)).toMatchObject({ status: 'OPEN', repair: null });
  expect(await assessmentOf(recoatedAfter!.b.measurement.id)).toMatchObject({ status: 'REPAIRED', repair: { id: recoatAfter } });
  // The repaired A calls read REPAIRED (their own repair wins over SUPERSEDED).
  expect(await assessmentOf(sleeved!.a.measurement.id)).toMatchObject({ status: 'REPAIRED', repair: { id: sleeve } });

  const listed = new Set<string>();
  let after: string | null = null;
  for (;;) {
    const page: Record<string, any> = (
      await call(
        `query($p: ID!, $after: String) { digList(filter: { pipelineId: $p }, first: 200, after: $after) { pageInfo { hasNextPage endCursor } edges { node { measurement { id } } } } }`,
        { p: segmentId, after },
      )
    ).body.data!['digList'];
    for (const e of page.edges) listed.add(e.node.measurement.id);
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  expect(listed.has(sleeved!.b.measurement.id)).toBe(false);
  expect(listed.has(recoatedAfter!.b.measurement.id)).toBe(false);
  expect(listed.has(recoatedBefore!.b.measurement.id)).toBe(true);
});

test('a sleeve recorded before the next run is imported closes that run’s call of the feature as soon as it is assessed', async () => {
  const gas = { regulation: 'CFR_192', product: 'NATURAL_GAS', status: 'ACTIVE' };
  const second = (
    await createAsset(stack.gatewayUrl, key, {
      type: 'SEGMENT',
      name: 'Line 21 · MP 1–2',
      ...gas,
      outsideDiameterMm: 609.6,
      wallThicknessMm: WALL_MM,
      smysMpa: 359,
      maopKpa: 6900,
      classLocation: 3,
      inHca: true,
    })
  ).id;
  await stack.knownToMeasurements(second);
  const small = generateTwoRunListing({ features: 120, seed: 22, wallThicknessMm: WALL_MM });
  const importRun = async (run: GeneratedRun) => {
    const file = path.join(dir, `second-${run.runId}.csv`);
    await writePofListingCsv(run.rows, file);
    const imported = await importListing({ ...request(run), file, assetId: second });
    expect(imported.state).toBe('SUCCEEDED');
    const id = imported.run.id as string;
    await until(
      () => comparisonOf(id),
      (c) => c?.state === 'COMPLETE',
      120_000,
    );
    return id;
  };
  const olderId = await importRun(small.runA);
  const listing = `query($id: ID!) { asset(id: $id) { anomalyAssessments(first: 500) { edges { node { measurement { id runId } status responseCategory cluster { lead { id } }
    supersededBy { id } repair { id } methodNotes } } } } }`;
  const nodesOf = async () => (await call(listing, { id: second })).body.data!['asset'].anomalyAssessments.edges.map((e: { node: any }) => e.node);
  // The most urgent stand-alone metal loss of run A gets a Type B sleeve the year after the run.
  const first = await nodesOf();
  const target = first.filter((n: any) => n.cluster == null && n.responseCategory != null).map((n: any) => n.measurement.id)[0] as string;
  expect({ target, assessed: first.length }).toMatchObject({ target: expect.any(String) });
  const sleeve = await call(`mutation($i: RepairInput!) { recordRepair(input: $i) { id } }`, {
    i: { idempotencyKey: 'sleeve-before-next-run', measurementIds: [target], repairType: 'TYPE_B_SLEEVE', repairedAt: '2022-03-01T00:00:00Z' },
  });
  expect(sleeve.body.errors).toBeUndefined();
  await importRun(small.runB);
  const nodes = await nodesOf();
  const repairedA = nodes.find((n: any) => n.measurement.id === target);
  expect(repairedA).toMatchObject({ status: 'REPAIRED', measurement: { runId: olderId } });
  // The generator reports every run-A feature again in run B unless it was removed; this one was matched.
  expect(repairedA.supersededBy).not.toBeNull();
  const later = nodes.find((n: any) => n.measurement.id === repairedA.supersededBy.id);
  expect(later).toMatchObject({ status: 'REPAIRED', repair: { id: sleeve.body.data!['recordRepair'].id } });
  expect(later.methodNotes.join(' ')).toContain(`recorded against ${target}`);
}, 240_000);
