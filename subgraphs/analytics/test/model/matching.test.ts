/**
 * One-to-one feature matching between ILI runs and growth per matched pair.
 *
 * Sources:
 * - Tool tolerance: API 1163 performance specifications state depth sizing as a tolerance at a certainty,
 *   typically ±10 % of wall at 80 % certainty (the default of tool-tolerance.ts); with normal errors that is
 *   σ = 10 / Φ⁻¹(0.90) = 7.80 % of wall.
 * - The difference of two readings carries both errors, σΔ = √(σA² + σB²) (quadratic addition of independent
 *   errors): M. Stone, "Analysis Matters: Errors Amplified", ESR Technology (2020): "the errors or uncertainties
 *   in the differences between measurements are larger than the errors for an individual measurement. Hence
 *   corrosion rates can have a proportionately wider spread of uncertainties than the original thickness
 *   readings"; C. Scott & K. Philpott, "Probabilistic flaw growth rate estimates using multiple inline
 *   inspection tool run data analyses", IPC2022-87054 (a first-run undercall followed by a second-run overcall
 *   compounds the sizing error); ROSEN, "Improving confidence in ILI data through in-field verification" (the
 *   combined tolerance of two measurements on a unity plot).
 * - A conservative rate from two inspections adds the measurement error rather than trusting the raw
 *   difference: HSE Research Report 016 (TWI, 2002) §5.3.1, "the rate can be estimated from the difference
 *   between the maximum loss of wall in the most recent inspection and the minimum loss of wall in the previous
 *   inspection(s). This will, in most cases, lead to a conservative estimate of corrosion rate."
 * - Normal quantiles: Abramowitz & Stegun, Handbook of Mathematical Functions, Table 26.5 (Φ⁻¹(0.90) = 1.2816,
 *   Φ⁻¹(0.95) = 1.6449, Φ⁻¹(0.975) = 1.9600, Φ⁻¹(0.99) = 2.3263, Φ⁻¹(0.995) = 2.5758, Φ⁻¹(0.80) = 0.8416).
 * - Assignment: H. W. Kuhn, "The Hungarian method for the assignment problem", Naval Research Logistics
 *   Quarterly 2 (1955); checked here against brute-force enumeration.
 *
 * The three regression cases are the failures of the odometer-only greedy match (growth.ts matchFeature) on a
 * 9.5 mm wall with runs five years apart (2020-01-01 → 2025-01-01, 5.002 Julian years): the same feature read
 * 1.5 m apart (20 → 40 % of wall: 0.38 mm/yr measured, where the greedy match found nothing and took the
 * 0.30 mm/yr floor, remaining life 9.5 instead of 7.5 years); a 50 → 55 % pit matched to a 15 % neighbour
 * (0.76 mm/yr); two new features matched to one old one.
 */
import type { ReferencePosition } from '../../src/model/alignment';
import { growthRate, matchFeature, remainingLife, type RunFeature } from '../../src/model/growth';
import {
  compareRuns,
  DEFAULT_RUN_COMPARISON_SETTINGS,
  depthSizingSd,
  matchFeatures,
  normalQuantile,
  pairGrowth,
  UNMATCHED_COST,
  yearsBetween,
  type MatchableRow,
} from '../../src/model/matching';
import { depthWithTolerance } from '../../src/model/tool-tolerance';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { seededRandom } from '@linepack/lib/seeded-random';

const WALL_MM = 9.5;
const YEARS = yearsBetween('2020-01-01', '2025-01-01');
const within = (actual: number, expected: number, relative = 0.001) => expect(Math.abs(actual / expected - 1)).toBeLessThanOrEqual(relative);

const row = (kind: string, logDistanceM: number, extra: Partial<MatchableRow> = {}): MatchableRow => ({
  rowNumber: 0,
  kind,
  logDistanceM,
  jointNumber: null,
  jointLengthM: null,
  markerName: null,
  vendorFeatureId: null,
  clockDeg: null,
  depthPctWt: null,
  lengthMm: null,
  widthMm: null,
  wallThicknessMm: WALL_MM,
  surface: 'EXTERNAL',
  ...extra,
});

