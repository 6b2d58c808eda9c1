/**
 * The dent, crack and Part 195 metal-loss repair conditions, each tested at its threshold against the paragraph it
 * implements, quoted here as the decision's reason quotes it:
 *   - gas in an HCA §192.933(d) and outside one §192.714(d), as revised by Amdt. 192-132 (87 FR 52224, Aug. 24, 2022;
 *     in force May 24, 2023);
 *   - liquid §195.452(h)(4), the repair criteria of Amdt. 195-74 (67 FR 1650, Jan. 14, 2002) as in force.
 * Clock positions are degrees clockwise from the top of the pipe: 4 o'clock = 120°, 8 o'clock = 240°.
 */
import { crackCategory, dentCategory, NPS_12_OD_MM, onTopOfPipe, responseCategory, type DentInput } from '../../src/model/response-category';

const dent = (overrides: Partial<DentInput>): DentInput => ({
  regulation: 'CFR_192',
  inHca: true,
  outsideDiameterMm: 610,
  clockDeg: 0,
  dentDepthPctOd: 1,
  hasMetalLoss: false,
  hasCracking: false,
  hasStressRiser: false,
  interactsWithGirthWeld: false,
  interactsWithSeamWeld: false,
  ...overrides,
});

describe("clock position: the top is the arc from 8 o'clock through 12 to 4 o'clock, its ends included", () => {
  it.each([
    [0, true],
    [120, true],
    [120.1, false],
    [180, false],
    [239.9, false],
    [240, true],
    [359, true],
  ])('%s° → on top %s', (deg, top) => expect(onTopOfPipe(deg)).toBe(top));
});

