/**
 * The catalogue of recurring obligations Linepack tracks, each with its section of 49 CFR, the rule
 * in words, its timing as the regulation words it (calendar months, N½ months, weeks, calendar
 * years — never day counts), the evidence that completes it, which assets it applies to, and
 * whether evidence recorded on an ancestor asset counts. Pure: no I/O.
 *
 * WHY: it replaces the day-count catalogue (src/obligations.ts, `maxIntervalDays`), which misstated
 * calendar-month rules and ignored the "N times each calendar year" halves of them.
 *
 * Sources (regulation text read for each rule; see each entry's `rule`):
 * - §192.465(a),(b) — www.law.cornell.edu/cfr/text/49/192.465 (current text incl. (b)(1)/(b)(2)).
 * - §192.705(b) table — eCFR (the eCFR export github.com/MichalOpoka/ecfr, commit 4be71cd5; Amdt. 192-78, the
 *   latest amendment); quoted in obligations.test.ts.
 * - §192.706 intro and (a) — quoted in a 2024 PHMSA enforcement excerpt (Solem Pipeline Safety
 *   Consulting, Sept. 2024); (b) class 4 from the same section as commonly reproduced.
 * - §192.745(a) — eCFR (same export, commit 4be71cd5; last amended 68 FR 53901); quoted in the tests.
 * - §192.481(a) — operator O&M procedure citing 49 CFR 192.481 ("at least once every 3 calendar
 *   years, but with intervals not exceeding 39 months"); the 2001 text ("3 years") is superseded.
 * - §192.939 — PHMSA primis rule text (a)/(b) ("seven years"), PHMSA PI-09-0011 (2009), and the
 *   Oct. 1, 2019 final rule (84 FR 52180, eff. July 1, 2020): "a 6-month grace period for
 *   7-calendar-year integrity management reassessment intervals".
 * - §195.412(a) — quoted verbatim in PHMSA interpretation PI-91-020.
 * - §195.420(b) — quoted in PHMSA's Part 195 O&M enforcement guidance (rev. 2011-12-07).
 * - §195.452(a) applicability, (b), (j)(3) and (j)(5) — eCFR (same export, commit e4358186, after the 2019 liquid
 *   rule).
 * - §195.573(a)(1), (c) and §195.583(a) — not found verbatim in the stored copies; intervals as
 *   the text is widely reproduced (flagged in the README table).
 * - Operational status: PHMSA Advisory Bulletin ADB-2016-05 (81 FR 54512, Aug. 16, 2016) — the
 *   regulations recognise no "idle" status: a pipeline is active (every requirement applies) or
 *   abandoned (permanently removed from service, §192.727 / §195.402(c)(10)). Hence ACTIVE and
 *   IDLE assets carry obligations, ABANDONED ones none. PLANNED assets are not yet in service, so
 *   no operation-and-maintenance interval has started running (construction rules are out of scope).
 *
 * Applicability reads only the asset's own attributes. Attributes a child shares with its parent
 * (the Part it is regulated under, cathodic protection) can be filled in first with
 * `withInheritedAttributes`; class location, HCA and crossing are never inherited (a pipeline's
 * class is the worst of its segments', not every segment's).
 */
import { months, monthsAndAHalf, weeks } from './calendar';
import {
  describeEveryNCalendarYears,
  describeMaxGap,
  describeTimesPerCalendarYear,
  evaluateObligation,
  type EvaluationOptions,
  type ObligationEvaluation,
  type TimingRule,
} from './evaluate';

export const OBLIGATION_IDS = [
  'GAS_HCA_REASSESSMENT',
  'CP_SURVEY',
  'RECTIFIER_CHECK',
  'VALVE_INSPECTION',
  'PATROL',
  'LEAK_SURVEY',
  'ATMOSPHERIC_CORROSION',
  'LIQUID_HCA_REASSESSMENT',
  'LIQUID_CP_SURVEY',
  'LIQUID_RECTIFIER_CHECK',
  'LIQUID_VALVE_INSPECTION',
  'LIQUID_ROW_PATROL',
  'LIQUID_ATMOSPHERIC_CORROSION',
] as const;
export type ObligationId = (typeof OBLIGATION_IDS)[number];

export type RegulationCode = 'CFR_192' | 'CFR_195';

export const ASSET_TYPES = ['SYSTEM', 'PIPELINE', 'SEGMENT', 'VALVE', 'FITTING', 'LAUNCHER_RECEIVER', 'CP_TEST_POINT', 'RECTIFIER', 'STATION'] as const;
export type AssetType = (typeof ASSET_TYPES)[number];

