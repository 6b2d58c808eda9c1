/**
 * evaluateObligation: states, due dates and the history of breaks, for rules built as the
 * regulation words them. Each case names the section whose timing it uses. Dates are UTC days.
 */
import { formatCalendarDay, months, monthsAndAHalf, parseCalendarDay, weeks } from '../../src/domain/calendar';
import {
  COMPLIANCE_STATE_SEVERITY,
  evaluateObligation,
  longestAllowedGapDays,
  worstState,
  type ComplianceState,
  type TimingRule,
} from '../../src/domain/evaluate';

const d = parseCalendarDay;
const iso = (x: Date | null) => (x ? formatCalendarDay(x) : null);

// §192.745(a): at intervals not exceeding 15 months, but at least once each calendar year.
const VALVE_192: TimingRule = {
  words: 'at intervals not exceeding 15 months, but at least once each calendar year',
  reference: '§192.745(a)',
  maxGap: months(15),
  timesPerCalendarYear: 1,
};
// §192.465(b)(1): six times each calendar year, but with intervals not exceeding 2½ months.
const RECTIFIER: TimingRule = {
  words: 'six times each calendar year, 2½ months',
  reference: '§192.465(b)(1)',
  maxGap: monthsAndAHalf(2),
  timesPerCalendarYear: 6,
};
// §192.481(a)(1): at least once every 3 calendar years, but with intervals not exceeding 39 months.
const ATMOSPHERIC: TimingRule = { words: 'every 3 calendar years, 39 months', reference: '§192.481(a)(1)', maxGap: months(39), everyNCalendarYears: 3 };
// A bare 15-month gap (no calendar-year rule) to isolate the month-end arithmetic.
const GAP_15: TimingRule = { words: 'at intervals not exceeding 15 months', maxGap: months(15) };

describe('states and due dates (§192.745(a) valve, the issue’s worked example)', () => {
  const done = [d('2025-02-01')];

  it.each([
    // [asOf, state, daysUntilDue]
    ['2026-03-31', 'OK', 31], // 31 days before the due day: outside the 30-day window
    ['2026-04-01', 'DUE_SOON', 30], // exactly 30 days before: inside
    ['2026-04-20', 'DUE_SOON', 11], // the DUE_SOON case
    ['2026-05-01', 'DUE_SOON', 0], // the due day itself is still on time
    ['2026-05-02', 'OVERDUE', -1], // the OVERDUE case
  ])('done 2025-02-01, asOf %s → %s (dueAt 2026-05-01, not 456 days = 2026-05-03)', (asOf, state, daysUntilDue) => {
    const result = evaluateObligation(VALVE_192, done, d(asOf));
    expect(result.state).toBe(state);
    expect(iso(result.dueAt)).toBe('2026-05-01');
    expect(result.daysUntilDue).toBe(daysUntilDue);
    expect(result.dueRule).toBe('at intervals not exceeding 15 months (§192.745(a))');
  });

  it('counts the asOf instant within its UTC day (late on the due day is not overdue)', () => {
    expect(evaluateObligation(VALVE_192, done, new Date('2026-05-01T23:59:59.999Z')).state).toBe('DUE_SOON');
    expect(evaluateObligation(VALVE_192, done, new Date('2026-05-02T00:00:00.000Z')).state).toBe('OVERDUE');
  });

  it('honours dueSoonDays (0 = only the due day itself)', () => {
    expect(evaluateObligation(VALVE_192, done, d('2026-04-20'), 0).state).toBe('OK');
    expect(evaluateObligation(VALVE_192, done, d('2026-05-01'), 0).state).toBe('DUE_SOON');
    expect(evaluateObligation(VALVE_192, done, d('2026-04-20'), 11).state).toBe('DUE_SOON');
    expect(evaluateObligation(VALVE_192, done, d('2026-04-20'), 10).state).toBe('OK');
  });

  it('is NO_RECORD without a completion, and ignores completions after asOf', () => {
    expect(evaluateObligation(VALVE_192, [], d('2026-01-01'))).toMatchObject({ state: 'NO_RECORD', dueAt: null, lastCompletedAt: null, violations: [] });
    const later = evaluateObligation(VALVE_192, [d('2025-02-01'), d('2026-04-25')], d('2026-04-20'));
    expect(later.completionsCounted).toBe(1);
    expect(iso(later.dueAt)).toBe('2026-05-01');
    // Same day but after the asOf instant: not yet done at asOf.
    expect(evaluateObligation(VALVE_192, [new Date('2026-04-20T15:00:00Z')], new Date('2026-04-20T09:00:00Z')).state).toBe('NO_RECORD');
  });

  it('takes completions in any order and returns the latest instant as lastCompletedAt', () => {
    const result = evaluateObligation(VALVE_192, [new Date('2025-11-03T14:30:00Z'), d('2025-02-01')], d('2025-12-01'));
    expect(result.lastCompletedAt?.toISOString()).toBe('2025-11-03T14:30:00.000Z');
    expect(iso(result.dueAt)).toBe('2026-12-31'); // 2026 needs one; 15 months would be 2027-02-03
  });

  it('rejects an invalid asOf, negative dueSoonDays and a rule that constrains nothing', () => {
    expect(() => evaluateObligation(VALVE_192, done, new Date('x'))).toThrow(RangeError);
    expect(() => evaluateObligation(VALVE_192, done, d('2026-01-01'), -1)).toThrow(RangeError);
    expect(() => evaluateObligation({ words: 'nothing' }, done, d('2026-01-01'))).toThrow(RangeError);
    expect(() => evaluateObligation({ words: 'zero', timesPerCalendarYear: 0 }, done, d('2026-01-01'))).toThrow(RangeError);
  });
});

