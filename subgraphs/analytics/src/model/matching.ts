/**
 * One-to-one matching of features between two aligned ILI runs, and corrosion growth per matched pair.
 *
 * Matching. After alignment (alignment.ts) both runs' features sit in the newer run's frame, so the axial
 * distance between two features is the difference of their distances from the same weld. A pair is a
 * candidate only inside every gate: same kind, same surface where both are reported, axial distance within
 * the tenant's `odometerToleranceM`, reference joints the same or adjacent, clock distance (wrapping at 360°)
 * within `clockToleranceDeg`, and a depth that is plausible — corrosion does not heal, so the newer feature
 * may read shallower only by what the two runs' sizing errors can explain: at most
 * `implausibleShallowingSigmas` standard deviations of the difference of two readings. Among candidates the
 * pairing is an assignment, not a greedy nearest: the gated graph falls apart into small windows (a joint or
 * two), and each window is solved exactly by the Hungarian method (shortest augmenting paths with potentials).
 * A pair's cost is the sum, over its differences (axial, clock, depth, length, width), of −2 ln(f(r) / max f),
 * each capped at TERM_CAP (the 3σ of a normal density): a negative log-likelihood. f is measured on the runs
 * themselves, from the windows that hold one feature of each run (no choice to make there): their kernel density
 * with at least MIN_DENSITY_PAIRS of them, a normal density of median centre and 1.4826 × MAD spread with at least
 * MIN_CALIBRATION_PAIRS, else the gates standing for 3σ and the sizing error for the depth. So a clock offset
 * between tools or a tool with tighter positioning is used as it is, and a depth change that spreads over a growth
 * band is scored as a band rather than as a bell (see termCost).
 * Leaving a feature unmatched costs UNMATCHED_COST, more than half any gated pair's cost, so two features inside
 * each other's gates are paired unless a better pairing needs one of them. No feature is used twice.
 *
 * Colonies. Pits a few centimetres apart share the tool's positioning error there (its odometer within the joint,
 * its roll), so a colony is read again as the same pattern shifted and turned, while each pit's absolute position
 * scatters as much as any feature's. After the first assignment, first-pass pairs of one window whose newer
 * features lie within SHARED_ERROR_REACH_M of each other form a neighbourhood; the differences of neighbouring
 * pairs measure each pair's own error. Where that is under PATTERN_SD_RATIO of the pairs' scatter (the runs show a
 * shared error), each neighbourhood's median shift is taken out and the axial and clock terms are scored against
 * the own error; the windows are solved again. Where it is not (independent errors), nothing changes.
 *
 * Tolerances, as measured on lib/ili/generator.ts listings (tool noise sd 0.07 m, 7°, 4 % of wall per run, colony
 * pits sharing all but a fifth of it), 20,000 features per run, seeds 1–5: ≥ 99.4 % of the true matches recovered
 * (≥ 97.5 % of colony pits, ≥ 99.6 % outside colonies), none many-to-one; the lost ones are mostly pairs a gate
 * rules out (clock beyond clockToleranceDeg at 3σ of the difference). With independent per-pit errors no method
 * can do much better than 85 % in such colonies: with the generator's own likelihood and the colony known, the
 * best assignment recovers 84–86 % (position, clock, width and the growth band barely tell 3–8 pits apart).
 *
 * Growth. A depth change read from two runs carries both runs' sizing errors: with each run's error normal
 * with standard deviation σ = tolerance / z((1 + certainty) / 2) (a tool specified ±10 % of wall at 80 %
 * certainty, as API 1163 performance specifications state it, has σ = 7.8 % of wall), the difference has
 * σΔ = √(σ_older² + σ_newer²). The rate used for remaining life is the upper confidence bound of the measured
 * rate, (Δd + z(rateConfidence) · σΔ) / Δt, never below the tenant's floor rate; at the default 90 % one-sided
 * confidence with two tools at 80 % certainty that bound is exactly the measured change plus the combined
 * tolerance √(tol_older² + tol_newer²). The measured rate is reported beside it (and is what a unity plot of
 * the pairs shows). A feature of the newer run with no match is new (or was below the older run's threshold)
 * and gets the floor rate, flagged as such. Length growth is reported as measured; remaining life holds the
 * length at its measured value (growth.ts), so no bound is put on it.
 */
import type { AlignableRow, AlignableRun, AlignmentOptions, ReferencePosition, RunAlignment } from './alignment';
import { alignRuns, DEFAULT_ALIGNMENT_OPTIONS, lowerBound, olderFirst } from './alignment';
import { clockDistanceDeg, DEFAULT_GROWTH_SETTINGS } from './growth';
import { DEFAULT_TOOL_TOLERANCE_PCT_WT } from './tool-tolerance';

