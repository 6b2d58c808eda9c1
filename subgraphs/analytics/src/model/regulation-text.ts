/**
 * The repair-criteria paragraphs Linepack applies, as the eCFR states them, so that each decision's reason quotes the
 * rule it applied. Read from the eCFR's own export of 49 CFR (github.com/MichalOpoka/ecfr, which mirrors ecfr.gov
 * section by section):
 *   - §192.933 and §192.714 as amended through Amdts. 192-135 / 195-107 (89 FR 33281, Apr. 29, 2024), commit
 *     7483bd4766f0f243d2280756a25dc1c6c2ef402c; §192.714 is new in the 2022 gas rule (Amdt. 192-132, 87 FR 52224,
 *     in force May 24, 2023). On Jan. 15, 2025 (Amdt. 192-138, 90 FR 3713) PHMSA removed the provisions INGAA v.
 *     PHMSA (D.C. Cir. 2024) vacated — the high-frequency-ERW, crack-MAOP, dent-safety-factor and
 *     corrosive-constituent standards; none of the paragraphs quoted here decides a category on them (Linepack
 *     records no seam type and computes no §192.712(d) crack failure pressure).
 *   - §195.452(h) as amended by the 2019 liquid rule (Amdt. 195-102, 84 FR 52260), commit
 *     e43581862920bce09ed9a142e2cccb9ded381e55: the 2019 rule rewrote (h)(1) and (h)(2) and left the (h)(4) repair
 *     conditions of 2002 (Amdt. 195-74, 67 FR 1650) as they were.
 * Canonical: https://www.ecfr.gov/current/title-49/section-192.933, …/section-192.714, …/section-195.452.
 *
 * §192.933 and §192.714 say the same things in slightly different words ("engineering analyses … demonstrate" against
 * "an engineering analysis … demonstrates"), so each is quoted in its own words.
 */
export type GasSection = '§192.933' | '§192.714';

export interface GasParagraphs {
  section: GasSection;
  /** The second tier of scheduled conditions: one year in an HCA, two years outside. */
  secondTier: 'ONE_YEAR' | 'TWO_YEAR';
  schedule: string;
  metalLossFailurePressure: string;
  dentTopWithIndication: string;
  metalLossDeep: string;
  seamMetalLossImmediate: string;
  crackDepth: string;
  smoothTopDent: string;
  dentAtWeld: string;
  bottomDentWithIndication: string;
  metalLossScheduled: string;
  locatedMetalLoss: string;
  seamMetalLossScheduled: string;
  bottomDentMonitored: string;
}

