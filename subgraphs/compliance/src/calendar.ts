/**
 * The regulations' own calendar arithmetic, on UTC calendar days. "At intervals not exceeding 15
 * months" counts calendar months (2025-02-01 + 15 months = 2026-05-01, where 456 days would give
 * 2026-05-03); a month end clamps to the shorter month (2025-11-30 + 15 months = 2027-02-28);
 * "N½ months" is N months and then 15 more days (a half month, counted on the short side so a due
 * date is never later than the rule allows); "each calendar year" runs 1 January – 31 December.
 * A day is represented by its 00:00:00Z instant; work done at any time on the due day is on time.
 */
const DAY_MS = 86_400_000;

export function startOfDay(instant: Date): Date {
  return new Date(Date.UTC(instant.getUTCFullYear(), instant.getUTCMonth(), instant.getUTCDate()));
}

export function addDays(day: Date, days: number): Date {
  return new Date(day.getTime() + days * DAY_MS);
}

/** Calendar months, clamping to the last day of a shorter month. */
export function addMonths(day: Date, months: number): Date {
  const y = day.getUTCFullYear();
  const m = day.getUTCMonth() + months;
  const lastOfTarget = new Date(Date.UTC(y, m + 1, 0)).getUTCDate();
  return new Date(Date.UTC(y, m, Math.min(day.getUTCDate(), lastOfTarget)));
}

/** An interval as the regulation words it. */
export type Interval = { months: number; halfMonth?: boolean } | { weeks: number };

export function addInterval(day: Date, interval: Interval): Date {
  if ('weeks' in interval) return addDays(day, interval.weeks * 7);
  const whole = addMonths(day, interval.months);
  return interval.halfMonth ? addDays(whole, 15) : whole;
}

export function describeInterval(interval: Interval): string {
  if ('weeks' in interval) return `${interval.weeks} weeks`;
  return `${interval.months}${interval.halfMonth ? '½' : ''} months`;
}

export function endOfYear(year: number): Date {
  return new Date(Date.UTC(year, 11, 31));
}

export function daysBetween(from: Date, to: Date): number {
  return Math.round((startOfDay(to).getTime() - startOfDay(from).getTime()) / DAY_MS);
}
