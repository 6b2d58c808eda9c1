/**
 * Response categories under the integrity-management repair criteria: gas in an HCA (covered segment) §192.933(d),
 * gas outside an HCA §192.714(d) — both as the 2022 gas transmission rule (Amdt. 192-132, 87 FR 52224, in force
 * May 24, 2023) and its later amendments wrote them — and liquid §195.452(h)(4). Each decision's reason quotes the
 * paragraph it applied, in the eCFR's words (regulation-text.ts says where they were read).
 * Metal loss (responseCategory: Modified B31G, or RSTRENG over a field profile, informs it), dents (dentCategory: depth
 * as % of the diameter, clock position, metal loss / cracking / stress riser, weld interaction) and cracks
 * (crackCategory) are decided here. Every condition that depends on an engineering analysis the operator may have made
 * (the "unless … § 192.712(c) … critical strain levels are not exceeded" of the gas dent conditions) is taken as not
 * made: Linepack holds no such analysis. The category is decided on the depth with the ILI tool tolerance added and on
 * the failure pressure computed from that depth, so tool uncertainty never makes a feature look better than it may be.
 */
import { addYearsUtc, addDaysUtc } from './dates';
import { deeperThanB31GLimit } from './b31g';
import { gasParagraphs, LIQUID_METAL_LOSS_PARAGRAPHS, type GasParagraphs } from './regulation-text';

export type ResponseCategory = 'IMMEDIATE' | 'SIXTY_DAY' | 'ONE_YEAR' | 'TWO_YEAR' | 'ONE_HUNDRED_EIGHTY_DAY' | 'MONITORED' | 'OTHER';

/**
 * Gas metal loss, §192.933(d)(2)(iv) (in an HCA, one-year) and §192.714(d)(2)(iv) (outside, two-year): scheduled when
 * the predicted failure pressure is less than this × MAOP, by class location. Class 1 has no ratio: its metal loss
 * above 1.1 × MAOP follows ASME B31.8S section 7, Figure 4, "in accordance with paragraph (c)".
 */
export const GAS_METAL_LOSS_SCHEDULED_FPR: Readonly<Record<1 | 2 | 3 | 4, number | null>> = { 1: null, 2: 1.39, 3: 1.5, 4: 1.5 };
/**
 * §192.933(d)(2)(v) / §192.714(d)(2)(v): metal loss at a pipeline crossing, in widespread circumferential corrosion or
 * that could affect a girth weld (and (d)(2)(vi): metal loss on a longitudinal seam): less than 1.39 × MAOP in class 1
 * "or where Class 2 locations contain Class 1 pipe that has been uprated", 1.50 × MAOP elsewhere. Linepack records no
 * uprating, so class 2 takes 1.50 (the higher ratio catches more).
 */
export const GAS_LOCATED_METAL_LOSS_FPR: Readonly<Record<1 | 2 | 3 | 4, number>> = { 1: 1.39, 2: 1.5, 3: 1.5, 4: 1.5 };
/** §192.933(d)(1)(i) / §192.714(d)(1)(i): immediate when the predicted failure pressure is ≤ 1.1 × MAOP. */
export const GAS_IMMEDIATE_FPR = 1.1;
/** §192.933(d)(1)(iv) / §192.714(d)(1)(iv): metal loss on a susceptible longitudinal seam, immediate below 1.25 × MAOP. */
export const GAS_SEAM_IMMEDIATE_FPR = 1.25;

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

/** §195.452(h)(4)(iii)(E), (F): "greater than 50% of nominal wall". */
export const LIQUID_HALF_WALL_PCT = 50;
/** §195.452(h)(4)(iii)(I): "greater than 12.5% of nominal wall". */
export const LIQUID_GOUGE_GROOVE_PCT = 12.5;

/** Where metal loss lies that the located-metal-loss conditions name (crossing, circumferential corrosion, girth weld). */
function locatedMetalLoss(input: CategoryInput): string | null {
  if (input.atPipelineCrossing) return 'at a crossing of another pipeline';
  if (input.metalLossKind === 'CIRCUMFERENTIAL_CORROSION') return 'in an area of widespread circumferential corrosion';
  if (input.interactsWithGirthWeld) return 'in an area that could affect a girth weld';
  return null;
}

const onSeam = (input: CategoryInput) => input.interactsWithSeamWeld === true && (input.featureType ?? 'METAL_LOSS') === 'METAL_LOSS';

