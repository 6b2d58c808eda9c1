/**
 * The repair conditions — metal loss, dents and cracks — each tested at its threshold against the paragraph it
 * implements, quoted here verbatim from the current eCFR and checked to be the words the decision's reason quotes.
 * Where the words were read: the eCFR's own section-by-section export of 49 CFR, github.com/MichalOpoka/ecfr —
 *   §192.933: cfr/title-49-Transportation/…/part-192-…/subpart-O-Gas-Transmission-Pipeline-Integrity-Management/section-192.933.md
 *   §192.714: cfr/title-49-Transportation/…/part-192-…/subpart-M-Maintenance/section-192.714.md
 *     both at commit 7483bd4766f0f243d2280756a25dc1c6c2ef402c: as amended through Amdts. 192-135, 195-107 (89 FR 33281,
 *     Apr. 29, 2024) — the 2022 gas rule's text (Amdt. 192-132, 87 FR 52224) with its 2023 and 2024 corrections;
 *     https://www.ecfr.gov/current/title-49/section-192.933 and …/section-192.714 are the same text.
 *   §195.452: cfr/title-49-Transportation/…/part-195-…/subpart-F-Operation-Maintenance/…/section-195.452.md at commit
 *     e43581862920bce09ed9a142e2cccb9ded381e55 (after Amdt. 195-102, 84 FR 52260, Oct. 1, 2019, which left (h)(4) as the
 *     2002 repair criteria wrote it); https://www.ecfr.gov/current/title-49/section-195.452.
 * The 2022 text changed what the previous version of this file implemented: metal loss in an HCA is a one-year
 * condition below 1.39 × MAOP in class 2 and 1.50 × MAOP in class 3 and 4 (not ≤ 1.25 / 1.39 / 1.67 / 2.00), outside
 * an HCA a two-year condition at the same ratios (not 1.39 / 1.67 / 2.00 / 2.50), class 1 follows ASME B31.8S; metal
 * loss at a crossing, in circumferential corrosion or at a girth weld has its own ratios; the paragraphs are renumbered
 * ((d)(1)(i) is the failure-pressure test, (d)(1)(iii) the 80 % depth, (d)(1)(ii) the dent, (d)(1)(v)(A) the crack);
 * and the monitored dent condition now presumes an engineering analysis.
 * Clock positions are degrees clockwise from the top of the pipe: 4 o'clock = 120°, 8 o'clock = 240°.
 */
import {
  crackCategory,
  dentCategory,
  NPS_12_OD_MM,
  onTopOfPipe,
  responseCategory,
  type CategoryInput,
  type DentInput,
} from '../../src/model/response-category';

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

