import { seededRandom } from '../seeded-random';
import type { IliEventKind, IliListingRow, IliSurface } from './listing';

/**
 * A synthetic pair of ILI runs over one pipeline, with the truth an alignment / growth analysis should recover.
 *
 * The pipeline is built once in true (chainage) metres: joints of 9–13.5 m with a few short pups, heavy-wall sections
 * at crossings, valves, tees, bends and above-ground markers, and anomalies (single pits, colonies of interacting pits,
 * dents — some on girth welds, some with metal loss — and a few cracks, gouges, laminations and weld anomalies). Each run
 * then sees it through its own odometer (a scale error and wheel slips that add up) and its own tool noise; run B comes
 * `yearsBetweenRuns` later, when metal loss has grown, new anomalies have started and a few welds are missed or called
 * where there is none. Deterministic per seed.
 */

export interface GeneratedRun {
  runId: string;
  runDate: string /* YYYY-MM-DD */;
  rows: IliListingRow[];
}

export interface GeneratedTruth {
  /** vendorFeatureId in run A -> vendorFeatureId in run B, for every feature present in both runs */
  matches: Array<{ a: string; b: string; trueDepthGrowthPctWtPerYear: number; trueLengthGrowthMmPerYear: number }>;
  /** Features only in run B. */
  newInB: string[];
  /** jointNumber in A -> jointNumber in B for welds present in both. */
  weldPairs: Array<{ a: number; b: number }>;
  /** Run-B vendorFeatureIds generated as one interacting colony. */
  clusters: string[][];
  toolNoise: { depthPctWtSd: number; positionMSd: number; clockDegSd: number };
}

export interface GenerateOptions {
  /** Anomalies per run (run B has these and a few percent new ones). */
  features: number;
  seed: number;
  outsideDiameterMm?: number;
  wallThicknessMm?: number;
  yearsBetweenRuns?: number;
}

/**
 * Tool noise of a high-resolution MFL tool, as the task brief sets it (depth sd a few % of wall, position sd 0.05–0.1 m
 * within the joint, clock sd 5–10°); illustrative values for a synthetic data set, not a tool specification.
 */
export const GENERATOR_TOOL_NOISE = { depthPctWtSd: 4, positionMSd: 0.07, clockDegSd: 7 } as const;

/**
 * Share of a colony pit's position and clock error that is its own. A tool's location error is mostly its
 * positioning along and around the pipe at that place (odometer within the joint, the tool's roll), which pits a few
 * centimetres apart share; what differs between them is the sizing of each pit's box from the sensor samples. So a
 * colony is listed as one shifted, rotated pattern (run comparison matches such patterns: C. L. Champlin, "Using
 * odometry drift to match ILI joint boundaries for run comparisons", Int. J. Pres. Ves. Pip. 2024, 105351, "Pattern
 * matching is then used to match individual defects on paired joints"). Each pit's total error keeps the sd of
 * GENERATOR_TOOL_NOISE: the shared part has sd √(1 − f²) of it and the pit's own f of it (0.014 m and 1.4°
 * at f = 0.2, a few sensor pitches; illustrative, like the noise itself).
 */
export const COLONY_OWN_ERROR_FRACTION = 0.2;

class Rand {
  private spare: number | null = null;
  constructor(readonly next: () => number) {}
  uniform(min: number, max: number): number {
    return min + (max - min) * this.next();
  }
  int(min: number, maxInclusive: number): number {
    return Math.floor(this.uniform(min, maxInclusive + 1));
  }
  chance(p: number): boolean {
    return this.next() < p;
  }
  normal(mean = 0, sd = 1): number {
    if (this.spare !== null) {
      const s = this.spare;
      this.spare = null;
      return mean + sd * s;
    }
    const u = 1 - this.next();
    const v = this.next();
    const r = Math.sqrt(-2 * Math.log(u));
    this.spare = r * Math.sin(2 * Math.PI * v);
    return mean + sd * r * Math.cos(2 * Math.PI * v);
  }
  exponential(mean: number): number {
    return -mean * Math.log(1 - this.next());
  }
  pick<T>(items: readonly T[]): T {
    return items[Math.floor(this.next() * items.length)]!;
  }
}