export function responseCategory(input: CategoryInput): CategoryDecision {
  const { regulation, depthPctWt, failurePressureKpa: pf, safePressureKpa, maopKpa: maop } = input;
  if (deeperThanB31GLimit(depthPctWt / 100)) {
    const liquid = regulation === 'CFR_195';
    const gas = gasParagraphs(input.inHca);
    return {
      category: 'IMMEDIATE',
      ruleRef: liquid ? LIQUID_METAL_LOSS_PARAGRAPHS.deep.ruleRef : `${gas.section}(d)(1)(iii)`,
      reason: `metal loss ${depthPctWt.toFixed(1)} % of wall is deeper than 80 %: "${liquid ? LIQUID_METAL_LOSS_PARAGRAPHS.deep.text : gas.metalLossDeep}"`,
    };
  }
  if (pf == null || maop == null) throw new Error('a failure pressure and MAOP are required below 80 % depth');
  return regulation === 'CFR_195' ? liquidMetalLoss(input, pf, safePressureKpa, maop) : gasMetalLoss(input, pf / maop);
}

function liquidMetalLoss(input: CategoryInput, pf: number, safePressureKpa: number | null, maop: number): CategoryDecision {
  const p = LIQUID_METAL_LOSS_PARAGRAPHS;
  const { depthPctWt } = input;
  if (pf < maop)
    return {
      category: 'IMMEDIATE',
      ruleRef: p.burstBelowMop.ruleRef,
      reason: `predicted burst pressure ${pf.toFixed(0)} kPa is below MOP ${maop.toFixed(0)} kPa: "${p.burstBelowMop.text}"`,
    };
  if (safePressureKpa != null && safePressureKpa < maop)
    return {
      category: 'ONE_HUNDRED_EIGHTY_DAY',
      ruleRef: p.safeBelowMop.ruleRef,
      reason: `safe operating pressure ${safePressureKpa.toFixed(0)} kPa is below MOP ${maop.toFixed(0)} kPa: "${p.safeBelowMop.text}"`,
    };
  const deep = depthPctWt > LIQUID_HALF_WALL_PCT;
  if (deep && input.metalLossKind === 'GENERAL_CORROSION')
    return {
      category: 'ONE_HUNDRED_EIGHTY_DAY',
      ruleRef: p.generalCorrosion.ruleRef,
      reason: `general corrosion ${depthPctWt.toFixed(1)} % of wall: "${p.generalCorrosion.text}"`,
    };
  const where = locatedMetalLoss(input);
  if (deep && where)
    return {
      category: 'ONE_HUNDRED_EIGHTY_DAY',
      ruleRef: p.locatedMetalLoss.ruleRef,
      reason: `metal loss ${depthPctWt.toFixed(1)} % of wall ${where}: "${p.locatedMetalLoss.text}"`,
    };
  if (onSeam(input))
    return { category: 'ONE_HUNDRED_EIGHTY_DAY', ruleRef: p.seamCorrosion.ruleRef, reason: `metal loss at a seam weld: "${p.seamCorrosion.text}"` };
  if ((input.featureType === 'GOUGE' || input.metalLossKind === 'GROOVE') && depthPctWt > LIQUID_GOUGE_GROOVE_PCT)
    return {
      category: 'ONE_HUNDRED_EIGHTY_DAY',
      ruleRef: p.gougeOrGroove.ruleRef,
      reason: `${input.featureType === 'GOUGE' ? 'gouge' : 'groove'} ${depthPctWt.toFixed(1)} % of wall: "${p.gougeOrGroove.text}"`,
    };
  return {
    category: 'OTHER',
    ruleRef: p.other.ruleRef,
    reason: `safe operating pressure ${safePressureKpa?.toFixed(0)} kPa covers MOP ${maop.toFixed(0)} kPa and no 180-day condition applies: "${p.other.text}"`,
  };
}

