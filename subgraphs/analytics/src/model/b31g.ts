/**
 * Modified B31G (the "0.85dL" method of Kiefner & Vieth, 1989; ASME B31G-2012 §2.2 level 1) for one
 * metal-loss feature:
 *   z = L²/(D·t);  M = √(1 + 0.6275z − 0.003375z²) for z ≤ 50, else 0.032z + 3.3
 *   Sf = Sflow · (1 − 0.85·d/t) / (1 − 0.85·(d/t)/M);  Pf = 2·Sf·t/D
 * Flow stress is a recorded choice: SMYS + 69 MPa (10 ksi, Kiefner & Vieth's Modified B31G — the
 * default; B31G-2012 allows it up to 70 ksi, i.e. up to grade X70), 1.1 × SMYS, or (SMYS + SMTS)/2.
 * Where the chosen method does not apply to the pipe (SMYS + 69 MPa above X70, the mean without a
 * recorded SMTS) 1.1 × SMYS is used instead and the result says so: it is below SMYS + 69 MPa for
 * every SMYS under 690 MPa, so the fallback never makes a feature look stronger. The flow stress is
 * capped at SMTS when SMTS is recorded (B31G-2012: flow stress is not to exceed SMTS).
 * Not applicable to metal loss deeper than 80 % of the wall: that is an immediate repair condition
 * under §192.933(d)(1), §192.714(d)(1) and §195.452(h)(4)(i), whatever its length.
 * Safe pressure = Pf × F, with F the design factor: §192.111 by class location for Part 192 pipe,
 * §195.106(a)'s 0.72 for Part 195 pipe; capped at the design pressure of the intact pipe, 2·S·t/D × F × E × T
 * (§192.105, §195.106) with S = SMYS and E = T = 1 (Linepack records neither a joint factor nor a
 * temperature derating; 1 is their value for seamless/ERW pipe at or below 250 °F / 121 °C) — a
 * shallow feature with a flow stress above SMYS would otherwise give a safe pressure above what the
 * undamaged pipe was designed for.
 */
export const B31G_MODEL = 'modified-b31g-0.85dL/2.0.0';

/** 10 ksi in MPa (1 ksi = 6.894757 MPa). */
export const TEN_KSI_MPA = 68.94757;
/**
 * The highest SMYS SMYS + 10 ksi is used for. B31G-2012 and Kiefner & Vieth set the limit at 70 ksi in US units,
 * i.e. grade X70 — 482.6 MPa converted, but API 5L states X70 (L485) as 485 MPa in SI. Taking 482.6 MPa would
 * refuse X70 pipe recorded in SI units, which the standards mean to include: the limit is X70 in either unit.
 */
export const SMYS_PLUS_69_LIMIT_MPA = 485;
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
  /** The calculator refuses MEAN_OF_SMYS_AND_SMTS without SMTS; a recorded segment falls back (resolveFlowStress). */
  refuseMissingSmts?: boolean;
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
  /** 2·SMYS·t/D × F × E × T with E = T = 1: the cap on the safe pressure. */
  designPressureKpa: number;
  /** Where the result departs from the plain method: a flow-stress fallback, a cap at SMTS or at the design pressure. */
  notes: string[];
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

/** The flow stress used for one pipe: the method that applied and why it differs from the one asked for, if it does. */
export interface ResolvedFlowStress {
  method: FlowStressMethod;
  flowStressMpa: number;
  notes: string[];
}

/**
 * The flow stress for this pipe under `method`, with the stated fallback where the method does not apply and the
 * cap at SMTS. With `refuseMissingSmts` (the calculator: the caller chose the mean and must give SMTS) a missing
 * SMTS is an input error; otherwise (a recorded segment) it falls back to 1.1 × SMYS.
 */
