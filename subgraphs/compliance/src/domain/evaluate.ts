/**
 * Evaluates one recurring obligation from its completion dates: the state at `asOf`, the due date,
 * and every break of the rule found in the recorded history (for audits). Pure: no I/O, no clock.
 *
 * WHY: 49 CFR Parts 192/195 state each timing requirement as up to three rules that must ALL hold,
 * e.g. §192.745(a) "at intervals not exceeding 15 months, but at least once each calendar year" or
 * §192.481(a) "at least once every 3 calendar years, but with intervals not exceeding 39 months".
 * A history can satisfy one and break another (2024-11-15 then 2026-02-10 is within 15 months, but
 * calendar year 2025 had no inspection), so each rule is checked on its own:
 *
 * - maxGap ("at intervals not exceeding …"): each completion must fall on or before the day the
 *   interval from the previous one ends (calendar arithmetic of ./calendar).
 * - timesPerCalendarYear ("N times each calendar year"): each judged calendar year holds ≥ N
 *   completions. Completions on one day count once, so a year with k completions still to do can
 *   reach N only while at least k days of it remain: the (j+1)-th completion of the year is due by
 *   Dec 31 − (N − j − 1) days. §195.412(a) "at least 26 times each calendar year" with 16 patrols
 *   done by Dec 1 has its 17th due by Dec 22; with none done by Dec 6 of a judged year, the year can
 *   no longer reach 26 from Dec 7 on — the rule is broken then (OVERDUE, a violation), not only once
 *   the year has ended. For "once each calendar year" this is Dec 31, as before. The due date is the
 *   last day on which the count is still reachable at all (one completion every remaining day),
 *   so DUE_SOON (`dueSoonDays` before it) is the warning that the year is falling behind.
 *   A year is judged only when it lies wholly inside the recorded history: by default
 *   the history starts at the first completion, so that completion's (partial) year is not judged;
 *   `options.recordsFrom` (e.g. the in-service date or the start of migrated records) moves the
 *   start earlier, and every calendar year beginning on or after it is judged.
 * - everyNCalendarYears ("at least once every N calendar years"): the next completion falls in
 *   calendar year Y+N at the latest, Y being the previous completion's year (3 calendar years from
 *   a 2022 inspection end on 2025-12-31; with a 39-month maxGap the earlier of the two governs).
 *
 * Dates count by calendar day (see ./calendar) in `options.timeZone` (default UTC): a completion
 *   on the due day is on time, and a record at 2025-12-31T20:00-06:00 counts for 2025 in
 *   America/Chicago although it is 2026 in UTC.
 * - Only completions observed at or before the `asOf` instant count. Several on the same UTC day
 *   count as one completion (two records of one inspection must not count twice toward "six times
 *   each calendar year").
 * - dueAt = the earliest day on which a rule would be broken given the completions so far (the last
 *   on-time day): the maxGap from the last completion; for N-times-per-year, the day by which the
 *   next completion keeps the count of the first judged year still short reachable (Dec 31 − days
 *   for the completions after it; Dec 31 when it is the last one); for every-N-calendar-years,
 *   Dec 31 of year(last) + N.
 * - State: NO_RECORD without any completion; OVERDUE when asOf's day is after dueAt; DUE_SOON when
 *   dueAt is at most `dueSoonDays` calendar days away (0 = only on the due day itself); else OK.
 * - Violations: every break, past and still open, up to asOf. `deadline` is the last on-time day,
 *   `brokenAt` the first late day (deadline + 1 day, 00:00Z), `curedAt` the completion that ended a
 *   gap (null while it is open, and for a calendar year that ended short, which nothing can cure).
 * - worstState ranks OVERDUE > NO_RECORD > DUE_SOON > OK: a proven break outranks an unknown
 *   (no record: compliance cannot be shown, but nothing proves a break either), and both outrank
 *   an obligation that is still met (DUE_SOON is compliant today).
 */
import {
  addDays,
  addInterval,
  calendarYearOf,
  DEFAULT_TIME_ZONE,
  localDay,
  compareCalendarDays,
  daysBetween,
  describeInterval,
  endOfCalendarYear,
  type CalendarDay,
  type Interval,
  utcDay,
} from './calendar';

export type ComplianceState = 'OK' | 'DUE_SOON' | 'OVERDUE' | 'NO_RECORD';

/** Rank used by worstState: higher is worse. */
export const COMPLIANCE_STATE_SEVERITY: Readonly<Record<ComplianceState, number>> = {
  OK: 0,
  DUE_SOON: 1,
  NO_RECORD: 2,
  OVERDUE: 3,
};

