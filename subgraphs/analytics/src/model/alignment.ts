/**
 * Aligning two ILI runs of one pipeline by their girth welds, so that features can be compared weld to weld
 * rather than odometer to odometer. Each run's odometer drifts (wheel wear, slip in bends, speed excursions),
 * so after tens of kilometres the same weld can read hundreds of metres apart; the pipe tally itself does
 * not drift: the sequence of joint lengths is a fingerprint of the pipe. The runs are aligned by matching
 * those sequences, and each feature is then placed by its joint and its distance from the joint's upstream
 * weld, which the odometer errors barely touch.
 *
 * Sequence alignment: a dynamic programme over weld pairs (weld i of the older run is weld j of the newer)
 * whose steps skip up to MAX_STEP − 1 welds in either run — a weld the tool missed, a repair that added a
 * pup joint, a cut-out — and compare the pipe lengths the step spans, so a missing weld costs one skip
 * rather than throwing every later joint out of phase. A step that compares badly scores below nothing, a
 * step that agrees scores MATCH_REWARD, and a path may also jump over a stretch that does not align at all
 * (a reroute, a replaced section) for JUMP_PENALTY, so one bad stretch cannot split the alignment.
 *
 * Scale: a full DP over 10,000 × 10,000 welds is 10⁸ cells; this one is banded. Reference markers and valves
 * named alike in both runs are anchors (the above-ground markers tie the odometers to the ground); the band
 * follows the line through them, and its half-width grows with the distance from the nearest anchor by
 * `driftFraction` (the odometer error that can build up between fixes). With no anchors the odometers are
 * taken to share their origin (same launcher). For 100 km with no anchors at 1 % drift that is about 170
 * welds across: under 2 million cells instead of 10⁸.
 *
 * Reference frame: the newer run. Digs are laid out from the latest run's tally and markers, and joints
 * added by repairs since the older run exist only in the newer tally, so the older run's features are
 * expressed in the newer run's joints, never the other way round. Which run is older is decided by run date
 * (then run id), so aligning (A, B) and (B, A) is the same computation.
 */

/** The listing columns alignment reads (lib/ili/listing.ts `IliListingRow` has them all). */
export interface AlignableRow {
  rowNumber: number;
  kind: string;
  logDistanceM: number;
  jointNumber: number | null;
  jointLengthM: number | null;
  markerName: string | null;
}

export interface AlignableRun<Row extends AlignableRow = AlignableRow> {
  runId: string;
  /** YYYY-MM-DD */
  runDate: string;
  rows: readonly Row[];
}

export interface AlignmentOptions {
  /** Band half-width at an anchor, metres: the odometer error left where the tool was last fixed to the ground. */
  bandBaseM: number;
  /** Odometer error that can build up per metre travelled from the nearest anchor. */
  driftFraction: number;
  /** Joint lengths agree within lengthToleranceM + lengthToleranceFraction × length (vendor tally precision). */
  lengthToleranceM: number;
  lengthToleranceFraction: number;
}

/**
 * A 60 m band at an anchor (five joints either way) and 1 % drift cover the odometer errors of wheel-odometer
 * tools between markers; joint lengths read from two tallies agree to about a tenth of a metre. These are
 * tuning values, not published ones: the tests show the alignment holds at 0.5 % drift and 3 m slips.
 */
export const DEFAULT_ALIGNMENT_OPTIONS: AlignmentOptions = { bandBaseM: 60, driftFraction: 0.01, lengthToleranceM: 0.15, lengthToleranceFraction: 0.005 };

/** The tally kinds (lib/ili/listing.ts TALLY_KINDS); every other row is a feature. */
const TALLY_KINDS: ReadonlySet<string> = new Set(['GIRTH_WELD', 'VALVE', 'TEE', 'BEND', 'FLANGE', 'WALL_THICKNESS_CHANGE', 'REFERENCE_MARKER', 'OTHER_TALLY']);
/** Tally items whose name identifies one place on the line in every run. */
const ANCHOR_KINDS: ReadonlySet<string> = new Set(['REFERENCE_MARKER', 'VALVE', 'TEE', 'FLANGE']);