describe('month ends and leap years in the maximum gap', () => {
  it.each([
    // [last completion, asOf, state, dueAt]
    ['2025-11-30', '2027-02-28', 'DUE_SOON', '2027-02-28'], // 15 months from Nov 30 end on Feb 28
    ['2025-11-30', '2027-03-01', 'OVERDUE', '2027-02-28'],
    ['2023-11-30', '2025-02-28', 'DUE_SOON', '2025-02-28'],
    ['2022-11-29', '2024-02-29', 'DUE_SOON', '2024-02-29'], // leap day is the due day
    ['2022-11-29', '2024-03-01', 'OVERDUE', '2024-02-29'],
  ])('15 months from %s, asOf %s → %s (due %s)', (last, asOf, state, due) => {
    const result = evaluateObligation(GAP_15, [d(last)], d(asOf));
    expect(result.state).toBe(state);
    expect(iso(result.dueAt)).toBe(due);
  });

  it('§192.745(a): a valve done 2025-11-30 is due 2026-12-31 — the calendar-year rule comes before 15 months (2027-02-28)', () => {
    const result = evaluateObligation(VALVE_192, [d('2025-11-30')], d('2026-06-01'));
    expect(iso(result.dueAt)).toBe('2026-12-31');
    expect(result.dueRule).toBe('at least once each calendar year (§192.745(a))');
    expect(evaluateObligation(VALVE_192, [d('2025-11-30')], d('2027-01-01')).state).toBe('OVERDUE');
  });

  it('§192.745(a): 2025-11-30 then 2027-02-28 keeps the 15-month rule (no gap violation) but leaves 2026 without one', () => {
    const result = evaluateObligation(VALVE_192, [d('2025-11-30'), d('2027-02-28')], d('2027-03-01'));
    expect(result.violations.map((v) => [v.kind, iso(v.deadline), v.calendarYear])).toEqual([['TIMES_PER_CALENDAR_YEAR', '2026-12-31', 2026]]);
  });

  it('§192.745(a): 2025-11-30 then 2027-03-01 breaks both rules', () => {
    const result = evaluateObligation(VALVE_192, [d('2025-11-30'), d('2027-03-01')], d('2027-03-02'));
    expect(result.violations.map((v) => [v.kind, iso(v.deadline), iso(v.brokenAt), iso(v.curedAt)])).toEqual([
      ['TIMES_PER_CALENDAR_YEAR', '2026-12-31', '2027-01-01', null],
      ['MAX_GAP', '2027-02-28', '2027-03-01', '2027-03-01'],
    ]);
    expect(result.state).toBe('OK');
  });

  it('§192.465(b)(1): 2½ months from 2023-12-14 end on leap day 2024-02-29; from 2024-12-14 on 2025-03-01', () => {
    expect(evaluateObligation(RECTIFIER, [d('2023-12-14')], d('2024-02-29'))).toMatchObject({ state: 'DUE_SOON' });
    expect(iso(evaluateObligation(RECTIFIER, [d('2023-12-14')], d('2024-02-29')).dueAt)).toBe('2024-02-29');
    expect(evaluateObligation(RECTIFIER, [d('2023-12-14')], d('2024-03-01')).state).toBe('OVERDUE');
    expect(iso(evaluateObligation(RECTIFIER, [d('2024-12-14')], d('2025-01-01')).dueAt)).toBe('2025-03-01');
  });
});