/**
 * Gas metal loss below 80 % of wall, most urgent first: (d)(1)(i) failure pressure ≤ 1.1 × MAOP; (d)(1)(iv) on a
 * longitudinal seam below 1.25 × MAOP; then the second tier — (d)(2)(vi) on a seam, (d)(2)(v) at a crossing, in
 * circumferential corrosion or at a girth weld (1.39 × MAOP in class 1, else 1.50), (d)(2)(iv) any metal loss below
 * 1.39 × MAOP in class 2 or 1.50 × MAOP in class 3 and 4 — and otherwise the schedule of paragraph (c) (ASME B31.8S
 * section 7), which Linepack does not compute: OTHER, no due date.
 * The seam conditions are written in a §192.712(d) failure pressure (a fracture-mechanics model for seam and crack-like
 * defects) on seams of the listed kinds; Linepack records no seam type and computes no such pressure, so it takes every
 * seam as one of the listed kinds and screens with the Modified B31G (or RSTRENG) failure pressure, and says so. That is
 * more urgent than ignoring the seam, and the operator's §192.712(d) analysis decides.
 */
function gasMetalLoss(input: CategoryInput, fpr: number): CategoryDecision {
  const text = gasParagraphs(input.inHca);
  const cls = (input.classLocation ?? 4) as 1 | 2 | 3 | 4;
  const ratio = `failure pressure ratio ${fmt(fpr)}`;
  const quote = (paragraph: string) => `"${paragraph}"`;
  const seamScreen = '(screened with the Modified B31G / RSTRENG failure pressure: Linepack records no seam type and computes no § 192.712(d) pressure)';
  if (fpr <= GAS_IMMEDIATE_FPR)
    return { category: 'IMMEDIATE', ruleRef: `${text.section}(d)(1)(i)`, reason: `${ratio} ≤ 1.1: ${quote(text.metalLossFailurePressure)}` };
  if (onSeam(input) && fpr < GAS_SEAM_IMMEDIATE_FPR)
    return {
      category: 'IMMEDIATE',
      ruleRef: `${text.section}(d)(1)(iv)`,
      reason: `metal loss on a longitudinal seam, ${ratio} < 1.25 ${seamScreen}: ${quote(text.seamMetalLossImmediate)}`,
    };
  const located = GAS_LOCATED_METAL_LOSS_FPR[cls];
  if (onSeam(input) && fpr < located)
    return {
      category: text.secondTier,
      ruleRef: `${text.section}(d)(2)(vi)`,
      reason: `metal loss on a longitudinal seam, ${ratio} < ${fmt(located)} (class ${cls}) ${seamScreen}: ${quote(text.seamMetalLossScheduled)}`,
    };
  const where = locatedMetalLoss(input);
  if (where && fpr < located)
    return {
      category: text.secondTier,
      ruleRef: `${text.section}(d)(2)(v)`,
      reason: `metal loss ${where}, ${ratio} < ${fmt(located)} (class ${cls}): ${quote(text.locatedMetalLoss)}`,
    };
  const scheduled = GAS_METAL_LOSS_SCHEDULED_FPR[cls];
  if (scheduled != null && fpr < scheduled)
    return {
      category: text.secondTier,
      ruleRef: `${text.section}(d)(2)(iv)`,
      reason: `${ratio} < ${fmt(scheduled)} (class ${cls}): ${quote(text.metalLossScheduled)}`,
    };
  return {
    category: 'OTHER',
    ruleRef: `${text.section}(c)`,
    reason:
      scheduled == null
        ? `${ratio} > 1.1 in class 1: ${quote(text.metalLossScheduled)} — scheduled under ${text.section}(c), ${quote(text.schedule)} (Linepack computes no date from the B31.8S figure)`
        : `${ratio} ≥ ${fmt(scheduled)} (class ${cls}) and none of the conditions of ${text.section}(d) applies: scheduled under ${text.section}(c), ${quote(text.schedule)} (Linepack computes no date from the B31.8S figure)`,
  };
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

/**
 * The gas dent conditions of §192.933(d) (in an HCA: second tier ONE_YEAR) and §192.714(d) (outside: TWO_YEAR), most
 * urgent first, each in its own section's words. The engineering-analysis provisos are taken as not met, so the
 * monitored dent conditions of (d)(3) — each of which presumes such an analysis — are never assigned: a dent meeting
 * none of (d)(1) and (d)(2) is scheduled under paragraph (c) (dentCategory).
 */
function gasDentConditions(text: GasParagraphs): DentCondition[] {
  const section = `${text.section}(d)`;
  return [
    {
      category: 'IMMEDIATE',
      ruleRef: `${section}(1)(ii)`,
      text: text.dentTopWithIndication,
      test: (d) => (d.top && d.indications.length > 0 ? `a dent on the upper 2/3 of the pipe with ${d.indications.join(', ')}` : null),
    },
    {
      category: text.secondTier,
      ruleRef: `${section}(2)(i)`,
      text: text.smoothTopDent,
      test: (d) => {
        const deep = d.top && d.indications.length === 0 ? d.deeperThan(6, 0.5) : null;
        return deep ? `a smooth dent on the upper 2/3 of the pipe ${deep}` : null;
      },
    },
    {
      category: text.secondTier,
      ruleRef: `${section}(2)(ii)`,
      text: text.dentAtWeld,
      test: (d) => {
        const deep = d.atWeld ? d.deeperThan(2, 0.25) : null;
        return deep ? `a dent ${deep} ${d.atWeld}` : null;
      },
    },
    {
      category: text.secondTier,
      ruleRef: `${section}(2)(iii)`,
      text: text.bottomDentWithIndication,
      test: (d) => (!d.top && d.indications.length > 0 ? `a dent on the bottom 1/3 of the pipe with ${d.indications.join(', ')}` : null),
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
  regulation === 'CFR_195' ? LIQUID_DENT_CONDITIONS : gasDentConditions(gasParagraphs(inHca));

/**
 * A dent's category: the first (most urgent) dent condition of its regulation that it meets. What was not reported
 * is taken the urgent way and said so in the reason — no clock position: on the top; no depth: deeper than every
 * depth threshold; an indication or weld interaction not reported: absent (the ILI vendor reports those it finds).
 * A dent meeting none is OTHER: scheduled under §192.933(c) / §192.714(c) (gas) or §195.452(h)(4)(iv) (liquid).
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
      ruleRef: LIQUID_METAL_LOSS_PARAGRAPHS.other.ruleRef,
      reason: `a dent (${described}) meeting none of the conditions of §195.452(h)(4)(i)–(iii): "${LIQUID_METAL_LOSS_PARAGRAPHS.other.text}"${note}`,
    };
  const text = gasParagraphs(input.inHca);
  const bottomDeep = !top && facts.deeperThan(6, 0.5);
  return {
    category: 'OTHER',
    ruleRef: `${text.section}(c)`,
    reason: `a dent (${described}) meeting none of the immediate or ${input.inHca ? 'one-year' : 'two-year'} conditions of ${text.section}(d): scheduled under ${text.section}(c), "${text.schedule}"${
      bottomDeep
        ? ` — it becomes a monitored condition once an engineering analysis shows critical strain levels are not exceeded: "${text.bottomDentMonitored}"`
        : ''
    }${note}`,
  };
}

/** §192.933(d)(1)(v)(A) / §192.714(d)(1)(v)(A): "Crack depth plus any metal loss is greater than 50 percent of pipe wall thickness". */
export const GAS_CRACK_IMMEDIATE_PCT_WT = 50;

/**
 * A crack's category, or why it has none. Gas: the depth condition of (d)(1)(v)(A); (d)(1)(v)(B) needs the tool's
 * maximum measurable depth and the other crack conditions a §192.712(d) fracture-mechanics failure pressure, which
 * Linepack records and computes neither of. Liquid: an ILI crack indication is scheduled as the 180-day condition it
 * becomes when excavated (§195.452(h)(4)(iii)(G)) — the operator's excavation finding is not recorded, so the rule's
 * earliest reading is taken.
 */
export function crackCategory(input: {
  regulation: 'CFR_192' | 'CFR_195';
  inHca: boolean;
  depthPctWt: number | null;
}): CategoryDecision | { category: null; reason: string } {
  if (input.regulation === 'CFR_195') {
    const { crack } = LIQUID_METAL_LOSS_PARAGRAPHS;
    return {
      category: 'ONE_HUNDRED_EIGHTY_DAY',
      ruleRef: crack.ruleRef,
      reason: `an ILI crack indication, scheduled as a crack until excavation shows otherwise: "${crack.text}"`,
    };
  }
  const text = gasParagraphs(input.inHca);
  const ref = `${text.section}(d)(1)(v)(A)`;
  if (input.depthPctWt == null)
    return { category: null, reason: `a crack needs its depth (depthPctWt) for ${ref}, and a fracture-mechanics failure pressure (§192.712(d)) for the rest` };
  if (input.depthPctWt > GAS_CRACK_IMMEDIATE_PCT_WT)
    return { category: 'IMMEDIATE', ruleRef: ref, reason: `a crack ${input.depthPctWt.toFixed(1)} % of wall deep: "${text.crackDepth}"` };
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