// Scores of the DP. A matched step earns MATCH_REWARD less the squared length disagreement in tolerances
// (capped at MISMATCH_CAP, so a random pairing of joints is clearly negative); each weld skipped inside a
// step costs SKIPPED_WELD_PENALTY, so a missing weld (two joints against their sum) still scores positive;
// a jump over a stretch that does not align costs JUMP_PENALTY, the price of about eight skipped welds.
const MATCH_REWARD = 4;
const MISMATCH_CAP = 16;
const SKIPPED_WELD_PENALTY = 2.5;
const JUMP_PENALTY = 20;
const MAX_STEP = 3;
/** Among equally good alignments (a run of identical joints), prefer the one nearer the odometer guide. */
const GUIDE_WEIGHT = 0.5;

export interface Weld {
  /** Index among the run's girth welds in odometer order. */
  index: number;
  rowNumber: number;
  jointNumber: number | null;
  logDistanceM: number;
}

export interface WeldPair {
  older: Weld;
  newer: Weld;
}

export interface Anchor {
  name: string;
  olderM: number;
  newerM: number;
}

export interface ReferencePosition<Row> {
  row: Row;
  /** Position on the newer run's odometer. */
  referencePositionM: number;
  /** Index (among the newer run's welds) of the weld upstream of the feature, or -1 before the first weld. */
  referenceJointIndex: number;
  referenceJointNumber: number | null;
  distanceFromUpstreamWeldM: number;
  /** True when the feature lies outside the aligned welds and was placed by the nearest pair alone. */
  extrapolated: boolean;
}

export interface RunAlignment<Row extends AlignableRow = AlignableRow> {
  olderRunId: string;
  newerRunId: string;
  /** The run whose joints the positions are expressed in: always the newer run. */
  referenceRunId: string;
  weldPairs: WeldPair[];
  unmatchedOlderWelds: Weld[];
  unmatchedNewerWelds: Weld[];
  anchors: Anchor[];
  olderFeatures: ReferencePosition<Row>[];
  newerFeatures: ReferencePosition<Row>[];
}

/** Girth welds of one run in odometer order, with the cumulative tally length at each weld. */
interface WeldSequence {
  welds: Weld[];
  positionM: Float64Array;
  /** Tally length from the first weld: the vendor's joint lengths where given, the odometer otherwise. */
  tallyM: Float64Array;
}

function weldSequence(rows: readonly AlignableRow[]): WeldSequence {
  const weldRows = rows.filter((r) => r.kind === 'GIRTH_WELD').sort((a, b) => a.logDistanceM - b.logDistanceM || a.rowNumber - b.rowNumber);
  const n = weldRows.length;
  const positionM = new Float64Array(n);
  const tallyM = new Float64Array(n);
  const welds = weldRows.map((r, index) => {
    positionM[index] = r.logDistanceM;
    return { index, rowNumber: r.rowNumber, jointNumber: r.jointNumber, logDistanceM: r.logDistanceM };
  });
  for (let k = 1; k < n; k++) {
    const reported = weldRows[k - 1]!.jointLengthM;
    const measured = positionM[k]! - positionM[k - 1]!;
    tallyM[k] = tallyM[k - 1]! + (reported != null && reported > 0 ? reported : measured);
  }
  return { welds, positionM, tallyM };
}