/** Six joints of distinct lengths from `startM`; returns the weld rows and where each weld is. */
const JOINTS_M = [12.3, 11.7, 12.9, 11.2, 12.6, 11.9];
function tally(startM: number): { rows: MatchableRow[]; weldAt: number[] } {
  const weldAt: number[] = [];
  let x = startM;
  const rows = JOINTS_M.map((length, k) => {
    weldAt.push(x);
    const r = row('GIRTH_WELD', x, { jointNumber: (k + 1) * 10, jointLengthM: length });
    x += length;
    return r;
  });
  return { rows, weldAt };
}

const metalLoss = (id: string, logDistanceM: number, depthPctWt: number, clockDeg = 90) =>
  row('METAL_LOSS', logDistanceM, { vendorFeatureId: id, depthPctWt, clockDeg, lengthMm: 40 });

function runs(olderFeatures: (weldAt: number[]) => MatchableRow[], newerFeatures: (weldAt: number[]) => MatchableRow[], newerOffsetM = 0) {
  const older = tally(1000);
  const newer = tally(1000 + newerOffsetM);
  return {
    a: { runId: 'ili-2020', runDate: '2020-01-01', rows: [...older.rows, ...olderFeatures(older.weldAt)] },
    b: { runId: 'ili-2025', runDate: '2025-01-01', rows: [...newer.rows, ...newerFeatures(newer.weldAt)] },
  };
}

/** The greedy odometer-only path of growth.ts, for the "before" of each regression. */
const asRunFeature = (r: MatchableRow, observedAt: string): RunFeature => ({
  id: r.vendorFeatureId!,
  odometerM: r.logDistanceM,
  clockDeg: r.clockDeg,
  depthMm: (r.depthPctWt! / 100) * WALL_MM,
  observedAt: new Date(`${observedAt}T00:00:00Z`),
});
const GREEDY = { odometerToleranceM: 1, clockToleranceDeg: 30, floorRateMmPerYear: 0.3 };
const PIPE = {
  outsideDiameterMm: 323.9,
  wallThicknessMm: WALL_MM,
  smysMpa: 359,
  defectLengthMm: 40,
  regulation: 'CFR_192' as const,
  classLocation: 1,
  maopKpa: null,
};
/** Remaining life to 80 % of wall from the tolerance-adjusted depth, as compute.ts assesses it. */
const lifeYears = (depthPctWt: number, rateMmPerYear: number) => remainingLife(PIPE, (depthWithTolerance(depthPctWt) / 100) * WALL_MM, rateMmPerYear).years;

describe('normal quantiles and sizing error (Abramowitz & Stegun Table 26.5)', () => {
  it.each([
    [0.8, 0.8416],
    [0.9, 1.2816],
    [0.95, 1.6449],
    [0.975, 1.96],
    [0.99, 2.3263],
    [0.995, 2.5758],
  ])('Φ⁻¹(%s) = %s, and Φ⁻¹(1 − p) = −Φ⁻¹(p)', (p, z) => {
    within(normalQuantile(p), z);
    within(-normalQuantile(1 - p), z);
  });

  it('refuses probabilities outside (0, 1)', () => {
    expect(() => normalQuantile(1)).toThrow(RangeError);
    expect(() => normalQuantile(0)).toThrow(RangeError);
  });

  it('±10 % of wall at 80 % certainty is σ = 7.80 % of wall', () => {
    within(depthSizingSd(10, 0.8), 10 / 1.2816);
  });
});

