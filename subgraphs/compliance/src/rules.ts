/**
 * The obligations Linepack tracks, with their timing rules as 49 CFR words them (current eCFR text):
 *
 *   §192.939(a)   covered segments: reassessment interval at most 7 calendar years
 *   §192.465(a)   CP: tested at least once each calendar year, intervals not exceeding 15 months
 *   §192.465(b)   rectifiers: inspected six times each calendar year, intervals not exceeding 2½ months
 *   §192.745(a)   transmission valves: intervals not exceeding 15 months, at least once each calendar year
 *   §192.705(b)   patrols: class 1–2 15 months/once a year; class 3 7½ months/twice a year; class 4
 *                 4½ months/four times a year; at highway and railroad crossings class 1–2 7½ months/
 *                 twice a year, class 3–4 4½ months/four times a year
 *   §192.706      leakage surveys: intervals not exceeding 15 months, at least once each calendar year
 *   §192.481(a)   onshore pipe exposed to the atmosphere: at least once every 3 calendar years,
 *                 intervals not exceeding 39 months
 *   §195.452(j)(3) segments that could affect an HCA: five-year intervals, not to exceed 68 months
 *   §195.573(a)(1) CP: at least once each calendar year, intervals not exceeding 15 months
 *   §195.573(c)   rectifiers: at least six times each calendar year, intervals not exceeding 2½ months
 *   §195.420(b)   mainline valves: intervals not exceeding 7½ months, at least twice each calendar year
 *   §195.412(a)   right-of-way: intervals not exceeding 3 weeks, at least 26 times each calendar year
 *   §195.583(a)   onshore pipe exposed to the atmosphere: at least once every 3 calendar years,
 *                 intervals not exceeding 39 months
 *
 * Every rule of an obligation holds at once; the due date is the earliest day any of them would be
 * broken. Assumptions (documented in the README's obligation table): an asset whose cathodic protection
 * is not recorded is treated as protected (§192.455/§195.563 require it on steel transmission lines);
 * a pipe segment whose class location is unknown gets the class 4 patrol interval until it is recorded;
 * §192.706's tighter class 3/4 intervals apply only to unodorized gas, which Linepack does not record,
 * so the general interval is used; PLANNED and ABANDONED assets have no recurring obligations.
 */
import { addInterval, daysBetween, describeInterval, endOfYear, startOfDay, type Interval } from './calendar';
import type { AssetProjection, ComplianceState, RegulationCode } from './documents';

export type Obligation =
  | 'GAS_HCA_REASSESSMENT'
  | 'CP_SURVEY'
  | 'RECTIFIER_CHECK'
  | 'VALVE_INSPECTION'
  | 'PATROL'
  | 'LEAK_SURVEY'
  | 'ATMOSPHERIC_CORROSION'
  | 'LIQUID_HCA_REASSESSMENT'
  | 'LIQUID_CP_SURVEY'
  | 'LIQUID_RECTIFIER_CHECK'
  | 'LIQUID_VALVE_INSPECTION'
  | 'LIQUID_ROW_PATROL'
  | 'LIQUID_ATMOSPHERIC_CORROSION';

/** The timing of one obligation for one asset: every present rule must hold. */
export interface Timing {
  maxGap?: Interval;
  timesPerCalendarYear?: number;
  /** "At least once every N calendar years": the next completion by 31 December of year(last) + N. */
  withinCalendarYears?: number;
}

/** What decides applicability and timing: the asset, with regulation and class location inherited from its ancestors. */
export interface EffectiveAsset {
  type: string;
  status: string;
  regulation: RegulationCode | null;
  classLocation: number | null;
  inHca: boolean;
  couldAffectHca: boolean | null;
  cathodicallyProtected: boolean | null;
  atmosphericExposure: boolean | null;
  crossing: 'HIGHWAY' | 'RAILROAD' | null;
}

interface ObligationRule {
  obligation: Obligation;
  regulation: RegulationCode;
  regulationRef: string;
  title: string;
  appliesTo: string;
  evidenceTypes: readonly string[];
  evidenceFromAncestors: boolean;
  applies(asset: EffectiveAsset): boolean;
  timing(asset: EffectiveAsset): Timing;
  /** The general rule in words (patrol varies by class; the catalogue shows the whole table). */
  interval: string;
}

