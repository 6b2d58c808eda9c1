/**
 * The probability that an anomaly is already at its acceptance limit, as inspected (model/exceedance.ts), and the
 * acceptance limit it is measured against (model/growth.ts acceptanceLimit, shared with remaining life).
 *
 * Φ is checked against the standard normal table of Abramowitz & Stegun, Handbook of Mathematical Functions (1964),
 * Table 26.1 (P(x) to 15 places): Φ(0) = 0.5, Φ(1) = 0.841344746068543, Φ(1.96) = 0.975002104851780,
 * Φ(2) = 0.977249868051821, Φ(3) = 0.998650101968370 — within the 1.5 × 10⁻⁷ of the approximation used (A&S 7.1.26).
 */
import { modifiedB31G } from '../../src/model/b31g';
import { exceedanceProbability, normalCdf } from '../../src/model/exceedance';
import { acceptanceLimit, remainingLife } from '../../src/model/growth';
import { depthSizingSd, normalQuantile } from '../../src/model/matching';

describe('Φ, the standard normal distribution function', () => {
  it.each([
    [0, 0.5],
    [1, 0.841344746068543],
    [1.96, 0.97500210485178],
    [2, 0.977249868051821],
    [3, 0.99865010196837],
  ])('Φ(%s) = %s (A&S Table 26.1), and Φ(−x) = 1 − Φ(x)', (x, table) => {
    expect(Math.abs(normalCdf(x) - table)).toBeLessThan(1.5e-7);
    expect(Math.abs(normalCdf(-x) - (1 - table))).toBeLessThan(1.5e-7);
  });

  it('inverts the quantile function the matcher uses (Acklam) to the approximation’s accuracy', () => {
    for (const p of [0.01, 0.1, 0.5, 0.8, 0.9, 0.99]) expect(Math.abs(normalCdf(normalQuantile(p)) - p)).toBeLessThan(2e-7);
  });
});

describe('exceedance probability', () => {
  // ±10 % of wall at 80 % certainty: σ = 10 / Φ⁻¹(0.9) = 10 / 1.2815516 = 7.8030 % of wall.
  const sdPct = depthSizingSd(10, 0.8);

  it('is one half at the limit, and falls off with the distance to it in units of σ', () => {
    expect(sdPct).toBeCloseTo(7.803, 3);
    expect(exceedanceProbability(5, 5, 0.7)).toBeCloseTo(0.5, 6);
    // One σ short of the limit: 1 − Φ(1) = 0.158655; one σ beyond it: Φ(1).
    expect(exceedanceProbability(5 - 0.7, 5, 0.7)).toBeCloseTo(1 - 0.841344746, 6);
    expect(exceedanceProbability(5 + 0.7, 5, 0.7)).toBeCloseTo(0.841344746, 6);
  });

  it('is 0 or 1 for a measured depth (no sizing error)', () => {
    expect(exceedanceProbability(4.99, 5, 0)).toBe(0);
    expect(exceedanceProbability(5, 5, 0)).toBe(1);
  });

  it('a call immediate by its tolerance (71 % + 10 % > 80 %) is far from certain to be beyond 80 %: 12 %', () => {
    // 80 − 71 = 9 % of wall = 1.153 σ: 1 − Φ(1.153) = 0.1244.
    expect(exceedanceProbability(71, 80, sdPct)).toBeCloseTo(0.1244, 3);
  });
});

describe('the acceptance limit (the remaining-life limit)', () => {
  const pipe = { outsideDiameterMm: 508, wallThicknessMm: 10, smysMpa: 359, defectLengthMm: 200, regulation: 'CFR_192' as const, classLocation: 1 };

  it('is the depth at which the safe pressure falls to MAOP, and remaining life grows to it', () => {
    const limit = acceptanceLimit({ ...pipe, maopKpa: 6000 });
    expect(limit.limit).toBe('SAFE_PRESSURE_AT_MAOP');
    const safe = modifiedB31G({ ...pipe, maopKpa: 6000, defectDepthMm: limit.depthMm });
    expect(safe.applicable && safe.safePressureKpa).toBeCloseTo(6000, 3);
    expect(remainingLife({ ...pipe, maopKpa: 6000 }, 2, 0.25).years).toBeCloseTo((limit.depthMm - 2) / 0.25, 9);
  });

  it('is 80 % of the wall without MAOP or when the safe pressure stays above MAOP that deep, and 0 when even intact pipe is below MAOP', () => {
    expect(acceptanceLimit({ ...pipe, maopKpa: null })).toEqual({ depthMm: 8, limit: 'DEPTH_80_PCT_WALL' });
    expect(acceptanceLimit({ ...pipe, defectLengthMm: 10, maopKpa: 3000 })).toEqual({ depthMm: 8, limit: 'DEPTH_80_PCT_WALL' });
    // Class 1 design pressure 2 × 359 × 10 / 508 × 0.72 = 10,176 kPa: an MAOP above it leaves no depth acceptable.
    expect(acceptanceLimit({ ...pipe, maopKpa: 10_500 })).toEqual({ depthMm: 0, limit: 'SAFE_PRESSURE_AT_MAOP' });
  });
});