describe('growth of a matched pair', () => {
  it('σ of the rate is √(σA² + σB²) / Δt, and the 90 % bound with two 80 %-certainty tools adds the combined tolerance √(tolA² + tolB²)', () => {
    const g = pairGrowth({ depthPctWt: 20, lengthMm: 40 }, { depthPctWt: 40, lengthMm: 50 }, 5, WALL_MM);
    within(g.measuredDepthRateMmPerYear, 0.38);
    within(g.depthRateSdMmPerYear, (Math.hypot(10 / 1.2816, 10 / 1.2816) * 0.095) / 5);
    within(g.upperBoundDepthRateMmPerYear, 0.38 + (Math.hypot(10, 10) * 0.095) / 5);
    expect(g.rateMmPerYear).toBe(g.upperBoundDepthRateMmPerYear);
    expect(g.basis).toBe('MATCHED');
    expect(g.changeExceedsCombinedTolerance).toBe(true);
    expect(g.lengthRateMmPerYear).toBeCloseTo(2, 10);
  });

  it('tools of different tolerance: a ±5 % older tool and a ±10 % newer one combine to √125 % of wall', () => {
    const g = pairGrowth({ depthPctWt: 20, lengthMm: null }, { depthPctWt: 30, lengthMm: null }, 5, WALL_MM, DEFAULT_RUN_COMPARISON_SETTINGS, 5);
    within(g.upperBoundDepthRateMmPerYear - g.measuredDepthRateMmPerYear, (Math.sqrt(125) * 0.095) / 5);
    expect(g.changeExceedsCombinedTolerance).toBe(false);
    expect(g.lengthRateMmPerYear).toBeNull();
  });

  it('a reading that fell within tolerance gets the floor rate, flagged FLOOR', () => {
    const g = pairGrowth({ depthPctWt: 30, lengthMm: null }, { depthPctWt: 25, lengthMm: null }, 10, WALL_MM);
    expect(g.measuredDepthRateMmPerYear).toBeLessThan(0);
    expect(g.upperBoundDepthRateMmPerYear).toBeLessThan(0.3);
    expect(g.rateMmPerYear).toBe(0.3);
    expect(g.basis).toBe('FLOOR');
  });

  it('refuses runs that are not apart in time', () => {
    expect(() => pairGrowth({ depthPctWt: 20, lengthMm: null }, { depthPctWt: 30, lengthMm: null }, 0, WALL_MM)).toThrow(RangeError);
  });
});

describe('regression: the same feature 1.5 m apart between runs', () => {
  const { a, b } = runs(
    (w) => [metalLoss('A1', w[2]! + 4, 20)],
    (w) => [metalLoss('B1', w[2]! + 4, 40)],
    1.5,
  );

  it('the greedy odometer match found nothing and took the floor: 0.30 mm/yr, 9.5 years', () => {
    const newer = asRunFeature(
      b.rows.find((r) => r.vendorFeatureId === 'B1')!,
      b.runDate,
    );
    const older = asRunFeature(
      a.rows.find((r) => r.vendorFeatureId === 'A1')!,
      a.runDate,
    );
    const rate = growthRate(newer, matchFeature(newer, [older], GREEDY), GREEDY);
    expect(rate.basis).toBe('FLOOR');
    expect(rate.rateMmPerYear).toBe(0.3);
    within(lifeYears(40, rate.rateMmPerYear), 9.5);
  });

  it('aligned by welds they match: 0.38 mm/yr measured, 7.5 years at that rate; the rate used adds the combined tolerance', () => {
    const comparison = compareRuns(a, b);
    expect(comparison.matched).toHaveLength(1);
    const [pair] = comparison.matched;
    expect([pair!.older.row.vendorFeatureId, pair!.newer.row.vendorFeatureId]).toEqual(['A1', 'B1']);
    expect(pair!.older.distanceFromUpstreamWeldM).toBeCloseTo(4, 9);
    const growth = pair!.growth!;
    within(growth.measuredDepthRateMmPerYear, 0.38);
    within(lifeYears(40, growth.measuredDepthRateMmPerYear), 7.5);
    within(growth.rateMmPerYear, 0.38 + (Math.hypot(10, 10) * 0.095) / 5);
    expect(lifeYears(40, growth.rateMmPerYear)).toBeLessThan(7.5);
    expect(comparison.unityPlot).toEqual([{ olderFeatureId: 'A1', newerFeatureId: 'B1', olderDepthPctWt: 20, newerDepthPctWt: 40 }]);
  });
});