describe('calendar-year violations in the history (auditors see them even when the state is OK)', () => {
  it('§192.745(a): 2024-11-15 then 2026-02-10 is within 15 months, but 2025 had none → one violation for 2025', () => {
    const result = evaluateObligation(VALVE_192, [d('2024-11-15'), d('2026-02-10')], d('2026-03-01'));
    expect(result.state).toBe('OK');
    expect(iso(result.dueAt)).toBe('2027-05-10');
    expect(result.violations).toHaveLength(1);
    expect(result.violations[0]).toMatchObject({
      kind: 'TIMES_PER_CALENDAR_YEAR',
      rule: 'at least once each calendar year (§192.745(a))',
      calendarYear: 2025,
      completionsInYear: 0,
      required: 1,
      curedAt: null,
    });
    expect(iso(result.violations[0]?.deadline ?? null)).toBe('2025-12-31');
    expect(iso(result.violations[0]?.brokenAt ?? null)).toBe('2026-01-01');
  });

  it('does not judge the partial year of the first record unless recordsFrom says the history is complete', () => {
    // One rectifier inspection in 2025, one in 2026; the records start 2025-06-01 (a partial year).
    const history = [d('2025-06-01'), d('2026-03-01')];
    expect(evaluateObligation(RECTIFIER, history, d('2026-03-02')).violations.filter((v) => v.kind === 'TIMES_PER_CALENDAR_YEAR')).toEqual([]);
    // With records complete from 2025-01-01, 2025 is judged: 1 of 6.
    const judged = evaluateObligation(RECTIFIER, history, d('2026-03-02'), 30, { recordsFrom: d('2025-01-01') });
    expect(judged.violations.filter((v) => v.kind === 'TIMES_PER_CALENDAR_YEAR').map((v) => [v.calendarYear, v.completionsInYear])).toEqual([[2025, 1]]);
    // recordsFrom mid-year: that year is partial, so it is not judged.
    expect(
      evaluateObligation(RECTIFIER, history, d('2026-03-02'), 30, { recordsFrom: d('2025-01-02') }).violations.filter(
        (v) => v.kind === 'TIMES_PER_CALENDAR_YEAR',
      ),
    ).toEqual([]);
  });

  it('lists an open gap (still unfixed at asOf) with curedAt null', () => {
    const result = evaluateObligation(GAP_15, [d('2024-01-10')], d('2025-06-01'));
    expect(result.state).toBe('OVERDUE');
    expect(result.violations.map((v) => [v.kind, iso(v.deadline), iso(v.previousCompletionAt), v.curedAt])).toEqual([
      ['MAX_GAP', '2025-04-10', '2024-01-10', null],
    ]);
  });

  it('counts several records on one day as one completion', () => {
    const sameDay = [new Date('2025-03-01T08:00:00Z'), new Date('2025-03-01T16:00:00Z')];
    expect(evaluateObligation(RECTIFIER, sameDay, d('2025-03-02')).completionsCounted).toBe(1);
  });
});

