/**
 * The timing rules against the regulation text (current eCFR, 49 CFR Parts 192 and 195). Each case
 * names the section whose words it checks. Dates are UTC calendar days.
 */
import type { AssetProjection } from '../src/documents';
import { addInterval, addMonths } from '../src/calendar';
import { evaluateTiming, obligationsFor, patrolTiming, stateAt, worstState, type Timing } from '../src/rules';

const d = (s: string) => new Date(`${s}T00:00:00.000Z`);
const day = (x: Date | null) => x?.toISOString().slice(0, 10) ?? null;

const asset = (over: Partial<AssetProjection>): AssetProjection => ({
  _id: 'a',
  tenantId: 't',
  version: 1,
  type: 'SEGMENT',
  name: 'x',
  parentId: null,
  status: 'ACTIVE',
  regulation: 'CFR_192',
  classLocation: 1,
  inHca: false,
  couldAffectHca: null,
  cathodicallyProtected: null,
  atmosphericExposure: null,
  crossing: null,
  sourceEventId: 'e',
  ...over,
});
const timingOf = (a: AssetProjection, obligation: string): Timing => {
  const found = obligationsFor([a]).find((o) => o.obligation === obligation);
  if (!found) throw new Error(`${obligation} does not apply`);
  return found.timing;
};

describe('calendar months, as "at intervals not exceeding N months" counts them', () => {
  it.each([
    ['2025-02-01', 15, false, '2026-05-01'], // the case: 456 days would land on 2026-05-03
    ['2025-11-30', 15, false, '2027-02-28'], // month end clamps to the shorter month
    ['2023-11-30', 15, false, '2025-02-28'],
    ['2022-11-29', 15, false, '2024-02-29'], // leap year
    ['2023-11-29', 3, false, '2024-02-29'],
    ['2025-01-31', 7, true, '2025-09-15'], // 7½ months: Aug 31, then a half month of 15 days
    ['2025-03-01', 2, true, '2025-05-16'], // 2½ months
    ['2025-01-15', 4, true, '2025-05-30'], // 4½ months
    ['2021-03-31', 39, false, '2024-06-30'], // 39 months (§192.481)
  ])('%s + %s%s months = %s', (from, months, half, expected) => {
    expect(day(addInterval(d(from), { months, halfMonth: half }))).toBe(expected);
  });

  it('counts weeks as seven days (§195.412: 3 weeks)', () => {
    expect(day(addInterval(d('2025-12-20'), { weeks: 3 }))).toBe('2026-01-10');
  });

  it('never overflows into the next month', () => {
    expect(day(addMonths(d('2024-01-31'), 1))).toBe('2024-02-29');
    expect(day(addMonths(d('2025-01-31'), 1))).toBe('2025-02-28');
  });
});

describe('§192.745(a) valves: "at intervals not exceeding 15 months, but at least once each calendar year"', () => {
  const valve = timingOf(asset({ type: 'VALVE' }), 'VALVE_INSPECTION');

  it('is DUE_SOON on 2026-04-20 and OVERDUE on 2026-05-02 after an inspection on 2025-02-01 (due 2026-05-01)', () => {
    const soon = evaluateTiming(valve, [d('2025-02-01')], d('2026-04-20'), 30);
    expect(soon).toMatchObject({ state: 'DUE_SOON' });
    expect(day(soon.dueAt)).toBe('2026-05-01');
    expect(evaluateTiming(valve, [d('2025-02-01')], new Date('2026-05-01T23:59:59Z'), 30).state).toBe('DUE_SOON');
    expect(evaluateTiming(valve, [d('2025-02-01')], d('2026-05-02'), 30).state).toBe('OVERDUE');
  });

  it('is OK more than dueSoonDays before the due date', () => {
    expect(evaluateTiming(valve, [d('2025-02-01')], d('2026-03-31'), 30).state).toBe('OK');
    expect(evaluateTiming(valve, [d('2025-02-01')], d('2026-04-01'), 30).state).toBe('DUE_SOON');
  });

  it('calls the calendar-year rule independently: 2024-11-15 then 2026-02-10 is within 15 months but leaves 2025 without one', () => {
    const history = [d('2024-11-15'), d('2026-02-10')];
    expect(addInterval(d('2024-11-15'), { months: 15 }) >= d('2026-02-10')).toBe(true);
    const atNewYear = evaluateTiming(valve, [d('2024-11-15')], d('2026-01-01'), 30);
    expect(atNewYear.state).toBe('OVERDUE');
    expect(day(atNewYear.dueAt)).toBe('2025-12-31');
    const later = evaluateTiming(valve, history, d('2026-03-01'), 30);
    expect(later.state).toBe('OK');
    expect(later.violations).toEqual([{ rule: '0 of 1 required completion in calendar year 2025', brokenAt: d('2026-01-01') }]);
  });

  it('counts only evidence on or before asOf', () => {
    expect(evaluateTiming(valve, [d('2026-06-01')], d('2026-01-01'), 30).state).toBe('NO_RECORD');
  });
});