const PIPE = new Set(['PIPELINE', 'SEGMENT']);
const IN_SERVICE = new Set(['ACTIVE', 'IDLE']);
const pipe = (a: EffectiveAsset) => PIPE.has(a.type);
const protectedPipe = (a: EffectiveAsset) => pipe(a) && a.cathodicallyProtected !== false;
const exposed = (a: EffectiveAsset) => a.atmosphericExposure === true;
const fixed = (timing: Timing) => () => timing;

const CP_EVIDENCE = ['CP_SURVEY', 'CP_PIPE_TO_SOIL'] as const;

/** §192.705(b): the maximum interval between patrols by class location, at crossings and elsewhere. */
export function patrolTiming(asset: Pick<EffectiveAsset, 'classLocation' | 'crossing'>): Timing {
  const cls = asset.classLocation ?? 4;
  const atCrossing = asset.crossing != null;
  if (cls >= 4 || (cls === 3 && atCrossing)) return { maxGap: { months: 4, halfMonth: true }, timesPerCalendarYear: 4 };
  if (cls === 3 || atCrossing) return { maxGap: { months: 7, halfMonth: true }, timesPerCalendarYear: 2 };
  return { maxGap: { months: 15 }, timesPerCalendarYear: 1 };
}

const rules: readonly ObligationRule[] = [
  {
    obligation: 'GAS_HCA_REASSESSMENT',
    regulation: 'CFR_192',
    regulationRef: '§192.939(a)',
    title: 'Reassessment of covered segments (gas transmission integrity management)',
    appliesTo: 'gas transmission pipelines and segments in a high consequence area',
    interval: 'reassessment interval not exceeding 7 calendar years',
    evidenceTypes: ['ILI_RUN'],
    evidenceFromAncestors: true,
    applies: (a) => pipe(a) && a.inHca,
    timing: fixed({ withinCalendarYears: 7 }),
  },
  {
    obligation: 'CP_SURVEY',
    regulation: 'CFR_192',
    regulationRef: '§192.465(a)',
    title: 'Cathodic protection monitoring (pipe-to-soil survey)',
    appliesTo: 'cathodically protected pipelines and segments (assumed protected unless recorded otherwise)',
    interval: 'at least once each calendar year, with intervals not exceeding 15 months',
    evidenceTypes: CP_EVIDENCE,
    evidenceFromAncestors: true,
    applies: protectedPipe,
    timing: fixed({ maxGap: { months: 15 }, timesPerCalendarYear: 1 }),
  },
  {
    obligation: 'RECTIFIER_CHECK',
    regulation: 'CFR_192',
    regulationRef: '§192.465(b)',
    title: 'Rectifier inspection',
    appliesTo: 'cathodic protection rectifiers',
    interval: 'six times each calendar year, with intervals not exceeding 2½ months',
    evidenceTypes: ['RECTIFIER_OUTPUT'],
    evidenceFromAncestors: false,
    applies: (a) => a.type === 'RECTIFIER',
    timing: fixed({ maxGap: { months: 2, halfMonth: true }, timesPerCalendarYear: 6 }),
  },
  {
    obligation: 'VALVE_INSPECTION',
    regulation: 'CFR_192',
    regulationRef: '§192.745(a)',
    title: 'Inspection and partial operation of transmission valves',
    appliesTo: 'transmission line valves that might be required during an emergency',
    interval: 'at intervals not exceeding 15 months, but at least once each calendar year',
    evidenceTypes: ['VALVE_INSPECTION'],
    evidenceFromAncestors: false,
    applies: (a) => a.type === 'VALVE',
    timing: fixed({ maxGap: { months: 15 }, timesPerCalendarYear: 1 }),
  },
  {
    obligation: 'PATROL',
    regulation: 'CFR_192',
    regulationRef: '§192.705(b)',
    title: 'Transmission line patrol',
    appliesTo: 'gas transmission pipelines and segments; the interval tightens with class location and at crossings',
    interval:
      'class 1–2: 15 months, at least once each calendar year; class 3: 7½ months, at least twice; class 4: 4½ months, at least four times; at highway and railroad crossings: class 1–2 7½ months (twice), class 3–4 4½ months (four times)',
    evidenceTypes: ['PATROL'],
    evidenceFromAncestors: true,
    applies: pipe,
    timing: patrolTiming,
  },
  {
    obligation: 'LEAK_SURVEY',
    regulation: 'CFR_192',
    regulationRef: '§192.706',
    title: 'Transmission line leakage survey',
    appliesTo: 'gas transmission pipelines and segments',
    interval: 'at intervals not exceeding 15 months, but at least once each calendar year',
    evidenceTypes: ['LEAK_SURVEY'],
    evidenceFromAncestors: true,
    applies: pipe,
    timing: fixed({ maxGap: { months: 15 }, timesPerCalendarYear: 1 }),
  },
  {
    obligation: 'ATMOSPHERIC_CORROSION',
    regulation: 'CFR_192',
    regulationRef: '§192.481(a)',
    title: 'Atmospheric corrosion inspection of onshore pipe exposed to the atmosphere',
    appliesTo: 'assets recorded as exposed to the atmosphere',
    interval: 'at least once every 3 calendar years, with intervals not exceeding 39 months',
    evidenceTypes: ['ATMOSPHERIC_CORROSION_INSPECTION'],
    evidenceFromAncestors: true,
    applies: exposed,
    timing: fixed({ maxGap: { months: 39 }, withinCalendarYears: 3 }),
  },
  {
    obligation: 'LIQUID_HCA_REASSESSMENT',
    regulation: 'CFR_195',
    regulationRef: '§195.452(j)(3)',
    title: 'Continual assessment of line pipe that could affect a high consequence area',
    appliesTo: 'hazardous liquid pipelines and segments that could affect a high consequence area (in an HCA when not assessed)',
    interval: 'five-year intervals, not to exceed 68 months',
    evidenceTypes: ['ILI_RUN'],
    evidenceFromAncestors: true,
    applies: (a) => pipe(a) && (a.couldAffectHca ?? a.inHca),
    timing: fixed({ maxGap: { months: 68 } }),
  },
  {
    obligation: 'LIQUID_CP_SURVEY',
    regulation: 'CFR_195',
    regulationRef: '§195.573(a)(1)',
    title: 'Cathodic protection tests of protected pipelines',
    appliesTo: 'cathodically protected pipelines and segments (assumed protected unless recorded otherwise)',
    interval: 'at least once each calendar year, but with intervals not exceeding 15 months',
    evidenceTypes: CP_EVIDENCE,
    evidenceFromAncestors: true,
    applies: protectedPipe,
    timing: fixed({ maxGap: { months: 15 }, timesPerCalendarYear: 1 }),
  },
  {
    obligation: 'LIQUID_RECTIFIER_CHECK',
    regulation: 'CFR_195',
    regulationRef: '§195.573(c)',
    title: 'Electrical check of rectifiers',
    appliesTo: 'cathodic protection rectifiers',
    interval: 'at least six times each calendar year, but with intervals not exceeding 2½ months',
    evidenceTypes: ['RECTIFIER_OUTPUT'],
    evidenceFromAncestors: false,
    applies: (a) => a.type === 'RECTIFIER',
    timing: fixed({ maxGap: { months: 2, halfMonth: true }, timesPerCalendarYear: 6 }),
  },
  {
    obligation: 'LIQUID_VALVE_INSPECTION',
    regulation: 'CFR_195',
    regulationRef: '§195.420(b)',
    title: 'Inspection of mainline valves',
    appliesTo: 'mainline valves',
    interval: 'at intervals not exceeding 7½ months, but at least twice each calendar year',
    evidenceTypes: ['VALVE_INSPECTION'],
    evidenceFromAncestors: false,
    applies: (a) => a.type === 'VALVE',
    timing: fixed({ maxGap: { months: 7, halfMonth: true }, timesPerCalendarYear: 2 }),
  },
  {
    obligation: 'LIQUID_ROW_PATROL',
    regulation: 'CFR_195',
    regulationRef: '§195.412(a)',
    title: 'Inspection of the right-of-way surface conditions',
    appliesTo: 'hazardous liquid pipelines and segments',
    interval: 'at intervals not exceeding 3 weeks, but at least 26 times each calendar year',
    evidenceTypes: ['PATROL'],
    evidenceFromAncestors: true,
    applies: pipe,
    timing: fixed({ maxGap: { weeks: 3 }, timesPerCalendarYear: 26 }),
  },
  {
    obligation: 'LIQUID_ATMOSPHERIC_CORROSION',
    regulation: 'CFR_195',
    regulationRef: '§195.583(a)',
    title: 'Atmospheric corrosion inspection of onshore pipe exposed to the atmosphere',
    appliesTo: 'assets recorded as exposed to the atmosphere',
    interval: 'at least once every 3 calendar years, but with intervals not exceeding 39 months',
    evidenceTypes: ['ATMOSPHERIC_CORROSION_INSPECTION'],
    evidenceFromAncestors: true,
    applies: exposed,
    timing: fixed({ maxGap: { months: 39 }, withinCalendarYears: 3 }),
  },
];