/** The listing columns matching and growth read (lib/ili/listing.ts `IliListingRow` has them all). */
export interface MatchableRow extends AlignableRow {
  vendorFeatureId: string | null;
  clockDeg: number | null;
  depthPctWt: number | null;
  lengthMm: number | null;
  widthMm: number | null;
  wallThicknessMm: number | null;
  surface: string | null;
}

export interface RunComparisonSettings {
  /** Axial gate after alignment, metres (the tenant setting). */
  odometerToleranceM: number;
  /** Clock gate, degrees (the tenant setting). */
  clockToleranceDeg: number;
  /** Depth sizing tolerance of each run's tool, % of wall, at `toolCertainty` (the tenant setting). */
  toolTolerancePctWt: number;
  /** Fraction of readings within the tolerance: API 1163 specifications are usually stated at 80 %. */
  toolCertainty: number;
  /** One-sided confidence of the growth-rate bound used for remaining life. */
  rateConfidence: number;
  /** A newer reading shallower than the older by more than this many σΔ cannot be the same feature. */
  implausibleShallowingSigmas: number;
  /** Rate for new features and the least any matched feature is credited with, mm/year (the tenant setting). */
  floorRateMmPerYear: number;
  /** Wall thickness for rows that report none, mm. */
  nominalWallThicknessMm: number | null;
}

/**
 * 3σΔ keeps 99.87 % of true pairs with no growth (one-sided normal tail) while rejecting a newer reading a third
 * of the wall shallower, which no pair of ±10 % tools explains.
 */
export const DEFAULT_RUN_COMPARISON_SETTINGS: RunComparisonSettings = {
  odometerToleranceM: DEFAULT_GROWTH_SETTINGS.odometerToleranceM,
  clockToleranceDeg: DEFAULT_GROWTH_SETTINGS.clockToleranceDeg,
  toolTolerancePctWt: DEFAULT_TOOL_TOLERANCE_PCT_WT,
  toolCertainty: 0.8,
  rateConfidence: 0.9,
  implausibleShallowingSigmas: 3,
  floorRateMmPerYear: DEFAULT_GROWTH_SETTINGS.floorRateMmPerYear,
  nominalWallThicknessMm: null,
};

/**
 * The standard normal quantile Φ⁻¹(p), by P. J. Acklam's rational approximation (relative error below
 * 1.15 × 10⁻⁹ over (0, 1)).
 */
export function normalQuantile(p: number): number {
  if (!(p > 0 && p < 1)) throw new RangeError(`normalQuantile needs 0 < p < 1, got ${p}`);
  const a = [-3.969683028665376e1, 2.209460984245205e2, -2.759285104469687e2, 1.38357751867269e2, -3.066479806614716e1, 2.506628277459239];
  const b = [-5.447609879822406e1, 1.615858368580409e2, -1.556989798598866e2, 6.680131188771972e1, -1.328068155288572e1];
  const c = [-7.784894002430293e-3, -3.223964580411365e-1, -2.400758277161838, -2.549732539343734, 4.374664141464968, 2.938163982698783];
  const d = [7.784695709041462e-3, 3.224671290700398e-1, 2.445134137142996, 3.754408661907416];
  const tail = (q: number) =>
    (((((c[0]! * q + c[1]!) * q + c[2]!) * q + c[3]!) * q + c[4]!) * q + c[5]!) / ((((d[0]! * q + d[1]!) * q + d[2]!) * q + d[3]!) * q + 1);
  const pLow = 0.02425;
  if (p < pLow) return tail(Math.sqrt(-2 * Math.log(p)));
  if (p > 1 - pLow) return -tail(Math.sqrt(-2 * Math.log(1 - p)));
  const q = p - 0.5;
  const r = q * q;
  return (
    ((((((a[0]! * r + a[1]!) * r + a[2]!) * r + a[3]!) * r + a[4]!) * r + a[5]!) * q) / (((((b[0]! * r + b[1]!) * r + b[2]!) * r + b[3]!) * r + b[4]!) * r + 1)
  );
}

/** Standard deviation of one run's depth error, % of wall, from its tolerance band at a certainty. */
export function depthSizingSd(tolerancePctWt: number, certainty: number): number {
  return tolerancePctWt / normalQuantile((1 + certainty) / 2);
}

/** Every gated pair costs at most 5 × TERM_CAP < 2 × UNMATCHED_COST. */
export const UNMATCHED_COST = 23;
/** Stands for a forbidden cell in the assignment; finite so that potentials stay finite. */
const FORBIDDEN = 1e9;

export interface FeaturePair<Row> {
  older: ReferencePosition<Row>;
  newer: ReferencePosition<Row>;
  /** Sum of the negative log-likelihoods of its differences (axial, clock, depth, length, width), each capped at TERM_CAP. */
  cost: number;
}

