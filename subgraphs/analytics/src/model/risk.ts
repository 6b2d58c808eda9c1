/**
 * Risk of a pipe segment on a 5 × 5 matrix: score = likelihood (1–5) × consequence (1–5).
 *
 * Likelihood is the worst of:
 *   - the most severe response category among its assessed anomalies — metal loss, dents and cracks
 *     alike (IMMEDIATE 5, SIXTY_DAY / ONE_YEAR / ONE_HUNDRED_EIGHTY_DAY 4, TWO_YEAR 3, MONITORED / OTHER 2,
 *     none 1); the driver names how many of them are dents;
 *   - the shortest remaining life (< 2 years 5, < 5 years 4, < 10 years 3, < 20 years 2);
 *   - cathodic protection: the latest pipe-to-soil potential less negative than −850 mV (the
 *     polarised-potential criterion of AMPP/NACE SP0169 referenced by 49 CFR 192 Appendix D) raises it by one.
 * Consequence, for gas, from the potential impact radius of §192.903, r = 0.69 · √(p · d²) feet with p
 * the MAOP in psig and d the outside diameter in inches (< 200 ft 1, < 400 ft 2, < 700 ft 3, < 1000 ft 4,
 * else 5); for liquid, 3 (no impact radius is defined in Part 195). Then +1 in an HCA (or could-affect
 * for liquid), +1 in class 3 or 4; capped at 5.
 * Bands: LOW 1–4, MEDIUM 5–9, HIGH 10–14, VERY_HIGH 15–25.
 * Beside the score, the expected number of open anomalies beyond their acceptance limit (model/exceedance.ts): the 5 × 5
 * cell of a segment with a hundred immediate conditions does not move for one repair, and should not; this does.
 */
import type { ResponseCategory } from './response-category';

export const RISK_MODEL_VERSION = 'linepack-risk-5x5/1.1.0';

export type RiskBand = 'LOW' | 'MEDIUM' | 'HIGH' | 'VERY_HIGH';

export const RISK_BANDS: readonly { band: RiskBand; minScore: number; maxScore: number }[] = [
  { band: 'LOW', minScore: 1, maxScore: 4 },
  { band: 'MEDIUM', minScore: 5, maxScore: 9 },
  { band: 'HIGH', minScore: 10, maxScore: 14 },
  { band: 'VERY_HIGH', minScore: 15, maxScore: 25 },
];

const categoryLikelihood: Record<ResponseCategory, number> = {
  IMMEDIATE: 5,
  SIXTY_DAY: 4,
  ONE_YEAR: 4,
  ONE_HUNDRED_EIGHTY_DAY: 4,
  TWO_YEAR: 3,
  MONITORED: 2,
  OTHER: 2,
};
/** −850 mV (vs Cu/CuSO4): less negative means the pipe may be under-protected. */
export const CP_CRITERION_MV = -850;
const KPA_PER_PSI = 6.894757;
const MM_PER_INCH = 25.4;

export interface RiskInput {
  regulation: 'CFR_192' | 'CFR_195' | null;
  product: string | null;
  classLocation: number | null;
  inHca: boolean;
  couldAffectHca: boolean | null;
  outsideDiameterMm: number | null;
  maopKpa: number | null;
  /** How many of the segment's assessed anomalies are in each category. */
  categoryCounts: Partial<Record<ResponseCategory, number>>;
  /** How many of those in each category are dents (a dented segment is scored on its dents like on its metal loss). */
  dentCounts?: Partial<Record<ResponseCategory, number>>;
  minRemainingLifeYears: number | null;
  worstFailurePressureRatio: number | null;
  latestPipeToSoilMv: number | null;
  /**
   * The expected number of the segment's open anomalies beyond their acceptance limit as inspected (model/exceedance.ts,
   * summed): carried into the result beside the 5 × 5 score, which it does not change.
   */
  expectedAnomaliesBeyondLimit?: number;
}

export interface RiskResult {
  likelihood: number;
  consequence: number;
  score: number;
  band: RiskBand;
  drivers: string[];
  potentialImpactRadiusM: number | null;
  expectedAnomaliesBeyondLimit: number;
  modelVersion: string;
}