export const ASSET_STATUSES = ['PLANNED', 'ACTIVE', 'IDLE', 'ABANDONED'] as const;
export type AssetStatus = (typeof ASSET_STATUSES)[number];

/** Statuses under which an asset carries obligations (ADB-2016-05: no "idle" exemption). */
export const STATUSES_WITH_OBLIGATIONS: readonly AssetStatus[] = ['ACTIVE', 'IDLE'];

/** Measurement / inspection record types that can complete an obligation. */
export type EvidenceType =
  | 'ILI_RUN'
  | 'PRESSURE_TEST'
  | 'DIRECT_ASSESSMENT'
  | 'CP_SURVEY'
  | 'CP_PIPE_TO_SOIL'
  | 'RECTIFIER_OUTPUT'
  | 'VALVE_INSPECTION'
  | 'PATROL'
  | 'LEAK_SURVEY'
  | 'ATMOSPHERIC_CORROSION_INSPECTION';

/**
 * What applicability reads. `type`/`status` are strings so projections with unknown values can be
 * passed as they are (an unknown type matches no obligation; an unknown status carries none).
 */
export interface AssetAttributes {
  type: AssetType | (string & {});
  status: AssetStatus | (string & {});
  regulation: RegulationCode | null;
  /** 1–4; null when unknown (e.g. a whole pipeline spanning several classes). */
  classLocation: number | null;
  inHca: boolean | null;
  /** §195.452(a): could affect a high consequence area. */
  couldAffectHca?: boolean | null;
  cathodicallyProtected?: boolean | null;
  atmosphericExposure?: boolean | null;
  crossing?: 'HIGHWAY' | 'RAILROAD' | null;
  /** §192.706: false when the gas is transported without odor or odorant (§192.625); unknown = unodorized. */
  gasOdorized?: boolean | null;
  /** §192.481(a) / §195.583(a): offshore pipe has the yearly interval; unknown = onshore. */
  offshore?: boolean | null;
}

/** One timing that applies to a described subset of the obligation's assets. */
export interface TimingVariant {
  /** When this timing applies, in words ("class 3, not at a crossing"). */
  when: string;
  timing: TimingRule;
}

export interface ObligationDefinition {
  obligation: ObligationId;
  regulation: RegulationCode;
  /** The section, e.g. "§192.745(a)". */
  regulationRef: string;
  title: string;
  /** The requirement in words, close to the regulation text. */
  rule: string;
  /** The timing in words, all variants together (for listings; the applicable one is on ApplicableObligation). */
  interval: string;
  /** Every timing the obligation can take, with when each applies. */
  variants: readonly TimingVariant[];
  /** Which assets it applies to, in words. */
  appliesTo: string;
  /** Record types that complete it. */
  evidenceTypes: readonly EvidenceType[];
  /** True when evidence recorded on an ancestor asset (e.g. a patrol of the whole pipeline) counts for this asset. */
  evidenceFromAncestors: boolean;
  /**
   * True when readings taken at the pipe's cathodic protection test points (CP_TEST_POINT children of the
   * asset or, with evidenceFromAncestors, of its ancestors) count: that is where a CP survey measures.
   */
  evidenceFromTestPoints?: boolean;
  /** Why evidenceFromAncestors (and evidenceFromTestPoints) is what it is. */
  evidenceScope: string;
  /** The pure applicability predicate (status and regulation are checked by `appliesToAsset` first). */
  applies(asset: AssetAttributes): boolean;
  /** The timing for this asset (only meaningful when `applies` is true). */
  timingFor(asset: AssetAttributes): TimingVariant;
}

/** An obligation resolved for one asset: its definition, the timing that applies, and an evaluator. */
export interface ApplicableObligation extends Omit<ObligationDefinition, 'applies' | 'timingFor' | 'variants'> {
  /** The timing that applies to this asset. */
  timing: TimingRule;
  /** Which variant, in words. */
  variant: string;
  /** evaluateObligation with this asset's timing. */
  evaluate(completions: readonly Date[], asOf: Date, dueSoonDays?: number, options?: EvaluationOptions): ObligationEvaluation;
}

// ---------------------------------------------------------------------------------------------
// Timing building blocks
// ---------------------------------------------------------------------------------------------

function timing(reference: string, parts: Omit<TimingRule, 'words' | 'reference'>, words?: string): TimingRule {
  const phrases: string[] = [];
  if (parts.everyNCalendarYears !== undefined) phrases.push(describeEveryNCalendarYears(parts.everyNCalendarYears));
  if (parts.timesPerCalendarYear !== undefined) phrases.push(describeTimesPerCalendarYear(parts.timesPerCalendarYear));
  if (parts.maxGap) phrases.push(describeMaxGap(parts.maxGap));
  return { words: words ?? phrases.join(', but '), reference, ...parts };
}

