/**
 * Response-category boundaries (the repair criteria's own thresholds, cited per case) and the risk
 * model recomputed by hand.
 */
import { modifiedB31G } from '../../src/model/b31g';
import { remainingLife } from '../../src/model/growth';
import { repairDueAt, responseCategory } from '../../src/model/response-category';
import { potentialImpactRadiusFt, segmentRisk } from '../../src/model/risk';
import { depthWithTolerance } from '../../src/model/tool-tolerance';

const gas = { regulation: 'CFR_192' as const, inHca: true, classLocation: 1 };

describe('§192.933(d)(1)(iii) / §195.452(h)(4)(i)(A): metal loss deeper than 80 % of wall is immediate', () => {
  it('80 % is assessed by its failure pressure; 80.01 % is immediate whatever its length', () => {
    const pipe = {
      outsideDiameterMm: 508,
      wallThicknessMm: 10,
      smysMpa: 359,
      defectLengthMm: 10,
      regulation: 'CFR_192' as const,
      classLocation: 1,
      maopKpa: 5000,
    };
    const at80 = modifiedB31G({ ...pipe, defectDepthMm: 8 });
    expect(at80.applicable).toBe(true);
    const above = modifiedB31G({ ...pipe, defectDepthMm: 8.001 });
    expect(above).toMatchObject({ applicable: false, reason: 'DEPTH_ABOVE_80_PCT_WALL' });
    expect(responseCategory({ ...gas, depthPctWt: 80.01, failurePressureKpa: null, safePressureKpa: null, maopKpa: 5000 })).toMatchObject({
      category: 'IMMEDIATE',
      ruleRef: '§192.933(d)(1)(iii)',
    });
    expect(
      responseCategory({ ...gas, regulation: 'CFR_195', depthPctWt: 80.01, failurePressureKpa: null, safePressureKpa: null, maopKpa: 5000 }),
    ).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§195.452(h)(4)(i)(A)' });
  });

  it('a reported 70 % with the 10 % tool tolerance on a 6.4 mm wall is exactly 80 %: inside B31G and categorised by its failure pressure', () => {
    // 0.8 × 6.4 ÷ 6.4 is 0.8000000000000002 in floating point; the two checks must agree it is not deeper.
    const pipe = {
      outsideDiameterMm: 323.9,
      wallThicknessMm: 6.4,
      smysMpa: 359,
      defectLengthMm: 40,
      regulation: 'CFR_192' as const,
      classLocation: 1,
      maopKpa: 5000,
    };
    const tolerant = depthWithTolerance(70, 10);
    const figures = modifiedB31G({ ...pipe, defectDepthMm: (tolerant / 100) * pipe.wallThicknessMm });
    if (!figures.applicable) throw new Error(`expected B31G to apply at 80 %: ${figures.message}`);
    const decision = responseCategory({
      ...gas,
      depthPctWt: tolerant,
      failurePressureKpa: figures.failurePressureKpa,
      safePressureKpa: figures.safePressureKpa,
      maopKpa: pipe.maopKpa,
    });
    expect(decision.ruleRef).not.toBe('§192.933(d)(1)(iii)');
    expect(remainingLife(pipe, (tolerant / 100) * pipe.wallThicknessMm, 0.1).years).toBe(0);
  });
});

describe('gas: the failure-pressure ratios of §192.933(d) and §192.714(d) at their boundaries (texts quoted in repair-conditions.test.ts)', () => {
  it.each([
    // In an HCA, MAOP 5,000 kPa. (d)(1)(i): ≤ 1.1 × MAOP.
    [2, 5500, 'IMMEDIATE', '§192.933(d)(1)(i)'],
    // (d)(2)(iv): "less than 1.39 times the MAOP for Class 2 locations, and less than 1.50 times the MAOP for Class 3 and 4".
    [2, 5501, 'ONE_YEAR', '§192.933(d)(2)(iv)'],
    [2, 6949, 'ONE_YEAR', '§192.933(d)(2)(iv)'],
    [2, 6950, 'OTHER', '§192.933(c)'],
    [3, 7499, 'ONE_YEAR', '§192.933(d)(2)(iv)'],
    [4, 7500, 'OTHER', '§192.933(c)'],
    // Class 1 above 1.1 × MAOP: ASME B31.8S Figure 4, "in accordance with paragraph (c)".
    [1, 5501, 'OTHER', '§192.933(c)'],
  ])('in an HCA, class %s, Pf %s kPa → %s (%s)', (cls, pf, category, ruleRef) => {
    expect(responseCategory({ ...gas, classLocation: cls, depthPctWt: 40, failurePressureKpa: pf, safePressureKpa: pf * 0.72, maopKpa: 5000 })).toMatchObject({
      category,
      ruleRef,
    });
  });

  it.each([
    [1, 5500, 'IMMEDIATE'],
    [1, 6000, 'OTHER'],
    [2, 6949, 'TWO_YEAR'],
    [2, 6950, 'OTHER'],
    [3, 7499, 'TWO_YEAR'],
    [4, 7499, 'TWO_YEAR'],
    [4, 7500, 'OTHER'],
  ])('outside an HCA (§192.714(d)(2)(iv)), class %s, Pf %s kPa → %s', (cls, pf, category) => {
    expect(
      responseCategory({
        regulation: 'CFR_192',
        inHca: false,
        classLocation: cls,
        depthPctWt: 40,
        failurePressureKpa: pf,
        safePressureKpa: pf * 0.72,
        maopKpa: 5000,
      }).category,
    ).toBe(category);
  });
});