describe('§192.705(b) patrols by class location', () => {
  it.each([
    [1, null, { months: 15 }, 1],
    [2, null, { months: 15 }, 1],
    [3, null, { months: 7, halfMonth: true }, 2],
    [4, null, { months: 4, halfMonth: true }, 4],
    [1, 'HIGHWAY', { months: 7, halfMonth: true }, 2],
    [2, 'RAILROAD', { months: 7, halfMonth: true }, 2],
    [3, 'HIGHWAY', { months: 4, halfMonth: true }, 4],
    [4, 'RAILROAD', { months: 4, halfMonth: true }, 4],
    [null, null, { months: 4, halfMonth: true }, 4], // unknown class: the strictest row until it is recorded
  ] as const)('class %s, crossing %s: %j and %s a year', (cls, crossing, maxGap, times) => {
    expect(patrolTiming({ classLocation: cls, crossing })).toEqual({ maxGap, timesPerCalendarYear: times });
  });

  it('makes a class 3 patrol 8 months after the last one OVERDUE (7½ months allowed)', () => {
    const t = timingOf(asset({ classLocation: 3 }), 'PATROL');
    expect(evaluateTiming(t, [d('2025-01-10')], d('2025-09-10'), 30).state).toBe('OVERDUE');
    expect(evaluateTiming(t, [d('2025-01-10')], d('2025-08-25'), 30).state).toBe('DUE_SOON');
  });
});

describe('§195.420(b) liquid mainline valves: "not exceeding 7½ months, but at least twice each calendar year"', () => {
  const t = timingOf(asset({ type: 'VALVE', regulation: 'CFR_195' }), 'LIQUID_VALVE_INSPECTION');

  it('is OVERDUE 8 months after an inspection, and keeps the violation after a second one in the same year', () => {
    expect(evaluateTiming(t, [d('2025-01-15')], d('2025-09-01'), 30).state).toBe('OVERDUE');
    const after = evaluateTiming(t, [d('2025-01-15'), d('2025-09-15')], d('2025-10-01'), 30);
    expect(after.state).toBe('OK');
    expect(after.violations.map((v) => day(v.brokenAt))).toEqual(['2025-08-31']);
  });

  it('needs two in the calendar year: one in January leaves the year short at its end', () => {
    const r = evaluateTiming(t, [d('2025-07-01')], d('2025-12-10'), 30);
    expect(day(r.dueAt)).toBe('2025-12-31');
    expect(r.state).toBe('DUE_SOON');
  });
});

describe('counts per calendar year', () => {
  it('§192.465(b) rectifiers: six each calendar year; five by December leave it due on 31 December', () => {
    const t = timingOf(asset({ type: 'RECTIFIER' }), 'RECTIFIER_CHECK');
    const five = ['2025-01-05', '2025-03-05', '2025-05-05', '2025-07-05', '2025-09-05'].map(d);
    const r = evaluateTiming(t, five, d('2025-10-01'), 30);
    expect(day(r.dueAt)).toBe('2025-11-20'); // 2½ months from 5 September comes first
    const six = [...five, d('2025-11-15')];
    expect(day(evaluateTiming(t, six, d('2025-11-20'), 30).dueAt)).toBe('2026-01-30');
    expect(evaluateTiming(t, five, d('2026-01-02'), 30).violations.map((v) => v.rule)).toContain('5 of 6 required completions in calendar year 2025');
  });

  it('§195.412(a) right-of-way: 3 weeks at most', () => {
    const t = timingOf(asset({ regulation: 'CFR_195' }), 'LIQUID_ROW_PATROL');
    expect(day(evaluateTiming(t, [d('2025-03-01')], d('2025-03-05'), 7).dueAt)).toBe('2025-03-22');
  });
});

