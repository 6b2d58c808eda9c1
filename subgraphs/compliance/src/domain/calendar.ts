/**
 * Calendar arithmetic as 49 CFR Parts 192 and 195 count time — calendar months, weeks, calendar
 * years — never day counts. Pure: no I/O, no clock; every function takes and returns `Date`s.
 *
 * WHY: the regulations word their intervals as "at intervals not exceeding 15 months, but at least
 * once each calendar year" (§192.465(a), §192.745(a)), "7½ months" (§192.705(b), §195.420(b)),
 * "3 weeks" (§195.412(a)), "at least once every 3 calendar years, but with intervals not exceeding
 * 39 months" (§192.481(a), §195.583(a)). A fixed day count misstates them: 15 months from
 * 2025-02-01 end on 2026-05-01, whereas 456 days would end on 2026-05-03.
 *
 * Conventions (all documented choices, tested in test/domain/calendar.test.ts):
 * - Dates are reduced to their UTC calendar day (00:00:00.000Z). Two instants on the same UTC day
 *   are the same day; a completion on the due day is on time.
 * - "N months" from day D is the same day-of-month N calendar months later, clamped to the last day
 *   of the target month when it is shorter: 2025-11-30 + 15 months = 2027-02-28,
 *   2023-11-29 + 3 months = 2024-02-29. This is the anniversary-date reading PHMSA gave for "at
 *   intervals not exceeding 5 years" in interpretation PI-92-052 (Oct. 1, 1992, §192.723(b)(2)):
 *   "in the 5th year after the date of the last leakage survey, the operator must conduct another
 *   leakage survey on or before the day that corresponds to that date".
 * - "N½ months" = N calendar months (as above), then HALF_MONTH_DAYS (15) calendar days:
 *   2025-01-31 + 7½ months = 2025-08-31 + 15 days = 2025-09-15. No PHMSA interpretation of "½ month"
 *   was found (searched for interpretation letters on "7-1/2 months"); 15 days is the conventional
 *   half month and differs by at most one day from "half the days of the following month"
 *   (14 in February, 15.5 in a 31-day month). It is one exported constant, so a different reading
 *   is a one-line change.
 * - "N weeks" = 7·N calendar days. "N years" = 12·N calendar months (Feb 29 clamps to Feb 28).
 * - A calendar year is Jan 1 – Dec 31 (UTC). `endOfCalendarYear` returns Dec 31, the last day on
 *   which something due "each calendar year" is still on time.
 * - Time zones: the arithmetic above is on calendar days, which carry no zone. Which calendar day an
 *   instant falls on depends on where the work was done: a valve inspected at 19:30 on May 1 in
 *   Chicago (UTC−5) was inspected on May 1, although it was already May 2 in UTC. `localDay` maps an
 *   instant to its calendar day in an IANA zone (Node's Intl, no tz database of our own); the result
 *   is represented like every other CalendarDay (00:00Z of that date), so all the functions here work
 *   on it unchanged. `startOfLocalDay` maps a calendar day back to the instant it begins in a zone.
 */

export const MS_PER_DAY = 86_400_000;

/** Days added for the "½" of "N½ months" (see the header). */
export const HALF_MONTH_DAYS = 15;

/** A calendar day: a `Date` at 00:00:00.000 UTC. The type is documentation; any `Date` is accepted. */
export type CalendarDay = Date;

function assertValid(d: Date, what = 'date'): void {
  if (!(d instanceof Date) || Number.isNaN(d.getTime())) throw new RangeError(`invalid ${what}`);
}

function assertInteger(n: number, what: string): void {
  if (!Number.isInteger(n)) throw new RangeError(`${what} must be an integer, got ${n}`);
}

/** The UTC calendar day of an instant (00:00:00.000Z of that day). */
export function utcDay(d: Date): CalendarDay {
  assertValid(d);
  return new Date(Date.UTC(d.getUTCFullYear(), d.getUTCMonth(), d.getUTCDate()));
}

/** The calendar day `year-month-day` (month 1–12). */
export function calendarDay(year: number, month: number, day: number): CalendarDay {
  assertInteger(year, 'year');
  assertInteger(month, 'month');
  assertInteger(day, 'day');
  if (month < 1 || month > 12) throw new RangeError(`month must be 1–12, got ${month}`);
  if (day < 1 || day > daysInMonth(year, month)) throw new RangeError(`no day ${day} in ${year}-${month}`);
  const result = new Date(0);
  result.setUTCFullYear(year, month - 1, day); // setUTCFullYear keeps years 0–99 literal
  result.setUTCHours(0, 0, 0, 0);
  return result;
}

/** Parses `YYYY-MM-DD` as a UTC calendar day. */
export function parseCalendarDay(iso: string): CalendarDay {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(iso);
  if (!match) throw new RangeError(`not a YYYY-MM-DD day: ${iso}`);
  return calendarDay(Number(match[1]), Number(match[2]), Number(match[3]));
}