const isPipe = (a: AssetAttributes) => a.type === 'PIPELINE' || a.type === 'SEGMENT';

/** Pipe and pipeline components that can be exposed to the atmosphere (not SYSTEM, CP_TEST_POINT, RECTIFIER). */
const ATMOSPHERIC_TYPES: readonly string[] = ['PIPELINE', 'SEGMENT', 'VALVE', 'FITTING', 'LAUNCHER_RECEIVER', 'STATION'];

// §192.705(b) table.
const PATROL_REF = '§192.705(b)';
const PATROL_CLASS_1_2 = timing(
  PATROL_REF,
  { maxGap: months(15), timesPerCalendarYear: 1 },
  'intervals between patrols not longer than 15 months, but at least once each calendar year',
);
const PATROL_CLASS_3 = timing(
  PATROL_REF,
  { maxGap: monthsAndAHalf(7), timesPerCalendarYear: 2 },
  'intervals between patrols not longer than 7½ months, but at least twice each calendar year',
);
const PATROL_4_TIMES = timing(
  PATROL_REF,
  { maxGap: monthsAndAHalf(4), timesPerCalendarYear: 4 },
  'intervals between patrols not longer than 4½ months, but at least four times each calendar year',
);

/** Why an unknown class location takes the strictest row, in the words every such variant uses. */
const UNKNOWN_CLASS = 'class location unknown: the strictest row (class 4) applies until the class is recorded';

/**
 * The §192.705(b) row and column for a class location and crossing. An unknown class (null) takes the
 * class 4 row, the strictest: a patrol schedule that meets it meets every row, while a laxer row could
 * leave a class 3 or 4 location patrolled half as often as the table requires.
 */
export function patrolTiming(classLocation: number | null, crossing: 'HIGHWAY' | 'RAILROAD' | null | undefined): TimingVariant {
  const atCrossing = crossing === 'HIGHWAY' || crossing === 'RAILROAD';
  if (classLocation !== 1 && classLocation !== 2 && classLocation !== 3 && classLocation !== 4) return { when: UNKNOWN_CLASS, timing: PATROL_4_TIMES };
  if (classLocation === 4) return { when: atCrossing ? 'class 4, at a highway or railroad crossing' : 'class 4', timing: PATROL_4_TIMES };
  if (classLocation === 3)
    return atCrossing
      ? { when: 'class 3, at a highway or railroad crossing', timing: PATROL_4_TIMES }
      : { when: 'class 3, at all other places', timing: PATROL_CLASS_3 };
  const cls = `class ${classLocation}`;
  return atCrossing
    ? { when: `${cls}, at a highway or railroad crossing`, timing: PATROL_CLASS_3 }
    : { when: `${cls}, at all other places`, timing: PATROL_CLASS_1_2 };
}

// §192.706.
const LEAK_REF = '§192.706';
const LEAK_BASE = timing(
  LEAK_REF,
  { maxGap: months(15), timesPerCalendarYear: 1 },
  'at intervals not exceeding 15 months, but at least once each calendar year',
);
const LEAK_UNODORIZED_CLASS_3 = timing(
  '§192.706(a)',
  { maxGap: monthsAndAHalf(7), timesPerCalendarYear: 2 },
  'gas without odor or odorant, class 3: leak detector equipment, at intervals not exceeding 7½ months, but at least twice each calendar year',
);
const LEAK_UNODORIZED_CLASS_4 = timing(
  '§192.706(b)',
  { maxGap: monthsAndAHalf(4), timesPerCalendarYear: 4 },
  'gas without odor or odorant, class 4: leak detector equipment, at intervals not exceeding 4½ months, but at least four times each calendar year',
);

/**
 * §192.706: the base interval, tightened in class 3 and 4 when the gas is not odorized. Unknowns take
 * the stricter reading: unknown odorization counts as unodorized, an unknown class as class 4 (for
 * odorized gas every class has the base interval, so the class does not matter there).
 */