export interface FeatureMatching<Row> {
  pairs: FeaturePair<Row>[];
  unmatchedOlder: ReferencePosition<Row>[];
  unmatchedNewer: ReferencePosition<Row>[];
}

type MatchSettings = Pick<
  RunComparisonSettings,
  'odometerToleranceM' | 'clockToleranceDeg' | 'toolTolerancePctWt' | 'toolCertainty' | 'implausibleShallowingSigmas'
>;

/** Signed differences newer − older of a gated pair; null components where a run gives no value. */
interface Residual {
  axialM: number;
  clockDeg: number | null;
  depthPctWt: number | null;
  lengthMm: number | null;
  widthMm: number | null;
}

/** The differences of two features, or null when a gate rules the pair out. */
function gatedResidual(
  older: ReferencePosition<MatchableRow>,
  newer: ReferencePosition<MatchableRow>,
  settings: MatchSettings,
  shallowingGatePctWt: number,
): Residual | null {
  const o = older.row;
  const n = newer.row;
  if (o.kind !== n.kind) return null;
  if (o.surface != null && n.surface != null && o.surface !== n.surface) return null;
  if (Math.abs(older.referenceJointIndex - newer.referenceJointIndex) > 1) return null;
  const axialM = newer.referencePositionM - older.referencePositionM;
  if (Math.abs(axialM) > settings.odometerToleranceM) return null;
  let clockDeg: number | null = null;
  if (o.clockDeg != null && n.clockDeg != null) {
    if (clockDistanceDeg(o.clockDeg, n.clockDeg) > settings.clockToleranceDeg) return null;
    clockDeg = ((((n.clockDeg - o.clockDeg) % 360) + 540) % 360) - 180;
  }
  let depthPctWt: number | null = null;
  if (o.depthPctWt != null && n.depthPctWt != null) {
    depthPctWt = n.depthPctWt - o.depthPctWt;
    if (depthPctWt < -shallowingGatePctWt) return null;
  }
  const lengthMm = o.lengthMm != null && n.lengthMm != null ? n.lengthMm - o.lengthMm : null;
  const widthMm = o.widthMm != null && n.widthMm != null ? n.widthMm - o.widthMm : null;
  return { axialM, clockDeg, depthPctWt, lengthMm, widthMm };
}

/**
 * How unlikely one difference is for a true pair: −2 ln(f(r) / max f), f the difference's density, capped at
 * TERM_CAP. For a normal density this is the squared standardised difference ((r − μ) / σ)².
 */
type TermCost = (residual: number) => number;

/** One TermCost per difference; null where the runs give too few values to say what a true pair looks like. */
interface Scatter {
  axial: TermCost;
  clock: TermCost;
  depth: TermCost;
  length: TermCost | null;
  width: TermCost | null;
}

/** Unambiguous windows (one feature on each side) needed before their scatter replaces the gate-based one. */
const MIN_CALIBRATION_PAIRS = 30;
/** Unambiguous windows needed before their density is used as it is rather than as a normal one. */
const MIN_DENSITY_PAIRS = 200;
/** Beyond three standard deviations every residual is equally unlikely: the cap keeps one bad term from deciding. */
const TERM_CAP = 9;
/** The density is tabulated at a quarter bandwidth, on at most this many points (kernel density is smooth there). */
const DENSITY_GRID_STEPS_PER_BANDWIDTH = 4;
const MAX_DENSITY_GRID = 4096;

const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};

const normalTerm =
  ([centre, sd]: [number, number]): TermCost =>
  (residual) =>
    Math.min(TERM_CAP, ((residual - centre) / sd) ** 2);

/**
 * Negative log-likelihood of a difference as it scatters between true pairs. Measured on the unambiguous pairs
 * of the runs themselves: with at least MIN_DENSITY_PAIRS of them, their Gaussian kernel density (Silverman's
 * rule-of-thumb bandwidth, B. W. Silverman, Density Estimation for Statistics and Data Analysis, 1986, eq. 3.31,
 * never below `floor`); with at least MIN_CALIBRATION_PAIRS, a normal density of median centre and 1.4826 × MAD
 * spread, a standard deviation a few wrong pairs cannot inflate; with fewer, `fallback` (centre, sd).
 *
 * The density matters for the differences that carry growth. Depth and length change by each feature's own
 * growth, which spreads the change over a band: a normal cost then prefers the pairing that equalises the changes
 * (its minimum over a cluster pairs the i-th deepest older feature with the i-th deepest newer one), while in
 * truth a pit that grew 3 % of wall beside one that grew 25 % is as likely as two that grew 14 %. The measured
 * density is flat across that band and falls off outside it, so within a colony the pairing is decided by
 * which changes are plausible at all and by position, clock and width, not by rank.
 */