describe('regression: a pit that grew 50 → 55 % beside a 15 % neighbour', () => {
  const older = (w: number[]) => [metalLoss('A15', w[1]! + 3, 15), metalLoss('A50', w[1]! + 3.8, 50)];

  it('the greedy odometer match took the nearer 15 % neighbour: 0.76 mm/yr', () => {
    const { a, b } = runs(older, (w) => [metalLoss('B55', w[1]! + 3.3, 55)]);
    const newer = asRunFeature(
      b.rows.find((r) => r.vendorFeatureId === 'B55')!,
      b.runDate,
    );
    const candidates = a.rows.filter((r) => r.kind === 'METAL_LOSS').map((r) => asRunFeature(r, a.runDate));
    const match = matchFeature(newer, candidates, GREEDY);
    expect(match?.id).toBe('A15');
    within(growthRate(newer, match, GREEDY).rateMmPerYear, 0.76);
  });

  it('when both pits are read again, the assignment pairs 50 → 55 and 15 → 16, not 15 → 55', () => {
    const { a, b } = runs(older, (w) => [metalLoss('B16', w[1]! + 2.7, 16), metalLoss('B55', w[1]! + 3.3, 55)]);
    const comparison = compareRuns(a, b);
    expect(comparison.matched.map((p) => [p.older.row.vendorFeatureId, p.newer.row.vendorFeatureId])).toEqual([
      ['A15', 'B16'],
      ['A50', 'B55'],
    ]);
    const grown = comparison.matched[1]!.growth!;
    within(grown.measuredDepthRateMmPerYear, (0.05 * WALL_MM) / YEARS);
    // 0.095 mm/yr measured; with the combined tolerance 0.36 mm/yr, not the 0.76 of the wrong pair.
    within(grown.rateMmPerYear, (0.05 * WALL_MM + Math.hypot(10, 10) * 0.095) / YEARS);
    expect(grown.basis).toBe('MATCHED');
  });

  it('when the neighbour is not read again, the depth change decides: 55 % pairs with 50 %, the 15 % is left unmatched', () => {
    const { a, b } = runs(older, (w) => [metalLoss('B55', w[1]! + 3.3, 55)]);
    const comparison = compareRuns(a, b);
    expect(comparison.matched.map((p) => [p.older.row.vendorFeatureId, p.newer.row.vendorFeatureId])).toEqual([['A50', 'B55']]);
    expect(comparison.unmatchedOlder.map((f) => f.row.vendorFeatureId)).toEqual(['A15']);
  });
});

describe('regression: two new features beside one old one', () => {
  const { a, b } = runs(
    (w) => [metalLoss('A30', w[3]! + 5, 30)],
    (w) => [metalLoss('B31', w[3]! + 4.7, 31), metalLoss('B33', w[3]! + 5.4, 33)],
  );

  it('the greedy odometer match gave the old feature to both', () => {
    const older = [
      asRunFeature(
        a.rows.find((r) => r.vendorFeatureId === 'A30')!,
        a.runDate,
      ),
    ];
    const matches = b.rows.filter((r) => r.kind === 'METAL_LOSS').map((r) => matchFeature(asRunFeature(r, b.runDate), older, GREEDY)?.id);
    expect(matches).toEqual(['A30', 'A30']);
  });

  it('one-to-one: the nearer pairs, the other is new and gets the floor rate, flagged', () => {
    const comparison = compareRuns(a, b);
    expect(comparison.matched.map((p) => [p.older.row.vendorFeatureId, p.newer.row.vendorFeatureId])).toEqual([['A30', 'B31']]);
    expect(comparison.newFeatures).toEqual([expect.objectContaining({ rateMmPerYear: 0.3, basis: 'FLOOR', reason: 'NOT_IN_OLDER_RUN' })]);
    expect(comparison.newFeatures[0]!.newer.row.vendorFeatureId).toBe('B33');
  });
});

/** A feature already placed in the reference frame, for the gate and assignment tests. */
const placed = (id: string, positionM: number, extra: Partial<MatchableRow> = {}, jointIndex = 0): ReferencePosition<MatchableRow> => ({
  row: { ...metalLoss(id, positionM, 30, 90), ...extra },
  referencePositionM: positionM,
  referenceJointIndex: jointIndex,
  referenceJointNumber: null,
  distanceFromUpstreamWeldM: positionM,
  extrapolated: false,
});
const pairIds = (m: ReturnType<typeof matchFeatures<MatchableRow>>) => m.pairs.map((p) => `${p.older.row.vendorFeatureId}-${p.newer.row.vendorFeatureId}`);