export function leakSurveyTiming(classLocation: number | null, gasOdorized: boolean | null | undefined): TimingVariant {
  const unodorized = gasOdorized !== true;
  const note =
    gasOdorized === true
      ? 'odorized gas'
      : gasOdorized === false
        ? 'gas without odor or odorant'
        : 'odorization unknown (the stricter unodorized-gas interval applies)';
  const known = classLocation === 1 || classLocation === 2 || classLocation === 3 || classLocation === 4;
  if (!known)
    return unodorized
      ? { when: `${UNKNOWN_CLASS}, ${note}`, timing: LEAK_UNODORIZED_CLASS_4 }
      : { when: 'class location unknown, odorized gas (any class)', timing: LEAK_BASE };
  if (unodorized && classLocation === 3) return { when: `class 3, ${note}`, timing: LEAK_UNODORIZED_CLASS_3 };
  if (unodorized && classLocation === 4) return { when: `class 4, ${note}`, timing: LEAK_UNODORIZED_CLASS_4 };
  return { when: classLocation === 3 || classLocation === 4 ? `class ${classLocation}, ${note}` : `class ${classLocation} (any gas)`, timing: LEAK_BASE };
}

function atmosphericTiming(reference: string, offshore: boolean | null | undefined): TimingVariant {
  return offshore === true
    ? {
        when: 'offshore',
        timing: timing(
          reference,
          { maxGap: months(15), timesPerCalendarYear: 1 },
          'offshore: at least once each calendar year, but with intervals not exceeding 15 months',
        ),
      }
    : {
        when: offshore === false ? 'onshore' : 'onshore (offshore unknown)',
        timing: timing(
          reference,
          { maxGap: months(39), everyNCalendarYears: 3 },
          'onshore: at least once every 3 calendar years, but with intervals not exceeding 39 months',
        ),
      };
}

/** Parts 192 and 195 word cathodic-protection monitoring alike; the evidence that satisfies it is the same. */
const CP_SURVEY_EVIDENCE = {
  evidenceTypes: ['CP_SURVEY', 'CP_PIPE_TO_SOIL'],
  evidenceFromAncestors: true,
  evidenceFromTestPoints: true,
  evidenceScope:
    "a CP survey of the pipeline covers its segments, and the pipe-to-soil readings of a survey are taken at the pipe's test points (CP_TEST_POINT assets whose parent is the pipe)",
} satisfies Pick<ObligationDefinition, 'evidenceTypes' | 'evidenceFromAncestors' | 'evidenceFromTestPoints' | 'evidenceScope'>;

/**
 * Integrity (re)assessment by any method both Parts allow. §192.937(c) (eCFR, as amended by Amdt. 192-125,
 * 84 FR 52254; the eCFR export github.com/MichalOpoka/ecfr, commit 2e4b90ba): "In conducting the integrity
 * reassessment, an operator must assess the integrity of the line pipe in each covered segment by applying one
 * or more of the following methods for each threat to which the covered segment is susceptible" — (1) internal
 * inspection tools, (2) pressure test, (3) spike hydrostatic pressure test, (4) excavation and in situ direct
 * examination, (5) guided wave UT, (6) direct assessment, (7) other technology, (8) confirmatory direct
 * assessment. §195.452(j)(5) (eCFR, commit e4358186): "(i) In-Line Inspection tool or tools …", "(ii) Pressure
 * test conducted in accordance with subpart E of this part", "(iii) External corrosion direct assessment in
 * accordance with § 195.588", "(iv) Other technology …". Linepack records them as ILI_RUN, PRESSURE_TEST and
 * DIRECT_ASSESSMENT. "Other technology" needs notice to PHMSA first (§192.937(c)(7), §195.452(j)(5)(iv)) and,
 * like excavation with in situ examination and guided wave UT, has no record type of its own yet.
 */
const REASSESSMENT_EVIDENCE = {
  evidenceTypes: ['ILI_RUN', 'PRESSURE_TEST', 'DIRECT_ASSESSMENT'],
  evidenceFromAncestors: true,
  evidenceScope:
    'an in-line inspection run, a pressure test or a direct assessment is recorded on the pipeline (or segment) it assessed and covers every segment of it',
} satisfies Pick<ObligationDefinition, 'evidenceTypes' | 'evidenceFromAncestors' | 'evidenceScope'>;

function single(variant: TimingVariant): Pick<ObligationDefinition, 'variants' | 'timingFor' | 'interval'> {
  return { variants: [variant], timingFor: () => variant, interval: variant.timing.words };
}

// ---------------------------------------------------------------------------------------------
// The catalogue
// ---------------------------------------------------------------------------------------------