describe('§192.465(b)(1) rectifiers: six times each calendar year, not only 2½-month gaps', () => {
  // Every gap is within 2½ months, yet 2025 holds only five inspections.
  const fiveIn2025 = ['2024-12-20', '2025-01-20', '2025-04-01', '2025-06-10', '2025-08-20', '2025-11-01', '2026-01-10'].map(d);

  it('finds no gap violation but one calendar-year violation (5 of 6 in 2025)', () => {
    const result = evaluateObligation(RECTIFIER, fiveIn2025, d('2026-01-11'));
    expect(result.violations.map((v) => [v.kind, v.calendarYear, v.completionsInYear, v.required])).toEqual([['TIMES_PER_CALENDAR_YEAR', 2025, 5, 6]]);
    expect(result.state).toBe('OK');
    expect(iso(result.dueAt)).toBe('2026-03-25');
  });

  it('a sixth inspection in 2025 clears it', () => {
    const six = [...fiveIn2025, d('2025-12-15')];
    expect(evaluateObligation(RECTIFIER, six, d('2026-01-11')).violations).toEqual([]);
  });

  it('makes the year end the due date while the count is short (dueRule names the count)', () => {
    const sofar = ['2025-01-20', '2025-04-01', '2025-06-10', '2025-08-20', '2025-11-01'].map(d);
    const result = evaluateObligation(RECTIFIER, sofar, d('2025-12-05'), 30, { recordsFrom: d('2025-01-01') });
    expect(iso(result.dueAt)).toBe('2025-12-31'); // the gap alone would allow 2026-01-16
    expect(result.dueRule).toBe('at least 6 times each calendar year (§192.465(b)(1))');
    expect(result.state).toBe('DUE_SOON');
    expect(evaluateObligation(RECTIFIER, sofar, d('2026-01-01'), 30, { recordsFrom: d('2025-01-01') }).state).toBe('OVERDUE');
  });
});

describe('§192.481(a)(1) at least once every 3 calendar years, but with intervals not exceeding 39 months', () => {
  it.each([
    // [last, asOf, state, dueAt, which rule]
    ['2022-01-10', '2025-04-10', 'DUE_SOON', '2025-04-10', 'at intervals not exceeding 39 months (§192.481(a)(1))'],
    ['2022-01-10', '2025-04-11', 'OVERDUE', '2025-04-10', 'at intervals not exceeding 39 months (§192.481(a)(1))'],
    ['2022-11-10', '2025-12-31', 'DUE_SOON', '2025-12-31', 'at least once every 3 calendar years (§192.481(a)(1))'],
    ['2022-11-10', '2026-01-01', 'OVERDUE', '2025-12-31', 'at least once every 3 calendar years (§192.481(a)(1))'],
    ['2022-11-10', '2025-06-01', 'OK', '2025-12-31', 'at least once every 3 calendar years (§192.481(a)(1))'],
  ])('last %s, asOf %s → %s, due %s (%s)', (last, asOf, state, due, rule) => {
    const result = evaluateObligation(ATMOSPHERIC, [d(last)], d(asOf));
    expect([result.state, iso(result.dueAt), result.dueRule]).toEqual([state, due, rule]);
  });

  it('records both breaks of a late inspection (39 months and the third calendar year)', () => {
    const result = evaluateObligation(ATMOSPHERIC, [d('2019-06-01'), d('2023-01-15')], d('2023-02-01'));
    expect(result.violations.map((v) => [v.kind, iso(v.deadline), iso(v.curedAt)])).toEqual([
      ['MAX_GAP', '2022-09-01', '2023-01-15'],
      ['EVERY_N_CALENDAR_YEARS', '2022-12-31', '2023-01-15'],
    ]);
  });
});