/** §192.903 potential impact radius in feet, from MAOP in psig and diameter in inches. */
export function potentialImpactRadiusFt(maopPsig: number, diameterIn: number): number {
  return 0.69 * Math.sqrt(maopPsig * diameterIn * diameterIn);
}

export function bandOf(score: number): RiskBand {
  return RISK_BANDS.find((b) => score >= b.minScore && score <= b.maxScore)!.band;
}

export function segmentRisk(input: RiskInput): RiskResult {
  const drivers: string[] = [];
  let likelihood = 1;
  const raise = (to: number, why: string) => {
    if (to > likelihood) likelihood = to;
    drivers.push(`${why}: likelihood ${to}`);
  };
  const order: ResponseCategory[] = ['IMMEDIATE', 'SIXTY_DAY', 'ONE_YEAR', 'ONE_HUNDRED_EIGHTY_DAY', 'TWO_YEAR', 'MONITORED', 'OTHER'];
  const worst = order.find((c) => (input.categoryCounts[c] ?? 0) > 0);
  if (worst) {
    const count = input.categoryCounts[worst] ?? 0;
    const dents = input.dentCounts?.[worst] ?? 0;
    const ofWhichDents = dents > 0 ? `, ${dents === count ? (count === 1 ? 'a dent' : 'all dents') : `${dents} of them dent${dents === 1 ? '' : 's'}`}` : '';
    raise(
      categoryLikelihood[worst],
      `${count} ${worst} anomal${count === 1 ? 'y' : 'ies'}${ofWhichDents}${input.worstFailurePressureRatio != null ? ` (worst failure-pressure ratio ${input.worstFailurePressureRatio.toFixed(2)})` : ''}`,
    );
  } else {
    drivers.push('no assessed anomalies: likelihood 1');
  }
  const life = input.minRemainingLifeYears;
  if (life != null) {
    const fromLife = life < 2 ? 5 : life < 5 ? 4 : life < 10 ? 3 : life < 20 ? 2 : 1;
    if (fromLife > 1) raise(fromLife, `shortest remaining life ${life.toFixed(1)} years`);
  }
  if (input.latestPipeToSoilMv != null && input.latestPipeToSoilMv > CP_CRITERION_MV) {
    const to = Math.min(5, likelihood + 1);
    likelihood = to;
    drivers.push(`latest pipe-to-soil potential ${input.latestPipeToSoilMv} mV is less negative than ${CP_CRITERION_MV} mV: likelihood +1 to ${to}`);
  }

  let consequence: number;
  let pirM: number | null = null;
  if (input.regulation === 'CFR_195') {
    consequence = 3;
    drivers.push(`liquid pipeline (${input.product ?? 'product not recorded'}): consequence 3`);
  } else if (input.maopKpa != null && input.outsideDiameterMm != null) {
    const pirFt = potentialImpactRadiusFt(input.maopKpa / KPA_PER_PSI, input.outsideDiameterMm / MM_PER_INCH);
    pirM = pirFt * 0.3048;
    consequence = pirFt < 200 ? 1 : pirFt < 400 ? 2 : pirFt < 700 ? 3 : pirFt < 1000 ? 4 : 5;
    drivers.push(`potential impact radius ${pirFt.toFixed(0)} ft (${pirM.toFixed(0)} m, §192.903): consequence ${consequence}`);
  } else {
    consequence = 5;
    drivers.push('no MAOP or diameter to compute the potential impact radius: consequence 5 (assumed worst)');
  }
  const hca = input.regulation === 'CFR_195' ? (input.couldAffectHca ?? input.inHca) : input.inHca;
  if (hca) {
    consequence = Math.min(5, consequence + 1);
    drivers.push(`${input.regulation === 'CFR_195' ? 'could affect' : 'in'} a high consequence area: consequence +1 to ${consequence}`);
  }
  if (input.classLocation != null && input.classLocation >= 3) {
    consequence = Math.min(5, consequence + 1);
    drivers.push(`class ${input.classLocation} location: consequence +1 to ${consequence}`);
  }
  const score = likelihood * consequence;
  return {
    likelihood,
    consequence,
    score,
    band: bandOf(score),
    drivers,
    potentialImpactRadiusM: pirM,
    expectedAnomaliesBeyondLimit: input.expectedAnomaliesBeyondLimit ?? 0,
    modelVersion: RISK_MODEL_VERSION,
  };
}