export const OBLIGATION_CATALOGUE: readonly ObligationDefinition[] = [
  // ----- Part 192 (gas) -----
  {
    obligation: 'GAS_HCA_REASSESSMENT',
    regulation: 'CFR_192',
    regulationRef: '§192.939',
    title: 'Reassessment of covered segments (gas transmission integrity management)',
    rule: 'Each covered segment must be reassessed; the maximum reassessment interval by an allowable method is 7 calendar years (a 6-month extension is possible only on written notice with justification; longer operator intervals require a confirmatory direct assessment within the 7 years).',
    ...single({ when: 'covered segment', timing: timing('§192.939', { everyNCalendarYears: 7 }, 'maximum reassessment interval of 7 calendar years') }),
    appliesTo: 'gas PIPELINE and SEGMENT assets in a high consequence area (inHca = true)',
    ...REASSESSMENT_EVIDENCE,
    applies: (a) => isPipe(a) && a.inHca === true,
  },
  {
    obligation: 'CP_SURVEY',
    regulation: 'CFR_192',
    regulationRef: '§192.465(a)',
    title: 'External corrosion control: cathodic protection monitoring',
    rule: 'Each pipeline under cathodic protection must be tested at least once each calendar year, but with intervals not exceeding 15 months, to determine whether the cathodic protection meets §192.463.',
    ...single({
      when: 'under cathodic protection',
      timing: timing(
        '§192.465(a)',
        { maxGap: months(15), timesPerCalendarYear: 1 },
        'at least once each calendar year, but with intervals not exceeding 15 months',
      ),
    }),
    appliesTo:
      'gas PIPELINE and SEGMENT assets under cathodic protection (cathodicallyProtected not false: buried regulated steel must be protected, §192.455/§192.457)',
    ...CP_SURVEY_EVIDENCE,
    applies: (a) => isPipe(a) && a.cathodicallyProtected !== false,
  },
  {
    obligation: 'RECTIFIER_CHECK',
    regulation: 'CFR_192',
    regulationRef: '§192.465(b)(1)',
    title: 'Cathodic protection rectifier inspection',
    rule: 'Each cathodic protection rectifier or impressed current power source must be inspected six times each calendar year, but with intervals not exceeding 2½ months between inspections (remotely or on site). [(b)(2): remotely inspected rectifiers also need a physical inspection once each calendar year, ≤ 15 months — not tracked: no evidence type tells remote from on-site.]',
    ...single({
      when: 'rectifier',
      timing: timing(
        '§192.465(b)(1)',
        { maxGap: monthsAndAHalf(2), timesPerCalendarYear: 6 },
        'six times each calendar year, but with intervals not exceeding 2½ months between inspections',
      ),
    }),
    appliesTo: 'gas RECTIFIER assets',
    evidenceTypes: ['RECTIFIER_OUTPUT'],
    evidenceFromAncestors: false,
    evidenceScope: 'each rectifier is inspected on its own; a reading of another asset says nothing about this one',
    applies: (a) => a.type === 'RECTIFIER',
  },
  {
    obligation: 'VALVE_INSPECTION',
    regulation: 'CFR_192',
    regulationRef: '§192.745(a)',
    title: 'Valve maintenance: transmission lines',
    rule: 'Each transmission line valve that might be required during any emergency must be inspected and partially operated at intervals not exceeding 15 months, but at least once each calendar year.',
    ...single({
      when: 'valve',
      timing: timing(
        '§192.745(a)',
        { maxGap: months(15), timesPerCalendarYear: 1 },
        'at intervals not exceeding 15 months, but at least once each calendar year',
      ),
    }),
    appliesTo: 'gas VALVE assets (every valve is treated as one that might be required during an emergency: the asset model does not say otherwise)',
    evidenceTypes: ['VALVE_INSPECTION'],
    evidenceFromAncestors: false,
    evidenceScope: 'a valve must itself be inspected and partially operated; an inspection of the pipeline does not operate its valves',
    applies: (a) => a.type === 'VALVE',
  },
  {
    obligation: 'PATROL',
    regulation: 'CFR_192',
    regulationRef: '§192.705(b)',
    title: 'Transmission lines: patrolling',
    rule: 'Intervals between patrols may not be longer than the §192.705(b) table: class 1–2: 15 months, at least once each calendar year (7½ months, twice a year at highway and railroad crossings); class 3: 7½ months, at least twice each calendar year (4½ months, four times a year at crossings); class 4: 4½ months, at least four times each calendar year.',
    variants: [patrolTiming(1, null), patrolTiming(1, 'HIGHWAY'), patrolTiming(3, null), patrolTiming(3, 'HIGHWAY'), patrolTiming(4, null)],
    interval:
      'class 1–2: 15 months, at least once each calendar year (at highway and railroad crossings: 7½ months, at least twice); class 3: 7½ months, at least twice each calendar year (at crossings: 4½ months, at least four times); class 4: 4½ months, at least four times each calendar year',
    timingFor: (a) => patrolTiming(a.classLocation, a.crossing),
    appliesTo:
      'gas PIPELINE and SEGMENT assets; the row is the asset’s class location (unknown: class 4, the strictest row), the column whether it is at a highway or railroad crossing',
    evidenceTypes: ['PATROL'],
    evidenceFromAncestors: true,
    evidenceScope: 'a patrol of the pipeline right-of-way covers its segments (each segment is still judged against its own class and crossing row)',
    applies: (a) => isPipe(a),
  },
  {
    obligation: 'LEAK_SURVEY',
    regulation: 'CFR_192',
    regulationRef: '§192.706',
    title: 'Transmission lines: leakage surveys',
    rule: 'Leakage surveys of a transmission line must be conducted at intervals not exceeding 15 months, but at least once each calendar year. For gas transported without an odor or odorant (§192.625), surveys using leak detector equipment must be conducted in class 3 locations at intervals not exceeding 7½ months, but at least twice each calendar year, and in class 4 locations at intervals not exceeding 4½ months, but at least four times each calendar year.',
    variants: [leakSurveyTiming(1, true), leakSurveyTiming(3, false), leakSurveyTiming(4, false)],
    interval:
      'at intervals not exceeding 15 months, but at least once each calendar year; unodorized gas: class 3 7½ months and at least twice each calendar year, class 4 4½ months and at least four times each calendar year',
    timingFor: (a) => leakSurveyTiming(a.classLocation, a.gasOdorized),
    appliesTo:
      'gas PIPELINE and SEGMENT assets; class 3/4 assets whose gas is not known to be odorized take the stricter unodorized-gas interval, and so do assets of unknown class (as class 4)',
    evidenceTypes: ['LEAK_SURVEY'],
    evidenceFromAncestors: true,
    evidenceScope: 'a leakage survey of the pipeline covers its segments',
    applies: (a) => isPipe(a),
  },
  {
    obligation: 'ATMOSPHERIC_CORROSION',
    regulation: 'CFR_192',
    regulationRef: '§192.481(a)',
    title: 'Atmospheric corrosion control: monitoring',
    rule: 'Each pipeline or portion of pipeline exposed to the atmosphere must be inspected for evidence of atmospheric corrosion: onshore (other than service lines) at least once every 3 calendar years, but with intervals not exceeding 39 months; offshore at least once each calendar year, but with intervals not exceeding 15 months.',
    variants: [atmosphericTiming('§192.481(a)(1)', false), atmosphericTiming('§192.481(a)(3)', true)],
    interval:
      'onshore: at least once every 3 calendar years, but with intervals not exceeding 39 months; offshore: at least once each calendar year, but with intervals not exceeding 15 months',
    timingFor: (a) => atmosphericTiming(a.offshore === true ? '§192.481(a)(3)' : '§192.481(a)(1)', a.offshore),
    appliesTo: 'gas PIPELINE, SEGMENT, VALVE, FITTING, LAUNCHER_RECEIVER and STATION assets exposed to the atmosphere (atmosphericExposure = true)',
    evidenceTypes: ['ATMOSPHERIC_CORROSION_INSPECTION'],
    evidenceFromAncestors: true,
    evidenceScope: 'atmospheric corrosion inspections are surveys of a line or facility and cover the exposed pipe and components within it',
    applies: (a) => ATMOSPHERIC_TYPES.includes(a.type) && a.atmosphericExposure === true,
  },

  // ----- Part 195 (hazardous liquid) -----
  {
    obligation: 'LIQUID_HCA_REASSESSMENT',
    regulation: 'CFR_195',
    regulationRef: '§195.452(j)(3)',
    title: 'Integrity assessment of segments that could affect a high consequence area',
    rule: 'The operator must establish five-year intervals, not to exceed 68 months, for continually assessing the line pipe’s integrity (shorter when risk factors call for it).',
    ...single({ when: 'could affect an HCA', timing: timing('§195.452(j)(3)', { maxGap: months(68) }, 'five-year intervals, not to exceed 68 months') }),
    appliesTo:
      'liquid PIPELINE and SEGMENT assets that could affect a high consequence area (couldAffectHca = true, or inHca = true unless couldAffectHca = false — §195.452(a))',
    ...REASSESSMENT_EVIDENCE,
    applies: (a) => isPipe(a) && (a.couldAffectHca === true || (a.inHca === true && a.couldAffectHca !== false)),
  },
  {
    obligation: 'LIQUID_CP_SURVEY',
    regulation: 'CFR_195',
    regulationRef: '§195.573(a)(1)',
    title: 'External corrosion control monitoring: protected pipelines',
    rule: 'Protected pipelines must be tested at least once each calendar year, but with intervals not exceeding 15 months, to determine whether cathodic protection meets §195.571.',
    ...single({
      when: 'under cathodic protection',
      timing: timing(
        '§195.573(a)(1)',
        { maxGap: months(15), timesPerCalendarYear: 1 },
        'at least once each calendar year, but with intervals not exceeding 15 months',
      ),
    }),
    appliesTo:
      'liquid PIPELINE and SEGMENT assets under cathodic protection (cathodicallyProtected not false: buried or submerged pipe must be protected, §195.563)',
    ...CP_SURVEY_EVIDENCE,
    applies: (a) => isPipe(a) && a.cathodicallyProtected !== false,
  },
  {
    obligation: 'LIQUID_RECTIFIER_CHECK',
    regulation: 'CFR_195',
    regulationRef: '§195.573(c)',
    title: 'Rectifier and other impressed current device inspection',
    rule: 'Each cathodic protection rectifier or other impressed current power source must be inspected at least six times each calendar year, but with intervals not exceeding 2½ months, to ensure it is operating properly.',
    ...single({
      when: 'rectifier',
      timing: timing(
        '§195.573(c)',
        { maxGap: monthsAndAHalf(2), timesPerCalendarYear: 6 },
        'at least six times each calendar year, but with intervals not exceeding 2½ months',
      ),
    }),
    appliesTo: 'liquid RECTIFIER assets',
    evidenceTypes: ['RECTIFIER_OUTPUT'],
    evidenceFromAncestors: false,
    evidenceScope: 'each rectifier is inspected on its own',
    applies: (a) => a.type === 'RECTIFIER',
  },
  {
    obligation: 'LIQUID_VALVE_INSPECTION',
    regulation: 'CFR_195',
    regulationRef: '§195.420(b)',
    title: 'Valve maintenance: mainline valves',
    rule: 'Each operator shall, at intervals not exceeding 7½ months, but at least twice each calendar year, inspect each mainline valve to determine that it is functioning properly.',
    ...single({
      when: 'mainline valve',
      timing: timing(
        '§195.420(b)',
        { maxGap: monthsAndAHalf(7), timesPerCalendarYear: 2 },
        'at intervals not exceeding 7½ months, but at least twice each calendar year',
      ),
    }),
    appliesTo: 'liquid VALVE assets (every valve is treated as a mainline valve: the asset model does not say otherwise)',
    evidenceTypes: ['VALVE_INSPECTION'],
    evidenceFromAncestors: false,
    evidenceScope: 'a valve must itself be inspected; an inspection of the pipeline does not show this valve functions',
    applies: (a) => a.type === 'VALVE',
  },
  {
    obligation: 'LIQUID_ROW_PATROL',
    regulation: 'CFR_195',
    regulationRef: '§195.412(a)',
    title: 'Inspection of rights-of-way',
    rule: 'Each operator shall, at intervals not exceeding 3 weeks, but at least 26 times each calendar year, inspect the surface conditions on or adjacent to each pipeline right-of-way.',
    ...single({
      when: 'right-of-way',
      timing: timing(
        '§195.412(a)',
        { maxGap: weeks(3), timesPerCalendarYear: 26 },
        'at intervals not exceeding 3 weeks, but at least 26 times each calendar year',
      ),
    }),
    appliesTo: 'liquid PIPELINE and SEGMENT assets',
    evidenceTypes: ['PATROL'],
    evidenceFromAncestors: true,
    evidenceScope: 'a right-of-way inspection of the pipeline covers its segments',
    applies: (a) => isPipe(a),
  },
  {
    obligation: 'LIQUID_ATMOSPHERIC_CORROSION',
    regulation: 'CFR_195',
    regulationRef: '§195.583(a)',
    title: 'Atmospheric corrosion control monitoring',
    rule: 'Each pipeline or portion of pipeline exposed to the atmosphere must be inspected for evidence of atmospheric corrosion: onshore at least once every 3 calendar years, but with intervals not exceeding 39 months; offshore at least once each calendar year, but with intervals not exceeding 15 months.',
    variants: [atmosphericTiming('§195.583(a)', false), atmosphericTiming('§195.583(a)', true)],
    interval:
      'onshore: at least once every 3 calendar years, but with intervals not exceeding 39 months; offshore: at least once each calendar year, but with intervals not exceeding 15 months',
    timingFor: (a) => atmosphericTiming('§195.583(a)', a.offshore),
    appliesTo: 'liquid PIPELINE, SEGMENT, VALVE, FITTING, LAUNCHER_RECEIVER and STATION assets exposed to the atmosphere (atmosphericExposure = true)',
    evidenceTypes: ['ATMOSPHERIC_CORROSION_INSPECTION'],
    evidenceFromAncestors: true,
    evidenceScope: 'atmospheric corrosion inspections are surveys of a line or facility and cover the exposed pipe and components within it',
    applies: (a) => ATMOSPHERIC_TYPES.includes(a.type) && a.atmosphericExposure === true,
  },
];