const round = (value: number, decimals: number) => {
  const f = 10 ** decimals;
  return Math.round(value * f) / f;
};
const clamp = (value: number, min: number, max: number) => Math.min(max, Math.max(min, value));
/** Clock positions are listed to the minute, i.e. in 0.5° steps. */
const clockStep = (deg: number) => (Math.round((((deg % 360) + 360) % 360) * 2) / 2) % 360;

interface TrueWeld {
  x: number;
  wallThicknessMm: number;
}

interface TrueTallyItem {
  x: number;
  kind: IliEventKind;
  markerName: string | null;
  wallThicknessMm: number | null;
}

interface TrueFeature {
  x: number;
  kind: IliEventKind;
  clockDeg: number;
  /** Depth in mm at run A (metal loss, cracks, gouges). */
  depthMmA: number;
  lengthMmA: number;
  widthMm: number;
  dentDepthPctOd: number;
  surface: IliSurface | null;
  depthGrowthMmPerYear: number;
  lengthGrowthMmPerYear: number;
  wallThicknessMm: number;
  inA: boolean;
  comment: string | null;
  clusterId: number | null;
}

/** Log (odometer) distance of a run: a scale error and slips at random chainages whose offsets add up. */
class Odometer {
  private readonly slipAt: number[] = [];
  private readonly offsetAfter: number[] = [];
  constructor(
    private readonly scale: number,
    rand: Rand,
    lengthM: number,
    slipEveryM: number,
    maxSlipM: number,
  ) {
    let offset = 0;
    for (let x = rand.exponential(slipEveryM); x < lengthM; x += rand.exponential(slipEveryM)) {
      // A slipping wheel stops counting while the tool moves on, so the logged distance falls behind — never below the
      // distance it had counted (a slip in the first metres would otherwise log a negative distance).
      offset -= Math.min(rand.uniform(0.05, maxSlipM), x * (1 + scale) + offset);
      this.slipAt.push(x);
      this.offsetAfter.push(offset);
    }
  }
  log(x: number): number {
    let lo = 0;
    let hi = this.slipAt.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (this.slipAt[mid]! <= x) lo = mid + 1;
      else hi = mid;
    }
    const offset = lo === 0 ? 0 : this.offsetAfter[lo - 1]!;
    return x * (1 + this.scale) + offset;
  }
}