describe('gates', () => {
  it('clock distance wraps at 360°: 355° and 5° are 10° apart', () => {
    expect(pairIds(matchFeatures([placed('a', 5, { clockDeg: 355 })], [placed('b', 5, { clockDeg: 5 })]))).toEqual(['a-b']);
    expect(pairIds(matchFeatures([placed('a', 5, { clockDeg: 300 })], [placed('b', 5, { clockDeg: 5 })]))).toEqual([]);
  });

  it('axial distance within odometerToleranceM only, and the same or an adjacent joint', () => {
    expect(pairIds(matchFeatures([placed('a', 5)], [placed('b', 5.99)]))).toEqual(['a-b']);
    expect(pairIds(matchFeatures([placed('a', 5)], [placed('b', 6.01)]))).toEqual([]);
    expect(pairIds(matchFeatures([placed('a', 5, {}, 3)], [placed('b', 5.5, {}, 5)]))).toEqual([]);
  });

  it('depth plausibility: a newer reading may be shallower by what two ±10 % tools explain (3σΔ = 33 % of wall), not more', () => {
    const gate = 3 * Math.SQRT2 * (10 / 1.2816);
    expect(gate).toBeCloseTo(33.1, 1);
    expect(pairIds(matchFeatures([placed('a', 5, { depthPctWt: 50 })], [placed('b', 5, { depthPctWt: 50 - gate + 0.5 })]))).toEqual(['a-b']);
    expect(pairIds(matchFeatures([placed('a', 5, { depthPctWt: 50 })], [placed('b', 5, { depthPctWt: 50 - gate - 0.5 })]))).toEqual([]);
  });

  it('an internal feature is not an external one, and a dent is not metal loss', () => {
    expect(pairIds(matchFeatures([placed('a', 5, { surface: 'INTERNAL' })], [placed('b', 5)]))).toEqual([]);
    expect(pairIds(matchFeatures([placed('a', 5, { kind: 'DENT' })], [placed('b', 5)]))).toEqual([]);
    expect(pairIds(matchFeatures([placed('a', 5, { surface: null })], [placed('b', 5)]))).toEqual(['a-b']);
  });
});

/** The least Σ cost + UNMATCHED_COST per unmatched feature over every one-to-one partial matching, by enumeration. */
function bruteForceObjective(cost: (number | null)[][], nOlder: number, nNewer: number): number {
  const usedNewer = new Array<boolean>(nNewer).fill(false);
  const best = (i: number): number => {
    if (i === nOlder) return UNMATCHED_COST * usedNewer.filter((u) => !u).length;
    let result = UNMATCHED_COST + best(i + 1);
    for (let j = 0; j < nNewer; j++) {
      const c = cost[i]![j];
      if (c == null || usedNewer[j]) continue;
      usedNewer[j] = true;
      result = Math.min(result, c + best(i + 1));
      usedNewer[j] = false;
    }
    return result;
  };
  return best(0);
}

describe('assignment (randomized, seeded)', () => {
  it.each(Array.from({ length: 40 }, (_, k) => k + 1))('seed %i: optimal against brute force and one-to-one', (seed) => {
    const rnd = seededRandom(seed);
    const make = (prefix: string, count: number) =>
      Array.from({ length: count }, (_, k) => placed(`${prefix}${k}`, rnd() * 2.5, { clockDeg: 60 + rnd() * 60, depthPctWt: 10 + rnd() * 50 }));
    const older = make('a', 1 + Math.floor(rnd() * 5));
    const newer = make('b', 1 + Math.floor(rnd() * 5));
    const result = matchFeatures(older, newer);
    const cost = older.map((o) => newer.map((n) => matchFeatures([o], [n]).pairs[0]?.cost ?? null));
    const objective = result.pairs.reduce((s, p) => s + p.cost, 0) + UNMATCHED_COST * (result.unmatchedOlder.length + result.unmatchedNewer.length);
    expect(objective).toBeCloseTo(bruteForceObjective(cost, older.length, newer.length), 9);
    const olderIds = result.pairs.map((p) => p.older.row.vendorFeatureId);
    const newerIds = result.pairs.map((p) => p.newer.row.vendorFeatureId);
    expect(new Set(olderIds).size).toBe(olderIds.length);
    expect(new Set(newerIds).size).toBe(newerIds.length);
    expect(result.pairs.length + result.unmatchedOlder.length).toBe(older.length);
    expect(result.pairs.length + result.unmatchedNewer.length).toBe(newer.length);
  });
});