/** Every measurement or inspection record type that completes some obligation. */
export const evidenceTypes: ReadonlySet<string> = new Set(rules.flatMap((r) => r.evidenceTypes));

export interface CatalogueEntry {
  obligation: Obligation;
  regulation: RegulationCode;
  regulationRef: string;
  title: string;
  interval: string;
  maxIntervalDays: number;
  appliesTo: string;
  evidenceTypes: string[];
  evidenceFromAncestors: boolean;
}

/** The catalogue as Query.complianceObligations lists it. */
export function obligationCatalogue(regulation: RegulationCode | null): CatalogueEntry[] {
  return rules
    .filter((r) => regulation === null || r.regulation === regulation)
    .map((r) => {
      const t = r.obligation === 'PATROL' ? patrolTiming({ classLocation: 1, crossing: null }) : r.timing({} as EffectiveAsset);
      // Deprecated field: the longest calendar gap from a 31-day month start, as a conservative day bound.
      const gapEnd = t.maxGap ? addInterval(new Date(Date.UTC(2001, 0, 31)), t.maxGap) : endOfYear(2001 + (t.withinCalendarYears ?? 1));
      return {
        obligation: r.obligation,
        regulation: r.regulation,
        regulationRef: r.regulationRef,
        title: r.title,
        interval: r.interval,
        maxIntervalDays: daysBetween(new Date(Date.UTC(2001, 0, 31)), gapEnd),
        appliesTo: r.appliesTo,
        evidenceTypes: [...r.evidenceTypes],
        evidenceFromAncestors: r.evidenceFromAncestors,
      };
    });
}