/** Index of the first element ≥ x in an ascending array. */
export function lowerBound(values: ArrayLike<number>, x: number): number {
  let lo = 0;
  let hi = values.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (values[mid]! < x) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

const normalName = (name: string) => name.trim().toUpperCase().replace(/\s+/g, ' ');

/**
 * Markers named alike (and of the same kind) once in each run, kept only in an order both runs agree on (the
 * longest chain increasing in both), so one misnamed marker cannot fold the guide back on itself.
 */
function anchorsOf(older: readonly AlignableRow[], newer: readonly AlignableRow[]): Anchor[] {
  const named = (rows: readonly AlignableRow[]) => {
    const byKey = new Map<string, AlignableRow | null>();
    for (const r of rows) {
      if (!ANCHOR_KINDS.has(r.kind) || !r.markerName?.trim()) continue;
      const key = `${r.kind}\u0000${normalName(r.markerName)}`;
      byKey.set(key, byKey.has(key) ? null : r);
    }
    return byKey;
  };
  const olderNamed = named(older);
  const newerNamed = named(newer);
  const candidates: Anchor[] = [];
  for (const [key, o] of olderNamed) {
    const n = newerNamed.get(key);
    if (o && n) candidates.push({ name: o.markerName!.trim(), olderM: o.logDistanceM, newerM: n.logDistanceM });
  }
  candidates.sort((a, b) => a.olderM - b.olderM);
  // Longest strictly increasing subsequence in newerM (patience sorting with predecessor links).
  const tails: number[] = [];
  const previous = new Array<number>(candidates.length).fill(-1);
  candidates.forEach((c, k) => {
    let lo = 0;
    let hi = tails.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (candidates[tails[mid]!]!.newerM < c.newerM) lo = mid + 1;
      else hi = mid;
    }
    if (lo > 0) previous[k] = tails[lo - 1]!;
    tails[lo] = k;
  });
  const chain: Anchor[] = [];
  for (let k = tails.length ? tails[tails.length - 1]! : -1; k >= 0; k = previous[k]!) chain.push(candidates[k]!);
  return chain.reverse();
}

/** Maps an older-run odometer reading to the newer run's, through the anchors (slope 1 outside them). */
function guideOf(anchors: readonly Anchor[]): (olderM: number) => number {
  if (anchors.length === 0) return (x) => x;
  const first = anchors[0]!;
  const last = anchors[anchors.length - 1]!;
  const olderAt = anchors.map((a) => a.olderM);
  return (x) => {
    if (x <= first.olderM) return first.newerM + (x - first.olderM);
    if (x >= last.olderM) return last.newerM + (x - last.olderM);
    const k = lowerBound(olderAt, x);
    const a = anchors[k - 1]!;
    const b = anchors[k]!;
    return a.newerM + ((x - a.olderM) * (b.newerM - a.newerM)) / (b.olderM - a.olderM);
  };
}

