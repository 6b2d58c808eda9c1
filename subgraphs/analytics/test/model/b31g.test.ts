/**
 * Modified B31G against published values.
 *
 * Source: the verification examples of ASME B31G-1991 Appendix A (program CRVL.BAS: examples 1–5 and 8,
 * and test cases #1, #1A, #1B and #2), evaluated with Modified B31G (0.85dL, flow stress 1.1 × SMYS) by
 * the maintained R package pipenostics (github.com/omega1x/pipenostics, tests/testthat/testpf.R,
 * "b31gmodpf errs in failure pressure": failure pressures in psi, to 1e-4). Inputs are the examples' US
 * units, converted exactly (1 in = 25.4 mm, 1 psi = 6.894757 kPa); results must agree within 0.1 %.
 */
import { B31GInputError, modifiedB31G, TEN_KSI_MPA, type B31GFigures } from '../../src/model/b31g';

const fieldOfError = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    return err instanceof B31GInputError ? err.field : String(err);
  }
  return null;
};

const IN = 25.4;
const PSI_KPA = 6.894757;

// [outside diameter in, wall in, SMYS psi, depth in, length in, published failure pressure psi]
const crvlExamples: [string, number, number, number, number, number, number][] = [
  ['Example 1', 30, 0.438, 52_000, 0.1, 7.5, 1498.8988],
  ['Example 2', 20, 0.25, 35_000, 0.18, 10, 452.7847],
  ['Example 3', 24, 0.432, 52_000, 0.13, 30, 1599.8124],
  ['Example 4', 24, 0.432, 52_000, 0.3, 30, 934.4549],
  ['Example 5', 24, 0.281, 52_000, 0.08, 15, 1076.3933],
  ['Example 8', 24, 0.5, 42_000, 0.125, 12, 1638.7173],
  ['Test #1', 24, 0.5, 42_000, 0.179, 12, 1500.1792],
  ['Test #1A', 24, 0.5, 42_000, 0.179, 12.182, 1497.9821],
  ['Test #1B', 24, 0.5, 42_000, 0.18, 12.182, 1495.312],
  ['Test #2', 24, 0.5, 42_000, 0.179, 12.297, 1496.6265],
];

const assess = (d: number, t: number, smysPsi: number, depth: number, length: number, flowStress: 'SMYS_TIMES_1_1' | 'SMYS_PLUS_69_MPA') =>
  modifiedB31G({
    outsideDiameterMm: d * IN,
    wallThicknessMm: t * IN,
    smysMpa: (smysPsi * PSI_KPA) / 1000,
    defectDepthMm: depth * IN,
    defectLengthMm: length * IN,
    regulation: 'CFR_192',
    classLocation: 1,
    flowStress,
  }) as B31GFigures;

describe('ASME B31G-1991 Appendix A examples, Modified B31G with 1.1 × SMYS (pipenostics values)', () => {
  it.each(crvlExamples)('%s: D %s in, t %s in, SMYS %s psi, d %s in, L %s in → Pf %s psi', (_name, d, t, smys, depth, length, expectedPsi) => {
    const result = assess(d, t, smys, depth, length, 'SMYS_TIMES_1_1');
    expect(result.applicable).toBe(true);
    const psi = result.failurePressureKpa / PSI_KPA;
    expect(Math.abs(psi / expectedPsi - 1)).toBeLessThan(0.001);
  });
});

describe('flow stress choices', () => {
  it('SMYS + 10 ksi (Kiefner & Vieth) scales the same failure pressure by (SMYS + 10 ksi) / (1.1 × SMYS)', () => {
    // Pf is linear in the flow stress, so example 1's published 1.1 × SMYS value carries over exactly.
    const [, d, t, smys, depth, length, published] = crvlExamples[0]!;
    const result = assess(d, t, smys, depth, length, 'SMYS_PLUS_69_MPA');
    expect(result.flowStressMpa).toBeCloseTo((smys * PSI_KPA) / 1000 + TEN_KSI_MPA, 9);
    expect(result.failurePressureKpa / PSI_KPA).toBeCloseTo((published * (smys + 10_000)) / (1.1 * smys), 0);
  });

  it('(SMYS + SMTS) / 2 needs SMTS in the calculator; above X70 SMYS + 69 MPa falls back to 1.1 × SMYS and says so', () => {
    const pipe = {
      outsideDiameterMm: 914,
      wallThicknessMm: 15.9,
      smysMpa: 552,
      defectDepthMm: 4,
      defectLengthMm: 150,
      regulation: 'CFR_192' as const,
      classLocation: 1,
    };
    const x80 = modifiedB31G(pipe) as B31GFigures;
    expect(x80).toMatchObject({ applicable: true, flowStressMethod: 'SMYS_TIMES_1_1', modelVersion: 'modified-b31g-0.85dL/2.0.0+SMYS_TIMES_1_1' });
    expect(x80.flowStressMpa).toBeCloseTo(1.1 * 552, 9);
    expect(x80.notes[0]).toContain('1.1 × SMYS is used instead');
    expect(fieldOfError(() => modifiedB31G({ ...pipe, flowStress: 'MEAN_OF_SMYS_AND_SMTS', refuseMissingSmts: true }))).toBe('smtsMpa');
    const mean = modifiedB31G({ ...pipe, smtsMpa: 625, flowStress: 'MEAN_OF_SMYS_AND_SMTS' }) as B31GFigures;
    expect(mean.flowStressMpa).toBe(588.5);
    expect(mean.modelVersion).toBe('modified-b31g-0.85dL/2.0.0+MEAN_OF_SMYS_AND_SMTS');
  });
});

describe('design factor, ERF and failure-pressure ratio', () => {
  const base = { outsideDiameterMm: 610, wallThicknessMm: 9.5, smysMpa: 359, defectDepthMm: 3.8, defectLengthMm: 200, maopKpa: 6900 };

  it('uses §192.111 by class location for Part 192 pipe and requires the class', () => {
    const f = [1, 2, 3, 4].map((classLocation) => (modifiedB31G({ ...base, regulation: 'CFR_192', classLocation }) as B31GFigures).designFactor);
    expect(f).toEqual([0.72, 0.6, 0.5, 0.4]);
    expect(fieldOfError(() => modifiedB31G({ ...base, regulation: 'CFR_192' }))).toBe('classLocation');
  });

  it('uses §195.106(a)’s 0.72 for Part 195 pipe whatever the class', () => {
    expect((modifiedB31G({ ...base, regulation: 'CFR_195', classLocation: 4 }) as B31GFigures).designFactor).toBe(0.72);
  });

  it('reports ERF = MAOP / (Pf × F) and FPR = Pf / MAOP', () => {
    const r = modifiedB31G({ ...base, regulation: 'CFR_192', classLocation: 3 }) as B31GFigures;
    expect(r.safePressureKpa).toBeCloseTo(r.failurePressureKpa * 0.5, 9);
    expect(r.erf).toBeCloseTo(6900 / r.safePressureKpa, 12);
    expect(r.failurePressureRatio).toBeCloseTo(r.failurePressureKpa / 6900, 12);
  });

  it('uses the long-flaw Folias factor above z = 50', () => {
    const long = modifiedB31G({ ...base, defectLengthMm: 700, regulation: 'CFR_192', classLocation: 1 }) as B31GFigures;
    expect(long.z).toBeGreaterThan(50);
    expect(long.foliasFactor).toBeCloseTo(0.032 * long.z + 3.3, 12);
  });
});