describe('§195.412(a) 3 weeks, but at least 26 times each calendar year', () => {
  const ROW: TimingRule = { words: '3 weeks, 26 times', reference: '§195.412(a)', maxGap: weeks(3), timesPerCalendarYear: 26 };
  const every = (days: number, from: string, until: string) => {
    const out: Date[] = [];
    for (let t = d(from).getTime(); t <= d(until).getTime(); t += days * 86_400_000) out.push(new Date(t));
    return out;
  };

  it('every 3 weeks keeps the gap rule but yields only 18 inspections in 2025 → a count violation, OVERDUE until the next patrol', () => {
    const year2025 = every(21, '2025-01-01', '2025-12-31'); // 2025-01-01 … 2025-12-24
    const options = { recordsFrom: d('2025-01-01') };
    const result = evaluateObligation(ROW, year2025, d('2026-01-05'), 30, options);
    expect(result.violations.map((v) => [v.kind, v.calendarYear, v.completionsInYear])).toEqual([['TIMES_PER_CALENDAR_YEAR', 2025, 18]]);
    // 2025 fell short: by the 18th patrol on 2025-12-24, 17 were done and 9 more could not fit in the 8 days left —
    // broken from 2025-12-24 (the 18th was due by 2025-12-23), although 3 weeks from 2025-12-24 would run to 2026-01-14.
    expect([result.state, iso(result.dueAt), result.dueRule]).toEqual(['OVERDUE', '2025-12-23', 'at least 26 times each calendar year (§195.412(a))']);
    expect(iso(result.violations[0]!.brokenAt)).toBe('2025-12-24');
    // The next patrol starts 2026's count; the 2025 shortfall stays in the history.
    const after = evaluateObligation(ROW, [...year2025, d('2026-01-06')], d('2026-01-07'), 7, options);
    expect([after.state, iso(after.dueAt)]).toEqual(['OK', '2026-01-27']);
    expect(after.violations.map((v) => v.calendarYear)).toEqual([2025]);
  });

  // PHMSA interpretation PI-91-020 quotes §195.412(a): "Each operator shall, at intervals not exceeding 3 weeks, but
  // at least 26 times each calendar year, inspect the surface conditions on or adjacent to each pipeline right-of-way."
  // Both halves must hold: 3-week gaps alone give ~17 a year, so the count is the binding half.
  describe('"at least 26 times each calendar year" is checked during the year, not only after it', () => {
    const options = { recordsFrom: d('2025-01-01') };
    // 16 patrols 2026-01-19 … 2026-11-30, exactly 3 weeks apart, after a complete 2025 (every 2 weeks).
    const year2025 = every(14, '2025-01-01', '2025-12-31');
    const sixteen = every(21, '2026-01-19', '2026-11-30');

    it('16 done by Dec 1: the 17th is due by Dec 22 (10 more need 10 days) → DUE_SOON, never OK', () => {
      expect(sixteen).toHaveLength(16);
      const result = evaluateObligation(ROW, [...year2025, ...sixteen], d('2026-12-01'), 30, options);
      expect(result.violations).toEqual([]);
      // With the 3-week gap the next patrol is due 2026-12-21 anyway; the count alone (a year of weekly patrols
      // could meet the gap rule yet not the count) makes 2026-12-22 the due day and reads DUE_SOON, not OK.
      expect([result.state, iso(result.dueAt), result.dueRule]).toEqual(['DUE_SOON', '2026-12-21', 'at intervals not exceeding 3 weeks (§195.412(a))']);
      const countOnly = evaluateObligation({ ...ROW, maxGap: undefined }, [...year2025, ...sixteen], d('2026-12-01'), 30, options);
      expect([countOnly.state, iso(countOnly.dueAt)]).toEqual(['DUE_SOON', '2026-12-22']);
    });

    it('once the year cannot reach 26 any more it is OVERDUE, with a violation dated the first day it became unreachable', () => {
      const result = evaluateObligation(ROW, [...year2025, ...sixteen], d('2026-12-23'), 30, options);
      expect(result.state).toBe('OVERDUE');
      const count = result.violations.find((v) => v.kind === 'TIMES_PER_CALENDAR_YEAR')!;
      expect([count.calendarYear, iso(count.deadline), iso(count.brokenAt), count.completionsInYear, count.required]).toEqual([
        2026,
        '2026-12-22',
        '2026-12-23',
        16,
        26,
      ]);
    });

    it('a judged year with no patrol by Dec 6 can no longer reach 26 (Dec 6 … Dec 31 are exactly 26 days)', () => {
      const rule = { ...ROW, maxGap: undefined };
      expect(iso(evaluateObligation(rule, year2025, d('2026-12-06'), 0, options).dueAt)).toBe('2026-12-06');
      expect(evaluateObligation(rule, year2025, d('2026-12-06'), 0, options).state).toBe('DUE_SOON');
      expect(evaluateObligation(rule, year2025, d('2026-12-07'), 0, options).state).toBe('OVERDUE');
    });
  });

  it('every 2 weeks meets both (27 in 2025)', () => {
    expect(evaluateObligation(ROW, every(14, '2025-01-01', '2025-12-31'), d('2026-01-05'), 30, { recordsFrom: d('2025-01-01') }).violations).toEqual([]);
  });

  it('3 weeks from 2025-03-01 end on 2025-03-22', () => {
    expect(evaluateObligation(ROW, [d('2025-03-01')], d('2025-03-22'), 7).state).toBe('DUE_SOON');
    expect(evaluateObligation(ROW, [d('2025-03-01')], d('2025-03-23'), 7).state).toBe('OVERDUE');
    expect(evaluateObligation(ROW, [d('2025-03-01')], d('2025-03-14'), 7).state).toBe('OK');
  });
});

