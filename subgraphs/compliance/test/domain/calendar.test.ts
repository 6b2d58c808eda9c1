/**
 * Calendar arithmetic the way 49 CFR Parts 192/195 count time: calendar months with month-end
 * clamping, "N½ months" as N months + 15 days, weeks of seven days, calendar years. UTC days.
 */
import {
  HALF_MONTH_DAYS,
  addCalendarMonths,
  addCalendarYears,
  addDays,
  addInterval,
  addMonthsAndAHalf,
  addWeeks,
  calendarDay,
  calendarYearOf,
  canonicalTimeZone,
  compareCalendarDays,
  daysBetween,
  daysInMonth,
  describeInterval,
  endOfCalendarYear,
  formatCalendarDay,
  isOnOrBeforeDay,
  localDay,
  months,
  monthsAndAHalf,
  parseCalendarDay,
  startOfCalendarYear,
  startOfLocalDay,
  utcDay,
  weeks,
  years,
} from '../../src/domain/calendar';

const d = parseCalendarDay;
const iso = formatCalendarDay;

describe('calendar months ("at intervals not exceeding N months", e.g. §192.745(a) 15 months)', () => {
  it.each([
    // [from, months, expected, why]
    ['2025-02-01', 15, '2026-05-01', 'the issue: 15 months, not 456 days (which would be 2026-05-03)'],
    ['2025-11-30', 15, '2027-02-28', 'month end clamps to the shorter month'],
    ['2023-11-30', 15, '2025-02-28', 'month end clamps (non-leap February)'],
    ['2022-11-29', 15, '2024-02-29', 'leap year: Feb 29 exists in 2024'],
    ['2023-11-29', 3, '2024-02-29', 'leap year, 3 months'],
    ['2023-11-30', 3, '2024-02-29', 'clamp to Feb 29 in a leap year'],
    ['2024-01-31', 1, '2024-02-29', 'never overflows into March'],
    ['2025-01-31', 1, '2025-02-28', 'never overflows into March (non-leap)'],
    ['2021-03-31', 39, '2024-06-30', '§192.481(a) 39 months, clamped to June 30'],
    ['2020-06-15', 68, '2026-02-15', '§195.452(j)(3) 68 months'],
    ['2019-06-30', 68, '2025-02-28', '68 months ending in February'],
    ['2025-03-31', -1, '2025-02-28', 'negative months clamp too'],
    ['2025-12-15', 1, '2026-01-15', 'crosses the year end'],
    ['2025-06-10', 0, '2025-06-10', 'zero months is the same day'],
  ])('%s + %i months = %s (%s)', (from, n, expected) => {
    expect(iso(addCalendarMonths(d(from), n))).toBe(expected);
  });

  it('differs from a day count: 2025-02-01 + 15 months is 454 days later, and 456 days would be 2026-05-03', () => {
    expect(daysBetween(d('2025-02-01'), addCalendarMonths(d('2025-02-01'), 15))).toBe(454);
    expect(iso(addDays(d('2025-02-01'), 456))).toBe('2026-05-03');
  });

  it('reduces instants to their UTC day first (a late-evening UTC timestamp stays on its day)', () => {
    expect(iso(addCalendarMonths(new Date('2025-02-01T23:59:59.999Z'), 15))).toBe('2026-05-01');
    expect(addCalendarMonths(new Date('2025-02-01T23:59:59.999Z'), 15).toISOString()).toBe('2026-05-01T00:00:00.000Z');
  });

  it('rejects fractional months (use addMonthsAndAHalf) and invalid dates', () => {
    expect(() => addCalendarMonths(d('2025-01-01'), 7.5)).toThrow(RangeError);
    expect(() => addCalendarMonths(new Date('nonsense'), 1)).toThrow(RangeError);
  });
});