export function resolveFlowStress(
  method: FlowStressMethod,
  smysMpa: number,
  smtsMpa: number | null | undefined,
  refuseMissingSmts = false,
): ResolvedFlowStress {
  const notes: string[] = [];
  let used = method;
  if (method === 'SMYS_PLUS_69_MPA' && smysMpa > SMYS_PLUS_69_LIMIT_MPA) {
    used = 'SMYS_TIMES_1_1';
    notes.push(`SMYS + 69 MPa is used up to X70 (SMYS ${SMYS_PLUS_69_LIMIT_MPA} MPa); for SMYS ${smysMpa} MPa the conservative 1.1 × SMYS is used instead`);
  }
  if (method === 'MEAN_OF_SMYS_AND_SMTS' && smtsMpa == null) {
    if (refuseMissingSmts) throw new B31GInputError('smtsMpa', 'is required for the MEAN_OF_SMYS_AND_SMTS flow stress');
    used = 'SMYS_TIMES_1_1';
    notes.push('(SMYS + SMTS) / 2 needs the SMTS, which is not recorded for this pipe: the conservative 1.1 × SMYS is used instead');
  }
  let sflow = flowStressMpa(used, smysMpa, smtsMpa)!;
  if (smtsMpa != null && sflow > smtsMpa) {
    notes.push(`the flow stress ${sflow.toFixed(1)} MPa is capped at the SMTS ${smtsMpa} MPa`);
    sflow = smtsMpa;
  }
  return { method: used, flowStressMpa: sflow, notes };
}

/** The flow stress a method defines for this pipe; null where SMYS + 69 MPa is not defined (above X70). */
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
  const { outsideDiameterMm: D, wallThicknessMm: t, defectDepthMm: d, defectLengthMm: L } = input;
  const F = designFactor(input.regulation, input.classLocation);
  const flow = resolveFlowStress(input.flowStress ?? 'SMYS_PLUS_69_MPA', input.smysMpa, input.smtsMpa, input.refuseMissingSmts);
  const method = flow.method;
  const modelVersion = modelVersionOf(method);
  if (deeperThanB31GLimit(d / t)) {
    return {
      applicable: false,
      reason: 'DEPTH_ABOVE_80_PCT_WALL',
      message: `metal loss of ${((100 * d) / t).toFixed(1)} % of the wall is deeper than 80 %: Modified B31G does not apply, and the feature is an immediate repair condition`,
      modelVersion,
    };
  }
  const sflow = flow.flowStressMpa;
  const notes = [...flow.notes];
  const z = (L * L) / (D * t);
  const M = foliasFactor(z);
  const failureStressMpa = (sflow * (1 - (0.85 * d) / t)) / (1 - (0.85 * (d / t)) / M);
  const failurePressureKpa = ((2 * failureStressMpa * t) / D) * 1000;
  const designPressureKpa = designPressureOf(input);
  const cap = capAtDesignPressure(failurePressureKpa * F, designPressureKpa);
  const safePressureKpa = cap.safePressureKpa;
  if (cap.note) notes.push(cap.note);
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
    designPressureKpa,
    notes,
    modelVersion,
  };
}

/**
 * A corroded pipe is never safer than the intact pipe: the safe pressure (failure pressure × design factor) is capped at
 * the design pressure, and the cap is said in words when it applies.
 */
export function capAtDesignPressure(safePressureKpa: number, designPressureKpa: number): { safePressureKpa: number; note: string | null } {
  if (safePressureKpa <= designPressureKpa) return { safePressureKpa, note: null };
  return {
    safePressureKpa: designPressureKpa,
    note: `the safe pressure ${safePressureKpa.toFixed(0)} kPa is capped at the design pressure 2·SMYS·t/D × F = ${designPressureKpa.toFixed(0)} kPa (§192.105 / §195.106, E = T = 1)`,
  };
}

/**
 * The design pressure of the intact pipe, kPa: §192.105 P = (2St/D) × F × E × T, §195.106 P = (2St/D) × F × E, with
 * S = SMYS and E = T = 1 — Linepack records no longitudinal joint factor or temperature derating, and 1 is their
 * value for the seamless, ERW and SAW pipe of today's transmission lines below 250 °F.
 */
export function designPressureOf(pipe: Pick<B31GInput, 'outsideDiameterMm' | 'wallThicknessMm' | 'smysMpa' | 'regulation' | 'classLocation'>): number {
  return ((2 * pipe.smysMpa * pipe.wallThicknessMm) / pipe.outsideDiameterMm) * designFactor(pipe.regulation, pipe.classLocation) * 1000;
}