export const DEFAULT_DUE_SOON_DAYS = 30;

/**
 * The timing of one obligation (for one kind of asset), as the regulation words it. At least one
 * of maxGap / timesPerCalendarYear / everyNCalendarYears is set; all that are set must hold.
 */
export interface TimingRule {
  /** The whole rule in the regulation's words, e.g. "at intervals not exceeding 15 months, but at least once each calendar year". */
  readonly words: string;
  /** The section the words come from, e.g. "§192.745(a)"; appended to each violation's rule. */
  readonly reference?: string;
  /** "at intervals not exceeding …". */
  readonly maxGap?: Interval;
  /** "N times each calendar year" (1 = once, 2 = twice, …). */
  readonly timesPerCalendarYear?: number;
  /** "at least once every N calendar years". */
  readonly everyNCalendarYears?: number;
}

export type ViolationKind = 'MAX_GAP' | 'TIMES_PER_CALENDAR_YEAR' | 'EVERY_N_CALENDAR_YEARS';

export interface Violation {
  kind: ViolationKind;
  /** The rule that was broken, in words, with its section when the TimingRule names one. */
  rule: string;
  /** The last day on which the requirement was still met. */
  deadline: CalendarDay;
  /** The first day on which it was broken (deadline + 1 day). */
  brokenAt: CalendarDay;
  /** MAX_GAP / EVERY_N_CALENDAR_YEARS: the completion (day) the interval ran from. */
  previousCompletionAt: CalendarDay | null;
  /** The completion (day) that ended the break; null while still open, and for TIMES_PER_CALENDAR_YEAR. */
  curedAt: CalendarDay | null;
  /** TIMES_PER_CALENDAR_YEAR: the calendar year that fell short. */
  calendarYear: number | null;
  /** TIMES_PER_CALENDAR_YEAR: completions recorded in that year, and how many were required. */
  completionsInYear: number | null;
  required: number | null;
}

export interface ObligationEvaluation {
  state: ComplianceState;
  /** The latest counted completion (the original instant, not truncated to its day). */
  lastCompletedAt: Date | null;
  /** The last on-time day (00:00Z); null without any completion. */
  dueAt: CalendarDay | null;
  /** The rule that sets dueAt, in words (the earliest of the rules). */
  dueRule: string | null;
  /** Calendar days from asOf to dueAt (negative when overdue); null without any completion. */
  daysUntilDue: number | null;
  /** Distinct completion days counted (observed at or before asOf). */
  completionsCounted: number;
  /** Every break found up to asOf, oldest first. */
  violations: Violation[];
}

export interface EvaluationOptions {
  /**
   * From when the evidence history is complete and the obligation applied (e.g. the in-service date
   * or the start of migrated records). Calendar years starting on or after this day are judged by
   * the N-times-per-year rule. Without it the history starts at the first completion.
   */
  recordsFrom?: Date | null;
  /**
   * The IANA zone whose calendar days count (default UTC): each completion, `asOf` and `recordsFrom`
   * fall on their local day there; the returned days (dueAt, deadlines) are days of that zone.
   */
  timeZone?: string;
}

/** "at least once each calendar year", "at least twice …", "at least 26 times …". */
export function describeTimesPerCalendarYear(n: number): string {
  if (n === 1) return 'at least once each calendar year';
  if (n === 2) return 'at least twice each calendar year';
  return `at least ${n} times each calendar year`;
}

export function describeMaxGap(interval: Interval): string {
  return `at intervals not exceeding ${describeInterval(interval)}`;
}

export function describeEveryNCalendarYears(n: number): string {
  return n === 1 ? 'at least once each calendar year' : `at least once every ${n} calendar years`;
}

/** Throws RangeError when the rule cannot be evaluated. */
export function assertValidTimingRule(rule: TimingRule): void {
  const { maxGap, timesPerCalendarYear, everyNCalendarYears } = rule;
  if (!maxGap && timesPerCalendarYear === undefined && everyNCalendarYears === undefined) {
    throw new RangeError(`timing rule "${rule.words}" sets no maxGap, timesPerCalendarYear or everyNCalendarYears`);
  }
  if (maxGap && (!Number.isInteger(maxGap.count) || maxGap.count < 0 || (maxGap.count === 0 && !('plusHalfMonth' in maxGap && maxGap.plusHalfMonth)))) {
    throw new RangeError(`timing rule "${rule.words}": maxGap must be a positive whole count`);
  }
  for (const [name, n] of [
    ['timesPerCalendarYear', timesPerCalendarYear],
    ['everyNCalendarYears', everyNCalendarYears],
  ] as const) {
    if (n !== undefined && (!Number.isInteger(n) || n < 1)) throw new RangeError(`timing rule "${rule.words}": ${name} must be an integer ≥ 1`);
  }
}