describe('liquid (§195.452(h)(4))', () => {
  it('burst pressure below MOP is immediate; a safe pressure below MOP is a 180-day condition (§195.452(h)(4)(iii)(D)); otherwise other', () => {
    const liquid = { regulation: 'CFR_195' as const, inHca: true, classLocation: null, depthPctWt: 50, maopKpa: 5000 };
    expect(responseCategory({ ...liquid, failurePressureKpa: 4999, safePressureKpa: 3599 })).toMatchObject({
      category: 'IMMEDIATE',
      ruleRef: '§195.452(h)(4)(i)(B)',
    });
    expect(responseCategory({ ...liquid, failurePressureKpa: 5000, safePressureKpa: 3600 })).toMatchObject({
      category: 'ONE_HUNDRED_EIGHTY_DAY',
      ruleRef: '§195.452(h)(4)(iii)(D)',
    });
    expect(responseCategory({ ...liquid, failurePressureKpa: 7000, safePressureKpa: 5040 })).toMatchObject({
      category: 'OTHER',
      ruleRef: '§195.452(h)(4)(iv)',
    });
  });
});

it('dates the response from the discovery (the ILI observation): immediate at once, 60 days, one year, two years, 180 days, none when monitored', () => {
  const found = new Date('2024-02-29T00:00:00.000Z');
  expect(repairDueAt('IMMEDIATE', found)).toEqual(found);
  // §195.452(h)(4)(ii): "within 60 days of discovery of condition".
  expect(repairDueAt('SIXTY_DAY', found)?.toISOString()).toBe('2024-04-29T00:00:00.000Z');
  expect(repairDueAt('ONE_YEAR', found)?.toISOString()).toBe('2025-02-28T00:00:00.000Z');
  expect(repairDueAt('TWO_YEAR', found)?.toISOString()).toBe('2026-02-28T00:00:00.000Z');
  expect(repairDueAt('ONE_HUNDRED_EIGHTY_DAY', found)?.toISOString()).toBe('2024-08-27T00:00:00.000Z');
  expect(repairDueAt('MONITORED', found)).toBeNull();
});

it('adds the ILI tool tolerance to the reported depth, capped at the wall', () => {
  expect(depthWithTolerance(23)).toBe(33);
  expect(depthWithTolerance(95)).toBe(100);
  expect(depthWithTolerance(23, 7.8)).toBeCloseTo(30.8, 10);
});

describe('remaining life (§192.712(a))', () => {
  const pipe = { outsideDiameterMm: 508, wallThicknessMm: 10, smysMpa: 359, defectLengthMm: 200, regulation: 'CFR_192' as const, classLocation: 1 };

  it('without MAOP: years until 80 % of wall at the growth rate', () => {
    expect(remainingLife({ ...pipe, maopKpa: null }, 4, 0.5)).toEqual({ years: 8, limit: 'DEPTH_80_PCT_WALL' });
  });

  it('with MAOP: the depth where the safe pressure equals MAOP, found on the B31G curve', () => {
    const maop = 6000;
    const life = remainingLife({ ...pipe, maopKpa: maop }, 2, 0.25);
    expect(life.limit).toBe('SAFE_PRESSURE_AT_MAOP');
    const depthAtLimit = 2 + life.years * 0.25;
    const safe = modifiedB31G({ ...pipe, maopKpa: maop, defectDepthMm: depthAtLimit });
    expect(safe.applicable && safe.safePressureKpa).toBeCloseTo(maop, 3);
  });

  it('is zero once the safe pressure is already at or below MAOP', () => {
    expect(remainingLife({ ...pipe, maopKpa: 7000 }, 7, 0.3)).toEqual({ years: 0, limit: 'SAFE_PRESSURE_AT_MAOP' });
  });
});

