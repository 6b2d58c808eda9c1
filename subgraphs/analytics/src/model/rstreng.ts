/**
 * The effective-area method (RSTRENG; Kiefner & Vieth, PRCI PR-3-805, 1989; ASME B31G-2012 level 2) for
 * one metal-loss feature measured as a river-bottom profile: depths at axial positions along the
 * deepest path through the corrosion. Every sub-length L' between two profile points is a candidate
 * flaw, with
 *   A'  = its metal-loss area (trapezoidal rule over the profile points it spans),  A0 = L'·t,
 *   z   = L'²/(D·t),  M = the Modified B31G Folias factor,
 *   Sf  = Sflow · (1 − A'/A0) / (1 − A'/(A0·M)),
 * and the feature fails at the least Sf of them all; Pf = 2·Sf·t/D. B31G-2012 counts these candidates
 * as n!/2(n − 2)! for n points, i.e. every pair, which is what is evaluated here (prefix sums make each
 * area O(1), so n points cost O(n²)). Flow stress, the 80 %-of-wall limit, the design factor and the cap of the safe
 * pressure at the design pressure are Modified B31G's (b31g.ts), so a level-1 and a level-2 result for one feature
 * differ only in the area.
 *
 * Without a profile (an ILI cluster is a box: length, width, deepest point), the box is assessed with
 * Modified B31G at its deepest point over its full axial length — clusterBoxAssessment.
 */
import {
  capAtDesignPressure,
  deeperThanB31GLimit,
  designFactor,
  designPressureOf,
  flowStressMpa,
  foliasFactor,
  modifiedB31G,
  type B31GInput,
  B31GInputError,
  type B31GNotApplicable,
  type B31GResult,
  type FlowStressMethod,
  type Regulation,
} from './b31g';
import type { MetalLossCluster } from './interaction';

export const RSTRENG_MODEL = 'rstreng-effective-area/1.0.0';

export const rstrengModelVersionOf = (method: FlowStressMethod) => `${RSTRENG_MODEL}+${method}`;

export interface ProfilePoint {
  /** Position along the pipe, mm; the points must be in strictly increasing order. */
  axialMm: number;
  depthMm: number;
}

export interface RstrengInput {
  outsideDiameterMm: number;
  wallThicknessMm: number;
  smysMpa: number;
  smtsMpa?: number | null;
  /** The river-bottom profile; B31G-2012 takes its end points at (nominally) full wall. */
  profile: readonly ProfilePoint[];
  regulation: Regulation;
  /** Required for Part 192 pipe. */
  classLocation?: number | null;
  maopKpa?: number | null;
  flowStress?: FlowStressMethod;
}

/** The sub-length that governs. */
export interface CriticalSubsection {
  startMm: number;
  endMm: number;
  lengthMm: number;
  areaMm2: number;
  z: number;
  foliasFactor: number;
}

export interface RstrengFigures {
  applicable: true;
  flowStressMethod: FlowStressMethod;
  flowStressMpa: number;
  failureStressMpa: number;
  failurePressureKpa: number;
  designFactor: number;
  /** Failure pressure × design factor, capped at the design pressure (b31g.ts capAtDesignPressure). */
  safePressureKpa: number;
  /** MAOP / safe pressure; null without MAOP. */
  erf: number | null;
  /** Failure pressure / MAOP; null without MAOP. */
  failurePressureRatio: number | null;
  critical: CriticalSubsection;
  /** How many sub-lengths were evaluated: n(n − 1)/2. */
  subsectionsEvaluated: number;
  /** The cap at the design pressure, in words, when it applies. */
  notes: string[];
  modelVersion: string;
}

export type RstrengResult = RstrengFigures | B31GNotApplicable;

function validateProfile(profile: readonly ProfilePoint[], wallThicknessMm: number): void {
  if (profile.length < 2) throw new B31GInputError('profile', 'needs at least two points');
  profile.forEach((p, i) => {
    if (!Number.isFinite(p.axialMm) || !Number.isFinite(p.depthMm)) throw new B31GInputError('profile', `point ${i} must have finite numbers`);
    if (p.depthMm < 0 || p.depthMm > wallThicknessMm) throw new B31GInputError('profile', `point ${i} has a depth outside 0 … wall thickness`);
    if (i > 0 && !(p.axialMm > profile[i - 1]!.axialMm)) throw new B31GInputError('profile', `point ${i} is not beyond point ${i - 1}`);
  });
}