describe(`"N½ months" = N calendar months + ${HALF_MONTH_DAYS} days (§192.705(b) 7½ / 4½, §192.465(b) 2½, §195.420(b) 7½)`, () => {
  it.each([
    ['2025-01-31', 7, '2025-09-15', '7½: Aug 31, then 15 days'],
    ['2025-03-01', 7, '2025-10-16', '7½ from the 1st'],
    ['2025-03-01', 2, '2025-05-16', '2½ months'],
    ['2025-01-15', 4, '2025-05-30', '4½ months'],
    ['2023-12-14', 2, '2024-02-29', '2½ months landing on a leap day'],
    ['2024-12-14', 2, '2025-03-01', 'the same 2½ months one year later run into March'],
    ['2025-11-30', 7, '2026-07-15', 'month-end start: Jun 30 + 15 days'],
  ])('%s + %i½ months = %s (%s)', (from, n, expected) => {
    expect(iso(addMonthsAndAHalf(d(from), n))).toBe(expected);
    expect(iso(addInterval(d(from), monthsAndAHalf(n)))).toBe(expected);
  });
});

describe('weeks (§195.412(a) "3 weeks") and calendar years', () => {
  it('counts a week as seven calendar days', () => {
    expect(iso(addWeeks(d('2025-12-20'), 3))).toBe('2026-01-10');
    expect(iso(addInterval(d('2025-03-01'), weeks(3)))).toBe('2025-03-22');
  });

  it('counts years as calendar anniversaries, Feb 29 clamping to Feb 28', () => {
    expect(iso(addCalendarYears(d('2024-02-29'), 1))).toBe('2025-02-28');
    expect(iso(addCalendarYears(d('2024-02-29'), 4))).toBe('2028-02-29');
    expect(iso(addInterval(d('2020-06-15'), years(7)))).toBe('2027-06-15');
  });

  it('gives the first and last day of a calendar year', () => {
    expect(iso(startOfCalendarYear(2025))).toBe('2025-01-01');
    expect(iso(endOfCalendarYear(2025))).toBe('2025-12-31');
    expect(calendarYearOf(new Date('2025-12-31T23:59:59.999Z'))).toBe(2025);
    expect(calendarYearOf(new Date('2026-01-01T00:00:00.000Z'))).toBe(2026);
  });
});

describe('comparing calendar days (a completion on the due day is on time)', () => {
  it('compares by UTC day, not by instant', () => {
    expect(compareCalendarDays(new Date('2026-05-01T23:00:00Z'), d('2026-05-01'))).toBe(0);
    expect(isOnOrBeforeDay(new Date('2026-05-01T23:00:00Z'), d('2026-05-01'))).toBe(true);
    expect(isOnOrBeforeDay(new Date('2026-05-02T00:00:00Z'), d('2026-05-01'))).toBe(false);
    expect(daysBetween(new Date('2026-04-20T18:00:00Z'), d('2026-05-01'))).toBe(11);
    expect(daysBetween(d('2026-05-02'), d('2026-05-01'))).toBe(-1);
  });

  it('knows month lengths and builds days', () => {
    expect(daysInMonth(2024, 2)).toBe(29);
    expect(daysInMonth(2025, 2)).toBe(28);
    expect(daysInMonth(1900, 2)).toBe(28);
    expect(daysInMonth(2000, 2)).toBe(29);
    expect(daysInMonth(2025, 4)).toBe(30);
    expect(iso(calendarDay(2025, 12, 31))).toBe('2025-12-31');
    expect(() => calendarDay(2025, 2, 29)).toThrow(RangeError);
    expect(() => parseCalendarDay('2025-2-1')).toThrow(RangeError);
    expect(utcDay(new Date('2025-03-01T12:34:56Z')).toISOString()).toBe('2025-03-01T00:00:00.000Z');
  });
});

describe('describing intervals as the regulation words them', () => {
  it.each([
    [months(15), '15 months'],
    [months(1), '1 month'],
    [monthsAndAHalf(7), '7½ months'],
    [monthsAndAHalf(2), '2½ months'],
    [weeks(3), '3 weeks'],
    [years(5), '5 years'],
  ])('%j → %s', (interval, words) => {
    expect(describeInterval(interval)).toBe(words);
  });
});