function termCost(values: number[], fallback: [number, number], floor: number): TermCost {
  if (values.length < MIN_CALIBRATION_PAIRS) return normalTerm(fallback);
  const sorted = Float64Array.from(values).sort();
  const n = sorted.length;
  const quantile = (q: number) => {
    const at = q * (n - 1);
    const lo = Math.floor(at);
    return sorted[lo]! + (sorted[Math.min(n - 1, lo + 1)]! - sorted[lo]!) * (at - lo);
  };
  const centre = quantile(0.5);
  const spread = Math.max(floor, 1.4826 * median(values.map((v) => Math.abs(v - centre))));
  if (n < MIN_DENSITY_PAIRS) return normalTerm([centre, spread]);
  let mean = 0;
  for (const v of sorted) mean += v / n;
  let variance = 0;
  for (const v of sorted) variance += (v - mean) ** 2 / (n - 1);
  const iqrSd = (quantile(0.75) - quantile(0.25)) / 1.34;
  const bandwidth = Math.max(floor, 0.9 * Math.min(Math.sqrt(variance), iqrSd > 0 ? iqrSd : Infinity) * n ** -0.2);
  // Linear binning onto a grid, then a convolution with the kernel cut at 4 bandwidths: O(grid) after the sort.
  const reach = 4 * bandwidth;
  const start = sorted[0]! - reach;
  const span = sorted[n - 1]! + reach - start;
  const step = Math.max(bandwidth / DENSITY_GRID_STEPS_PER_BANDWIDTH, span / (MAX_DENSITY_GRID - 1));
  const points = Math.ceil(span / step) + 1;
  const counts = new Float64Array(points);
  for (const v of sorted) {
    const at = (v - start) / step;
    const lo = Math.floor(at);
    counts[lo] = counts[lo]! + (lo + 1 - at);
    counts[lo + 1] = counts[lo + 1]! + (at - lo);
  }
  const taps = Math.ceil(reach / step);
  const kernel = Float64Array.from({ length: 2 * taps + 1 }, (_, k) => Math.exp(-0.5 * (((k - taps) * step) / bandwidth) ** 2));
  const density = new Float64Array(points);
  let peak = 0;
  for (let g = 0; g < points; g++) {
    let sum = 0;
    for (let k = Math.max(0, g - taps); k <= Math.min(points - 1, g + taps); k++) sum += counts[k]! * kernel[k - g + taps]!;
    density[g] = sum;
    peak = Math.max(peak, sum);
  }
  const table = density.map((d) => (d > 0 ? Math.min(TERM_CAP, -2 * Math.log(d / peak)) : TERM_CAP));
  return (residual) => {
    const at = (residual - start) / step;
    if (!(at >= 0 && at < points - 1)) return TERM_CAP;
    const lo = Math.floor(at);
    return table[lo]! + (table[lo + 1]! - table[lo]!) * (at - lo);
  };
}

function pairCost(r: Residual, scatter: Scatter): number {
  const term = (value: number | null, cost: TermCost | null) => (value == null || cost == null ? 0 : cost(value));
  return (
    term(r.axialM, scatter.axial) +
    term(r.clockDeg, scatter.clock) +
    term(r.depthPctWt, scatter.depth) +
    term(r.lengthMm, scatter.length) +
    term(r.widthMm, scatter.width)
  );
}

/**
 * Minimum-cost assignment of rows to columns (rows ≤ columns) by the Hungarian method with potentials
 * (shortest augmenting paths, O(rows² · columns)). Returns each row's column.
 */
function assign(cost: Float64Array, rows: number, columns: number): Int32Array {
  const u = new Float64Array(rows + 1);
  const v = new Float64Array(columns + 1);
  const rowOfColumn = new Int32Array(columns + 1);
  const way = new Int32Array(columns + 1);
  const minSlack = new Float64Array(columns + 1);
  const used = new Uint8Array(columns + 1);
  for (let i = 1; i <= rows; i++) {
    rowOfColumn[0] = i;
    let j0 = 0;
    minSlack.fill(Infinity);
    used.fill(0);
    do {
      used[j0] = 1;
      const i0 = rowOfColumn[j0]!;
      let delta = Infinity;
      let j1 = 0;
      for (let j = 1; j <= columns; j++) {
        if (used[j]) continue;
        const slack = cost[(i0 - 1) * columns + j - 1]! - u[i0]! - v[j]!;
        if (slack < minSlack[j]!) {
          minSlack[j] = slack;
          way[j] = j0;
        }
        if (minSlack[j]! < delta) {
          delta = minSlack[j]!;
          j1 = j;
        }
      }
      for (let j = 0; j <= columns; j++) {
        if (used[j]) {
          u[rowOfColumn[j]!] = u[rowOfColumn[j]!]! + delta;
          v[j] = v[j]! - delta;
        } else {
          minSlack[j] = minSlack[j]! - delta;
        }
      }
      j0 = j1;
    } while (rowOfColumn[j0] !== 0);
    do {
      const j1 = way[j0]!;
      rowOfColumn[j0] = rowOfColumn[j1]!;
      j0 = j1;
    } while (j0 !== 0);
  }
  const columnOfRow = new Int32Array(rows).fill(-1);
  for (let j = 1; j <= columns; j++) if (rowOfColumn[j]! > 0) columnOfRow[rowOfColumn[j]! - 1] = j - 1;
  return columnOfRow;
}