function withReference(words: string, rule: TimingRule): string {
  return rule.reference ? `${words} (${rule.reference})` : words;
}

interface DueCandidate {
  day: CalendarDay;
  rule: string;
}

/**
 * Evaluates `rule` against the completion instants (any order; observedAt of the evidence) at the
 * instant `asOf`. See the module header for every convention.
 */
export function evaluateObligation(
  rule: TimingRule,
  completions: readonly Date[],
  asOf: Date,
  dueSoonDays: number = DEFAULT_DUE_SOON_DAYS,
  options: EvaluationOptions = {},
): ObligationEvaluation {
  assertValidTimingRule(rule);
  if (!(asOf instanceof Date) || Number.isNaN(asOf.getTime())) throw new RangeError('invalid asOf');
  if (!Number.isFinite(dueSoonDays) || dueSoonDays < 0) throw new RangeError(`dueSoonDays must be ≥ 0, got ${dueSoonDays}`);

  const timeZone = options.timeZone ?? DEFAULT_TIME_ZONE;
  const dayOf = (instant: Date) => localDay(instant, timeZone);
  const asOfDay = dayOf(asOf);
  const counted = completions.filter((c) => c instanceof Date && !Number.isNaN(c.getTime()) && c.getTime() <= asOf.getTime());
  if (counted.length === 0) {
    return { state: 'NO_RECORD', lastCompletedAt: null, dueAt: null, dueRule: null, daysUntilDue: null, completionsCounted: 0, violations: [] };
  }

  const lastCompletedAt = new Date(Math.max(...counted.map((c) => c.getTime())));
  const days = [...new Set(counted.map((c) => dayOf(c).getTime()))].sort((a, b) => a - b).map((t) => new Date(t));
  const first = days[0] as CalendarDay;
  const last = days[days.length - 1] as CalendarDay;

  const violations: Violation[] = [];
  const candidates: DueCandidate[] = [];
  const isLate = (day: CalendarDay, deadline: CalendarDay) => compareCalendarDays(day, deadline) > 0;

  if (rule.maxGap) {
    const words = withReference(describeMaxGap(rule.maxGap), rule);
    for (let i = 1; i < days.length; i++) {
      const previous = days[i - 1] as CalendarDay;
      const next = days[i] as CalendarDay;
      const deadline = addInterval(previous, rule.maxGap);
      if (isLate(next, deadline)) violations.push(gapViolation('MAX_GAP', words, deadline, previous, next));
    }
    const due = addInterval(last, rule.maxGap);
    candidates.push({ day: due, rule: words });
    if (isLate(asOfDay, due)) violations.push(gapViolation('MAX_GAP', words, due, last, null));
  }

  if (rule.everyNCalendarYears !== undefined) {
    const n = rule.everyNCalendarYears;
    const words = withReference(describeEveryNCalendarYears(n), rule);
    for (let i = 1; i < days.length; i++) {
      const previous = days[i - 1] as CalendarDay;
      const next = days[i] as CalendarDay;
      const deadline = endOfCalendarYear(calendarYearOf(previous) + n);
      if (isLate(next, deadline)) violations.push(gapViolation('EVERY_N_CALENDAR_YEARS', words, deadline, previous, next));
    }
    const due = endOfCalendarYear(calendarYearOf(last) + n);
    candidates.push({ day: due, rule: words });
    if (isLate(asOfDay, due)) violations.push(gapViolation('EVERY_N_CALENDAR_YEARS', words, due, last, null));
  }

  if (rule.timesPerCalendarYear !== undefined) {
    const required = rule.timesPerCalendarYear;
    const words = withReference(describeTimesPerCalendarYear(required), rule);
    const firstJudgedYear = firstJudgedCalendarYear(first, options.recordsFrom ? dayOf(options.recordsFrom) : null);
    const byYear = new Map<number, CalendarDay[]>();
    for (const day of days) (byYear.get(calendarYearOf(day)) ?? byYear.set(calendarYearOf(day), []).get(calendarYearOf(day))!).push(day);
    const daysIn = (year: number) => byYear.get(year) ?? [];

    // Judged years up to asOf's: broken once the count can no longer be reached (for a past year, at the latest on Jan 1 after it).
    for (let year = firstJudgedYear; year <= calendarYearOf(asOfDay); year++) {
      const deadline = firstMissedCountDeadline(daysIn(year), year, required);
      if (deadline && isLate(asOfDay, deadline)) {
        violations.push({
          kind: 'TIMES_PER_CALENDAR_YEAR',
          rule: words,
          deadline,
          brokenAt: addDays(deadline, 1),
          previousCompletionAt: null,
          curedAt: null,
          calendarYear: year,
          completionsInYear: daysIn(year).length,
          required,
        });
      }
    }
    // The first judged year, from the last completion's year on, still short of the count.
    let year = calendarYearOf(last);
    while (year < firstJudgedYear || daysIn(year).length >= required) year++;
    candidates.push({ day: firstMissedCountDeadline(daysIn(year), year, required) as CalendarDay, rule: words });
  }

  let due = candidates[0] as DueCandidate;
  for (const candidate of candidates) if (compareCalendarDays(candidate.day, due.day) < 0) due = candidate;

  const daysUntilDue = daysBetween(asOfDay, due.day);
  const state: ComplianceState = daysUntilDue < 0 ? 'OVERDUE' : daysUntilDue <= dueSoonDays ? 'DUE_SOON' : 'OK';
  violations.sort((a, b) => a.brokenAt.getTime() - b.brokenAt.getTime() || a.kind.localeCompare(b.kind));

  return {
    state,
    lastCompletedAt,
    dueAt: due.day,
    dueRule: due.rule,
    daysUntilDue,
    completionsCounted: days.length,
    violations,
  };
}