const BY_ID = new Map<ObligationId, ObligationDefinition>(OBLIGATION_CATALOGUE.map((o) => [o.obligation, o]));

/** One definition by id. */
export function obligationDefinition(id: ObligationId): ObligationDefinition {
  const found = BY_ID.get(id);
  if (!found) throw new RangeError(`unknown obligation ${id}`);
  return found;
}

/** The catalogue, optionally of one regulation. */
export function catalogue(regulation?: RegulationCode | null): readonly ObligationDefinition[] {
  return regulation ? OBLIGATION_CATALOGUE.filter((o) => o.regulation === regulation) : OBLIGATION_CATALOGUE;
}

/** True when the asset is in a status that carries obligations (ACTIVE, IDLE). */
export function carriesObligations(asset: Pick<AssetAttributes, 'status'>): boolean {
  return (STATUSES_WITH_OBLIGATIONS as readonly string[]).includes(asset.status);
}

/**
 * The obligations a PLANNED asset will carry once it is in service (evaluated as if ACTIVE), none for
 * any other status. Nothing is owed before: the operation-and-maintenance intervals run from
 * operation, and §195.452(b) dates even a new (Category 3) pipeline's integrity management program from its start:
 * the program is due "1 year after the date the pipeline begins operation", the identification of its segments by the
 * "Date the pipeline begins operation" — but the answer must say so rather than read as compliant.
 */
