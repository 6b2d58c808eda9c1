/**
 * Corrosion growth between ILI runs and remaining life (§192.712(a) requires the remaining life at each
 * anomaly). A feature of the newer run matches one of the older run on the same segment when their
 * odometer readings are within `odometerToleranceM` and their clock positions within
 * `clockToleranceDeg` (the circle wraps at 360°); the nearest such feature is taken. Growth is the
 * depth change over the time between the runs, never below `floorRateMmPerYear` — the rate assumed for
 * new or unmatched features, and the least a matched one is credited with, since a feature that looks
 * shallower on a second run reflects tool tolerance, not healing. All three are tenant settings.
 */
import { modifiedB31G, type B31GInput } from './b31g';

export interface GrowthSettings {
  odometerToleranceM: number;
  clockToleranceDeg: number;
  floorRateMmPerYear: number;
}

/**
 * Defaults: ±1 m along the pipe and ±30° (one clock hour) around it are typical run-comparison windows;
 * 0.3 mm/year is a commonly used conservative external-corrosion rate where no measured rate exists. All
 * are assumptions an operator should replace with their own.
 */
export const DEFAULT_GROWTH_SETTINGS: GrowthSettings = { odometerToleranceM: 1, clockToleranceDeg: 30, floorRateMmPerYear: 0.3 };

export interface RunFeature {
  id: string;
  odometerM: number | null;
  clockDeg: number | null;
  depthMm: number;
  observedAt: Date;
}

export function clockDistanceDeg(a: number, b: number): number {
  const diff = Math.abs(a - b) % 360;
  return diff > 180 ? 360 - diff : diff;
}

/** The older-run feature this one matches, or null. */
export function matchFeature(feature: RunFeature, previous: readonly RunFeature[], settings: GrowthSettings): RunFeature | null {
  if (feature.odometerM == null) return null;
  let best: RunFeature | null = null;
  let bestDistance = Infinity;
  for (const p of previous) {
    if (p.odometerM == null) continue;
    const along = Math.abs(p.odometerM - feature.odometerM);
    if (along > settings.odometerToleranceM) continue;
    if (feature.clockDeg != null && p.clockDeg != null && clockDistanceDeg(feature.clockDeg, p.clockDeg) > settings.clockToleranceDeg) continue;
    if (along < bestDistance) {
      best = p;
      bestDistance = along;
    }
  }
  return best;
}

const YEAR_MS = 365.25 * 86_400_000;

export interface GrowthRate {
  rateMmPerYear: number;
  basis: 'MATCHED' | 'FLOOR';
  matchedMeasurementId: string | null;
}

export function growthRate(feature: RunFeature, match: RunFeature | null, settings: GrowthSettings): GrowthRate {
  if (!match) return { rateMmPerYear: settings.floorRateMmPerYear, basis: 'FLOOR', matchedMeasurementId: null };
  const years = (feature.observedAt.getTime() - match.observedAt.getTime()) / YEAR_MS;
  if (years <= 0) return { rateMmPerYear: settings.floorRateMmPerYear, basis: 'FLOOR', matchedMeasurementId: match.id };
  const measured = (feature.depthMm - match.depthMm) / years;
  return measured > settings.floorRateMmPerYear
    ? { rateMmPerYear: measured, basis: 'MATCHED', matchedMeasurementId: match.id }
    : { rateMmPerYear: settings.floorRateMmPerYear, basis: 'FLOOR', matchedMeasurementId: match.id };
}

export type RemainingLifeLimit = 'DEPTH_80_PCT_WALL' | 'SAFE_PRESSURE_AT_MAOP';

export interface RemainingLife {
  years: number;
  limit: RemainingLifeLimit;
}

/**
 * Years until the depth reaches 80 % of the wall, or the safe pressure (Pf × F) falls to MAOP, whichever
 * comes first, growing the depth at `rateMmPerYear` with the length held at its measured value. The
 * MAOP limit is solved on the Modified B31G curve by bisection (safe pressure falls as depth grows).
 * Zero when a limit is already reached.
 */
export function remainingLife(pipe: Omit<B31GInput, 'defectDepthMm'> & { maopKpa: number | null }, depthMm: number, rateMmPerYear: number): RemainingLife {
  const t = pipe.wallThicknessMm;
  const depthLimit = 0.8 * t;
  const toDepthLimit = Math.max(0, (depthLimit - depthMm) / rateMmPerYear);
  const safeAt = (d: number) => {
    const r = modifiedB31G({ ...pipe, defectDepthMm: d });
    return r.applicable ? r.safePressureKpa : 0;
  };
  if (pipe.maopKpa == null) return { years: toDepthLimit, limit: 'DEPTH_80_PCT_WALL' };
  const maop = pipe.maopKpa;
  if (safeAt(depthMm) <= maop) return { years: 0, limit: 'SAFE_PRESSURE_AT_MAOP' };
  if (safeAt(depthLimit) > maop) return { years: toDepthLimit, limit: 'DEPTH_80_PCT_WALL' };
  let lo = depthMm;
  let hi = depthLimit;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (safeAt(mid) > maop) lo = mid;
    else hi = mid;
  }
  return { years: Math.max(0, (lo - depthMm) / rateMmPerYear), limit: 'SAFE_PRESSURE_AT_MAOP' };
}
