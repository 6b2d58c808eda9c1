/**
 * Modified B31G (the "0.85dL" method of Kiefner & Vieth, 1989; ASME B31G-2012 §2.2 level 1) for one
 * metal-loss feature:
 *   z = L²/(D·t);  M = √(1 + 0.6275z − 0.003375z²) for z ≤ 50, else 0.032z + 3.3
 *   Sf = Sflow · (1 − 0.85·d/t) / (1 − 0.85·(d/t)/M);  Pf = 2·Sf·t/D
 * Flow stress is a recorded choice: SMYS + 69 MPa (10 ksi, Kiefner & Vieth's Modified B31G — the
 * default; B31G-2012 allows it for SMYS ≤ 483 MPa / 70 ksi), 1.1 × SMYS, or (SMYS + SMTS)/2.
 * Not applicable to metal loss deeper than 80 % of the wall: that is an immediate repair condition
 * under §192.933(d)(1), §192.714(d)(1) and §195.452(h)(4)(i), whatever its length.
 * Safe pressure = Pf × F, with F the design factor: §192.111 by class location for Part 192 pipe,
 * §195.106(a)'s 0.72 for Part 195 pipe.
 */
export const B31G_MODEL = 'modified-b31g-0.85dL/2.0.0';

/** 10 ksi in MPa (1 ksi = 6.894757 MPa). */
export const TEN_KSI_MPA = 68.94757;
/** 70 ksi: the SMYS above which B31G-2012 does not allow SMYS + 10 ksi. */
export const SMYS_PLUS_69_LIMIT_MPA = 482.633;
/** Deeper metal loss is outside the method and an immediate repair condition. */
export const MAX_DEPTH_RATIO = 0.8;
/**
 * Depth ratios reach this module as % of wall × wall ÷ wall, so exactly 80 % can arrive as
 * 0.8000000000000002; a millionth of the wall is far below any tool's resolution.
 */
const DEPTH_RATIO_ROUNDING = 1e-6;

/**
 * The one test of "deeper than 80 % of the wall", shared by the B31G applicability check and the
 * response categories so that a feature at exactly 80 % is never inside one and outside the other.
 */
export function deeperThanB31GLimit(depthRatio: number): boolean {
  return depthRatio > MAX_DEPTH_RATIO + DEPTH_RATIO_ROUNDING;
}

export type FlowStressMethod = 'SMYS_PLUS_69_MPA' | 'SMYS_TIMES_1_1' | 'MEAN_OF_SMYS_AND_SMTS';
export type Regulation = 'CFR_192' | 'CFR_195';

/** §192.111(a) design factor by class location. */
export const GAS_DESIGN_FACTOR: Readonly<Record<1 | 2 | 3 | 4, number>> = { 1: 0.72, 2: 0.6, 3: 0.5, 4: 0.4 };
/** §195.106(a): F = 0.72 for Part 195 pipe (0.60 applies only to offshore platform / cold-expanded cases Linepack does not record). */
export const LIQUID_DESIGN_FACTOR = 0.72;

export interface B31GInput {
  outsideDiameterMm: number;
  wallThicknessMm: number;
  smysMpa: number;
  smtsMpa?: number | null;
  defectDepthMm: number;
  defectLengthMm: number;
  regulation: Regulation;
  /** Required for Part 192 pipe. */
  classLocation?: number | null;
  maopKpa?: number | null;
  flowStress?: FlowStressMethod;
}

export interface B31GFigures {
  applicable: true;
  z: number;
  foliasFactor: number;
  flowStressMethod: FlowStressMethod;
  flowStressMpa: number;
  failureStressMpa: number;
  failurePressureKpa: number;
  designFactor: number;
  safePressureKpa: number;
  /** MAOP / safe pressure; null without MAOP. */
  erf: number | null;
  /** Failure pressure / MAOP; null without MAOP. */
  failurePressureRatio: number | null;
  modelVersion: string;
}

export type NotApplicableReason = 'DEPTH_ABOVE_80_PCT_WALL' | 'FLOW_STRESS_NOT_DEFINED';

export interface B31GNotApplicable {
  applicable: false;
  reason: NotApplicableReason;
  message: string;
  modelVersion: string;
}

export type B31GResult = B31GFigures | B31GNotApplicable;

export class B31GInputError extends Error {
  constructor(
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

export function foliasFactor(z: number): number {
  return z <= 50 ? Math.sqrt(1 + 0.6275 * z - 0.003375 * z * z) : 0.032 * z + 3.3;
}

export function flowStressMpa(method: FlowStressMethod, smysMpa: number, smtsMpa: number | null | undefined): number | null {
  switch (method) {
    case 'SMYS_PLUS_69_MPA':
      return smysMpa <= SMYS_PLUS_69_LIMIT_MPA ? smysMpa + TEN_KSI_MPA : null;
    case 'SMYS_TIMES_1_1':
      return 1.1 * smysMpa;
    case 'MEAN_OF_SMYS_AND_SMTS':
      if (smtsMpa == null) throw new B31GInputError('smtsMpa', 'is required for the MEAN_OF_SMYS_AND_SMTS flow stress');
      return (smysMpa + smtsMpa) / 2;
  }
}

export function designFactor(regulation: Regulation, classLocation: number | null | undefined): number {
  if (regulation === 'CFR_195') return LIQUID_DESIGN_FACTOR;
  if (classLocation == null) throw new B31GInputError('classLocation', 'is required for Part 192 pipe (it selects the §192.111 design factor)');
  const f = GAS_DESIGN_FACTOR[classLocation as 1 | 2 | 3 | 4];
  if (f === undefined) throw new B31GInputError('classLocation', 'must be 1, 2, 3 or 4');
  return f;
}

export const modelVersionOf = (method: FlowStressMethod) => `${B31G_MODEL}+${method}`;

export function modifiedB31G(input: B31GInput): B31GResult {
  const method = input.flowStress ?? 'SMYS_PLUS_69_MPA';
  const modelVersion = modelVersionOf(method);
  const { outsideDiameterMm: D, wallThicknessMm: t, defectDepthMm: d, defectLengthMm: L } = input;
  const F = designFactor(input.regulation, input.classLocation);
  if (deeperThanB31GLimit(d / t)) {
    return {
      applicable: false,
      reason: 'DEPTH_ABOVE_80_PCT_WALL',
      message: `metal loss of ${((100 * d) / t).toFixed(1)} % of the wall is deeper than 80 %: Modified B31G does not apply, and the feature is an immediate repair condition`,
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
  const z = (L * L) / (D * t);
  const M = foliasFactor(z);
  const failureStressMpa = (sflow * (1 - (0.85 * d) / t)) / (1 - (0.85 * (d / t)) / M);
  const failurePressureKpa = ((2 * failureStressMpa * t) / D) * 1000;
  const safePressureKpa = failurePressureKpa * F;
  const maop = input.maopKpa ?? null;
  return {
    applicable: true,
    z,
    foliasFactor: M,
    flowStressMethod: method,
    flowStressMpa: sflow,
    failureStressMpa,
    failurePressureKpa,
    designFactor: F,
    safePressureKpa,
    erf: maop != null ? maop / safePressureKpa : null,
    failurePressureRatio: maop != null ? failurePressureKpa / maop : null,
    modelVersion,
  };
}
