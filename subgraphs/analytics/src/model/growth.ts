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

/** The depth at which an anomaly reaches its limit, and which limit that is. */
export interface AcceptanceLimit {
  depthMm: number;
  limit: RemainingLifeLimit;
}

/**
 * The depth, length held, at which the safe pressure (Pf × F, capped at the design pressure) falls to MAOP, or 80 % of
 * the wall if that comes first (or without MAOP). Solved on the Modified B31G curve by bisection (the safe pressure falls
 * as the depth grows); 0 when even the intact pipe's capped safe pressure is at or below MAOP.
 */
export function acceptanceLimit(pipe: Omit<B31GInput, 'defectDepthMm'> & { maopKpa: number | null }): AcceptanceLimit {
  const depthLimit = 0.8 * pipe.wallThicknessMm;
  if (pipe.maopKpa == null) return { depthMm: depthLimit, limit: 'DEPTH_80_PCT_WALL' };
  const maop = pipe.maopKpa;
  const safeAt = (d: number) => {
    const r = modifiedB31G({ ...pipe, defectDepthMm: d });
    return r.applicable ? r.safePressureKpa : 0;
  };
  if (safeAt(depthLimit) > maop) return { depthMm: depthLimit, limit: 'DEPTH_80_PCT_WALL' };
  if (safeAt(0) <= maop) return { depthMm: 0, limit: 'SAFE_PRESSURE_AT_MAOP' };
  let lo = 0;
  let hi = depthLimit;
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (safeAt(mid) > maop) lo = mid;
    else hi = mid;
  }
  return { depthMm: lo, limit: 'SAFE_PRESSURE_AT_MAOP' };
}

/**
 * Years until the depth reaches its acceptance limit (acceptanceLimit: the safe pressure falls to MAOP, or 80 % of the
 * wall, whichever comes first), growing the depth at `rateMmPerYear` with the length held at its measured value. Zero
 * when the limit is already reached.
 */
export function remainingLife(
  pipe: Omit<B31GInput, 'defectDepthMm'> & { maopKpa: number | null },
  depthMm: number,
  rateMmPerYear: number,
  limit: AcceptanceLimit = acceptanceLimit(pipe),
): RemainingLife {
  return { years: Math.max(0, (limit.depthMm - depthMm) / rateMmPerYear), limit: limit.limit };
}