describe('gas in an HCA, §192.933(d)', () => {
  it(`(d)(1)(v): "A dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) that has metal loss, cracking, or a stress riser, unless an engineering analysis performed in accordance with § 192.712(c) demonstrates critical strain levels are not exceeded." → IMMEDIATE`, () => {
    for (const indication of ['hasMetalLoss', 'hasCracking', 'hasStressRiser'] as const) {
      const decision = dentCategory(dent({ clockDeg: 90, [indication]: true }));
      expect(decision).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(v)' });
      expect(decision.reason).toContain("A dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe)");
    }
  });

  it(`(d)(2)(i): "A smooth dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) with a depth greater than 6% of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than Nominal Pipe Size (NPS) 12), …" → ONE_YEAR above 6 %, not at 6 %`, () => {
    expect(dentCategory(dent({ dentDepthPctOd: 6.01 }))).toMatchObject({ category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)(i)' });
    expect(dentCategory(dent({ dentDepthPctOd: 6 })).category).toBe('MONITORED');
  });

  it('(d)(2)(i) below NPS 12: the limit is 0.50 in (12.7 mm), not 6 % — 219.1 mm (NPS 8) pipe, a 6 % dent is 13.1 mm', () => {
    expect(NPS_12_OD_MM).toBeCloseTo(323.85, 9);
    // 5.9 % of 219.1 mm = 12.93 mm > 12.7 mm: one-year although under 6 %.
    expect(dentCategory(dent({ outsideDiameterMm: 219.1, dentDepthPctOd: 5.9 })).category).toBe('ONE_YEAR');
    // 5.7 % = 12.49 mm ≤ 12.7 mm.
    expect(dentCategory(dent({ outsideDiameterMm: 219.1, dentDepthPctOd: 5.7 })).category).toBe('MONITORED');
  });

  it(`(d)(2)(ii): "A dent with a depth greater than 2% of the pipeline's diameter (0.250 inches in depth for a pipeline diameter less than NPS 12) that affects pipe curvature at a girth weld or at a longitudinal or helical (spiral) seam weld, …" → ONE_YEAR`, () => {
    expect(dentCategory(dent({ clockDeg: 180, dentDepthPctOd: 2.01, interactsWithGirthWeld: true }))).toMatchObject({
      category: 'ONE_YEAR',
      ruleRef: '§192.933(d)(2)(ii)',
    });
    expect(dentCategory(dent({ clockDeg: 180, dentDepthPctOd: 2.5, interactsWithSeamWeld: true })).ruleRef).toBe('§192.933(d)(2)(ii)');
    expect(dentCategory(dent({ clockDeg: 180, dentDepthPctOd: 2, interactsWithGirthWeld: true })).category).toBe('MONITORED');
  });

  it(`(d)(2)(iii): "A dent located between the 4 o'clock position and the 8 o'clock position (bottom 1/3 of the pipe) that has metal loss, cracking, or a stress riser, …" → ONE_YEAR`, () => {
    expect(dentCategory(dent({ clockDeg: 180, hasMetalLoss: true }))).toMatchObject({ category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)(iii)' });
  });

  it(`(d)(3)(i): "A dent with a depth greater than 6% of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than NPS 12) located between the 4 o'clock position and the 8 o'clock position (bottom 1/3 of the pipe)." → MONITORED`, () => {
    expect(dentCategory(dent({ clockDeg: 180, dentDepthPctOd: 7 }))).toMatchObject({ category: 'MONITORED', ruleRef: '§192.933(d)(3)(i)' });
  });

  it('takes what was not reported the urgent way and says so: no clock position is the top, no depth is deeper than every limit', () => {
    const unplaced = dentCategory(dent({ clockDeg: null, hasStressRiser: true }));
    expect(unplaced.category).toBe('IMMEDIATE');
    expect(unplaced.reason).toContain('clock position not recorded: taken as on the top of the pipe');
    const unmeasured = dentCategory(dent({ dentDepthPctOd: null }));
    expect(unmeasured).toMatchObject({ category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)(i)' });
    expect(unmeasured.reason).toContain('depth not recorded');
  });
});

describe('gas outside an HCA, §192.714(d): the same dent conditions, two-year instead of one-year', () => {
  it('(d)(1)(v) immediate, (d)(2)(i)–(iii) two-year', () => {
    const outside = { inHca: false };
    expect(dentCategory(dent({ ...outside, hasCracking: true }))).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§192.714(d)(1)(v)' });
    expect(dentCategory(dent({ ...outside, dentDepthPctOd: 6.5 }))).toMatchObject({ category: 'TWO_YEAR', ruleRef: '§192.714(d)(2)(i)' });
    expect(dentCategory(dent({ ...outside, clockDeg: 200, dentDepthPctOd: 3, interactsWithGirthWeld: true }))).toMatchObject({
      category: 'TWO_YEAR',
      ruleRef: '§192.714(d)(2)(ii)',
    });
    expect(dentCategory(dent({ ...outside, clockDeg: 200, hasMetalLoss: true }))).toMatchObject({ category: 'TWO_YEAR', ruleRef: '§192.714(d)(2)(iii)' });
  });
});

describe('liquid, §195.452(h)(4)', () => {
  const liquid = (o: Partial<DentInput>) => dent({ regulation: 'CFR_195', ...o });

  it(`(i)(C): "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) that has any indication of metal loss, cracking or a stress riser." → IMMEDIATE`, () => {
    expect(liquid({ clockDeg: 300, hasMetalLoss: true })).toBeDefined();
    expect(dentCategory(liquid({ clockDeg: 300, hasMetalLoss: true }))).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§195.452(h)(4)(i)(C)' });
  });

  it(`(i)(D): "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) with a depth greater than 6% of the nominal pipe diameter." → IMMEDIATE`, () => {
    expect(dentCategory(liquid({ dentDepthPctOd: 6.01 }))).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§195.452(h)(4)(i)(D)' });
  });

  it(`(ii)(A): "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) with a depth greater than 3% of the pipeline diameter (greater than 0.250 inches in depth for a pipeline diameter less than Nominal Pipe Size (NPS) 12)." → SIXTY_DAY`, () => {
    expect(dentCategory(liquid({ dentDepthPctOd: 6 }))).toMatchObject({ category: 'SIXTY_DAY', ruleRef: '§195.452(h)(4)(ii)(A)' });
    expect(dentCategory(liquid({ dentDepthPctOd: 3.01 })).ruleRef).toBe('§195.452(h)(4)(ii)(A)');
    // NPS 8 (219.1 mm): 0.250 in = 6.35 mm is 2.9 % — a 2.95 % dent (6.46 mm) is a 60-day condition.
    expect(dentCategory(liquid({ outsideDiameterMm: 219.1, dentDepthPctOd: 2.95 })).ruleRef).toBe('§195.452(h)(4)(ii)(A)');
  });

  it(`(ii)(B): "A dent located on the bottom of the pipeline that has any indication of metal loss, cracking or a stress riser." → SIXTY_DAY`, () => {
    expect(dentCategory(liquid({ clockDeg: 180, hasCracking: true }))).toMatchObject({ category: 'SIXTY_DAY', ruleRef: '§195.452(h)(4)(ii)(B)' });
  });

  it(`(iii)(A): "A dent with a depth greater than 2% of the pipeline's diameter (0.250 inches in depth for a pipeline diameter less than NPS 12) that affects pipe curvature at a girth weld or a longitudinal seam weld." → ONE_HUNDRED_EIGHTY_DAY`, () => {
    expect(dentCategory(liquid({ clockDeg: 180, dentDepthPctOd: 2.5, interactsWithSeamWeld: true }))).toMatchObject({
      category: 'ONE_HUNDRED_EIGHTY_DAY',
      ruleRef: '§195.452(h)(4)(iii)(A)',
    });
  });

  it(`(iii)(B): "A dent located on the top of the pipeline (above 4 and 8 o'clock position) with a depth greater than 2% of the pipeline's diameter (0.250 inches in depth for a pipeline diameter less than NPS 12)." → ONE_HUNDRED_EIGHTY_DAY`, () => {
    expect(dentCategory(liquid({ dentDepthPctOd: 2.5 }))).toMatchObject({ category: 'ONE_HUNDRED_EIGHTY_DAY', ruleRef: '§195.452(h)(4)(iii)(B)' });
  });

  it(`(iii)(C): "A dent located on the bottom of the pipeline with a depth greater than 6% of the pipeline's diameter." → ONE_HUNDRED_EIGHTY_DAY; shallower is OTHER (h)(4)(iv)`, () => {
    expect(dentCategory(liquid({ clockDeg: 180, dentDepthPctOd: 6.5 }))).toMatchObject({
      category: 'ONE_HUNDRED_EIGHTY_DAY',
      ruleRef: '§195.452(h)(4)(iii)(C)',
    });
    expect(dentCategory(liquid({ clockDeg: 180, dentDepthPctOd: 5 }))).toMatchObject({ category: 'OTHER', ruleRef: '§195.452(h)(4)(iv)' });
  });

  describe('metal loss beyond the remaining-strength tests ((iii)(E), (F), (H), (I))', () => {
    const ml = { regulation: 'CFR_195' as const, inHca: false, classLocation: null, maopKpa: 5000, failurePressureKpa: 9000, safePressureKpa: 6480 };

    it(`(iii)(E): "An area of general corrosion with a predicted metal loss greater than 50% of nominal wall."`, () => {
      expect(responseCategory({ ...ml, depthPctWt: 50.5, metalLossKind: 'GENERAL_CORROSION' })).toMatchObject({
        category: 'ONE_HUNDRED_EIGHTY_DAY',
        ruleRef: '§195.452(h)(4)(iii)(E)',
      });
      expect(responseCategory({ ...ml, depthPctWt: 50, metalLossKind: 'GENERAL_CORROSION' }).category).toBe('OTHER');
      expect(responseCategory({ ...ml, depthPctWt: 60, metalLossKind: 'PITTING' }).category).toBe('OTHER');
    });

    it(`(iii)(F): "Predicted metal loss greater than 50% of nominal wall that is located at a crossing of another pipeline, or is in an area with widespread circumferential corrosion, or is in an area that could affect a girth weld."`, () => {
      for (const where of [{ atPipelineCrossing: true }, { metalLossKind: 'CIRCUMFERENTIAL_CORROSION' }, { interactsWithGirthWeld: true }]) {
        expect(responseCategory({ ...ml, depthPctWt: 55, ...where })).toMatchObject({ category: 'ONE_HUNDRED_EIGHTY_DAY', ruleRef: '§195.452(h)(4)(iii)(F)' });
      }
    });

    it(`(iii)(H): "Corrosion of or along a longitudinal seam weld."`, () => {
      expect(responseCategory({ ...ml, depthPctWt: 20, interactsWithSeamWeld: true })).toMatchObject({
        category: 'ONE_HUNDRED_EIGHTY_DAY',
        ruleRef: '§195.452(h)(4)(iii)(H)',
      });
    });

    it(`(iii)(I): "A gouge or groove greater than 12.5% of nominal wall."`, () => {
      expect(responseCategory({ ...ml, depthPctWt: 12.6, featureType: 'GOUGE' }).ruleRef).toBe('§195.452(h)(4)(iii)(I)');
      expect(responseCategory({ ...ml, depthPctWt: 13, metalLossKind: 'GROOVE' }).ruleRef).toBe('§195.452(h)(4)(iii)(I)');
      expect(responseCategory({ ...ml, depthPctWt: 12.5, featureType: 'GOUGE' }).category).toBe('OTHER');
    });
  });
});

describe('cracks cite their own part', () => {
  it(`gas §192.933(d)(1)(iii)(A): "Crack depth plus any metal loss is greater than 50% of pipe wall thickness;" → IMMEDIATE; shallower needs §192.712(d)`, () => {
    expect(crackCategory({ regulation: 'CFR_192', inHca: true, depthPctWt: 50.1 })).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(iii)(A)' });
    expect(crackCategory({ regulation: 'CFR_192', inHca: false, depthPctWt: 51 })).toMatchObject({ ruleRef: '§192.714(d)(1)(iii)(A)' });
    const shallow = crackCategory({ regulation: 'CFR_192', inHca: true, depthPctWt: 30 });
    expect(shallow.category).toBeNull();
    expect(shallow.reason).toContain('§192.712(d)');
  });

  it(`liquid §195.452(h)(4)(iii)(G): "A potential crack indication that when excavated is determined to be a crack." → ONE_HUNDRED_EIGHTY_DAY, never a Part 192 paragraph`, () => {
    const decision = crackCategory({ regulation: 'CFR_195', inHca: false, depthPctWt: 30 });
    expect(decision).toMatchObject({ category: 'ONE_HUNDRED_EIGHTY_DAY', ruleRef: '§195.452(h)(4)(iii)(G)' });
    expect(decision.reason).not.toContain('§192');
  });
});