/** The weld pairs (older index, newer index) of the best banded alignment, in order. */
function alignWelds(older: WeldSequence, newer: WeldSequence, anchors: readonly Anchor[], options: AlignmentOptions): Array<[number, number]> {
  const n = older.welds.length;
  const m = newer.welds.length;
  if (n === 0 || m === 0) return [];
  const guide = guideOf(anchors);
  const anchorAt = anchors.map((a) => a.olderM);
  const origin = Math.min(older.positionM[0]!, newer.positionM[0]!);
  const startOffset = Math.abs(older.positionM[0]! - newer.positionM[0]!);
  const halfWidth = (x: number) => {
    if (anchors.length === 0) return options.bandBaseM + startOffset + options.driftFraction * Math.abs(x - origin);
    const k = lowerBound(anchorAt, x);
    const near = Math.min(k < anchors.length ? Math.abs(anchorAt[k]! - x) : Infinity, k > 0 ? Math.abs(x - anchorAt[k - 1]!) : Infinity);
    return options.bandBaseM + options.driftFraction * near;
  };

  // The band: newer welds lo[i]..hi[i] for older weld i, made monotone so that prefix maxima carry over rows.
  const lo = new Int32Array(n);
  const hi = new Int32Array(n);
  const center = new Float64Array(n);
  const width = new Float64Array(n);
  for (let i = 0; i < n; i++) {
    center[i] = guide(older.positionM[i]!);
    width[i] = halfWidth(older.positionM[i]!);
    lo[i] = lowerBound(newer.positionM, center[i]! - width[i]!);
    hi[i] = lowerBound(newer.positionM, center[i]! + width[i]! + 1e-9) - 1;
  }
  for (let i = 1; i < n; i++) hi[i] = Math.max(hi[i]!, hi[i - 1]!);
  for (let i = n - 2; i >= 0; i--) lo[i] = Math.min(lo[i]!, lo[i + 1]!);
  const rowStart = new Int32Array(n + 1);
  for (let i = 0; i < n; i++) rowStart[i + 1] = rowStart[i]! + Math.max(0, hi[i]! - lo[i]! + 1);
  const cells = rowStart[n]!;
  const score = new Float64Array(cells);
  const back = new Int32Array(cells);
  // Best score over every cell (i', j') with i' ≤ i and j' ≤ j, and where it is: the jump's source.
  const prefixBest = new Float64Array(cells);
  const prefixArg = new Int32Array(cells);
  const cellOf = (i: number, j: number) => (i >= 0 && j >= lo[i]! && j <= hi[i]! ? rowStart[i]! + j - lo[i]! : -1);
  const prefixOf = (i: number, j: number): number => {
    if (i < 0 || j < lo[i]! || hi[i]! < lo[i]!) return -1;
    return rowStart[i]! + Math.min(j, hi[i]!) - lo[i]!;
  };

  let bestCell = -1;
  let bestScore = -Infinity;
  for (let i = 0; i < n; i++) {
    for (let j = lo[i]!; j <= hi[i]!; j++) {
      const cell = rowStart[i]! + j - lo[i]!;
      let s = 0;
      let from = -1;
      const jumpFrom = prefixOf(i - 1, j - 1);
      if (jumpFrom >= 0 && prefixBest[jumpFrom]! - JUMP_PENALTY > s) {
        s = prefixBest[jumpFrom]! - JUMP_PENALTY;
        from = prefixArg[jumpFrom]!;
      }
      for (let di = 1; di <= MAX_STEP && di <= i; di++) {
        const olderSpan = older.tallyM[i]! - older.tallyM[i - di]!;
        for (let dj = 1; dj <= MAX_STEP && dj <= j; dj++) {
          const prev = cellOf(i - di, j - dj);
          if (prev < 0) continue;
          const newerSpan = newer.tallyM[j]! - newer.tallyM[j - dj]!;
          const tolerance = options.lengthToleranceM + options.lengthToleranceFraction * Math.max(olderSpan, newerSpan);
          const disagreement = (olderSpan - newerSpan) / tolerance;
          const candidate = score[prev]! + MATCH_REWARD - Math.min(disagreement * disagreement, MISMATCH_CAP) - SKIPPED_WELD_PENALTY * (di + dj - 2);
          if (candidate > s) {
            s = candidate;
            from = prev;
          }
        }
      }
      const offset = (newer.positionM[j]! - center[i]!) / width[i]!;
      s -= GUIDE_WEIGHT * offset * offset;
      score[cell] = s;
      back[cell] = from;
      if (s > bestScore) {
        bestScore = s;
        bestCell = cell;
      }
      let pBest = s;
      let pArg = cell;
      const left = j > lo[i]! ? cell - 1 : -1;
      if (left >= 0 && prefixBest[left]! > pBest) {
        pBest = prefixBest[left]!;
        pArg = prefixArg[left]!;
      }
      const up = prefixOf(i - 1, j);
      if (up >= 0 && prefixBest[up]! > pBest) {
        pBest = prefixBest[up]!;
        pArg = prefixArg[up]!;
      }
      prefixBest[cell] = pBest;
      prefixArg[cell] = pArg;
    }
  }

  const rowOfCell = (cell: number) => {
    let a = 0;
    let b = n - 1;
    while (a < b) {
      const mid = (a + b + 1) >>> 1;
      if (rowStart[mid]! <= cell) a = mid;
      else b = mid - 1;
    }
    return a;
  };
  const pairs: Array<[number, number]> = [];
  for (let cell = bestCell; cell >= 0; cell = back[cell]!) {
    const i = rowOfCell(cell);
    pairs.push([i, lo[i]! + cell - rowStart[i]!]);
  }
  // A path of one pair is no alignment: nothing was compared.
  return pairs.length > 1 ? pairs.reverse() : [];
}