function find(parent: Int32Array, x: number): number {
  while (parent[x] !== x) {
    parent[x] = parent[parent[x]!]!;
    x = parent[x]!;
  }
  return x;
}

/**
 * The edges of one window that the assignment takes. Rows are the smaller side; each row also has its own
 * "unmatched" column, so pairing pays only when cost − 2 × UNMATCHED_COST beats leaving both features alone.
 */
function solveWindow(edges: readonly number[], edgeOlder: readonly number[], edgeNewer: readonly number[], edgeCost: Float64Array): number[] {
  if (edges.length === 1) return edgeCost[edges[0]!]! < 2 * UNMATCHED_COST ? [edges[0]!] : [];
  const olderIds = [...new Set(edges.map((e) => edgeOlder[e]!))].sort((a, b) => a - b);
  const newerIds = [...new Set(edges.map((e) => edgeNewer[e]!))].sort((a, b) => a - b);
  const olderRows = olderIds.length <= newerIds.length;
  const rowIds = olderRows ? olderIds : newerIds;
  const columnIds = olderRows ? newerIds : olderIds;
  const rowIndex = new Map(rowIds.map((id, k) => [id, k]));
  const columnIndex = new Map(columnIds.map((id, k) => [id, k]));
  const columns = columnIds.length + rowIds.length;
  const matrix = new Float64Array(rowIds.length * columns).fill(FORBIDDEN);
  const edgeAt = new Int32Array(rowIds.length * columns).fill(-1);
  for (let r = 0; r < rowIds.length; r++) matrix[r * columns + columnIds.length + r] = 0;
  for (const e of edges) {
    const r = rowIndex.get(olderRows ? edgeOlder[e]! : edgeNewer[e]!)!;
    const c = columnIndex.get(olderRows ? edgeNewer[e]! : edgeOlder[e]!)!;
    matrix[r * columns + c] = edgeCost[e]! - 2 * UNMATCHED_COST;
    edgeAt[r * columns + c] = e;
  }
  const chosen: number[] = [];
  assign(matrix, rowIds.length, columns).forEach((c, r) => {
    if (c >= 0 && c < columnIds.length && edgeAt[r * columns + c]! >= 0) chosen.push(edgeAt[r * columns + c]!);
  });
  return chosen;
}

const robustSd = (values: number[]): number | null => {
  if (values.length < MIN_CALIBRATION_PAIRS) return null;
  const centre = median(values);
  return 1.4826 * median(values.map((v) => Math.abs(v - centre)));
};

/** Neighbouring newer-run features closer than this along the pipe are read with one positioning error. */
export const SHARED_ERROR_REACH_M = 0.3;
/** The pattern is used for a difference only where neighbours differ by less than this share of what pairs do. */
const PATTERN_SD_RATIO = 0.5;

interface SharedShifts {
  /** Per newer feature in a neighbourhood of first-pass pairs: the neighbourhood's shared shift, newer − older. */
  shiftOf: Map<number, { axialM: number; clockDeg: number }>;
  /** Standard deviation of a pair's own difference once the shared shift is out; null where no pattern is used. */
  ownSd: { axial: number | null; clock: number | null };
}

/**
 * Shared positioning error from the first-pass pairs. Neighbourhoods are chains of first-pass pairs in one window
 * whose newer features are within SHARED_ERROR_REACH_M of the next. Two neighbours' differences differ by √2 times
 * a pair's own error, so that error is 1.4826 × MAD / √2 of the neighbour-to-neighbour differences (robust to the
 * first pass's few wrong pairs); the shared shift of a neighbourhood is the median of its pairs' differences.
 */