/** `YYYY-MM-DD` of the UTC calendar day. */
export function formatCalendarDay(d: Date): string {
  return utcDay(d).toISOString().slice(0, 10);
}

const MONTH_LENGTHS: readonly number[] = [31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31];

export function isLeapYear(year: number): boolean {
  return (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
}

/** Days in `month` (1–12) of `year`. */
export function daysInMonth(year: number, month: number): number {
  if (month === 2) return isLeapYear(year) ? 29 : 28;
  const days = MONTH_LENGTHS[month - 1];
  if (days === undefined) throw new RangeError(`month must be 1–12, got ${month}`);
  return days;
}

/** The calendar year (UTC) of an instant. */
export function calendarYearOf(d: Date): number {
  assertValid(d);
  return d.getUTCFullYear();
}

/** Jan 1 of `year`. */
export function startOfCalendarYear(year: number): CalendarDay {
  return calendarDay(year, 1, 1);
}

/** Dec 31 of `year`: the last day on which an "each calendar year" requirement is still met. */
export function endOfCalendarYear(year: number): CalendarDay {
  return calendarDay(year, 12, 31);
}

/** The day `n` calendar days after (before, if negative) the UTC day of `d`. */
export function addDays(d: Date, n: number): CalendarDay {
  assertInteger(n, 'days');
  const day = utcDay(d);
  return new Date(day.getTime() + n * MS_PER_DAY);
}

/** `n` weeks of seven calendar days (§195.412(a) "3 weeks"). */
export function addWeeks(d: Date, n: number): CalendarDay {
  assertInteger(n, 'weeks');
  return addDays(d, 7 * n);
}

/**
 * `n` calendar months after the UTC day of `d`: the same day of the month, clamped to the target
 * month's last day (2025-11-30 + 15 = 2027-02-28; 2023-11-29 + 3 = 2024-02-29).
 */
export function addCalendarMonths(d: Date, n: number): CalendarDay {
  assertInteger(n, 'months');
  const day = utcDay(d);
  const monthIndex = day.getUTCFullYear() * 12 + day.getUTCMonth() + n;
  const year = Math.floor(monthIndex / 12);
  const month = monthIndex - year * 12 + 1;
  return calendarDay(year, month, Math.min(day.getUTCDate(), daysInMonth(year, month)));
}

/** "N½ months": `n` calendar months, then HALF_MONTH_DAYS days (2025-01-31 + 7½ = 2025-09-15). */
export function addMonthsAndAHalf(d: Date, n: number): CalendarDay {
  return addDays(addCalendarMonths(d, n), HALF_MONTH_DAYS);
}

/** `n` calendar years (12·n calendar months; Feb 29 + 1 year = Feb 28). */
export function addCalendarYears(d: Date, n: number): CalendarDay {
  assertInteger(n, 'years');
  return addCalendarMonths(d, 12 * n);
}

/** Calendar days from `from` to `to` (negative when `to` is earlier); instants count by UTC day. */
export function daysBetween(from: Date, to: Date): number {
  return Math.round((utcDay(to).getTime() - utcDay(from).getTime()) / MS_PER_DAY);
}

/** Compares two instants by UTC calendar day: -1, 0 or 1. */
export function compareCalendarDays(a: Date, b: Date): -1 | 0 | 1 {
  const diff = utcDay(a).getTime() - utcDay(b).getTime();
  return diff < 0 ? -1 : diff > 0 ? 1 : 0;
}

/** True when `a` falls on the same UTC calendar day as `b` or earlier. */
export function isOnOrBeforeDay(a: Date, b: Date): boolean {
  return compareCalendarDays(a, b) <= 0;
}

/** The later of two days (by calendar day). */
export function laterDay(a: CalendarDay, b: CalendarDay): CalendarDay {
  return compareCalendarDays(a, b) >= 0 ? utcDay(a) : utcDay(b);
}

/** The earlier of two days (by calendar day). */
export function earlierDay(a: CalendarDay, b: CalendarDay): CalendarDay {
  return compareCalendarDays(a, b) <= 0 ? utcDay(a) : utcDay(b);
}

/**
 * A length of time as the regulation words it. `MONTHS` with `plusHalfMonth` is "N½ months"
 * (2½, 4½, 7½); `count` is always a whole number.
 */
export type Interval =
  | { readonly unit: 'MONTHS'; readonly count: number; readonly plusHalfMonth?: boolean }
  | { readonly unit: 'WEEKS'; readonly count: number }
  | { readonly unit: 'YEARS'; readonly count: number };

/** "N months". */
export const months = (count: number): Interval => ({ unit: 'MONTHS', count });
/** "N½ months". */
export const monthsAndAHalf = (count: number): Interval => ({ unit: 'MONTHS', count, plusHalfMonth: true });
/** "N weeks". */
export const weeks = (count: number): Interval => ({ unit: 'WEEKS', count });
/** "N years" (anniversary years, not calendar years). */
export const years = (count: number): Interval => ({ unit: 'YEARS', count });

/** The last day of an interval that starts on the UTC day of `d` (the day it ends on is still within it). */
export function addInterval(d: Date, interval: Interval): CalendarDay {
  switch (interval.unit) {
    case 'MONTHS':
      return interval.plusHalfMonth ? addMonthsAndAHalf(d, interval.count) : addCalendarMonths(d, interval.count);
    case 'WEEKS':
      return addWeeks(d, interval.count);
    case 'YEARS':
      return addCalendarYears(d, interval.count);
  }
}

/** The interval in words: "15 months", "7½ months", "3 weeks", "5 years", "1 month". */
export function describeInterval(interval: Interval): string {
  switch (interval.unit) {
    case 'MONTHS':
      if (interval.plusHalfMonth) return `${interval.count}½ months`;
      return interval.count === 1 ? '1 month' : `${interval.count} months`;
    case 'WEEKS':
      return interval.count === 1 ? '1 week' : `${interval.count} weeks`;
    case 'YEARS':
      return interval.count === 1 ? '1 year' : `${interval.count} years`;
  }
}

// ---------------------------------------------------------------------------------------------
// Calendar days in a time zone
// ---------------------------------------------------------------------------------------------

/** The zone calendar days are counted in when none is configured (the days the API has always used). */
export const DEFAULT_TIME_ZONE = 'UTC';

const wallClockFormats = new Map<string, Intl.DateTimeFormat>();

function wallClockFormat(timeZone: string): Intl.DateTimeFormat {
  let format = wallClockFormats.get(timeZone);
  if (!format) {
    // hourCycle h23: midnight is hour 0, never 24 (en-US with hour12: false prints "24" for midnight).
    format = new Intl.DateTimeFormat('en-US', {
      timeZone,
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
      second: 'numeric',
      hourCycle: 'h23',
      era: 'short',
    });
    wallClockFormats.set(timeZone, format);
  }
  return format;
}

/** The wall-clock reading of an instant in a zone, as milliseconds of the same reading in UTC (whole seconds). */
function wallClockMs(instant: Date, timeZone: string): number {
  const parts: Partial<Record<Intl.DateTimeFormatPartTypes, string>> = {};
  for (const part of wallClockFormat(timeZone).formatToParts(instant)) parts[part.type] = part.value;
  const yearOfEra = Number(parts.year);
  const year = parts.era === 'BC' || parts.era === 'B' ? 1 - yearOfEra : yearOfEra;
  const result = new Date(0);
  result.setUTCFullYear(year, Number(parts.month) - 1, Number(parts.day));
  result.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second), 0);
  return result.getTime();
}