export function generateTwoRunListing(options: GenerateOptions): { runA: GeneratedRun; runB: GeneratedRun; truth: GeneratedTruth } {
  const { features, seed } = options;
  if (!Number.isInteger(features) || features < 1) throw new RangeError('features must be a whole number of 1 or more');
  const outsideDiameterMm = options.outsideDiameterMm ?? 609.6;
  const baseWallMm = options.wallThicknessMm ?? 9.5;
  const years = options.yearsBetweenRuns ?? 5;
  const rand = new Rand(seededRandom(seed));
  const noise = GENERATOR_TOOL_NOISE;

  // About one anomaly every 2.5 m of pipe: a corroded line in a high-resolution listing.
  const lengthM = Math.max(2000, features * 2.5);

  // --- the pipe: joints, pups and heavy-wall sections ---
  const welds: TrueWeld[] = [];
  const tally: TrueTallyItem[] = [];
  let heavyWallUntil = -1;
  let nextCrossing = rand.uniform(1500, 4000);
  const heavyWallMm = round(baseWallMm * 1.33, 1);
  for (let x = 0; x < lengthM;) {
    let wall = x < heavyWallUntil ? heavyWallMm : baseWallMm;
    if (x >= nextCrossing) {
      heavyWallUntil = x + rand.uniform(30, 120);
      nextCrossing = x + rand.uniform(2000, 6000);
      wall = heavyWallMm;
    }
    const previous = welds[welds.length - 1];
    if (previous && previous.wallThicknessMm !== wall) tally.push({ x, kind: 'WALL_THICKNESS_CHANGE', markerName: null, wallThicknessMm: wall });
    welds.push({ x, wallThicknessMm: wall });
    const pup = rand.chance(0.025);
    x += pup ? rand.uniform(0.8, 4) : clamp(rand.normal(12, 0.9), 9, 13.5);
  }
  const wallAt = (x: number) => welds[weldIndexAt(welds, x)]!.wallThicknessMm;

  // --- fittings and markers ---
  let valveNo = 0;
  for (let x = rand.uniform(3000, 8000); x < lengthM; x += rand.uniform(5000, 12000)) {
    valveNo += 1;
    const w = welds[weldIndexAt(welds, x)]!;
    tally.push({ x: w.x + 0.45, kind: 'VALVE', markerName: `MLV ${valveNo}`, wallThicknessMm: null });
  }
  for (let x = rand.uniform(1000, 5000); x < lengthM; x += rand.uniform(2500, 6000)) {
    tally.push({ x: welds[weldIndexAt(welds, x)]!.x + 1.2, kind: 'TEE', markerName: null, wallThicknessMm: null });
  }
  for (let x = rand.uniform(200, 900); x < lengthM; x += rand.uniform(300, 1500)) {
    tally.push({ x, kind: 'BEND', markerName: null, wallThicknessMm: null });
  }
  let agmNo = 0;
  for (let x = rand.uniform(200, 1000); x < lengthM; x += rand.uniform(1000, 2000)) {
    agmNo += 1;
    tally.push({ x, kind: 'REFERENCE_MARKER', markerName: `AGM ${agmNo}`, wallThicknessMm: null });
  }
  tally.push({ x: 0.3, kind: 'FLANGE', markerName: 'Launcher', wallThicknessMm: null });
  tally.push({ x: welds[welds.length - 1]!.x + 0.3, kind: 'FLANGE', markerName: 'Receiver', wallThicknessMm: null });
  const pipeEnd = welds[welds.length - 1]!.x + 6;

  // --- anomalies ---
  const truths: TrueFeature[] = [];
  const newCount = Math.max(1, Math.round(features * 0.03));
  let clusterCount = 0;
  const metalLoss = (x: number, inA: boolean, clusterId: number | null, pit: boolean): TrueFeature => {
    const wall = wallAt(x);
    // Most corrosion is shallow; a long tail reaches 60–70 % of wall.
    const depthPct = inA ? clamp(5 + rand.exponential(pit ? 12 : 9), 5, 70) : rand.uniform(5, 15);
    const lengthMm = pit ? rand.uniform(8, 40) : clamp(rand.exponential(60) + 10, 10, 600);
    return {
      x,
      kind: 'METAL_LOSS',
      clockDeg: rand.chance(0.6) ? clamp(rand.normal(180, 45), 0, 359.5) : rand.uniform(0, 360),
      depthMmA: (depthPct / 100) * wall,
      lengthMmA: lengthMm,
      widthMm: pit ? rand.uniform(8, 40) : clamp(rand.exponential(50) + 10, 10, 900),
      dentDepthPctOd: 0,
      surface: rand.chance(0.8) ? 'EXTERNAL' : 'INTERNAL',
      depthGrowthMmPerYear: rand.uniform(0.05, 0.5),
      lengthGrowthMmPerYear: rand.chance(0.3) ? rand.uniform(0.5, 5) : 0,
      wallThicknessMm: wall,
      inA,
      comment: null,
      clusterId,
    };
  };
  const plain = (x: number, kind: IliEventKind, inA: boolean, surface: IliSurface | null): TrueFeature => {
    const wall = wallAt(x);
    return {
      x,
      kind,
      clockDeg: rand.uniform(0, 360),
      depthMmA: kind === 'CRACK' || kind === 'GOUGE' ? (rand.uniform(10, 30) / 100) * wall : 0,
      lengthMmA: rand.uniform(20, 200),
      widthMm: rand.uniform(5, 60),
      dentDepthPctOd: 0,
      surface,
      depthGrowthMmPerYear: 0,
      lengthGrowthMmPerYear: 0,
      wallThicknessMm: wall,
      inA,
      comment: null,
      clusterId: null,
    };
  };
  const place = () => rand.uniform(1, pipeEnd - 1);

  for (let made = 0; made < features + newCount;) {
    const inA = made < features;
    const remaining = (inA ? features : features + newCount) - made;
    const roll = rand.next();
    if (roll < 0.02 && remaining >= 3) {
      // A colony of interacting pits: within a few hundred millimetres and a few clock hours of each other.
      clusterCount += 1;
      const size = Math.min(remaining, rand.int(3, 8));
      const x0 = place();
      const clock0 = rand.uniform(90, 270);
      for (let i = 0; i < size; i += 1) {
        const f = metalLoss(x0 + rand.uniform(0, 0.3), inA, clusterCount, true);
        f.clockDeg = clamp(clock0 + rand.normal(0, 8), 0, 359.5);
        f.comment = `COCL-${String(clusterCount).padStart(5, '0')}`;
        truths.push(f);
      }
      made += size;
    } else if (roll < 0.05) {
      const atWeld = rand.chance(0.4);
      const x = atWeld ? welds[weldIndexAt(welds, place())]!.x + rand.uniform(0.02, 0.08) : place();
      const dent = plain(x, 'DENT', inA, null);
      // Dents of 3–20 mm: under 1 % to a few % of a 24-inch OD.
      dent.dentDepthPctOd = (rand.uniform(3, 20) / outsideDiameterMm) * 100;
      dent.lengthMmA = rand.uniform(50, 300);
      dent.widthMm = rand.uniform(50, 300);
      dent.clockDeg = rand.chance(0.7) ? clamp(rand.normal(0, 40) + 360, 0, 719.5) % 360 : rand.uniform(0, 360);
      dent.comment = atWeld ? 'Dent on girth weld' : null;
      truths.push(dent);
      made += 1;
      if (rand.chance(0.25) && remaining >= 2) {
        const ml = metalLoss(x + 0.01, inA, null, false);
        ml.clockDeg = dent.clockDeg;
        ml.surface = 'EXTERNAL';
        ml.comment = 'Metal loss in dent';
        dent.comment = 'Dent with metal loss';
        truths.push(ml);
        made += 1;
      }
    } else if (roll < 0.055) {
      truths.push(plain(place(), 'CRACK', inA, 'EXTERNAL'));
      made += 1;
    } else if (roll < 0.06) {
      truths.push(plain(place(), 'GOUGE', inA, 'EXTERNAL'));
      made += 1;
    } else if (roll < 0.07) {
      truths.push(plain(place(), 'LAMINATION', inA, 'MID_WALL'));
      made += 1;
    } else if (roll < 0.075) {
      const w = welds[weldIndexAt(welds, place())]!;
      truths.push(plain(w.x + 0.005, 'WELD_ANOMALY', inA, null));
      made += 1;
    } else {
      truths.push(metalLoss(place(), inA, null, false));
      made += 1;
    }
  }

  // --- the two runs ---
  const odometerA = new Odometer(rand.uniform(-0.0005, 0.0005), rand, pipeEnd, 4000, 0.5);
  const odometerB = new Odometer(rand.uniform(0.002, 0.004) * (rand.chance(0.5) ? 1 : -1), rand, pipeEnd, 3000, 2);
  const missedInB = new Set<number>();
  for (let i = 1; i < welds.length; i += 1) if (rand.chance(0.001)) missedInB.add(i);
  const extraInB: number[] = [];
  for (let i = 0; i < Math.max(1, Math.round(welds.length * 0.0005)); i += 1) {
    const w = rand.int(0, welds.length - 2);
    extraInB.push(welds[w]!.x + rand.uniform(3, 6));
  }

  // The colonies' shared errors come from a stream of their own, so every row outside a colony is what it was before
  // colonies shared them.
  const colonyRand = new Rand(seededRandom(seed ^ 0x5bd1e995));
  const runA = buildRun('A', odometerA, welds, new Set(), [], tally, truths, 0, rand, colonyRand);
  const runB = buildRun('B', odometerB, welds, missedInB, extraInB, tally, truths, years, rand, colonyRand);

  const matches: GeneratedTruth['matches'] = [];
  const newInB: string[] = [];
  const clusters = new Map<number, string[]>();
  truths.forEach((t, i) => {
    const b = runB.featureIds[i]!;
    if (t.clusterId !== null) clusters.set(t.clusterId, [...(clusters.get(t.clusterId) ?? []), b]);
    const a = runA.featureIds[i];
    if (a === undefined) newInB.push(b);
    else
      matches.push({
        a,
        b,
        trueDepthGrowthPctWtPerYear: (t.depthGrowthMmPerYear / t.wallThicknessMm) * 100,
        trueLengthGrowthMmPerYear: t.lengthGrowthMmPerYear,
      });
  });
  const weldPairs: GeneratedTruth['weldPairs'] = [];
  welds.forEach((_, i) => {
    const a = runA.weldNumbers[i];
    const b = runB.weldNumbers[i];
    if (a !== undefined && b !== undefined) weldPairs.push({ a, b });
  });

  const runDateA = '2021-06-15';
  const runDateB = `${2021 + Math.round(years)}-${years % 1 === 0 ? '06-15' : '12-15'}`;
  return {
    runA: { runId: `synthetic-${seed}-A`, runDate: runDateA, rows: runA.rows },
    runB: { runId: `synthetic-${seed}-B`, runDate: runDateB, rows: runB.rows },
    truth: { matches, newInB, weldPairs, clusters: [...clusters.values()], toolNoise: { ...noise } },
  };
}