/** Gas metal loss at 40 % of wall on MAOP 5,000 kPa: the failure pressure sets the ratio. */
const gasLoss = (pf: number, overrides: Partial<CategoryInput> = {}): CategoryInput => ({
  regulation: 'CFR_192',
  inHca: true,
  classLocation: 2,
  depthPctWt: 40,
  failurePressureKpa: pf,
  safePressureKpa: pf * 0.6,
  maopKpa: 5000,
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

describe('gas metal loss in an HCA, §192.933(d)', () => {
  it(`(d)(1)(i): "A metal loss anomaly where a calculation of the remaining strength of the pipe shows a predicted failure pressure determined in accordance with § 192.712(b) less than or equal to 1.1 times the MAOP at the location of the anomaly." → IMMEDIATE at 1.1, not above`, () => {
    const at = responseCategory(gasLoss(5500));
    expect(at).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(i)' });
    expect(at.reason).toContain(
      '"A metal loss anomaly where a calculation of the remaining strength of the pipe shows a predicted failure pressure determined in accordance with § 192.712(b) less than or equal to 1.1 times the MAOP at the location of the anomaly."',
    );
    expect(responseCategory(gasLoss(5501)).category).toBe('ONE_YEAR');
  });

  it(`(d)(1)(iii): "Metal loss greater than 80 percent of nominal wall regardless of dimensions." → IMMEDIATE above 80 %`, () => {
    const deep = responseCategory(gasLoss(0, { depthPctWt: 80.01, failurePressureKpa: null, safePressureKpa: null }));
    expect(deep).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(iii)' });
    expect(deep.reason).toContain('"Metal loss greater than 80 percent of nominal wall regardless of dimensions."');
  });

  it(`(d)(2)(iv): "Metal loss anomalies where a calculation of the remaining strength of the pipe at the location of the anomaly shows a predicted failure pressure, determined in accordance with § 192.712(b), less than 1.39 times the MAOP for Class 2 locations, and less than 1.50 times the MAOP for Class 3 and 4 locations. …" → ONE_YEAR below, not at, the ratio`, () => {
    // 1.39 × 5,000 = 6,950 kPa; 1.50 × 5,000 = 7,500 kPa.
    const below = responseCategory(gasLoss(6949));
    expect(below).toMatchObject({ category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)(iv)' });
    expect(below.reason).toContain(
      '"Metal loss anomalies where a calculation of the remaining strength of the pipe at the location of the anomaly shows a predicted failure pressure, determined in accordance with § 192.712(b), less than 1.39 times the MAOP for Class 2 locations, and less than 1.50 times the MAOP for Class 3 and 4 locations.',
    );
    expect(responseCategory(gasLoss(6950))).toMatchObject({ category: 'OTHER', ruleRef: '§192.933(c)' });
    for (const cls of [3, 4]) {
      expect(responseCategory(gasLoss(7499, { classLocation: cls })).category).toBe('ONE_YEAR');
      expect(responseCategory(gasLoss(7500, { classLocation: cls })).category).toBe('OTHER');
    }
  });

  it(`(d)(2)(iv), class 1: "For metal loss anomalies in Class 1 locations with a predicted failure pressure greater than 1.1 times MAOP, an operator must follow the remediation schedule specified in ASME B31.8S (incorporated by reference, see § 192.7), section 7, Figure 4, in accordance with paragraph (c) of this section." → OTHER, scheduled under (c), no date`, () => {
    const class1 = responseCategory(gasLoss(5600, { classLocation: 1 }));
    expect(class1).toMatchObject({ category: 'OTHER', ruleRef: '§192.933(c)' });
    expect(class1.reason).toContain(
      'For metal loss anomalies in Class 1 locations with a predicted failure pressure greater than 1.1 times MAOP, an operator must follow the remediation schedule specified in ASME B31.8S (incorporated by reference, see § 192.7), section 7, Figure 4, in accordance with paragraph (c) of this section.',
    );
    // (c): "… an operator must follow the schedule in ASME B31.8S (incorporated by reference, see § 192.7), section 7, Figure 7.2.1-1."
    expect(class1.reason).toContain('an operator must follow the schedule in ASME B31.8S (incorporated by reference, see § 192.7), section 7, Figure 7.2.1-1.');
  });

  it(`(d)(2)(v): "Metal loss that is located at a crossing of another pipeline, or is in an area with widespread circumferential corrosion, or could affect a girth weld, that has a predicted failure pressure, determined in accordance with § 192.712(b), of less than 1.39 times the MAOP for Class 1 locations … or less than 1.50 times the MAOP for all other Class 2 locations and all Class 3 and 4 locations." → ONE_YEAR`, () => {
    for (const where of [{ atPipelineCrossing: true }, { metalLossKind: 'CIRCUMFERENTIAL_CORROSION' }, { interactsWithGirthWeld: true }]) {
      // Class 1: below 1.39 × MAOP a one-year condition, where plain metal loss would follow B31.8S.
      const class1 = responseCategory(gasLoss(6900, { classLocation: 1, ...where }));
      expect(class1).toMatchObject({ category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)(v)' });
      expect(class1.reason).toContain(
        '"Metal loss that is located at a crossing of another pipeline, or is in an area with widespread circumferential corrosion',
      );
      expect(responseCategory(gasLoss(6950, { classLocation: 1, ...where })).category).toBe('OTHER');
      // Class 2 (no uprating recorded): 1.50, where plain metal loss stops at 1.39.
      expect(responseCategory(gasLoss(7400, { classLocation: 2, ...where }))).toMatchObject({ category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)(v)' });
      expect(responseCategory(gasLoss(7500, { classLocation: 2, ...where })).category).toBe('OTHER');
    }
  });

  it(`(d)(1)(iv): "Metal loss preferentially affecting a detected longitudinal seam, … and where the predicted failure pressure determined in accordance with § 192.712(d) is less than 1.25 times the MAOP." → IMMEDIATE; (d)(2)(vi) below 1.39 / 1.50 → ONE_YEAR; screened with B31G and said so`, () => {
    const seam = responseCategory(gasLoss(6200, { interactsWithSeamWeld: true }));
    expect(seam).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(iv)' });
    expect(seam.reason).toContain('"Metal loss preferentially affecting a detected longitudinal seam,');
    expect(seam.reason).toContain('Linepack records no seam type and computes no § 192.712(d) pressure');
    expect(responseCategory(gasLoss(6250, { interactsWithSeamWeld: true }))).toMatchObject({ category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)(vi)' });
    expect(responseCategory(gasLoss(7500, { interactsWithSeamWeld: true })).category).toBe('OTHER');
  });
});

describe('gas metal loss outside an HCA, §192.714(d): the same ratios, two-year instead of one-year, in its own words', () => {
  const outside = { inHca: false };
  it(`(d)(1)(i): "Metal loss anomalies where a calculation of the remaining strength of the pipe at the location of the anomaly shows a predicted failure pressure, determined in accordance with § 192.712(b), of less than or equal to 1.1 times the MAOP." → IMMEDIATE`, () => {
    const at = responseCategory(gasLoss(5500, outside));
    expect(at).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§192.714(d)(1)(i)' });
    expect(at.reason).toContain(
      '"Metal loss anomalies where a calculation of the remaining strength of the pipe at the location of the anomaly shows a predicted failure pressure, determined in accordance with § 192.712(b), of less than or equal to 1.1 times the MAOP."',
    );
  });

  it(`(d)(2)(iv): "For metal loss anomalies, a calculation of the remaining strength of the pipe shows a predicted failure pressure, determined in accordance with § 192.712(b) at the location of the anomaly, of less than 1.39 times the MAOP for Class 2 locations, or less than 1.50 times the MAOP for Class 3 and 4 locations. …" → TWO_YEAR`, () => {
    const two = responseCategory(gasLoss(6949, outside));
    expect(two).toMatchObject({ category: 'TWO_YEAR', ruleRef: '§192.714(d)(2)(iv)' });
    expect(two.reason).toContain(
      '"For metal loss anomalies, a calculation of the remaining strength of the pipe shows a predicted failure pressure, determined in accordance with § 192.712(b) at the location of the anomaly, of less than 1.39 times the MAOP for Class 2 locations, or less than 1.50 times the MAOP for Class 3 and 4 locations.',
    );
    expect(responseCategory(gasLoss(7499, { ...outside, classLocation: 4 })).category).toBe('TWO_YEAR');
    expect(responseCategory(gasLoss(6950, outside))).toMatchObject({ category: 'OTHER', ruleRef: '§192.714(c)' });
    expect(responseCategory(gasLoss(6000, { ...outside, classLocation: 1 }))).toMatchObject({ category: 'OTHER', ruleRef: '§192.714(c)' });
  });

  it(`(d)(1)(iii): "Metal loss greater than 80 percent of nominal wall regardless of dimensions." and (d)(2)(v) at a crossing → TWO_YEAR`, () => {
    expect(responseCategory(gasLoss(0, { ...outside, depthPctWt: 81, failurePressureKpa: null, safePressureKpa: null })).ruleRef).toBe('§192.714(d)(1)(iii)');
    const crossing = responseCategory(gasLoss(6900, { ...outside, classLocation: 1, atPipelineCrossing: true }));
    expect(crossing).toMatchObject({ category: 'TWO_YEAR', ruleRef: '§192.714(d)(2)(v)' });
    expect(crossing.reason).toContain(
      '"Metal loss that is located at a crossing of another pipeline, is in an area with widespread circumferential corrosion, or could affect a girth weld, and that has',
    );
  });
});

describe('gas dents in an HCA, §192.933(d)', () => {
  it(`(d)(1)(ii): "A dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) that has metal loss, cracking, or a stress riser, unless engineering analyses performed in accordance with § 192.712(c) demonstrate critical strain levels are not exceeded." → IMMEDIATE`, () => {
    for (const indication of ['hasMetalLoss', 'hasCracking', 'hasStressRiser'] as const) {
      const decision = dentCategory(dent({ clockDeg: 90, [indication]: true }));
      expect(decision).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(ii)' });
      expect(decision.reason).toContain(
        '"A dent located between the 8 o\'clock and 4 o\'clock positions (upper 2/3 of the pipe) that has metal loss, cracking, or a stress riser, unless engineering analyses performed in accordance with § 192.712(c) demonstrate critical strain levels are not exceeded."',
      );
    }
  });

  it(`(d)(2)(i): "A smooth dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) with a depth greater than 6 percent of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than Nominal Pipe Size (NPS) 12), …" → ONE_YEAR above 6 %, not at 6 %`, () => {
    const deep = dentCategory(dent({ dentDepthPctOd: 6.01 }));
    expect(deep).toMatchObject({ category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)(i)' });
    expect(deep.reason).toContain(
      '"A smooth dent located between the 8 o\'clock and 4 o\'clock positions (upper 2/3 of the pipe) with a depth greater than 6 percent of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than Nominal Pipe Size (NPS) 12), unless engineering analyses performed in accordance with § 192.712(c) demonstrate critical strain levels are not exceeded."',
    );
    expect(dentCategory(dent({ dentDepthPctOd: 6 }))).toMatchObject({ category: 'OTHER', ruleRef: '§192.933(c)' });
  });

  it('(d)(2)(i) below NPS 12: the limit is 0.50 in (12.7 mm), not 6 % — 219.1 mm (NPS 8) pipe, a 6 % dent is 13.1 mm', () => {
    expect(NPS_12_OD_MM).toBeCloseTo(323.85, 9);
    // 5.9 % of 219.1 mm = 12.93 mm > 12.7 mm: one-year although under 6 %.
    expect(dentCategory(dent({ outsideDiameterMm: 219.1, dentDepthPctOd: 5.9 })).category).toBe('ONE_YEAR');
    // 5.7 % = 12.49 mm ≤ 12.7 mm.
    expect(dentCategory(dent({ outsideDiameterMm: 219.1, dentDepthPctOd: 5.7 })).category).toBe('OTHER');
  });

  it(`(d)(2)(ii): "A dent with a depth greater than 2 percent of the pipeline diameter (0.250 inches in depth for a pipeline diameter less than NPS 12) that affects pipe curvature at a girth weld or at a longitudinal or helical (spiral) seam weld, …" → ONE_YEAR`, () => {
    const atWeld = dentCategory(dent({ clockDeg: 180, dentDepthPctOd: 2.01, interactsWithGirthWeld: true }));
    expect(atWeld).toMatchObject({ category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)(ii)' });
    expect(atWeld.reason).toContain(
      '"A dent with a depth greater than 2 percent of the pipeline diameter (0.250 inches in depth for a pipeline diameter less than NPS 12) that affects pipe curvature at a girth weld or at a longitudinal or helical (spiral) seam weld, unless engineering analyses performed in accordance with § 192.712(c) demonstrate critical strain levels are not exceeded."',
    );
    expect(dentCategory(dent({ clockDeg: 180, dentDepthPctOd: 2.5, interactsWithSeamWeld: true })).ruleRef).toBe('§192.933(d)(2)(ii)');
    expect(dentCategory(dent({ clockDeg: 180, dentDepthPctOd: 2, interactsWithGirthWeld: true })).category).toBe('OTHER');
  });

  it(`(d)(2)(iii): "A dent located between the 4 o'clock and 8 o'clock positions (lower 1/3 of the pipe) that has metal loss, cracking, or a stress riser, …" → ONE_YEAR`, () => {
    const bottom = dentCategory(dent({ clockDeg: 180, hasMetalLoss: true }));
    expect(bottom).toMatchObject({ category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)(iii)' });
    expect(bottom.reason).toContain(
      '"A dent located between the 4 o\'clock and 8 o\'clock positions (lower 1/3 of the pipe) that has metal loss, cracking, or a stress riser, unless engineering analyses performed in accordance with § 192.712(c) demonstrate critical strain levels are not exceeded."',
    );
  });

  it(`(d)(3)(i): "A dent with a depth greater than 6 percent of the pipeline diameter (…), located between the 4 o'clock position and the 8 o'clock position (bottom 1/3 of the pipe), and for which engineering analyses of the dent, performed in accordance with § 192.712(c), demonstrate critical strain levels are not exceeded." — presumes an analysis Linepack does not hold: OTHER under (c), saying so`, () => {
    const bottom = dentCategory(dent({ clockDeg: 180, dentDepthPctOd: 7 }));
    expect(bottom).toMatchObject({ category: 'OTHER', ruleRef: '§192.933(c)' });
    expect(bottom.reason).toContain(
      '"A dent with a depth greater than 6 percent of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than NPS 12), located between the 4 o\'clock position and the 8 o\'clock position (bottom 1/3 of the pipe), and for which engineering analyses of the dent, performed in accordance with § 192.712(c), demonstrate critical strain levels are not exceeded."',
    );
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

describe('gas dents outside an HCA, §192.714(d): the same dent conditions, two-year instead of one-year, in its own words', () => {
  const outside = { inHca: false };
  it(`(d)(1)(ii): "A dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) that has metal loss, cracking, or a stress riser, unless an engineering analysis performed in accordance with § 192.712(c) demonstrates critical strain levels are not exceeded." → IMMEDIATE; (d)(2)(i)–(iii) → TWO_YEAR`, () => {
    const top = dentCategory(dent({ ...outside, hasCracking: true }));
    expect(top).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§192.714(d)(1)(ii)' });
    expect(top.reason).toContain(
      '"A dent located between the 8 o\'clock and 4 o\'clock positions (upper 2/3 of the pipe) that has metal loss, cracking, or a stress riser, unless an engineering analysis performed in accordance with § 192.712(c) demonstrates critical strain levels are not exceeded."',
    );
    expect(dentCategory(dent({ ...outside, dentDepthPctOd: 6.5 }))).toMatchObject({ category: 'TWO_YEAR', ruleRef: '§192.714(d)(2)(i)' });
    expect(dentCategory(dent({ ...outside, clockDeg: 200, dentDepthPctOd: 3, interactsWithGirthWeld: true }))).toMatchObject({
      category: 'TWO_YEAR',
      ruleRef: '§192.714(d)(2)(ii)',
    });
    expect(dentCategory(dent({ ...outside, clockDeg: 200, hasMetalLoss: true }))).toMatchObject({ category: 'TWO_YEAR', ruleRef: '§192.714(d)(2)(iii)' });
    // (d)(3)(i) outside an HCA, in §192.714's words, presumes the analysis too.
    expect(dentCategory(dent({ ...outside, clockDeg: 200, dentDepthPctOd: 7 })).reason).toContain(
      '"A dent that is located between the 4 o\'clock and 8 o\'clock positions (bottom 1/3 of the pipe) with a depth greater than 6 percent of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than NPS 12), and where an engineering analysis, performed in accordance with § 192.712(c), demonstrates critical strain levels are not exceeded."',
    );
  });
});

describe('liquid, §195.452(h)(4)', () => {
  const liquid = (o: Partial<DentInput>) => dent({ regulation: 'CFR_195', ...o });
  /** The decision, checked to quote the paragraph in the eCFR's words. */
  const quoting = <D extends { reason: string }>(decision: D, text: string): D => {
    expect(decision.reason).toContain(`"${text}"`);
    return decision;
  };

  it(`(i)(C): "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) that has any indication of metal loss, cracking or a stress riser." → IMMEDIATE`, () => {
    const decision = dentCategory(liquid({ clockDeg: 300, hasMetalLoss: true }));
    expect(
      quoting(
        decision,
        "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) that has any indication of metal loss, cracking or a stress riser.",
      ),
    ).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§195.452(h)(4)(i)(C)' });
  });

  it(`(i)(D): "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) with a depth greater than 6% of the nominal pipe diameter." → IMMEDIATE`, () => {
    const decision = dentCategory(liquid({ dentDepthPctOd: 6.01 }));
    expect(
      quoting(
        decision,
        "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) with a depth greater than 6% of the nominal pipe diameter.",
      ),
    ).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§195.452(h)(4)(i)(D)' });
  });

  it(`(ii)(A): "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) with a depth greater than 3% of the pipeline diameter (greater than 0.250 inches in depth for a pipeline diameter less than Nominal Pipe Size (NPS) 12)." → SIXTY_DAY`, () => {
    const decision = dentCategory(liquid({ dentDepthPctOd: 6 }));
    expect(
      quoting(
        decision,
        "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) with a depth greater than 3% of the pipeline diameter (greater than 0.250 inches in depth for a pipeline diameter less than Nominal Pipe Size (NPS) 12).",
      ),
    ).toMatchObject({ category: 'SIXTY_DAY', ruleRef: '§195.452(h)(4)(ii)(A)' });
    expect(dentCategory(liquid({ dentDepthPctOd: 3.01 })).ruleRef).toBe('§195.452(h)(4)(ii)(A)');
    // NPS 8 (219.1 mm): 0.250 in = 6.35 mm is 2.9 % — a 2.95 % dent (6.46 mm) is a 60-day condition.
    expect(dentCategory(liquid({ outsideDiameterMm: 219.1, dentDepthPctOd: 2.95 })).ruleRef).toBe('§195.452(h)(4)(ii)(A)');
  });

  it(`(ii)(B): "A dent located on the bottom of the pipeline that has any indication of metal loss, cracking or a stress riser." → SIXTY_DAY`, () => {
    const decision = dentCategory(liquid({ clockDeg: 180, hasCracking: true }));
    expect(quoting(decision, 'A dent located on the bottom of the pipeline that has any indication of metal loss, cracking or a stress riser.')).toMatchObject({
      category: 'SIXTY_DAY',
      ruleRef: '§195.452(h)(4)(ii)(B)',
    });
  });

  it(`(iii)(A): "A dent with a depth greater than 2% of the pipeline's diameter (0.250 inches in depth for a pipeline diameter less than NPS 12) that affects pipe curvature at a girth weld or a longitudinal seam weld." → ONE_HUNDRED_EIGHTY_DAY`, () => {
    const decision = dentCategory(liquid({ clockDeg: 180, dentDepthPctOd: 2.5, interactsWithSeamWeld: true }));
    expect(
      quoting(
        decision,
        "A dent with a depth greater than 2% of the pipeline's diameter (0.250 inches in depth for a pipeline diameter less than NPS 12) that affects pipe curvature at a girth weld or a longitudinal seam weld.",
      ),
    ).toMatchObject({ category: 'ONE_HUNDRED_EIGHTY_DAY', ruleRef: '§195.452(h)(4)(iii)(A)' });
  });

  it(`(iii)(B): "A dent located on the top of the pipeline (above 4 and 8 o'clock position) with a depth greater than 2% of the pipeline's diameter (0.250 inches in depth for a pipeline diameter less than NPS 12)." → ONE_HUNDRED_EIGHTY_DAY`, () => {
    const decision = dentCategory(liquid({ dentDepthPctOd: 2.5 }));
    expect(
      quoting(
        decision,
        "A dent located on the top of the pipeline (above 4 and 8 o'clock position) with a depth greater than 2% of the pipeline's diameter (0.250 inches in depth for a pipeline diameter less than NPS 12).",
      ),
    ).toMatchObject({ category: 'ONE_HUNDRED_EIGHTY_DAY', ruleRef: '§195.452(h)(4)(iii)(B)' });
  });

  it(`(iii)(C): "A dent located on the bottom of the pipeline with a depth greater than 6% of the pipeline's diameter." → ONE_HUNDRED_EIGHTY_DAY; shallower is (h)(4)(iv)`, () => {
    const decision = dentCategory(liquid({ clockDeg: 180, dentDepthPctOd: 6.5 }));
    expect(quoting(decision, "A dent located on the bottom of the pipeline with a depth greater than 6% of the pipeline's diameter.")).toMatchObject({
      category: 'ONE_HUNDRED_EIGHTY_DAY',
      ruleRef: '§195.452(h)(4)(iii)(C)',
    });
    // (iv): "In addition to the conditions listed in paragraphs (h)(4)(i) through (iii) of this section, an operator must
    // evaluate any condition identified by an integrity assessment or information analysis that could impair the
    // integrity of the pipeline, and as appropriate, schedule the condition for remediation."
    const other = dentCategory(liquid({ clockDeg: 180, dentDepthPctOd: 5 }));
    expect(
      quoting(
        other,
        'In addition to the conditions listed in paragraphs (h)(4)(i) through (iii) of this section, an operator must evaluate any condition identified by an integrity assessment or information analysis that could impair the integrity of the pipeline, and as appropriate, schedule the condition for remediation.',
      ),
    ).toMatchObject({ category: 'OTHER', ruleRef: '§195.452(h)(4)(iv)' });
  });

  describe('metal loss ((i)(A), (i)(B), (iii)(D), (E), (F), (H), (I))', () => {
    const ml = { regulation: 'CFR_195' as const, inHca: false, classLocation: null, maopKpa: 5000, failurePressureKpa: 9000, safePressureKpa: 6480 };

    it(`(i)(A): "Metal loss greater than 80% of nominal wall regardless of dimensions." → IMMEDIATE`, () => {
      const deep = responseCategory({ ...ml, depthPctWt: 80.01, failurePressureKpa: null, safePressureKpa: null });
      expect(quoting(deep, 'Metal loss greater than 80% of nominal wall regardless of dimensions.')).toMatchObject({
        category: 'IMMEDIATE',
        ruleRef: '§195.452(h)(4)(i)(A)',
      });
    });

    it(`(i)(B): "A calculation of the remaining strength of the pipe shows a predicted burst pressure less than the established maximum operating pressure at the location of the anomaly." → IMMEDIATE; (iii)(D) "A calculation of the remaining strength of the pipe shows an operating pressure that is less than the current established maximum operating pressure at the location of the anomaly." → ONE_HUNDRED_EIGHTY_DAY`, () => {
      const burst = responseCategory({ ...ml, depthPctWt: 50, failurePressureKpa: 4999, safePressureKpa: 3599 });
      expect(
        quoting(
          burst,
          'A calculation of the remaining strength of the pipe shows a predicted burst pressure less than the established maximum operating pressure at the location of the anomaly.',
        ),
      ).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§195.452(h)(4)(i)(B)' });
      const safe = responseCategory({ ...ml, depthPctWt: 50, failurePressureKpa: 5000, safePressureKpa: 3600 });
      expect(
        quoting(
          safe,
          'A calculation of the remaining strength of the pipe shows an operating pressure that is less than the current established maximum operating pressure at the location of the anomaly.',
        ),
      ).toMatchObject({ category: 'ONE_HUNDRED_EIGHTY_DAY', ruleRef: '§195.452(h)(4)(iii)(D)' });
    });

    it(`(iii)(E): "An area of general corrosion with a predicted metal loss greater than 50% of nominal wall."`, () => {
      const general = responseCategory({ ...ml, depthPctWt: 50.5, metalLossKind: 'GENERAL_CORROSION' });
      expect(quoting(general, 'An area of general corrosion with a predicted metal loss greater than 50% of nominal wall.')).toMatchObject({
        category: 'ONE_HUNDRED_EIGHTY_DAY',
        ruleRef: '§195.452(h)(4)(iii)(E)',
      });
      expect(responseCategory({ ...ml, depthPctWt: 50, metalLossKind: 'GENERAL_CORROSION' }).category).toBe('OTHER');
      expect(responseCategory({ ...ml, depthPctWt: 60, metalLossKind: 'PITTING' }).category).toBe('OTHER');
    });

    it(`(iii)(F): "Predicted metal loss greater than 50% of nominal wall that is located at a crossing of another pipeline, or is in an area with widespread circumferential corrosion, or is in an area that could affect a girth weld."`, () => {
      for (const where of [{ atPipelineCrossing: true }, { metalLossKind: 'CIRCUMFERENTIAL_CORROSION' }, { interactsWithGirthWeld: true }]) {
        const located = responseCategory({ ...ml, depthPctWt: 55, ...where });
        expect(
          quoting(
            located,
            'Predicted metal loss greater than 50% of nominal wall that is located at a crossing of another pipeline, or is in an area with widespread circumferential corrosion, or is in an area that could affect a girth weld.',
          ),
        ).toMatchObject({ category: 'ONE_HUNDRED_EIGHTY_DAY', ruleRef: '§195.452(h)(4)(iii)(F)' });
      }
    });

    it(`(iii)(H): "Corrosion of or along a longitudinal seam weld."`, () => {
      expect(
        quoting(responseCategory({ ...ml, depthPctWt: 20, interactsWithSeamWeld: true }), 'Corrosion of or along a longitudinal seam weld.'),
      ).toMatchObject({
        category: 'ONE_HUNDRED_EIGHTY_DAY',
        ruleRef: '§195.452(h)(4)(iii)(H)',
      });
    });

    it(`(iii)(I): "A gouge or groove greater than 12.5% of nominal wall."`, () => {
      expect(
        quoting(responseCategory({ ...ml, depthPctWt: 12.6, featureType: 'GOUGE' }), 'A gouge or groove greater than 12.5% of nominal wall.').ruleRef,
      ).toBe('§195.452(h)(4)(iii)(I)');
      expect(responseCategory({ ...ml, depthPctWt: 13, metalLossKind: 'GROOVE' }).ruleRef).toBe('§195.452(h)(4)(iii)(I)');
      expect(responseCategory({ ...ml, depthPctWt: 12.5, featureType: 'GOUGE' }).category).toBe('OTHER');
    });
  });
});

describe('cracks cite their own part', () => {
  it(`gas §192.933(d)(1)(v)(A) / §192.714(d)(1)(v)(A): "Crack depth plus any metal loss is greater than 50 percent of pipe wall thickness;" → IMMEDIATE; shallower needs §192.712(d)`, () => {
    const deep = crackCategory({ regulation: 'CFR_192', inHca: true, depthPctWt: 50.1 });
    expect(deep).toMatchObject({ category: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(v)(A)' });
    expect(deep.reason).toContain('"Crack depth plus any metal loss is greater than 50 percent of pipe wall thickness;"');
    expect(crackCategory({ regulation: 'CFR_192', inHca: false, depthPctWt: 51 })).toMatchObject({ ruleRef: '§192.714(d)(1)(v)(A)' });
    const shallow = crackCategory({ regulation: 'CFR_192', inHca: true, depthPctWt: 30 });
    expect(shallow.category).toBeNull();
    expect(shallow.reason).toContain('§192.712(d)');
  });

  it(`liquid §195.452(h)(4)(iii)(G): "A potential crack indication that when excavated is determined to be a crack." → ONE_HUNDRED_EIGHTY_DAY, never a Part 192 paragraph`, () => {
    const decision = crackCategory({ regulation: 'CFR_195', inHca: false, depthPctWt: 30 });
    expect(decision).toMatchObject({ category: 'ONE_HUNDRED_EIGHTY_DAY', ruleRef: '§195.452(h)(4)(iii)(G)' });
    expect(decision.reason).toContain('"A potential crack indication that when excavated is determined to be a crack."');
    expect(decision.reason).not.toContain('§192');
  });
});