describe('year-based limits', () => {
  it('§192.481(a): once every 3 calendar years and within 39 months, whichever comes first', () => {
    const t = timingOf(asset({ atmosphericExposure: true }), 'ATMOSPHERIC_CORROSION');
    expect(day(evaluateTiming(t, [d('2022-02-15')], d('2023-01-01'), 30).dueAt)).toBe('2025-05-15');
    expect(day(evaluateTiming(t, [d('2022-11-15')], d('2023-01-01'), 30).dueAt)).toBe('2025-12-31');
  });

  it('§192.939(a): a covered segment is reassessed within 7 calendar years', () => {
    const t = timingOf(asset({ inHca: true }), 'GAS_HCA_REASSESSMENT');
    expect(day(evaluateTiming(t, [d('2019-06-01')], d('2024-01-01'), 30).dueAt)).toBe('2026-12-31');
  });

  it('§195.452(j)(3): five-year intervals, not to exceed 68 months', () => {
    const t = timingOf(asset({ regulation: 'CFR_195', couldAffectHca: true }), 'LIQUID_HCA_REASSESSMENT');
    expect(day(evaluateTiming(t, [d('2020-01-31')], d('2024-01-01'), 30).dueAt)).toBe('2025-09-30');
  });
});

describe('applicability', () => {
  const names = (a: AssetProjection) => obligationsFor([a]).map((o) => o.obligation).sort();

  it('gives a gas segment in an HCA its reassessment, CP, patrol and leakage survey', () => {
    expect(names(asset({ inHca: true }))).toEqual(['CP_SURVEY', 'GAS_HCA_REASSESSMENT', 'LEAK_SURVEY', 'PATROL']);
  });

  it('gives a liquid segment that could affect an HCA (though not in one) its §195.452 reassessment', () => {
    expect(names(asset({ regulation: 'CFR_195', couldAffectHca: true, cathodicallyProtected: false }))).toEqual(['LIQUID_HCA_REASSESSMENT', 'LIQUID_ROW_PATROL']);
  });

  it('gives PLANNED and ABANDONED assets no recurring obligations, and an unregulated asset none', () => {
    expect(names(asset({ status: 'PLANNED' }))).toEqual([]);
    expect(names(asset({ status: 'ABANDONED' }))).toEqual([]);
    expect(names(asset({ regulation: null }))).toEqual([]);
  });

  it('inherits the regulation and class location from the pipeline a valve or segment belongs to', () => {
    const pipeline = asset({ _id: 'p', type: 'PIPELINE', regulation: 'CFR_195', classLocation: 3 });
    const valve = asset({ _id: 'v', type: 'VALVE', regulation: null, classLocation: null, parentId: 'p' });
    expect(obligationsFor([valve, pipeline]).map((o) => o.obligation)).toEqual(['LIQUID_VALVE_INSPECTION']);
  });
});

describe('states', () => {
  it('orders OVERDUE over NO_RECORD over DUE_SOON over OK', () => {
    expect(worstState(['OK', 'DUE_SOON'])).toBe('DUE_SOON');
    expect(worstState(['DUE_SOON', 'NO_RECORD'])).toBe('NO_RECORD');
    expect(worstState(['NO_RECORD', 'OVERDUE', 'OK'])).toBe('OVERDUE');
    expect(worstState([])).toBe('OK');
  });

  it('is NO_RECORD without a due date', () => {
    expect(stateAt(null, d('2026-01-01'), 30)).toBe('NO_RECORD');
  });
});