/**
 * Colonies. Synthetic, seeded: pits of a colony lie within 0.3 m and a few degrees of each other (as
 * lib/ili/generator.ts makes them) and each grows by its own rate, uniform over 2–26 % of wall in the interval.
 * Between runs a colony is read shifted by the tool's positioning error at that place (sd 0.07 m, 7°: the
 * generator's tool noise), which its pits share, plus each pit's own error.
 */
function colonyRuns(seed: number, ownFraction: number) {
  const rnd = seededRandom(seed);
  const normal = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
  const growth = () => 2 + 24 * rnd();
  const older: ReferencePosition<MatchableRow>[] = [];
  const newer: ReferencePosition<MatchableRow>[] = [];
  const truth = new Map<string, string>();
  const pair = (id: string, x: number, clock: number, depth: number, width: number, shift: [number, number], own: number) => {
    older.push(placed(`a${id}`, x, { clockDeg: clock, depthPctWt: depth, lengthMm: 20, widthMm: width }));
    newer.push(
      placed(`b${id}`, x + shift[0] + own * 0.07 * normal(), {
        clockDeg: clock + shift[1] + own * 7 * normal(),
        depthPctWt: Math.round(depth + growth() + 4 * normal()),
        lengthMm: 20,
        widthMm: Math.round(width + 5 * normal()),
      }),
    );
    truth.set(`a${id}`, `b${id}`);
  };
  const colonyIds = new Set<string>();
  for (let k = 0; k < 400; k++) {
    const x = 10 * k;
    pair(`L${k}`, x, 90 + 180 * rnd(), Math.round(5 + 20 * rnd()), Math.round(10 + 30 * rnd()), [0.07 * normal(), 7 * normal()], 1);
    if (k % 4 !== 0) continue;
    // Every fourth stretch holds a colony of 4–7 pits, 5 m from the lone pit.
    const shared = Math.sqrt(1 - ownFraction ** 2);
    const shift: [number, number] = [shared * 0.07 * normal(), shared * 7 * normal()];
    const clock0 = 90 + 180 * rnd();
    const size = 4 + Math.floor(rnd() * 4);
    for (let p = 0; p < size; p++) {
      colonyIds.add(`aC${k}-${p}`);
      pair(`C${k}-${p}`, x + 5 + 0.3 * rnd(), clock0 + 8 * normal(), Math.round(5 + 12 * -Math.log(1 - rnd())), Math.round(8 + 32 * rnd()), shift, ownFraction);
    }
  }
  return { older, newer, truth, colonyIds };
}