function sharedShifts(
  chosenIn: ReadonlyMap<number, number[]>,
  edgeResidual: readonly Residual[],
  newer: readonly ReferencePosition<MatchableRow>[],
  edgeNewer: readonly number[],
  settings: MatchSettings,
  pairSd: { axial: number | null; clock: number | null },
): SharedShifts {
  const neighbourhoods: number[][] = [];
  for (const chosen of chosenIn.values()) {
    if (chosen.length < 2) continue;
    const byPosition = [...chosen].sort((p, q) => newer[edgeNewer[p]!]!.referencePositionM - newer[edgeNewer[q]!]!.referencePositionM);
    let current = [byPosition[0]!];
    for (const e of byPosition.slice(1)) {
      const gap = newer[edgeNewer[e]!]!.referencePositionM - newer[edgeNewer[current[current.length - 1]!]!]!.referencePositionM;
      if (gap <= SHARED_ERROR_REACH_M) current.push(e);
      else {
        if (current.length > 1) neighbourhoods.push(current);
        current = [e];
      }
    }
    if (current.length > 1) neighbourhoods.push(current);
  }
  const steps = (of: (r: Residual) => number | null) =>
    neighbourhoods.flatMap((edges) =>
      edges.slice(1).flatMap((e, k) => {
        const here = of(edgeResidual[e]!);
        const before = of(edgeResidual[edges[k]!]!);
        return here == null || before == null ? [] : [(here - before) / Math.SQRT2];
      }),
    );
  const ownSd = (of: (r: Residual) => number | null, sdOfPairs: number | null, floor: number) => {
    const sd = robustSd(steps(of));
    return sd == null || sdOfPairs == null || sd > PATTERN_SD_RATIO * sdOfPairs ? null : Math.max(floor, sd);
  };
  const own = {
    axial: ownSd((r) => r.axialM, pairSd.axial, Math.min(0.01, settings.odometerToleranceM / 30)),
    clock: ownSd((r) => r.clockDeg, pairSd.clock, 1),
  };
  const shiftOf = new Map<number, { axialM: number; clockDeg: number }>();
  if (own.axial == null && own.clock == null) return { shiftOf, ownSd: own };
  for (const edges of neighbourhoods) {
    const clocks = edges.flatMap((e) => (edgeResidual[e]!.clockDeg == null ? [] : [edgeResidual[e]!.clockDeg!]));
    const shift = { axialM: median(edges.map((e) => edgeResidual[e]!.axialM)), clockDeg: clocks.length ? median(clocks) : 0 };
    for (const e of edges) shiftOf.set(edgeNewer[e]!, shift);
  }
  return { shiftOf, ownSd: own };
}