describe('calendar days in a time zone (Node Intl, IANA zones)', () => {
  it('puts an instant on its local day: 19:30 on May 1 in Chicago (CDT, UTC−5) is May 1, although it is May 2 in UTC', () => {
    const instant = new Date('2026-05-01T19:30:00-05:00');
    expect(iso(localDay(instant))).toBe('2026-05-02');
    expect(iso(localDay(instant, 'UTC'))).toBe('2026-05-02');
    expect(iso(localDay(instant, 'America/Chicago'))).toBe('2026-05-01');
  });

  it('puts 2025-12-31T20:00-06:00 in calendar year 2025 in Chicago (CST) and 2026 in UTC', () => {
    const instant = new Date('2025-12-31T20:00:00-06:00');
    expect(calendarYearOf(localDay(instant, 'America/Chicago'))).toBe(2025);
    expect(calendarYearOf(localDay(instant))).toBe(2026);
    // East of Greenwich the other way round: 2025-12-31T23:30Z is already 2026 in Tokyo (UTC+9).
    expect(iso(localDay(new Date('2025-12-31T23:30:00Z'), 'Asia/Tokyo'))).toBe('2026-01-01');
  });

  it('follows daylight saving time: 05:30Z is the previous day in Chicago in summer (UTC−5) and in winter (UTC−6)', () => {
    expect(iso(localDay(new Date('2026-07-01T04:59:59Z'), 'America/Chicago'))).toBe('2026-06-30');
    expect(iso(localDay(new Date('2026-07-01T05:00:00Z'), 'America/Chicago'))).toBe('2026-07-01');
    expect(iso(localDay(new Date('2026-01-01T05:59:59Z'), 'America/Chicago'))).toBe('2025-12-31');
    expect(iso(localDay(new Date('2026-01-01T06:00:00Z'), 'America/Chicago'))).toBe('2026-01-01');
  });

  it('starts a local day at its local midnight, or where DST skips midnight at the first instant of the day', () => {
    expect(startOfLocalDay(d('2026-05-01')).toISOString()).toBe('2026-05-01T00:00:00.000Z');
    expect(startOfLocalDay(d('2026-05-01'), 'America/Chicago').toISOString()).toBe('2026-05-01T05:00:00.000Z');
    expect(startOfLocalDay(d('2026-01-15'), 'America/Chicago').toISOString()).toBe('2026-01-15T06:00:00.000Z');
    expect(startOfLocalDay(d('2026-03-08'), 'America/Chicago').toISOString()).toBe('2026-03-08T06:00:00.000Z'); // the DST day: 02:00 jumps, midnight is CST
    expect(startOfLocalDay(d('2026-05-01'), 'Asia/Kolkata').toISOString()).toBe('2026-04-30T18:30:00.000Z');
    // Chile moves its clocks at midnight: on 2026-09-06 local time goes from 23:59:59 (UTC−4) to 01:00 (UTC−3).
    const santiago = startOfLocalDay(d('2026-09-06'), 'America/Santiago');
    expect(iso(localDay(santiago, 'America/Santiago'))).toBe('2026-09-06');
    expect(iso(localDay(new Date(santiago.getTime() - 1000), 'America/Santiago'))).toBe('2026-09-05');
  });

  it('accepts IANA zone names (canonicalised) and refuses offsets and nonsense', () => {
    expect(canonicalTimeZone('America/Chicago')).toBe('America/Chicago');
    expect(canonicalTimeZone('UTC')).toBe('UTC');
    expect(canonicalTimeZone('Etc/GMT+5')).toBe('Etc/GMT+5');
    expect(canonicalTimeZone('america/chicago')).toBe('America/Chicago');
    expect(canonicalTimeZone('Mars/Olympus_Mons')).toBeNull();
    expect(canonicalTimeZone('+05:00')).toBeNull();
    expect(canonicalTimeZone('')).toBeNull();
    expect(canonicalTimeZone('America/Chicago\u0000')).toBeNull();
  });
});