export const GAS_PARAGRAPHS: Readonly<Record<'hca' | 'outside', GasParagraphs>> = {
  hca: {
    section: '§192.933',
    secondTier: 'ONE_YEAR',
    schedule:
      'An operator must complete remediation of a condition according to a schedule prioritizing the conditions for evaluation and remediation. Unless a special requirement for remediating certain conditions applies, as provided in paragraph (d) of this section, an operator must follow the schedule in ASME B31.8S (incorporated by reference, see § 192.7), section 7, Figure 7.2.1-1.',
    metalLossFailurePressure:
      'A metal loss anomaly where a calculation of the remaining strength of the pipe shows a predicted failure pressure determined in accordance with § 192.712(b) less than or equal to 1.1 times the MAOP at the location of the anomaly.',
    dentTopWithIndication:
      "A dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) that has metal loss, cracking, or a stress riser, unless engineering analyses performed in accordance with § 192.712(c) demonstrate critical strain levels are not exceeded.",
    metalLossDeep: 'Metal loss greater than 80 percent of nominal wall regardless of dimensions.',
    seamMetalLossImmediate:
      'Metal loss preferentially affecting a detected longitudinal seam, if that seam was formed by direct current, low-frequency or high-frequency electric resistance welding, electric flash welding, or with a longitudinal joint factor less than 1.0, and where the predicted failure pressure determined in accordance with § 192.712(d) is less than 1.25 times the MAOP.',
    crackDepth: 'Crack depth plus any metal loss is greater than 50 percent of pipe wall thickness;',
    smoothTopDent:
      "A smooth dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) with a depth greater than 6 percent of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than Nominal Pipe Size (NPS) 12), unless engineering analyses performed in accordance with § 192.712(c) demonstrate critical strain levels are not exceeded.",
    dentAtWeld:
      'A dent with a depth greater than 2 percent of the pipeline diameter (0.250 inches in depth for a pipeline diameter less than NPS 12) that affects pipe curvature at a girth weld or at a longitudinal or helical (spiral) seam weld, unless engineering analyses performed in accordance with § 192.712(c) demonstrate critical strain levels are not exceeded.',
    bottomDentWithIndication:
      "A dent located between the 4 o'clock and 8 o'clock positions (lower 1/3 of the pipe) that has metal loss, cracking, or a stress riser, unless engineering analyses performed in accordance with § 192.712(c) demonstrate critical strain levels are not exceeded.",
    metalLossScheduled:
      'Metal loss anomalies where a calculation of the remaining strength of the pipe at the location of the anomaly shows a predicted failure pressure, determined in accordance with § 192.712(b), less than 1.39 times the MAOP for Class 2 locations, and less than 1.50 times the MAOP for Class 3 and 4 locations. For metal loss anomalies in Class 1 locations with a predicted failure pressure greater than 1.1 times MAOP, an operator must follow the remediation schedule specified in ASME B31.8S (incorporated by reference, see § 192.7), section 7, Figure 4, in accordance with paragraph (c) of this section.',
    locatedMetalLoss:
      'Metal loss that is located at a crossing of another pipeline, or is in an area with widespread circumferential corrosion, or could affect a girth weld, that has a predicted failure pressure, determined in accordance with § 192.712(b), of less than 1.39 times the MAOP for Class 1 locations or where Class 2 locations contain Class 1 pipe that has been uprated in accordance with § 192.611, or less than 1.50 times the MAOP for all other Class 2 locations and all Class 3 and 4 locations.',
    seamMetalLossScheduled:
      'Metal loss preferentially affecting a detected longitudinal seam, if that seam was formed by direct current, low-frequency or high-frequency electric resistance welding, electric flash welding, or with a longitudinal joint factor less than 1.0, and where the predicted failure pressure, determined in accordance with § 192.712(d), is less than 1.39 times the MAOP for Class 1 locations or where Class 2 locations contain Class 1 pipe that has been uprated in accordance with § 192.611, or less than 1.50 times the MAOP for all other Class 2 locations and all Class 3 and 4 locations.',
    bottomDentMonitored:
      "A dent with a depth greater than 6 percent of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than NPS 12), located between the 4 o'clock position and the 8 o'clock position (bottom 1/3 of the pipe), and for which engineering analyses of the dent, performed in accordance with § 192.712(c), demonstrate critical strain levels are not exceeded.",
  },
  outside: {
    section: '§192.714',
    secondTier: 'TWO_YEAR',
    schedule:
      'An operator must remediate conditions according to a schedule that prioritizes the conditions for evaluation and remediation. Unless paragraph (d) of this section provides a special requirement for remediating certain conditions, an operator must calculate the predicted failure pressure of anomalies or defects and follow the schedule in ASME B31.8S (incorporated by reference, see § 192.7),',
    metalLossFailurePressure:
      'Metal loss anomalies where a calculation of the remaining strength of the pipe at the location of the anomaly shows a predicted failure pressure, determined in accordance with § 192.712(b), of less than or equal to 1.1 times the MAOP.',
    dentTopWithIndication:
      "A dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) that has metal loss, cracking, or a stress riser, unless an engineering analysis performed in accordance with § 192.712(c) demonstrates critical strain levels are not exceeded.",
    metalLossDeep: 'Metal loss greater than 80 percent of nominal wall regardless of dimensions.',
    seamMetalLossImmediate:
      'Metal loss preferentially affecting a detected longitudinal seam, if that seam was formed by direct current, low-frequency or high-frequency electric resistance welding, electric flash welding, or has a longitudinal joint factor less than 1.0, and the predicted failure pressure determined in accordance with § 192.712(d) is less than 1.25 times the MAOP.',
    crackDepth: 'Crack depth plus any metal loss is greater than 50 percent of pipe wall thickness;',
    smoothTopDent:
      "A smooth dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) with a depth greater than 6 percent of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than Nominal Pipe Size (NPS) 12), unless an engineering analysis performed in accordance with § 192.712(c) demonstrates critical strain levels are not exceeded.",
    dentAtWeld:
      'A dent with a depth greater than 2 percent of the pipeline diameter (0.250 inches in depth for a pipeline diameter less than NPS 12) that affects pipe curvature at a girth weld or at a longitudinal or helical (spiral) seam weld, unless an engineering analysis performed in accordance with § 192.712(c) demonstrates critical strain levels are not exceeded.',
    bottomDentWithIndication:
      "A dent located between the 4 o'clock and 8 o'clock positions (lower 1/3 of the pipe) that has metal loss, cracking, or a stress riser, unless an engineering analysis performed in accordance with § 192.712(c) demonstrates critical strain levels are not exceeded.",
    metalLossScheduled:
      'For metal loss anomalies, a calculation of the remaining strength of the pipe shows a predicted failure pressure, determined in accordance with § 192.712(b) at the location of the anomaly, of less than 1.39 times the MAOP for Class 2 locations, or less than 1.50 times the MAOP for Class 3 and 4 locations. For metal loss anomalies in Class 1 locations with a predicted failure pressure greater than 1.1 times MAOP, an operator must follow the remediation schedule specified in ASME/ANSI B31.8S-2004 (incorporated by reference, see § 192.7), section 7, Figure 4, as specified in paragraph (c) of this section.',
    locatedMetalLoss:
      'Metal loss that is located at a crossing of another pipeline, is in an area with widespread circumferential corrosion, or could affect a girth weld, and that has a predicted failure pressure, determined in accordance with § 192.712(b), less than 1.39 times the MAOP for Class 1 locations or where Class 2 locations contain Class 1 pipe that has been uprated in accordance with § 192.611, or less than 1.50 times the MAOP for all other Class 2 locations and all Class 3 and 4 locations.',
    seamMetalLossScheduled:
      'Metal loss preferentially affecting a detected longitudinal seam, if that seam was formed by direct current, low-frequency or high-frequency electric resistance welding, electric flash welding, or that has a longitudinal joint factor less than 1.0, and where the predicted failure pressure determined in accordance with § 192.712(d) is less than 1.39 times the MAOP for Class 1 locations or where Class 2 locations contain Class 1 pipe that has been uprated in accordance with § 192.611, or less than 1.50 times the MAOP for all other Class 2 locations and all Class 3 and 4 locations.',
    bottomDentMonitored:
      "A dent that is located between the 4 o'clock and 8 o'clock positions (bottom 1/3 of the pipe) with a depth greater than 6 percent of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than NPS 12), and where an engineering analysis, performed in accordance with § 192.712(c), demonstrates critical strain levels are not exceeded.",
  },
};