/** Features of the two runs paired one to one (see the header for the gates and the cost). */
export function matchFeatures<Row extends MatchableRow>(
  older: readonly ReferencePosition<Row>[],
  newer: readonly ReferencePosition<Row>[],
  settings: MatchSettings = DEFAULT_RUN_COMPARISON_SETTINGS,
): FeatureMatching<Row> {
  const sizingSdOfChange = Math.SQRT2 * depthSizingSd(settings.toolTolerancePctWt, settings.toolCertainty);
  const shallowingGatePctWt = settings.implausibleShallowingSigmas * sizingSdOfChange;
  const newerOrder = newer.map((_, k) => k).sort((a, b) => newer[a]!.referencePositionM - newer[b]!.referencePositionM);
  const newerAt = newerOrder.map((k) => newer[k]!.referencePositionM);
  // Candidate edges, found by a sweep over the newer run sorted by position; windows are their connected components.
  const edgeOlder: number[] = [];
  const edgeNewer: number[] = [];
  const edgeResidual: Residual[] = [];
  const parent = new Int32Array(older.length + newer.length).map((_, k) => k);
  older.forEach((o, i) => {
    const lo = lowerBound(newerAt, o.referencePositionM - settings.odometerToleranceM);
    for (let s = lo; s < newerAt.length && newerAt[s]! <= o.referencePositionM + settings.odometerToleranceM; s++) {
      const j = newerOrder[s]!;
      const residual = gatedResidual(o, newer[j]!, settings, shallowingGatePctWt);
      if (residual == null) continue;
      edgeOlder.push(i);
      edgeNewer.push(j);
      edgeResidual.push(residual);
      const a = find(parent, i);
      const b = find(parent, older.length + j);
      if (a !== b) parent[Math.max(a, b)] = Math.min(a, b);
    }
  });
  const windows = new Map<number, number[]>();
  edgeResidual.forEach((_, e) => {
    const root = find(parent, edgeOlder[e]!);
    const list = windows.get(root);
    if (list) list.push(e);
    else windows.set(root, [e]);
  });
  // The scatter of true pairs, from the windows that hold one feature of each run (no choice to make there);
  // with too few of them, the gates stand for three standard deviations and the sizing error for the depth.
  const lone = [...windows.values()].filter((edges) => edges.length === 1).map((edges) => edgeResidual[edges[0]!]!);
  const values = (of: (r: Residual) => number | null) => lone.flatMap((r) => (of(r) == null ? [] : [of(r)!]));
  const lengths = values((r) => r.lengthMm);
  const widths = values((r) => r.widthMm);
  const scatter: Scatter = {
    axial: termCost(
      values((r) => r.axialM),
      [0, settings.odometerToleranceM / 3],
      0.01,
    ),
    clock: termCost(
      values((r) => r.clockDeg),
      [0, settings.clockToleranceDeg / 3],
      1,
    ),
    depth: termCost(
      values((r) => r.depthPctWt),
      [0, sizingSdOfChange],
      1,
    ),
    // Length and width have no tenant tolerance to stand in for their scatter: they count only once calibrated.
    length: lengths.length >= MIN_CALIBRATION_PAIRS ? termCost(lengths, [0, 1], 1) : null,
    width: widths.length >= MIN_CALIBRATION_PAIRS ? termCost(widths, [0, 1], 1) : null,
  };
  const edgeCost = Float64Array.from(edgeResidual, (r) => pairCost(r, scatter));
  const chosenIn = new Map<number, number[]>();
  for (const [root, edges] of windows) chosenIn.set(root, solveWindow(edges, edgeOlder, edgeNewer, edgeCost));

  // Second pass: features close together share the tool's positioning error, so a colony is read again as the same
  // pattern shifted and turned. Where the first pass shows that (neighbouring pairs differ by much less than pairs
  // do), each neighbourhood's shared shift is taken out and the pattern decides (see the header).
  const patterns = sharedShifts(chosenIn, edgeResidual, newer, edgeNewer, settings, {
    axial: robustSd(values((r) => r.axialM)),
    clock: robustSd(values((r) => r.clockDeg)),
  });
  for (const [root, edges] of windows) {
    if (!edges.some((e) => patterns.shiftOf.has(edgeNewer[e]!))) continue;
    for (const e of edges) {
      const shift = patterns.shiftOf.get(edgeNewer[e]!);
      if (!shift) continue;
      const r = edgeResidual[e]!;
      const own = (value: number | null, centre: number, sd: number | null) =>
        value == null || sd == null ? null : Math.min(TERM_CAP, ((value - centre) / sd) ** 2);
      const axial = own(r.axialM, shift.axialM, patterns.ownSd.axial);
      const clock = own(r.clockDeg, shift.clockDeg, patterns.ownSd.clock);
      edgeCost[e] =
        edgeCost[e]! + (axial == null ? 0 : axial - scatter.axial(r.axialM)) + (clock == null || r.clockDeg == null ? 0 : clock - scatter.clock(r.clockDeg));
    }
    chosenIn.set(root, solveWindow(edges, edgeOlder, edgeNewer, edgeCost));
  }

  const pairs: FeaturePair<Row>[] = [];
  const olderUsed = new Uint8Array(older.length);
  const newerUsed = new Uint8Array(newer.length);
  for (const chosen of chosenIn.values()) {
    for (const e of chosen) {
      const i = edgeOlder[e]!;
      const j = edgeNewer[e]!;
      olderUsed[i] = 1;
      newerUsed[j] = 1;
      pairs.push({ older: older[i]!, newer: newer[j]!, cost: edgeCost[e]! });
    }
  }
  pairs.sort((a, b) => a.newer.referencePositionM - b.newer.referencePositionM);
  return {
    pairs,
    unmatchedOlder: older.filter((_, i) => !olderUsed[i]),
    unmatchedNewer: newer.filter((_, j) => !newerUsed[j]),
  };
}

export interface PairGrowth {
  years: number;
  wallThicknessMm: number;
  depthChangePctWt: number;
  measuredDepthRateMmPerYear: number;
  /** Standard deviation of the measured rate from both runs' sizing errors: √(σ_older² + σ_newer²) / Δt. */
  depthRateSdMmPerYear: number;
  upperBoundDepthRateMmPerYear: number;
  /** True when the change exceeds the combined tolerance √(tol_older² + tol_newer²): growth the tools can see. */
  changeExceedsCombinedTolerance: boolean;
  /** max(floor, upper bound): the rate for remaining life. */
  rateMmPerYear: number;
  basis: 'MATCHED' | 'FLOOR';
  /** Length change over the interval, mm/year, as measured (null when either run gives no length). */
  lengthRateMmPerYear: number | null;
}

type GrowthSettings = Pick<RunComparisonSettings, 'toolTolerancePctWt' | 'toolCertainty' | 'rateConfidence' | 'floorRateMmPerYear'>;

/**
 * Growth of one matched pair over `years`. `olderToleranceOverride` lets the older run's tool differ from the
 * newer's; by default both use the tenant's tolerance.
 */