describe('worstState: OVERDUE > NO_RECORD > DUE_SOON > OK', () => {
  it.each<[ComplianceState[], ComplianceState]>([
    [[], 'OK'],
    [['OK'], 'OK'],
    [['OK', 'DUE_SOON'], 'DUE_SOON'],
    [['DUE_SOON', 'NO_RECORD', 'OK'], 'NO_RECORD'],
    [['NO_RECORD', 'OVERDUE', 'DUE_SOON'], 'OVERDUE'],
    [['OVERDUE', 'OK'], 'OVERDUE'],
  ])('%j → %s', (states, worst) => {
    expect(worstState(states)).toBe(worst);
  });

  it('ranks every state', () => {
    expect(
      Object.entries(COMPLIANCE_STATE_SEVERITY)
        .sort((a, b) => b[1] - a[1])
        .map(([s]) => s),
    ).toEqual(['OVERDUE', 'NO_RECORD', 'DUE_SOON', 'OK']);
  });
});

describe('longestAllowedGapDays (a conservative bound for the deprecated maxIntervalDays only)', () => {
  it('bounds 15 months + once a calendar year by 458 days (a leap-year span of 15 months), 3 weeks by 21', () => {
    expect(longestAllowedGapDays(VALVE_192)).toBe(458);
    expect(longestAllowedGapDays({ words: '3 weeks', maxGap: weeks(3) })).toBe(21);
  });
});

describe("calendar days in the operator's time zone (options.timeZone; default UTC)", () => {
  // §192.745(a), eCFR (https://www.ecfr.gov/current/title-49/section-192.745; the eCFR export
  // github.com/MichalOpoka/ecfr, commit 4be71cd556562e5e40cd1567e88024a34a57c8be): "Each transmission line valve that
  // might be required during any emergency must be inspected and partially operated at intervals not exceeding 15
  // months, but at least once each calendar year." The regulation counts calendar days and years where the work is done.
  const chicago = { timeZone: 'America/Chicago' };

  it('a valve inspected 2025-02-01 (Chicago) and again at 2026-05-01T19:30-05:00 is on time in Chicago, late in UTC', () => {
    const history = [new Date('2025-02-01T10:00:00-06:00'), new Date('2026-05-01T19:30:00-05:00')];
    const asOf = new Date('2026-05-02T12:00:00-05:00');
    expect(evaluateObligation(VALVE_192, history, asOf, 30, chicago).violations).toEqual([]);
    expect(evaluateObligation(VALVE_192, history, asOf, 30).violations.map((v) => [v.kind, iso(v.deadline), iso(v.curedAt)])).toEqual([
      ['MAX_GAP', '2026-05-01', '2026-05-02'],
    ]);
  });

  it('a record at 2025-12-31T20:00-06:00 counts for calendar year 2025 in Chicago, for 2026 in UTC', () => {
    const history = [new Date('2024-10-01T12:00:00-05:00'), new Date('2025-12-31T20:00:00-06:00')];
    const asOf = new Date('2026-01-15T12:00:00Z');
    expect(evaluateObligation(VALVE_192, history, asOf, 30, chicago).violations).toEqual([]);
    expect(evaluateObligation(VALVE_192, history, asOf, 30).violations.map((v) => [v.kind, v.calendarYear])).toEqual([['TIMES_PER_CALENDAR_YEAR', 2025]]);
  });

  it('asOf falls on its local day too: 2026-05-01T23:00-05:00 is still the due day in Chicago', () => {
    const done = [new Date('2025-02-01T10:00:00-06:00')];
    const lateEvening = new Date('2026-05-01T23:00:00-05:00'); // 2026-05-02T04:00Z
    expect(evaluateObligation(VALVE_192, done, lateEvening, 0, chicago)).toMatchObject({ state: 'DUE_SOON', daysUntilDue: 0 });
    expect(evaluateObligation(VALVE_192, done, lateEvening, 0)).toMatchObject({ state: 'OVERDUE', daysUntilDue: -1 });
    expect(iso(evaluateObligation(VALVE_192, done, lateEvening, 0, chicago).dueAt)).toBe('2026-05-01');
  });
});