describe('risk on the 5 × 5 matrix', () => {
  it('computes the §192.903 potential impact radius r = 0.69 · √(p · d²) (p psig, d inches)', () => {
    // 30-inch pipe at 1,000 psig: 0.69 × √(1000 × 900) = 0.69 × 948.683 = 654.59 ft.
    expect(potentialImpactRadiusFt(1000, 30)).toBeCloseTo(654.59, 2);
  });

  it('scores a segment a reviewer can recompute by hand', () => {
    // 762 mm (30 in) at 6,894.757 kPa (1,000 psig): r = 654.6 ft → consequence 3; in an HCA +1 → 4; class 3 +1 → 5.
    // Worst anomaly ONE_YEAR → likelihood 4; remaining life 7.5 years → 3 (lower, ignored); CP at −820 mV
    // (less negative than −850 mV) → +1 → 5. Score 5 × 5 = 25, VERY_HIGH.
    const risk = segmentRisk({
      regulation: 'CFR_192',
      product: 'NATURAL_GAS',
      classLocation: 3,
      inHca: true,
      couldAffectHca: null,
      outsideDiameterMm: 762,
      maopKpa: 6894.757,
      categoryCounts: { ONE_YEAR: 2, MONITORED: 7 },
      minRemainingLifeYears: 7.5,
      worstFailurePressureRatio: 1.2,
      latestPipeToSoilMv: -820,
      expectedAnomaliesBeyondLimit: 1.37,
    });
    // The expected number beyond the limit rides beside the score and does not change it.
    expect(risk).toMatchObject({ likelihood: 5, consequence: 5, score: 25, band: 'VERY_HIGH', expectedAnomaliesBeyondLimit: 1.37 });
    expect(risk.potentialImpactRadiusM).toBeCloseTo(654.59 * 0.3048, 1);
    expect(risk.drivers).toEqual([
      '2 ONE_YEAR anomalies (worst failure-pressure ratio 1.20): likelihood 4',
      'shortest remaining life 7.5 years: likelihood 3',
      'latest pipe-to-soil potential -820 mV is less negative than -850 mV: likelihood +1 to 5',
      'potential impact radius 655 ft (200 m, §192.903): consequence 3',
      'in a high consequence area: consequence +1 to 4',
      'class 3 location: consequence +1 to 5',
    ]);
  });

  it('scores a dented segment on its dents, and says how many of the worst category are dents', () => {
    // A liquid segment whose only assessed anomaly is a 60-day dent: likelihood 4 (as ONE_YEAR / 180-day), consequence 3.
    const risk = segmentRisk({
      regulation: 'CFR_195',
      product: 'CRUDE_OIL',
      classLocation: null,
      inHca: false,
      couldAffectHca: false,
      outsideDiameterMm: 508,
      maopKpa: 6000,
      categoryCounts: { SIXTY_DAY: 1 },
      dentCounts: { SIXTY_DAY: 1 },
      minRemainingLifeYears: null,
      worstFailurePressureRatio: null,
      latestPipeToSoilMv: null,
    });
    expect(risk).toMatchObject({ likelihood: 4, consequence: 3, score: 12, band: 'HIGH' });
    expect(risk.drivers[0]).toBe('1 SIXTY_DAY anomaly, a dent: likelihood 4');
  });

  it('keeps a segment with nothing found LOW', () => {
    const risk = segmentRisk({
      regulation: 'CFR_192',
      product: 'NATURAL_GAS',
      classLocation: 1,
      inHca: false,
      couldAffectHca: null,
      outsideDiameterMm: 168.3,
      maopKpa: 2000,
      categoryCounts: {},
      minRemainingLifeYears: null,
      worstFailurePressureRatio: null,
      latestPipeToSoilMv: -950,
    });
    // r = 0.69 × √(290.08 × 6.626²) = 0.69 × 112.85 = 77.9 ft → consequence 1; likelihood 1.
    expect(risk).toMatchObject({ likelihood: 1, consequence: 1, score: 1, band: 'LOW' });
  });
});