export function pairGrowth(
  older: { depthPctWt: number; lengthMm: number | null },
  newer: { depthPctWt: number; lengthMm: number | null },
  years: number,
  wallThicknessMm: number,
  settings: GrowthSettings = DEFAULT_RUN_COMPARISON_SETTINGS,
  olderTolerancePctWt: number = settings.toolTolerancePctWt,
): PairGrowth {
  if (!(years > 0)) throw new RangeError(`growth needs a positive time between runs, got ${years} years`);
  const mmPerPct = wallThicknessMm / 100;
  const change = newer.depthPctWt - older.depthPctWt;
  const measured = (change * mmPerPct) / years;
  const sdChangePct = Math.hypot(
    depthSizingSd(olderTolerancePctWt, settings.toolCertainty),
    depthSizingSd(settings.toolTolerancePctWt, settings.toolCertainty),
  );
  const sdRate = (sdChangePct * mmPerPct) / years;
  const upper = measured + normalQuantile(settings.rateConfidence) * sdRate;
  const matched = upper > settings.floorRateMmPerYear;
  return {
    years,
    wallThicknessMm,
    depthChangePctWt: change,
    measuredDepthRateMmPerYear: measured,
    depthRateSdMmPerYear: sdRate,
    upperBoundDepthRateMmPerYear: upper,
    changeExceedsCombinedTolerance: change > Math.hypot(olderTolerancePctWt, settings.toolTolerancePctWt),
    rateMmPerYear: matched ? upper : settings.floorRateMmPerYear,
    basis: matched ? 'MATCHED' : 'FLOOR',
    lengthRateMmPerYear: older.lengthMm != null && newer.lengthMm != null ? (newer.lengthMm - older.lengthMm) / years : null,
  };
}

const DAY_MS = 86_400_000;

/** Years between two YYYY-MM-DD dates (Julian years, as growth.ts counts them). */
export function yearsBetween(olderDate: string, newerDate: string): number {
  return (Date.parse(`${newerDate}T00:00:00Z`) - Date.parse(`${olderDate}T00:00:00Z`)) / (365.25 * DAY_MS);
}

export interface MatchedGrowth<Row> extends FeaturePair<Row> {
  growth: PairGrowth | null;
}

export interface NewFeatureGrowth<Row> {
  newer: ReferencePosition<Row>;
  rateMmPerYear: number;
  basis: 'FLOOR';
  /** The newer run's feature has no partner in the older run: new, or below the older run's reporting threshold. */
  reason: 'NOT_IN_OLDER_RUN';
}

export interface UnityPoint {
  olderFeatureId: string | null;
  newerFeatureId: string | null;
  olderDepthPctWt: number;
  newerDepthPctWt: number;
}

export interface RunComparison<Row extends MatchableRow> {
  alignment: RunAlignment<Row>;
  years: number;
  /** Matched pairs, each with its growth (null when a depth or the wall thickness is missing). */
  matched: MatchedGrowth<Row>[];
  newFeatures: NewFeatureGrowth<Row>[];
  /** Older-run features with no partner: repaired, or below the newer run's threshold. */
  unmatchedOlder: ReferencePosition<Row>[];
  /** The matched pairs with both depths: older depth against newer depth, for a unity chart. */
  unityPlot: UnityPoint[];
}

/** Align two runs, match their features one to one and grow each match: the whole run comparison. */
export function compareRuns<Row extends MatchableRow>(
  a: AlignableRun<Row>,
  b: AlignableRun<Row>,
  settings: RunComparisonSettings = DEFAULT_RUN_COMPARISON_SETTINGS,
  alignmentOptions: AlignmentOptions = DEFAULT_ALIGNMENT_OPTIONS,
): RunComparison<Row> {
  const alignment = alignRuns(a, b, alignmentOptions);
  const [olderRun, newerRun] = olderFirst(a, b);
  const years = yearsBetween(olderRun.runDate, newerRun.runDate);
  const matching = matchFeatures(alignment.olderFeatures, alignment.newerFeatures, settings);
  const matched = matching.pairs.map((pair) => {
    const o = pair.older.row;
    const n = pair.newer.row;
    const wall = n.wallThicknessMm ?? o.wallThicknessMm ?? settings.nominalWallThicknessMm;
    const growth =
      o.depthPctWt != null && n.depthPctWt != null && wall != null && years > 0
        ? pairGrowth({ depthPctWt: o.depthPctWt, lengthMm: o.lengthMm }, { depthPctWt: n.depthPctWt, lengthMm: n.lengthMm }, years, wall, settings)
        : null;
    return { ...pair, growth };
  });
  return {
    alignment,
    years,
    matched,
    newFeatures: matching.unmatchedNewer.map((newer) => ({
      newer,
      rateMmPerYear: settings.floorRateMmPerYear,
      basis: 'FLOOR' as const,
      reason: 'NOT_IN_OLDER_RUN' as const,
    })),
    unmatchedOlder: matching.unmatchedOlder,
    unityPlot: matching.pairs
      .filter((p) => p.older.row.depthPctWt != null && p.newer.row.depthPctWt != null)
      .map((p) => ({
        olderFeatureId: p.older.row.vendorFeatureId,
        newerFeatureId: p.newer.row.vendorFeatureId,
        olderDepthPctWt: p.older.row.depthPctWt!,
        newerDepthPctWt: p.newer.row.depthPctWt!,
      })),
  };
}
