/**
 * The B31G conventions around the published method (b31g.test.ts keeps the published values):
 *   - SMYS + 10 ksi up to X70: Kiefner & Vieth's Modified B31G and ASME B31G-2012 limit it at 70 ksi, which is
 *     482.6 MPa converted and 485 MPa as API 5L states X70 (L485) in SI — both are X70;
 *   - above it, or for the mean of SMYS and SMTS without SMTS, the conservative 1.1 × SMYS, stated in the notes;
 *   - flow stress not above SMTS (B31G-2012). The standard's text is not readable here; the cap is what
 *     github.com/vb64/pipeline.integrity's B31G-2012 method does (pipeline_integrity/method/asme/b31g_2012.py,
 *     s_flow: "Sflow > material SMTS … Use material SMTS as Sflow", commit f0fddb2), which cites the
 *     edu.truboprovod.ru help page of B31G-2012 — a corroboration, not the source text;
 *   - safe pressure not above the design pressure, §192.105(a): "P = (2 St/D) × F × E × T", with E = T = 1.
 */
import { designPressureOf, modifiedB31G, resolveFlowStress, SMYS_PLUS_69_LIMIT_MPA, TEN_KSI_MPA, type B31GFigures } from '../../src/model/b31g';
import { responseCategory } from '../../src/model/response-category';

describe('SMYS + 69 MPa up to X70', () => {
  // 30 in × 0.500 in pipe, a 300 mm long anomaly reported at 60 % of wall, +10 % tool tolerance = 70 %.
  const pipe = {
    outsideDiameterMm: 762,
    wallThicknessMm: 12.7,
    defectDepthMm: 0.7 * 12.7,
    defectLengthMm: 300,
    regulation: 'CFR_192' as const,
    classLocation: 1,
  };

  it('is used for X70 in US units (482.6 MPa) and in API 5L SI (485 MPa) alike', () => {
    expect(SMYS_PLUS_69_LIMIT_MPA).toBe(485);
    const us = modifiedB31G({ ...pipe, smysMpa: 482.6 }) as B31GFigures;
    const si = modifiedB31G({ ...pipe, smysMpa: 485 }) as B31GFigures;
    expect(si).toMatchObject({ applicable: true, flowStressMethod: 'SMYS_PLUS_69_MPA', notes: [] });
    expect(si.flowStressMpa).toBeCloseTo(485 + TEN_KSI_MPA, 9);
    // The IMMEDIATE anomaly on 482.6 MPa pipe stays IMMEDIATE on 485 MPa pipe (it was "not assessable").
    const maop = us.failurePressureKpa / 1.09;
    for (const figures of [us, si]) {
      expect(
        responseCategory({
          regulation: 'CFR_192',
          inHca: true,
          classLocation: 1,
          depthPctWt: 70,
          failurePressureKpa: figures.failurePressureKpa,
          safePressureKpa: figures.safePressureKpa,
          maopKpa: maop,
        }).category,
      ).toBe('IMMEDIATE');
    }
  });

  it('above X70 falls back to 1.1 × SMYS (lower than SMYS + 69 MPa below 690 MPa) and says so', () => {
    const x80 = resolveFlowStress('SMYS_PLUS_69_MPA', 555, null);
    expect(x80.method).toBe('SMYS_TIMES_1_1');
    expect(x80.flowStressMpa).toBeCloseTo(610.5, 9);
    expect(x80.flowStressMpa).toBeLessThan(555 + TEN_KSI_MPA);
    expect(x80.notes).toEqual(['SMYS + 69 MPa is used up to X70 (SMYS 485 MPa); for SMYS 555 MPa the conservative 1.1 × SMYS is used instead']);
  });
});

it('the mean of SMYS and SMTS on a segment without SMTS is 1.1 × SMYS, stated; the calculator refuses it', () => {
  const fallback = resolveFlowStress('MEAN_OF_SMYS_AND_SMTS', 359, null);
  expect(fallback).toMatchObject({ method: 'SMYS_TIMES_1_1' });
  expect(fallback.flowStressMpa).toBeCloseTo(394.9, 9);
  expect(fallback.notes[0]).toContain('needs the SMTS, which is not recorded');
  expect(() => resolveFlowStress('MEAN_OF_SMYS_AND_SMTS', 359, null, true)).toThrow('is required for the MEAN_OF_SMYS_AND_SMTS flow stress');
});

it('caps the flow stress at SMTS and says so', () => {
  // X52 (359 MPa) + 68.95 = 427.95 MPa, above a 420 MPa SMTS.
  const capped = resolveFlowStress('SMYS_PLUS_69_MPA', 359, 420);
  expect(capped.flowStressMpa).toBe(420);
  expect(capped.notes).toEqual(['the flow stress 427.9 MPa is capped at the SMTS 420 MPa']);
});

it('caps the safe pressure at the §192.105 design pressure 2·S·t/D × F × E × T (E = T = 1) and says so', () => {
  // 610 × 9.5 mm X52, class 1: P = 2 × 359 × 9.5 / 610 × 0.72 = 8.0510 MPa = 8051.0 kPa.
  const pipe = { outsideDiameterMm: 610, wallThicknessMm: 9.5, smysMpa: 359, regulation: 'CFR_192' as const, classLocation: 1 };
  expect(designPressureOf(pipe)).toBeCloseTo(8051.0, 0);
  const shallow = modifiedB31G({ ...pipe, defectDepthMm: 0.5, defectLengthMm: 20 }) as B31GFigures;
  expect(shallow.failurePressureKpa * 0.72).toBeGreaterThan(8051);
  expect(shallow.safePressureKpa).toBeCloseTo(designPressureOf(pipe), 9);
  expect(shallow.notes[0]).toMatch(/capped at the design pressure 2·SMYS·t\/D × F = 8051 kPa/);
});