/** Index of the last weld at or before x (welds sorted by x). */
function weldIndexAt(welds: readonly { x: number }[], x: number): number {
  let lo = 0;
  let hi = welds.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (welds[mid]!.x <= x) lo = mid + 1;
    else hi = mid;
  }
  return Math.max(0, lo - 1);
}

interface BuiltRun {
  rows: IliListingRow[];
  /** Per true feature index: its vendorFeatureId in this run (undefined when the run did not list it). */
  featureIds: Array<string | undefined>;
  /** Per true weld index: its jointNumber in this run (undefined when missed). */
  weldNumbers: Array<number | undefined>;
}

function buildRun(
  label: 'A' | 'B',
  odometer: Odometer,
  welds: readonly TrueWeld[],
  missed: ReadonlySet<number>,
  extra: readonly number[],
  tally: readonly TrueTallyItem[],
  truths: readonly TrueFeature[],
  years: number,
  rand: Rand,
  colonyRand: Rand,
): BuiltRun {
  const noise = GENERATOR_TOOL_NOISE;
  type Listed = {
    log: number;
    row: Omit<IliListingRow, 'rowNumber' | 'vendorFeatureId' | 'jointNumber' | 'jointLengthM'>;
    truthIndex?: number;
    weldIndex?: number;
  };
  const listed: Listed[] = [];
  const blank = { clockDeg: null, depthPctWt: null, lengthMm: null, widthMm: null, dentDepthPctOd: null, surface: null, markerName: null, comment: null };

  // Listed welds (true ones not missed, plus false calls) in log order, for joint numbers and lengths.
  const weldLogs: Array<{ log: number; wall: number; weldIndex?: number }> = [];
  welds.forEach((w, i) => {
    if (!missed.has(i)) weldLogs.push({ log: round(odometer.log(w.x), 3), wall: w.wallThicknessMm, weldIndex: i });
  });
  for (const x of extra) weldLogs.push({ log: round(odometer.log(x), 3), wall: welds[weldIndexAt(welds, x)]!.wallThicknessMm });
  weldLogs.sort((p, q) => p.log - q.log);
  for (const w of weldLogs) {
    listed.push({
      log: w.log,
      row: { ...blank, kind: 'GIRTH_WELD', logDistanceM: w.log, wallThicknessMm: w.wall },
      ...(w.weldIndex === undefined ? {} : { weldIndex: w.weldIndex }),
    });
  }
  for (const t of tally) {
    const log = round(odometer.log(t.x), 3);
    listed.push({ log, row: { ...blank, kind: t.kind, logDistanceM: log, wallThicknessMm: t.wallThicknessMm, markerName: t.markerName } });
  }
  const shared = Math.sqrt(1 - COLONY_OWN_ERROR_FRACTION ** 2);
  const colonyError = new Map<number, { positionM: number; clockDeg: number }>();
  truths.forEach((t, i) => {
    if (label === 'A' && !t.inA) return;
    // Position noise is within the joint: the tool's distance from the upstream weld is what scatters.
    let positionErrorM = rand.normal(0, noise.positionMSd);
    let clockErrorDeg = rand.normal(0, noise.clockDegSd);
    if (t.clusterId !== null) {
      let common = colonyError.get(t.clusterId);
      if (!common) {
        common = { positionM: colonyRand.normal(0, shared * noise.positionMSd), clockDeg: colonyRand.normal(0, shared * noise.clockDegSd) };
        colonyError.set(t.clusterId, common);
      }
      positionErrorM = common.positionM + COLONY_OWN_ERROR_FRACTION * positionErrorM;
      clockErrorDeg = common.clockDeg + COLONY_OWN_ERROR_FRACTION * clockErrorDeg;
    }
    // A tool logs nothing before its launch: scatter that would place a feature of the first metres upstream of it
    // leaves it at 0.
    const log = round(Math.max(0, odometer.log(t.x) + positionErrorM), 3);
    const clockDeg = clockStep(t.clockDeg + clockErrorDeg);
    const row: Listed['row'] = {
      ...blank,
      kind: t.kind,
      logDistanceM: log,
      wallThicknessMm: t.wallThicknessMm,
      clockDeg,
      surface: t.surface,
      comment: t.comment,
    };
    if (t.kind === 'METAL_LOSS' || t.kind === 'CRACK' || t.kind === 'GOUGE') {
      const depthMm = Math.min(t.depthMmA + t.depthGrowthMmPerYear * years, 0.95 * t.wallThicknessMm);
      const reported = (depthMm / t.wallThicknessMm) * 100 + rand.normal(0, noise.depthPctWtSd);
      row.depthPctWt = Math.round(clamp(reported, 1, 99));
      row.lengthMm = Math.round(Math.max(1, t.lengthMmA + t.lengthGrowthMmPerYear * years + rand.normal(0, 5)));
      row.widthMm = Math.round(Math.max(1, t.widthMm + rand.normal(0, 5)));
    } else if (t.kind === 'DENT') {
      row.dentDepthPctOd = round(clamp(t.dentDepthPctOd + rand.normal(0, 0.2), 0.2, 10), 1);
      row.lengthMm = Math.round(t.lengthMmA);
      row.widthMm = Math.round(t.widthMm);
    } else {
      row.lengthMm = Math.round(t.lengthMmA);
      row.widthMm = Math.round(t.widthMm);
    }
    listed.push({ log, row, truthIndex: i });
  });

  // Welds sort before what shares their distance, so an anomaly at a weld is in the joint that starts there.
  const order = (l: Listed) => (l.row.kind === 'GIRTH_WELD' ? 0 : 1);
  listed.sort((p, q) => p.log - q.log || order(p) - order(q));

  const rows: IliListingRow[] = [];
  const featureIds: Array<string | undefined> = new Array(truths.length);
  const weldNumbers: Array<number | undefined> = new Array(welds.length);
  let jointNumber: number | null = null;
  let weldOrdinal = 0;
  let featureOrdinal = 0;
  let tallyOrdinal = 0;
  for (const l of listed) {
    let vendorFeatureId: string;
    let jointLengthM: number | null = null;
    if (l.row.kind === 'GIRTH_WELD') {
      const next = weldLogs[weldOrdinal + 1];
      weldOrdinal += 1;
      // POF numbers girth welds in tens, leaving room for welds found later.
      jointNumber = weldOrdinal * 10;
      jointLengthM = next ? round(next.log - l.log, 3) : 6;
      vendorFeatureId = `${label}-GW-${jointNumber}`;
      if (l.weldIndex !== undefined) weldNumbers[l.weldIndex] = jointNumber;
    } else if (l.truthIndex !== undefined) {
      featureOrdinal += 1;
      vendorFeatureId = `${label}-${String(featureOrdinal).padStart(6, '0')}`;
      featureIds[l.truthIndex] = vendorFeatureId;
    } else {
      tallyOrdinal += 1;
      vendorFeatureId = `${label}-T-${String(tallyOrdinal).padStart(5, '0')}`;
    }
    rows.push({ ...l.row, rowNumber: rows.length + 2, vendorFeatureId, jointNumber, jointLengthM });
  }
  return { rows, featureIds, weldNumbers };
}