function gapViolation(kind: ViolationKind, rule: string, deadline: CalendarDay, previous: CalendarDay, cured: CalendarDay | null): Violation {
  return {
    kind,
    rule,
    deadline,
    brokenAt: addDays(deadline, 1),
    previousCompletionAt: previous,
    curedAt: cured,
    calendarYear: null,
    completionsInYear: null,
    required: null,
  };
}

/**
 * The deadline of the first of a year's `required` completions (its days sorted, distinct) that is
 * missing or later than the last day from which the count is still reachable at one completion a
 * day; null when the year holds `required` completions (then every one of them was on time).
 */
function firstMissedCountDeadline(yearDays: readonly CalendarDay[], year: number, required: number): CalendarDay | null {
  for (let done = 0; done < required; done++) {
    const deadline = addDays(endOfCalendarYear(year), -(required - done - 1));
    const next = yearDays[done];
    if (!next || compareCalendarDays(next, deadline) > 0) return deadline;
  }
  return null;
}

/**
 * The first calendar year the N-times-per-year rule judges: with `recordsFrom` (its calendar day),
 * the first year that starts on or after it; otherwise the year after the first completion (whose
 * year is partial).
 */
function firstJudgedCalendarYear(firstCompletion: CalendarDay, recordsFrom: CalendarDay | null): number {
  if (recordsFrom) {
    const from = utcDay(recordsFrom);
    const year = calendarYearOf(from);
    return from.getUTCMonth() === 0 && from.getUTCDate() === 1 ? year : year + 1;
  }
  return calendarYearOf(firstCompletion) + 1;
}

/** The worst of the states (OVERDUE > NO_RECORD > DUE_SOON > OK); OK when there are none. */
export function worstState(states: Iterable<ComplianceState>): ComplianceState {
  let worst: ComplianceState = 'OK';
  for (const state of states) if (COMPLIANCE_STATE_SEVERITY[state] > COMPLIANCE_STATE_SEVERITY[worst]) worst = state;
  return worst;
}

/**
 * The longest gap, in days, that the rule can ever allow after a single completion (over every
 * start day of a four-year leap cycle). A conservative bound only — for fields such as the
 * deprecated `maxIntervalDays`; never use it to decide a state.
 */
export function longestAllowedGapDays(rule: TimingRule): number {
  assertValidTimingRule(rule);
  let longest = 0;
  const start = Date.UTC(2024, 0, 1); // 2024 is a leap year; 1461 days cover every day-of-cycle
  for (let i = 0; i < 1461; i++) {
    const day = new Date(start + i * 86_400_000);
    const ends: CalendarDay[] = [];
    if (rule.maxGap) ends.push(addInterval(day, rule.maxGap));
    if (rule.everyNCalendarYears !== undefined) ends.push(endOfCalendarYear(calendarYearOf(day) + rule.everyNCalendarYears));
    if (rule.timesPerCalendarYear !== undefined) ends.push(endOfCalendarYear(calendarYearOf(day) + 1));
    const end = ends.reduce((a, b) => (compareCalendarDays(a, b) <= 0 ? a : b));
    longest = Math.max(longest, daysBetween(day, end));
  }
  return longest;
}