/**
 * The IANA zone name as Intl canonicalises it (`us/central` → `America/Chicago`), or null when it is
 * not one. UTC offsets ("+05:00"), which Intl also accepts, are refused: an offset has no daylight
 * saving time, so it would count the days of half the year wrong for a place that has it.
 */
export function canonicalTimeZone(name: string): string | null {
  if (!/^[A-Za-z][A-Za-z0-9_+\-]*(\/[A-Za-z0-9_+\-]+)*$/.test(name) || name.length > 64) return null;
  try {
    return new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
}

/** The calendar day (00:00Z of its date) an instant falls on in `timeZone` (default UTC, i.e. `utcDay`). */
export function localDay(instant: Date, timeZone: string = DEFAULT_TIME_ZONE): CalendarDay {
  assertValid(instant);
  if (timeZone === DEFAULT_TIME_ZONE) return utcDay(instant);
  return utcDay(new Date(wallClockMs(instant, timeZone)));
}

/**
 * The first instant of a calendar day in `timeZone`: its 00:00 local time, or, where a daylight saving
 * change skips midnight (e.g. America/Santiago), the first instant whose local date is that day.
 */
export function startOfLocalDay(day: CalendarDay, timeZone: string = DEFAULT_TIME_ZONE): Date {
  const midnight = utcDay(day).getTime();
  if (timeZone === DEFAULT_TIME_ZONE) return new Date(midnight);
  // A day holds at most one offset change: the offsets a day before and a day after are the candidates.
  const offsets = [midnight - MS_PER_DAY, midnight + MS_PER_DAY].map((t) => wallClockMs(new Date(t), timeZone) - t);
  const candidates = [...new Set(offsets)].map((offset) => midnight - offset).sort((a, b) => a - b);
  const exact = candidates.find((t) => wallClockMs(new Date(t), timeZone) === midnight);
  if (exact !== undefined) return new Date(exact);
  const onTheDay = candidates.find((t) => localDay(new Date(t), timeZone).getTime() === midnight);
  return new Date(onTheDay ?? (candidates[0] as number));
}
