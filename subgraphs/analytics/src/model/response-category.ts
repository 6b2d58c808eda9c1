/**
 * Response categories under the integrity-management repair criteria:
 *   gas in an HCA (covered segment) §192.933(d), gas outside an HCA §192.714(d) — both as revised by
 *   the 2022 gas transmission rule (Amdt. 192-132, 87 FR 52224, in force since May 24, 2023) — and
 *   liquid §195.452(h)(4).
 * Metal loss (responseCategory: Modified B31G informs it), dents (dentCategory: depth as % of the
 * diameter, clock position, metal loss / cracking / stress riser, weld interaction) and cracks
 * (crackCategory) are decided here. Every condition that depends on an engineering analysis the
 * operator may have made (the "unless an engineering analysis … demonstrates critical strain levels
 * are not exceeded" of the gas dent conditions) is taken as not made: Linepack holds no such analysis.
 * The category is decided on the depth with the ILI tool tolerance added and on the failure pressure
 * computed from that depth, so tool uncertainty never makes a feature look better than it may be.
 */
import { addYearsUtc, addDaysUtc } from './dates';
import { deeperThanB31GLimit } from './b31g';

export type ResponseCategory = 'IMMEDIATE' | 'SIXTY_DAY' | 'ONE_YEAR' | 'TWO_YEAR' | 'ONE_HUNDRED_EIGHTY_DAY' | 'MONITORED' | 'OTHER';

export interface CategoryCriterion {
  category: ResponseCategory;
  ruleRef: string;
  criterion: string;
}

/** §192.933(d)(2)(iv): one-year metal-loss condition in an HCA when FPR ≤ these, by class location. */
export const HCA_ONE_YEAR_FPR: Readonly<Record<1 | 2 | 3 | 4, number>> = { 1: 1.25, 2: 1.39, 3: 1.67, 4: 2.0 };
/** §192.714(d)(2): two-year metal-loss condition outside an HCA when FPR ≤ these, by class location. */
export const NON_HCA_TWO_YEAR_FPR: Readonly<Record<1 | 2 | 3 | 4, number>> = { 1: 1.39, 2: 1.67, 3: 2.0, 4: 2.5 };
/** §192.933(d)(1)(ii) / §192.714(d)(1)(ii): immediate when the predicted failure pressure is ≤ 1.1 × MAOP. */
export const GAS_IMMEDIATE_FPR = 1.1;