/**
 * Places a run's features in the newer run's frame. Between consecutive matched welds the distance from the
 * upstream matched weld is scaled by the ratio of the tally lengths the pair spans in the two runs; the
 * reference joint is then the newer-run weld upstream of that position (which may be a weld the older run
 * does not have).
 */
function placeFeatures<Row extends AlignableRow>(
  rows: readonly Row[],
  own: WeldSequence,
  newer: WeldSequence,
  pairs: ReadonlyArray<readonly [number, number]>,
  ownIsNewer: boolean,
): ReferencePosition<Row>[] {
  const pairOwnAt = pairs.map(([o]) => own.positionM[o]!);
  return rows
    .filter((r) => !TALLY_KINDS.has(r.kind))
    .map((row) => {
      let referencePositionM = row.logDistanceM;
      let extrapolated = false;
      if (!ownIsNewer) {
        if (pairs.length === 0) {
          extrapolated = true;
        } else {
          const k = lowerBound(pairOwnAt, row.logDistanceM + 1e-9) - 1;
          extrapolated = k < 0 || k >= pairs.length - 1;
          // Outside the aligned welds only the nearest pair places the feature, at the odometer's own scale.
          const [o0, n0] = pairs[Math.max(0, Math.min(k, pairs.length - 1))]!;
          let ratio = 1;
          if (!extrapolated) {
            const [o1, n1] = pairs[k + 1]!;
            const ownSpan = own.tallyM[o1]! - own.tallyM[o0]!;
            if (ownSpan > 0) ratio = (newer.tallyM[n1]! - newer.tallyM[n0]!) / ownSpan;
          }
          referencePositionM = newer.positionM[n0]! + (row.logDistanceM - own.positionM[o0]!) * ratio;
        }
      }
      const joint = lowerBound(newer.positionM, referencePositionM + 1e-9) - 1;
      return {
        row,
        referencePositionM,
        referenceJointIndex: joint,
        referenceJointNumber: joint >= 0 ? newer.welds[joint]!.jointNumber : null,
        distanceFromUpstreamWeldM: joint >= 0 ? referencePositionM - newer.positionM[joint]! : referencePositionM,
        extrapolated,
      };
    });
}

/** Older first: by run date, then run id, so the argument order never changes the answer. */
export function olderFirst<Run extends AlignableRun<any>>(a: Run, b: Run): [Run, Run] {
  if (a.runDate !== b.runDate) return a.runDate < b.runDate ? [a, b] : [b, a];
  return a.runId <= b.runId ? [a, b] : [b, a];
}

export function alignRuns<Row extends AlignableRow>(
  a: AlignableRun<Row>,
  b: AlignableRun<Row>,
  options: AlignmentOptions = DEFAULT_ALIGNMENT_OPTIONS,
): RunAlignment<Row> {
  const [olderRun, newerRun] = olderFirst(a, b);
  const older = weldSequence(olderRun.rows);
  const newer = weldSequence(newerRun.rows);
  const anchors = anchorsOf(olderRun.rows, newerRun.rows);
  const pairs = alignWelds(older, newer, anchors, options);
  const olderMatched = new Set(pairs.map(([o]) => o));
  const newerMatched = new Set(pairs.map(([, n]) => n));
  return {
    olderRunId: olderRun.runId,
    newerRunId: newerRun.runId,
    referenceRunId: newerRun.runId,
    weldPairs: pairs.map(([o, n]) => ({ older: older.welds[o]!, newer: newer.welds[n]! })),
    unmatchedOlderWelds: older.welds.filter((w) => !olderMatched.has(w.index)),
    unmatchedNewerWelds: newer.welds.filter((w) => !newerMatched.has(w.index)),
    anchors,
    olderFeatures: placeFeatures(olderRun.rows, older, newer, pairs, false),
    newerFeatures: placeFeatures(newerRun.rows, newer, newer, pairs, true),
  };
}