export interface Violation {
  rule: string;
  brokenAt: Date;
}

export interface ObligationEvaluation {
  state: ComplianceState;
  lastCompletedAt: Date | null;
  /** The last day (00:00Z) on which completing the obligation keeps every rule; null with no record. */
  dueAt: Date | null;
  violations: Violation[];
}

export interface ApplicableObligation {
  obligation: Obligation;
  regulation: RegulationCode;
  regulationRef: string;
  /** The rule as it applies to this asset, in words. */
  rule: string;
  evidenceTypes: readonly string[];
  evidenceFromAncestors: boolean;
  timing: Timing;
  evaluate(completions: readonly Date[], asOf: Date, dueSoonDays: number): ObligationEvaluation;
}

function timingWords(t: Timing): string {
  const parts: string[] = [];
  if (t.maxGap) parts.push(`at intervals not exceeding ${describeInterval(t.maxGap)}`);
  if (t.timesPerCalendarYear) parts.push(t.timesPerCalendarYear === 1 ? 'at least once each calendar year' : `at least ${t.timesPerCalendarYear} times each calendar year`);
  if (t.withinCalendarYears) parts.push(`at least once every ${t.withinCalendarYears} calendar years`);
  return parts.join(', ');
}

/**
 * The earliest day a rule breaks after the last completion. For "N times each calendar year" that is
 * the end of the last completion's year when that year is still short, else the end of the next year
 * (which has none yet) — so the due date depends on the evidence alone, not on when one asks.
 */
function dueDay(t: Timing, days: readonly Date[]): Date {
  const last = days[days.length - 1]!;
  const candidates: Date[] = [];
  if (t.maxGap) candidates.push(addInterval(last, t.maxGap));
  if (t.withinCalendarYears) candidates.push(endOfYear(last.getUTCFullYear() + t.withinCalendarYears));
  if (t.timesPerCalendarYear) {
    const year = last.getUTCFullYear();
    const done = days.filter((d) => d.getUTCFullYear() === year).length;
    candidates.push(endOfYear(done < t.timesPerCalendarYear ? year : year + 1));
  }
  return new Date(Math.min(...candidates.map((d) => d.getTime())));
}