/** The criteria as data, for the SDL descriptions and the README. */
export const categoryCriteria: readonly CategoryCriterion[] = [
  {
    category: 'IMMEDIATE',
    ruleRef: '§192.933(d)(1)(i) / §192.714(d)(1)(i) / §195.452(h)(4)(i)(A)',
    criterion: 'metal loss deeper than 80 % of nominal wall, regardless of dimensions',
  },
  { category: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(ii) / §192.714(d)(1)(ii)', criterion: 'gas: predicted failure pressure ≤ 1.1 × MAOP at the anomaly' },
  {
    category: 'IMMEDIATE',
    ruleRef: '§195.452(h)(4)(i)(B)',
    criterion: 'liquid: predicted burst pressure below the established maximum operating pressure at the anomaly',
  },
  {
    category: 'ONE_YEAR',
    ruleRef: '§192.933(d)(2)',
    criterion: 'gas in an HCA: failure pressure ratio ≤ 1.25 (class 1), 1.39 (class 2), 1.67 (class 3), 2.00 (class 4)',
  },
  {
    category: 'TWO_YEAR',
    ruleRef: '§192.714(d)(2)',
    criterion: 'gas outside an HCA: failure pressure ratio ≤ 1.39 (class 1), 1.67 (class 2), 2.00 (class 3), 2.50 (class 4)',
  },
  {
    category: 'ONE_HUNDRED_EIGHTY_DAY',
    ruleRef: '§195.452(h)(4)(iii)',
    criterion: 'liquid: the remaining strength gives a safe operating pressure below the established maximum operating pressure',
  },
  {
    category: 'MONITORED',
    ruleRef: '§192.933(d)(3) / §192.714(d)(3)',
    criterion: 'gas: any other metal loss — recorded and re-evaluated at the next assessment',
  },
  { category: 'OTHER', ruleRef: '§195.452(h)(4)(iv)', criterion: 'liquid: any other metal loss — evaluated and scheduled by the operator' },
];

export interface CategoryInput {
  regulation: 'CFR_192' | 'CFR_195';
  /** Gas: in a high consequence area (a covered segment). Ignored for liquid. */
  inHca: boolean;
  classLocation: number | null;
  /** With tool tolerance. */
  depthPctWt: number;
  /** From the depth with tolerance; null when B31G does not apply (depth > 80 %). */
  failurePressureKpa: number | null;
  safePressureKpa: number | null;
  /** MAOP (gas) or MOP (liquid). */
  maopKpa: number | null;
  /** METAL_LOSS or GOUGE; METAL_LOSS when absent. */
  featureType?: string | null;
  metalLossKind?: string | null;
  interactsWithGirthWeld?: boolean | null;
  interactsWithSeamWeld?: boolean | null;
  atPipelineCrossing?: boolean | null;
}

export interface CategoryDecision {
  category: ResponseCategory;
  ruleRef: string;
  reason: string;
}

const fmt = (n: number) => n.toFixed(2);

/**
 * The paragraphs of §195.452(h)(4) (as in force: the 2002 repair criteria, Amdt. 195-74, 67 FR 1650) that decide a
 * liquid metal-loss category beyond the remaining-strength tests, quoted in each decision's reason.
 */
export const LIQUID_METAL_LOSS_PARAGRAPHS = {
  generalCorrosion: { ruleRef: '§195.452(h)(4)(iii)(E)', text: 'An area of general corrosion with a predicted metal loss greater than 50% of nominal wall.' },
  locatedMetalLoss: {
    ruleRef: '§195.452(h)(4)(iii)(F)',
    text: 'Predicted metal loss greater than 50% of nominal wall that is located at a crossing of another pipeline, or is in an area with widespread circumferential corrosion, or is in an area that could affect a girth weld.',
  },
  seamCorrosion: { ruleRef: '§195.452(h)(4)(iii)(H)', text: 'Corrosion of or along a longitudinal seam weld.' },
  gougeOrGroove: { ruleRef: '§195.452(h)(4)(iii)(I)', text: 'A gouge or groove greater than 12.5% of nominal wall.' },
} as const;

/** §195.452(h)(4)(iii)(E), (F): "greater than 50% of nominal wall". */
export const LIQUID_HALF_WALL_PCT = 50;
/** §195.452(h)(4)(iii)(I): "greater than 12.5% of nominal wall". */
export const LIQUID_GOUGE_GROOVE_PCT = 12.5;

function liquidLocatedMetalLoss(input: CategoryInput): string | null {
  if (input.atPipelineCrossing) return 'at a crossing of another pipeline';
  if (input.metalLossKind === 'CIRCUMFERENTIAL_CORROSION') return 'in an area of widespread circumferential corrosion';
  if (input.interactsWithGirthWeld) return 'in an area that could affect a girth weld';
  return null;
}

export function responseCategory(input: CategoryInput): CategoryDecision {
  const { regulation, depthPctWt, failurePressureKpa: pf, safePressureKpa, maopKpa: maop } = input;
  if (deeperThanB31GLimit(depthPctWt / 100)) {
    return {
      category: 'IMMEDIATE',
      ruleRef: regulation === 'CFR_195' ? '§195.452(h)(4)(i)(A)' : input.inHca ? '§192.933(d)(1)(i)' : '§192.714(d)(1)(i)',
      reason: `metal loss ${depthPctWt.toFixed(1)} % of wall is deeper than 80 %: "Metal loss greater than 80% of nominal wall regardless of dimensions."`,
    };
  }
  if (pf == null || maop == null) throw new Error('a failure pressure and MAOP are required below 80 % depth');
  const fpr = pf / maop;
  if (regulation === 'CFR_195') {
    if (pf < maop)
      return {
        category: 'IMMEDIATE',
        ruleRef: '§195.452(h)(4)(i)(B)',
        reason: `predicted burst pressure ${pf.toFixed(0)} kPa is below MOP ${maop.toFixed(0)} kPa`,
      };
    if (safePressureKpa != null && safePressureKpa < maop) {
      return {
        category: 'ONE_HUNDRED_EIGHTY_DAY',
        ruleRef: '§195.452(h)(4)(iii)(D)',
        reason: `safe operating pressure ${safePressureKpa.toFixed(0)} kPa is below MOP ${maop.toFixed(0)} kPa`,
      };
    }
    const p = LIQUID_METAL_LOSS_PARAGRAPHS;
    const deep = depthPctWt > LIQUID_HALF_WALL_PCT;
    if (deep && input.metalLossKind === 'GENERAL_CORROSION')
      return {
        category: 'ONE_HUNDRED_EIGHTY_DAY',
        ruleRef: p.generalCorrosion.ruleRef,
        reason: `general corrosion ${depthPctWt.toFixed(1)} % of wall: "${p.generalCorrosion.text}"`,
      };
    const where = liquidLocatedMetalLoss(input);
    if (deep && where)
      return {
        category: 'ONE_HUNDRED_EIGHTY_DAY',
        ruleRef: p.locatedMetalLoss.ruleRef,
        reason: `metal loss ${depthPctWt.toFixed(1)} % of wall ${where}: "${p.locatedMetalLoss.text}"`,
      };
    if (input.interactsWithSeamWeld && (input.featureType ?? 'METAL_LOSS') === 'METAL_LOSS')
      return { category: 'ONE_HUNDRED_EIGHTY_DAY', ruleRef: p.seamCorrosion.ruleRef, reason: `metal loss at a seam weld: "${p.seamCorrosion.text}"` };
    if ((input.featureType === 'GOUGE' || input.metalLossKind === 'GROOVE') && depthPctWt > LIQUID_GOUGE_GROOVE_PCT)
      return {
        category: 'ONE_HUNDRED_EIGHTY_DAY',
        ruleRef: p.gougeOrGroove.ruleRef,
        reason: `${input.featureType === 'GOUGE' ? 'gouge' : 'groove'} ${depthPctWt.toFixed(1)} % of wall: "${p.gougeOrGroove.text}"`,
      };
    return {
      category: 'OTHER',
      ruleRef: '§195.452(h)(4)(iv)',
      reason: `safe operating pressure ${safePressureKpa?.toFixed(0)} kPa covers MOP ${maop.toFixed(0)} kPa and no 180-day condition applies`,
    };
  }
  const immediateRef = input.inHca ? '§192.933(d)(1)(ii)' : '§192.714(d)(1)(ii)';
  if (fpr <= GAS_IMMEDIATE_FPR) return { category: 'IMMEDIATE', ruleRef: immediateRef, reason: `failure pressure ratio ${fmt(fpr)} ≤ 1.1` };
  const cls = (input.classLocation ?? 4) as 1 | 2 | 3 | 4;
  if (input.inHca) {
    const limit = HCA_ONE_YEAR_FPR[cls];
    if (fpr <= limit) return { category: 'ONE_YEAR', ruleRef: '§192.933(d)(2)', reason: `failure pressure ratio ${fmt(fpr)} ≤ ${fmt(limit)} (class ${cls})` };
    return { category: 'MONITORED', ruleRef: '§192.933(d)(3)', reason: `failure pressure ratio ${fmt(fpr)} > ${fmt(limit)} (class ${cls})` };
  }
  const limit = NON_HCA_TWO_YEAR_FPR[cls];
  if (fpr <= limit) return { category: 'TWO_YEAR', ruleRef: '§192.714(d)(2)', reason: `failure pressure ratio ${fmt(fpr)} ≤ ${fmt(limit)} (class ${cls})` };
  return { category: 'MONITORED', ruleRef: '§192.714(d)(3)', reason: `failure pressure ratio ${fmt(fpr)} > ${fmt(limit)} (class ${cls})` };
}

/** A dent as the dent conditions read it (null: not reported). */
export interface DentInput {
  regulation: 'CFR_192' | 'CFR_195';
  /** Gas: in an HCA (§192.933) or not (§192.714). Ignored for liquid. */
  inHca: boolean;
  outsideDiameterMm: number | null;
  /** Degrees clockwise from the top of the pipe. */
  clockDeg: number | null;
  dentDepthPctOd: number | null;
  hasMetalLoss: boolean | null;
  hasCracking: boolean | null;
  hasStressRiser: boolean | null;
  interactsWithGirthWeld: boolean | null;
  interactsWithSeamWeld: boolean | null;
}

/** NPS 12 pipe is 12.75 in outside diameter: "a pipeline diameter less than NPS 12" is less than this. */
export const NPS_12_OD_MM = 12.75 * 25.4;
const MM_PER_INCH = 25.4;
/** 4 o'clock and 8 o'clock, in degrees clockwise from the top of the pipe. */
const FOUR_OCLOCK_DEG = 120;
const EIGHT_OCLOCK_DEG = 240;

/**
 * "Between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe)" (Part 192), "on the top of the pipeline
 * (above the 4 and 8 o'clock positions)" (Part 195): the arc through 12 o'clock, its ends included — a dent at
 * exactly 4 o'clock is taken as on the top, the more urgent side.
 */
export function onTopOfPipe(clockDeg: number): boolean {
  return clockDeg <= FOUR_OCLOCK_DEG || clockDeg >= EIGHT_OCLOCK_DEG;
}

type DentTest = (dent: DentFacts) => string | null;

/** What the dent conditions are tested on, with the assumptions taken for what was not reported. */
interface DentFacts {
  top: boolean;
  indications: string[];
  atWeld: string | null;
  /** Whether the dent is deeper than `pct` % of the diameter, or than `smallPipeIn` inches on pipe below NPS 12; the words for it. */
  deeperThan(pct: number, smallPipeIn?: number): string | null;
}

interface DentCondition {
  category: ResponseCategory;
  ruleRef: string;
  /** The paragraph, quoted. */
  text: string;
  test: DentTest;
}

const CRITICAL_STRAIN_PROVISO =
  'unless an engineering analysis performed in accordance with § 192.712(c) demonstrates critical strain levels are not exceeded.';

/**
 * The gas dent conditions of §192.933(d) (in an HCA: second tier ONE_YEAR) and §192.714(d) (outside: TWO_YEAR),
 * which the 2022 rule wrote alike, most urgent first. The engineering-analysis provisos are taken as not met.
 */
function gasDentConditions(inHca: boolean): DentCondition[] {
  const section = inHca ? '§192.933(d)' : '§192.714(d)';
  const second: ResponseCategory = inHca ? 'ONE_YEAR' : 'TWO_YEAR';
  return [
    {
      category: 'IMMEDIATE',
      ruleRef: `${section}(1)(v)`,
      text: `A dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) that has metal loss, cracking, or a stress riser, ${CRITICAL_STRAIN_PROVISO}`,
      test: (d) => (d.top && d.indications.length > 0 ? `a dent on the upper 2/3 of the pipe with ${d.indications.join(', ')}` : null),
    },
    {
      category: second,
      ruleRef: `${section}(2)(i)`,
      text: `A smooth dent located between the 8 o'clock and 4 o'clock positions (upper 2/3 of the pipe) with a depth greater than 6% of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than Nominal Pipe Size (NPS) 12), ${CRITICAL_STRAIN_PROVISO}`,
      test: (d) => {
        const deep = d.top && d.indications.length === 0 ? d.deeperThan(6, 0.5) : null;
        return deep ? `a smooth dent on the upper 2/3 of the pipe ${deep}` : null;
      },
    },
    {
      category: second,
      ruleRef: `${section}(2)(ii)`,
      text: `A dent with a depth greater than 2% of the pipeline's diameter (0.250 inches in depth for a pipeline diameter less than NPS 12) that affects pipe curvature at a girth weld or at a longitudinal or helical (spiral) seam weld, ${CRITICAL_STRAIN_PROVISO}`,
      test: (d) => {
        const deep = d.atWeld ? d.deeperThan(2, 0.25) : null;
        return deep ? `a dent ${deep} ${d.atWeld}` : null;
      },
    },
    {
      category: second,
      ruleRef: `${section}(2)(iii)`,
      text: `A dent located between the 4 o'clock position and the 8 o'clock position (bottom 1/3 of the pipe) that has metal loss, cracking, or a stress riser, ${CRITICAL_STRAIN_PROVISO}`,
      test: (d) => (!d.top && d.indications.length > 0 ? `a dent on the bottom 1/3 of the pipe with ${d.indications.join(', ')}` : null),
    },
    {
      category: 'MONITORED',
      ruleRef: `${section}(3)(i)`,
      text: "A dent with a depth greater than 6% of the pipeline diameter (greater than 0.50 inches in depth for a pipeline diameter less than NPS 12) located between the 4 o'clock position and the 8 o'clock position (bottom 1/3 of the pipe).",
      test: (d) => {
        const deep = !d.top ? d.deeperThan(6, 0.5) : null;
        return deep ? `a dent on the bottom 1/3 of the pipe ${deep}` : null;
      },
    },
  ];
}

/** The liquid dent conditions of §195.452(h)(4)(i)–(iii), most urgent first. */
export const LIQUID_DENT_CONDITIONS: readonly DentCondition[] = [
  {
    category: 'IMMEDIATE',
    ruleRef: '§195.452(h)(4)(i)(C)',
    text: "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) that has any indication of metal loss, cracking or a stress riser.",
    test: (d) => (d.top && d.indications.length > 0 ? `a dent on the top of the pipeline with ${d.indications.join(', ')}` : null),
  },
  {
    category: 'IMMEDIATE',
    ruleRef: '§195.452(h)(4)(i)(D)',
    text: "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) with a depth greater than 6% of the nominal pipe diameter.",
    test: (d) => {
      const deep = d.top ? d.deeperThan(6) : null;
      return deep ? `a dent on the top of the pipeline ${deep}` : null;
    },
  },
  {
    category: 'SIXTY_DAY',
    ruleRef: '§195.452(h)(4)(ii)(A)',
    text: "A dent located on the top of the pipeline (above the 4 and 8 o'clock positions) with a depth greater than 3% of the pipeline diameter (greater than 0.250 inches in depth for a pipeline diameter less than Nominal Pipe Size (NPS) 12).",
    test: (d) => {
      const deep = d.top ? d.deeperThan(3, 0.25) : null;
      return deep ? `a dent on the top of the pipeline ${deep}` : null;
    },
  },
  {
    category: 'SIXTY_DAY',
    ruleRef: '§195.452(h)(4)(ii)(B)',
    text: 'A dent located on the bottom of the pipeline that has any indication of metal loss, cracking or a stress riser.',
    test: (d) => (!d.top && d.indications.length > 0 ? `a dent on the bottom of the pipeline with ${d.indications.join(', ')}` : null),
  },
  {
    category: 'ONE_HUNDRED_EIGHTY_DAY',
    ruleRef: '§195.452(h)(4)(iii)(A)',
    text: "A dent with a depth greater than 2% of the pipeline's diameter (0.250 inches in depth for a pipeline diameter less than NPS 12) that affects pipe curvature at a girth weld or a longitudinal seam weld.",
    test: (d) => {
      const deep = d.atWeld ? d.deeperThan(2, 0.25) : null;
      return deep ? `a dent ${deep} ${d.atWeld}` : null;
    },
  },
  {
    category: 'ONE_HUNDRED_EIGHTY_DAY',
    ruleRef: '§195.452(h)(4)(iii)(B)',
    text: "A dent located on the top of the pipeline (above 4 and 8 o'clock position) with a depth greater than 2% of the pipeline's diameter (0.250 inches in depth for a pipeline diameter less than NPS 12).",
    test: (d) => {
      const deep = d.top ? d.deeperThan(2, 0.25) : null;
      return deep ? `a dent on the top of the pipeline ${deep}` : null;
    },
  },
  {
    category: 'ONE_HUNDRED_EIGHTY_DAY',
    ruleRef: '§195.452(h)(4)(iii)(C)',
    text: "A dent located on the bottom of the pipeline with a depth greater than 6% of the pipeline's diameter.",
    test: (d) => {
      const deep = !d.top ? d.deeperThan(6) : null;
      return deep ? `a dent on the bottom of the pipeline ${deep}` : null;
    },
  },
];

/** Every dent condition, for the README and the tests. */
export const dentConditions = (regulation: 'CFR_192' | 'CFR_195', inHca: boolean): readonly DentCondition[] =>
  regulation === 'CFR_195' ? LIQUID_DENT_CONDITIONS : gasDentConditions(inHca);

/**
 * A dent's category: the first (most urgent) dent condition of its regulation that it meets. What was not reported
 * is taken the urgent way and said so in the reason — no clock position: on the top; no depth: deeper than every
 * depth threshold; an indication or weld interaction not reported: absent (the ILI vendor reports those it finds).
 * A dent meeting none is MONITORED (gas) or OTHER (liquid, §195.452(h)(4)(iv)).
 */
export function dentCategory(input: DentInput): CategoryDecision {
  const assumptions: string[] = [];
  const top = input.clockDeg == null ? true : onTopOfPipe(input.clockDeg);
  if (input.clockDeg == null) assumptions.push('clock position not recorded: taken as on the top of the pipe');
  const indications = [input.hasMetalLoss ? 'metal loss' : null, input.hasCracking ? 'cracking' : null, input.hasStressRiser ? 'a stress riser' : null].filter(
    (v): v is string => v != null,
  );
  const atWeld = input.interactsWithGirthWeld ? 'at a girth weld' : input.interactsWithSeamWeld ? 'at a seam weld' : null;
  const depth = input.dentDepthPctOd;
  const od = input.outsideDiameterMm;
  if (depth == null) assumptions.push('depth not recorded (dentDepthPctOd): taken as deeper than every depth threshold');
  const facts: DentFacts = {
    top,
    indications,
    atWeld,
    deeperThan(pct, smallPipeIn) {
      if (depth == null) return `(depth not recorded, taken as > ${pct} % of the diameter)`;
      if (smallPipeIn != null && od != null && od < NPS_12_OD_MM) {
        const depthMm = (depth / 100) * od;
        return depthMm > smallPipeIn * MM_PER_INCH
          ? `${depthMm.toFixed(1)} mm deep (> ${smallPipeIn} in = ${(smallPipeIn * MM_PER_INCH).toFixed(2)} mm on pipe below NPS 12)`
          : null;
      }
      return depth > pct ? `${depth.toFixed(2)} % of the diameter deep (> ${pct} %)` : null;
    },
  };
  if (od == null) assumptions.push('outside diameter not recorded: the NPS 12 depth limits in inches are not applied');
  const note = assumptions.length > 0 ? ` [${assumptions.join('; ')}]` : '';
  for (const condition of dentConditions(input.regulation, input.inHca)) {
    const why = condition.test(facts);
    if (why) return { category: condition.category, ruleRef: condition.ruleRef, reason: `${why}: "${condition.text}"${note}` };
  }
  const described = `${top ? 'top' : 'bottom'}, ${depth == null ? 'depth not recorded' : `${depth.toFixed(2)} % of the diameter`}${indications.length ? `, with ${indications.join(', ')}` : ''}${atWeld ? `, ${atWeld}` : ''}`;
  if (input.regulation === 'CFR_195')
    return {
      category: 'OTHER',
      ruleRef: '§195.452(h)(4)(iv)',
      reason: `a dent (${described}) meeting none of the conditions of §195.452(h)(4)(i)–(iii): evaluated and scheduled by the operator${note}`,
    };
  const section = input.inHca ? '§192.933(d)' : '§192.714(d)';
  return {
    category: 'MONITORED',
    ruleRef: `${section}(3)`,
    reason: `a dent (${described}) meeting none of the immediate or ${input.inHca ? 'one-year' : 'two-year'} conditions of ${section}: recorded and re-evaluated at the next assessment${note}`,
  };
}

/** §192.933(d)(1)(iii)(A) / §192.714(d)(1)(iii)(A): "Crack depth plus any metal loss is greater than 50% of pipe wall thickness". */
export const GAS_CRACK_IMMEDIATE_PCT_WT = 50;

export const CRACK_PARAGRAPHS = {
  gasImmediateDepth: 'Crack depth plus any metal loss is greater than 50% of pipe wall thickness;',
  liquidCrack: 'A potential crack indication that when excavated is determined to be a crack.',
} as const;

/**
 * A crack's category, or why it has none. Gas: the depth condition of §192.933(d)(1)(iii)(A) / §192.714(d)(1)(iii)(A);
 * a shallower crack's conditions are written in a failure pressure from a fracture-mechanics model (§192.712(d)),
 * which Linepack does not compute. Liquid: an ILI crack indication is scheduled as the 180-day condition it becomes
 * when excavated (§195.452(h)(4)(iii)(G)) — the operator's excavation finding is not recorded, so the rule's
 * earliest reading is taken.
 */
export function crackCategory(input: {
  regulation: 'CFR_192' | 'CFR_195';
  inHca: boolean;
  depthPctWt: number | null;
}): CategoryDecision | { category: null; reason: string } {
  if (input.regulation === 'CFR_195')
    return {
      category: 'ONE_HUNDRED_EIGHTY_DAY',
      ruleRef: '§195.452(h)(4)(iii)(G)',
      reason: `an ILI crack indication, scheduled as a crack until excavation shows otherwise: "${CRACK_PARAGRAPHS.liquidCrack}"`,
    };
  const ref = input.inHca ? '§192.933(d)(1)(iii)(A)' : '§192.714(d)(1)(iii)(A)';
  if (input.depthPctWt == null)
    return { category: null, reason: `a crack needs its depth (depthPctWt) for ${ref}, and a fracture-mechanics failure pressure (§192.712(d)) for the rest` };
  if (input.depthPctWt > GAS_CRACK_IMMEDIATE_PCT_WT)
    return { category: 'IMMEDIATE', ruleRef: ref, reason: `a crack ${input.depthPctWt.toFixed(1)} % of wall deep: "${CRACK_PARAGRAPHS.gasImmediateDepth}"` };
  return {
    category: null,
    reason: `a crack ${input.depthPctWt.toFixed(1)} % of wall deep (not over 50 %, ${ref}); its other conditions need a fracture-mechanics failure pressure (§192.712(d)), not Modified B31G`,
  };
}

/**
 * When the response is due, from the discovery date. Linepack takes the anomaly's observation (the
 * ILI run) as its discovery — the earliest the rules allow, so never later than the operator's own
 * date (§192.933(c) gives up to 180 days after the assessment to reach discovery).
 */
export function repairDueAt(category: ResponseCategory, discoveredAt: Date): Date | null {
  switch (category) {
    case 'IMMEDIATE':
      return discoveredAt;
    case 'ONE_YEAR':
      return addYearsUtc(discoveredAt, 1);
    case 'TWO_YEAR':
      return addYearsUtc(discoveredAt, 2);
    case 'SIXTY_DAY':
      return addDaysUtc(discoveredAt, 60);
    case 'ONE_HUNDRED_EIGHTY_DAY':
      return addDaysUtc(discoveredAt, 180);
    case 'MONITORED':
    case 'OTHER':
      return null;
  }
}