export const gasParagraphs = (inHca: boolean): GasParagraphs => (inHca ? GAS_PARAGRAPHS.hca : GAS_PARAGRAPHS.outside);

/** The paragraphs of §195.452(h)(4) a liquid metal-loss category beyond the remaining-strength tests rests on. */
export const LIQUID_METAL_LOSS_PARAGRAPHS = {
  deep: { ruleRef: '§195.452(h)(4)(i)(A)', text: 'Metal loss greater than 80% of nominal wall regardless of dimensions.' },
  burstBelowMop: {
    ruleRef: '§195.452(h)(4)(i)(B)',
    text: 'A calculation of the remaining strength of the pipe shows a predicted burst pressure less than the established maximum operating pressure at the location of the anomaly.',
  },
  safeBelowMop: {
    ruleRef: '§195.452(h)(4)(iii)(D)',
    text: 'A calculation of the remaining strength of the pipe shows an operating pressure that is less than the current established maximum operating pressure at the location of the anomaly.',
  },
  generalCorrosion: { ruleRef: '§195.452(h)(4)(iii)(E)', text: 'An area of general corrosion with a predicted metal loss greater than 50% of nominal wall.' },
  locatedMetalLoss: {
    ruleRef: '§195.452(h)(4)(iii)(F)',
    text: 'Predicted metal loss greater than 50% of nominal wall that is located at a crossing of another pipeline, or is in an area with widespread circumferential corrosion, or is in an area that could affect a girth weld.',
  },
  crack: { ruleRef: '§195.452(h)(4)(iii)(G)', text: 'A potential crack indication that when excavated is determined to be a crack.' },
  seamCorrosion: { ruleRef: '§195.452(h)(4)(iii)(H)', text: 'Corrosion of or along a longitudinal seam weld.' },
  gougeOrGroove: { ruleRef: '§195.452(h)(4)(iii)(I)', text: 'A gouge or groove greater than 12.5% of nominal wall.' },
  other: {
    ruleRef: '§195.452(h)(4)(iv)',
    text: 'In addition to the conditions listed in paragraphs (h)(4)(i) through (iii) of this section, an operator must evaluate any condition identified by an integrity assessment or information analysis that could impair the integrity of the pipeline, and as appropriate, schedule the condition for remediation.',
  },
} as const;