export function obligationsOnceInService(asset: AssetAttributes): ApplicableObligation[] {
  return asset.status === 'PLANNED' ? obligationsFor({ ...asset, status: 'ACTIVE' }) : [];
}

/** The full predicate: status, regulation (Part 192 vs 195), then the obligation's own test. */
export function appliesToAsset(definition: ObligationDefinition, asset: AssetAttributes): boolean {
  return carriesObligations(asset) && asset.regulation === definition.regulation && definition.applies(asset);
}

/** Every obligation that applies to the asset, resolved to its timing, in catalogue order. */
export function obligationsFor(asset: AssetAttributes): ApplicableObligation[] {
  return OBLIGATION_CATALOGUE.filter((d) => appliesToAsset(d, asset)).map((d) => resolve(d, asset));
}

function resolve(definition: ObligationDefinition, asset: AssetAttributes): ApplicableObligation {
  const { applies: _applies, timingFor, variants: _variants, ...rest } = definition;
  const variant = timingFor(asset);
  return {
    ...rest,
    timing: variant.timing,
    variant: variant.when,
    interval: variant.timing.words,
    evaluate: (completions, asOf, dueSoonDays, options) => evaluateObligation(variant.timing, completions, asOf, dueSoonDays, options),
  };
}

/**
 * What a segment or component shares with the pipe it belongs to: the Part it is regulated under,
 * whether it is cathodically protected, whether it is offshore, and the gas it carries. Class location,
 * HCA, crossing, exposure and status are the asset's own and are never inherited.
 */
const INHERITED_ATTRIBUTES = ['regulation', 'cathodicallyProtected', 'offshore', 'gasOdorized'] as const;

/**
 * The asset with the inherited attributes filled in from the nearest ancestor that has them
 * (ancestors nearest first), when the asset's own are null/undefined.
 */
export function withInheritedAttributes<T extends AssetAttributes>(asset: T, ancestorsNearestFirst: readonly AssetAttributes[]): T {
  const inherit = <K extends (typeof INHERITED_ATTRIBUTES)[number]>(key: K): T[K] => {
    if (asset[key] !== null && asset[key] !== undefined) return asset[key];
    for (const ancestor of ancestorsNearestFirst) {
      const value = ancestor[key];
      if (value !== null && value !== undefined) return value as T[K];
    }
    return asset[key];
  };
  return { ...asset, ...Object.fromEntries(INHERITED_ATTRIBUTES.map((key) => [key, inherit(key)])) };
}