describe('colonies: pits read again as one shifted pattern', () => {
  it.each([1, 2, 3])('seed %i: with a shared error (own share 0.2), ≥ 97 % of colony pits keep their partners; no lone pit is paired wrongly', (seed) => {
    const { older, newer, truth, colonyIds } = colonyRuns(seed, 0.2);
    const result = matchFeatures(older, newer);
    const right = result.pairs.filter((p) => truth.get(p.older.row.vendorFeatureId!) === p.newer.row.vendorFeatureId);
    const colonyRight = right.filter((p) => colonyIds.has(p.older.row.vendorFeatureId!)).length;
    expect(colonyRight / colonyIds.size).toBeGreaterThanOrEqual(0.97);
    expect(
      result.pairs
        .filter((p) => !p.older.row.vendorFeatureId!.startsWith('aC'))
        .every((p) => truth.get(p.older.row.vendorFeatureId!) === p.newer.row.vendorFeatureId),
    ).toBe(true);
    expect(new Set(result.pairs.map((p) => p.newer.row.vendorFeatureId)).size).toBe(result.pairs.length);
  });

  it('with independent errors (own share 1) no pattern is assumed: no lone pit is paired wrongly, and colonies keep what single pits tell (≥ 80 %)', () => {
    const { older, newer, truth, colonyIds } = colonyRuns(1, 1);
    const result = matchFeatures(older, newer);
    const right = result.pairs.filter((p) => truth.get(p.older.row.vendorFeatureId!) === p.newer.row.vendorFeatureId);
    expect(right.filter((p) => colonyIds.has(p.older.row.vendorFeatureId!)).length / colonyIds.size).toBeGreaterThanOrEqual(0.8);
    expect(
      result.pairs
        .filter((p) => !p.older.row.vendorFeatureId!.startsWith('aC'))
        .every((p) => truth.get(p.older.row.vendorFeatureId!) === p.newer.row.vendorFeatureId),
    ).toBe(true);
  });
});

describe('depth change of a true pair spreads over the growth band (density measured on the runs)', () => {
  it('a pit that grew 23 % beside one that grew 5 % keep their partners; a normal depth cost would swap them into two 14 % changes', () => {
    const rnd = seededRandom(7);
    const normal = () => Math.sqrt(-2 * Math.log(1 - rnd())) * Math.cos(2 * Math.PI * rnd());
    // 400 unambiguous pairs, 10 m apart, whose depth changes cover 2–26 % of wall evenly.
    const older = Array.from({ length: 400 }, (_, k) => placed(`aL${k}`, 10 * k, { depthPctWt: 20 }));
    const newer = Array.from({ length: 400 }, (_, k) =>
      placed(`bL${k}`, 10 * k + 0.05 * normal(), { depthPctWt: 20 + 2 + (24 * k) / 399, clockDeg: 90 + 5 * normal() }),
    );
    // 3.5 cm apart, read again in place: swapping them costs 2 × (0.035 / 0.05)² ≈ 1 in position, less than the
    // 2 × (9 / 8.9)² ≈ 2 a normal depth cost (median 14, sd 8.9 of that band) saves by making both changes 14 %.
    older.push(placed('aP', 5000, { depthPctWt: 10 }), placed('aQ', 5000.035, { depthPctWt: 20 }));
    newer.push(placed('bP', 5000, { depthPctWt: 33 }), placed('bQ', 5000.035, { depthPctWt: 25 }));
    const result = matchFeatures(older, newer);
    const ids = pairIds(result).filter((id) => !id.startsWith('aL'));
    expect(ids).toEqual(['aP-bP', 'aQ-bQ']);
  });
});

describe('a generated 20,000-feature two-run listing (lib/ili/generator.ts), colonies included', () => {
  it.each([1, 2, 3])('seed %i: ≥ 99 % of the truth matches, ≥ 95 % of colony pits, ≥ 99 % outside colonies, none many-to-one', (seed) => {
    const { runA, runB, truth } = generateTwoRunListing({ features: 20_000, seed });
    const comparison = compareRuns(runA, runB);
    const olderIds = comparison.matched.map((m) => m.older.row.vendorFeatureId);
    const newerIds = comparison.matched.map((m) => m.newer.row.vendorFeatureId);
    expect(new Set(olderIds).size).toBe(olderIds.length);
    expect(new Set(newerIds).size).toBe(newerIds.length);

    const found = new Map(comparison.matched.map((m) => [m.older.row.vendorFeatureId!, m.newer.row.vendorFeatureId]));
    const inColony = new Set(truth.clusters.flat());
    const recovered = truth.matches.filter((t) => found.get(t.a) === t.b);
    const share = (of: (t: { b: string }) => boolean) => recovered.filter(of).length / truth.matches.filter(of).length;
    expect(recovered.length / truth.matches.length).toBeGreaterThanOrEqual(0.99);
    expect(share((t) => inColony.has(t.b))).toBeGreaterThanOrEqual(0.95);
    expect(share((t) => !inColony.has(t.b))).toBeGreaterThanOrEqual(0.99);
  });
});