export function effectiveArea(input: RstrengInput): RstrengResult {
  const method = input.flowStress ?? 'SMYS_PLUS_69_MPA';
  const modelVersion = rstrengModelVersionOf(method);
  const { outsideDiameterMm: D, wallThicknessMm: t, profile } = input;
  if (!(D > 0)) throw new B31GInputError('outsideDiameterMm', 'must be > 0');
  if (!(t > 0)) throw new B31GInputError('wallThicknessMm', 'must be > 0');
  validateProfile(profile, t);
  const F = designFactor(input.regulation, input.classLocation);
  const deepest = Math.max(...profile.map((p) => p.depthMm));
  if (deeperThanB31GLimit(deepest / t)) {
    return {
      applicable: false,
      reason: 'DEPTH_ABOVE_80_PCT_WALL',
      message: `metal loss of ${((100 * deepest) / t).toFixed(1)} % of the wall is deeper than 80 %: the effective-area method does not apply, and the feature is an immediate repair condition`,
      modelVersion,
    };
  }
  const sflow = flowStressMpa(method, input.smysMpa, input.smtsMpa);
  if (sflow === null) {
    return {
      applicable: false,
      reason: 'FLOW_STRESS_NOT_DEFINED',
      message: `SMYS + 69 MPa is defined for SMYS up to 483 MPa (70 ksi); use SMYS_TIMES_1_1 or MEAN_OF_SMYS_AND_SMTS for ${input.smysMpa} MPa`,
      modelVersion,
    };
  }
  // areaUpTo[i] is the trapezoidal area from the first point to point i, so any sub-length's area is a difference.
  const areaUpTo = new Float64Array(profile.length);
  for (let i = 1; i < profile.length; i++) {
    const a = profile[i - 1]!;
    const b = profile[i]!;
    areaUpTo[i] = areaUpTo[i - 1]! + ((a.depthMm + b.depthMm) / 2) * (b.axialMm - a.axialMm);
  }
  let failureStressMpa = Infinity;
  let critical: CriticalSubsection | null = null;
  for (let i = 0; i < profile.length - 1; i++) {
    for (let j = i + 1; j < profile.length; j++) {
      const length = profile[j]!.axialMm - profile[i]!.axialMm;
      const area = areaUpTo[j]! - areaUpTo[i]!;
      const z = (length * length) / (D * t);
      const M = foliasFactor(z);
      const areaRatio = area / (length * t);
      const stress = (sflow * (1 - areaRatio)) / (1 - areaRatio / M);
      if (stress < failureStressMpa) {
        failureStressMpa = stress;
        critical = { startMm: profile[i]!.axialMm, endMm: profile[j]!.axialMm, lengthMm: length, areaMm2: area, z, foliasFactor: M };
      }
    }
  }
  const failurePressureKpa = ((2 * failureStressMpa * t) / D) * 1000;
  const cap = capAtDesignPressure(failurePressureKpa * F, designPressureOf(input));
  const safePressureKpa = cap.safePressureKpa;
  const maop = input.maopKpa ?? null;
  return {
    applicable: true,
    flowStressMethod: method,
    flowStressMpa: sflow,
    failureStressMpa,
    failurePressureKpa,
    designFactor: F,
    safePressureKpa,
    erf: maop != null ? maop / safePressureKpa : null,
    failurePressureRatio: maop != null ? failurePressureKpa / maop : null,
    critical: critical!,
    subsectionsEvaluated: (profile.length * (profile.length - 1)) / 2,
    notes: cap.note ? [cap.note] : [],
    modelVersion,
  };
}

export type ClusterPipeInput = Omit<B31GInput, 'defectDepthMm' | 'defectLengthMm'>;

/**
 * A cluster without a profile, assessed as one Modified B31G feature: its deepest member's depth over
 * its whole axial length, Modified B31G's 0.85·d·L standing in for the area of the profile nobody measured.
 */
export function clusterBoxAssessment(cluster: MetalLossCluster, pipe: ClusterPipeInput): B31GResult {
  return modifiedB31G({ ...pipe, defectDepthMm: cluster.maxDepthMm, defectLengthMm: cluster.axialLengthMm });
}