/** Breaks in the recorded history: gaps longer than allowed, and complete calendar years with too few completions. */
function violationsOf(t: Timing, days: readonly Date[], asOf: Date): Violation[] {
  const out: Violation[] = [];
  for (let i = 1; i < days.length; i++) {
    const prev = days[i - 1]!;
    const next = days[i]!;
    if (t.maxGap) {
      const limit = addInterval(prev, t.maxGap);
      if (next > limit) out.push({ rule: `interval exceeded ${describeInterval(t.maxGap)} (${prev.toISOString().slice(0, 10)} to ${next.toISOString().slice(0, 10)})`, brokenAt: new Date(limit.getTime() + 86_400_000) });
    }
    if (t.withinCalendarYears) {
      const limit = endOfYear(prev.getUTCFullYear() + t.withinCalendarYears);
      if (next > limit) out.push({ rule: `no completion within ${t.withinCalendarYears} calendar years of ${prev.getUTCFullYear()}`, brokenAt: new Date(limit.getTime() + 86_400_000) });
    }
  }
  if (t.timesPerCalendarYear && days.length > 0) {
    for (let year = days[0]!.getUTCFullYear(); year < asOf.getUTCFullYear(); year++) {
      const count = days.filter((d) => d.getUTCFullYear() === year).length;
      if (count < t.timesPerCalendarYear) {
        out.push({ rule: `${count} of ${t.timesPerCalendarYear} required completion${t.timesPerCalendarYear > 1 ? 's' : ''} in calendar year ${year}`, brokenAt: new Date(Date.UTC(year + 1, 0, 1)) });
      }
    }
  }
  return out.sort((a, b) => a.brokenAt.getTime() - b.brokenAt.getTime());
}

/** OVERDUE once asOf's calendar day is after the due day; DUE_SOON within dueSoonDays of it. */
export function stateAt(dueAt: Date | null, asOf: Date, dueSoonDays: number): ComplianceState {
  if (!dueAt) return 'NO_RECORD';
  const daysLeft = daysBetween(asOf, dueAt);
  if (daysLeft < 0) return 'OVERDUE';
  return daysLeft <= dueSoonDays ? 'DUE_SOON' : 'OK';
}

export function evaluateTiming(t: Timing, completions: readonly Date[], asOf: Date, dueSoonDays: number): ObligationEvaluation {
  const counted = completions.filter((c) => c <= asOf).sort((a, b) => a.getTime() - b.getTime());
  if (counted.length === 0) return { state: 'NO_RECORD', lastCompletedAt: null, dueAt: null, violations: [] };
  const days = counted.map(startOfDay);
  const dueAt = dueDay(t, days);
  return { state: stateAt(dueAt, asOf, dueSoonDays), lastCompletedAt: counted[counted.length - 1]!, dueAt, violations: violationsOf(t, days, asOf) };
}

const severity: Record<ComplianceState, number> = { OK: 0, DUE_SOON: 1, NO_RECORD: 2, OVERDUE: 3 };

/** An asset's state is its worst obligation's: OVERDUE, then NO_RECORD, then DUE_SOON, then OK. */
export function worstState(states: readonly ComplianceState[]): ComplianceState {
  return states.reduce<ComplianceState>((worst, s) => (severity[s] > severity[worst] ? s : worst), 'OK');
}

/** The asset's regulation and class location, inherited from the nearest ancestor that records them. */
export function effectiveAsset(lineage: readonly AssetProjection[]): EffectiveAsset | null {
  const [asset] = lineage;
  if (!asset) return null;
  const inherited = <K extends keyof AssetProjection>(key: K) => lineage.find((a) => a[key] != null)?.[key] ?? null;
  return {
    type: asset.type,
    status: asset.status,
    regulation: inherited('regulation') as RegulationCode | null,
    classLocation: inherited('classLocation') as number | null,
    inHca: asset.inHca,
    couldAffectHca: asset.couldAffectHca,
    cathodicallyProtected: inherited('cathodicallyProtected') as boolean | null,
    atmosphericExposure: asset.atmosphericExposure,
    crossing: asset.crossing,
  };
}

/** The obligations that apply to the first asset of the lineage (the asset, then its ancestors). */
export function obligationsFor(lineage: readonly AssetProjection[]): ApplicableObligation[] {
  const asset = effectiveAsset(lineage);
  if (!asset || !asset.regulation || !IN_SERVICE.has(asset.status)) return [];
  return rules
    .filter((r) => r.regulation === asset.regulation && r.applies(asset))
    .map((r) => {
      const timing = r.timing(asset);
      return {
        obligation: r.obligation,
        regulation: r.regulation,
        regulationRef: r.regulationRef,
        rule: timingWords(timing),
        evidenceTypes: r.evidenceTypes,
        evidenceFromAncestors: r.evidenceFromAncestors,
        timing,
        evaluate: (completions, asOf, dueSoonDays) => evaluateTiming(timing, completions, asOf, dueSoonDays),
      };
    });
}
