/**
 * Modified B31G (0.85dL) remaining strength of corroded pipe, with the 1.1·SMYS flow stress Linepack agreed on.
 * Pure functions: no I/O, so the numbers can be checked against worked examples.
 */
export const MODIFIED_B31G_MODEL_VERSION = 'modified-b31g-0.85dL/1.0.0';

/** Design factor F by class location (49 CFR 192.111). */
export const designFactorByClassLocation: Readonly<Record<1 | 2 | 3 | 4, number>> = { 1: 0.72, 2: 0.6, 3: 0.5, 4: 0.4 };

export interface ModifiedB31GInput {
  outsideDiameterMm: number;
  wallThicknessMm: number;
  smysMpa: number;
  defectDepthMm: number;
  defectLengthMm: number;
  classLocation: 1 | 2 | 3 | 4;
  maopKpa: number | null;
}

export interface ModifiedB31GResult {
  z: number;
  foliasFactor: number;
  flowStressMpa: number;
  failureStressMpa: number;
  failurePressureKpa: number;
  designFactor: number;
  safePressureKpa: number;
  erf: number | null;
  modelVersion: string;
}

export function foliasFactor(z: number): number {
  return z <= 50 ? Math.sqrt(1 + 0.6275 * z - 0.003375 * z * z) : 0.032 * z + 3.3;
}

export function modifiedB31G(input: ModifiedB31GInput): ModifiedB31GResult {
  const { outsideDiameterMm: D, wallThicknessMm: t, smysMpa, defectDepthMm: d, defectLengthMm: L } = input;
  const z = (L * L) / (D * t);
  const M = foliasFactor(z);
  const flowStressMpa = 1.1 * smysMpa;
  const depthRatio = d / t;
  const failureStressMpa = (flowStressMpa * (1 - 0.85 * depthRatio)) / (1 - (0.85 * depthRatio) / M);
  const failurePressureKpa = ((2 * failureStressMpa * t) / D) * 1000;
  const designFactor = designFactorByClassLocation[input.classLocation];
  const safePressureKpa = failurePressureKpa * designFactor;
  return {
    z,
    foliasFactor: M,
    flowStressMpa,
    failureStressMpa,
    failurePressureKpa,
    designFactor,
    safePressureKpa,
    erf: input.maopKpa != null ? input.maopKpa / safePressureKpa : null,
    modelVersion: MODIFIED_B31G_MODEL_VERSION,
  };
}
