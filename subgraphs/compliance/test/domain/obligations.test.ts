/**
 * The catalogue against the regulation text: which assets each obligation applies to, the timing it
 * takes for them, and how evidence is evaluated — one table per rule, each naming its section.
 * Dates are UTC calendar days.
 */
import { formatCalendarDay, parseCalendarDay } from '../../src/domain/calendar';
import { longestAllowedGapDays } from '../../src/domain/evaluate';
import {
  OBLIGATION_CATALOGUE,
  OBLIGATION_IDS,
  appliesToAsset,
  catalogue,
  leakSurveyTiming,
  obligationDefinition,
  obligationsFor,
  obligationsOnceInService,
  patrolTiming,
  withInheritedAttributes,
  type AssetAttributes,
  type ObligationId,
} from '../../src/domain/obligations';

const d = parseCalendarDay;
const iso = (x: Date | null) => (x ? formatCalendarDay(x) : null);

const asset = (over: Partial<AssetAttributes> = {}): AssetAttributes => ({
  type: 'SEGMENT',
  status: 'ACTIVE',
  regulation: 'CFR_192',
  classLocation: 1,
  inHca: false,
  couldAffectHca: null,
  cathodicallyProtected: null,
  atmosphericExposure: null,
  crossing: null,
  ...over,
});

const ids = (a: AssetAttributes) => obligationsFor(a).map((o) => o.obligation);

/** Evaluates one obligation of one asset; fails when it does not apply. */
function evaluate(obligation: ObligationId, a: AssetAttributes, completions: string[], asOf: string, dueSoonDays?: number, recordsFrom?: string) {
  const found = obligationsFor(a).find((o) => o.obligation === obligation);
  if (!found) throw new Error(`${obligation} does not apply to ${JSON.stringify(a)}`);
  return found.evaluate(completions.map(d), d(asOf), dueSoonDays, recordsFrom ? { recordsFrom: d(recordsFrom) } : {});
}

type Row = [label: string, completions: string[], asOf: string, state: string, dueAt: string | null];

function table(obligation: ObligationId, a: AssetAttributes, rows: Row[]) {
  it.each(rows)('%s', (_label, completions, asOf, state, dueAt) => {
    const result = evaluate(obligation, a, completions, asOf);
    expect([result.state, iso(result.dueAt)]).toEqual([state, dueAt]);
  });
}

describe('the catalogue', () => {
  it('holds every obligation of the SDL enum exactly once', () => {
    expect(OBLIGATION_CATALOGUE.map((o) => o.obligation).sort()).toEqual([...OBLIGATION_IDS].sort());
    expect(OBLIGATION_IDS).toHaveLength(13);
  });

  it.each(OBLIGATION_CATALOGUE.map((o) => [o.obligation, o] as const))('%s names its Part, section, rule, evidence and a valid timing', (_id, o) => {
    expect(o.regulationRef.startsWith(o.regulation === 'CFR_192' ? '§192.' : '§195.')).toBe(true);
    expect(o.rule.length).toBeGreaterThan(40);
    expect(o.evidenceTypes.length).toBeGreaterThan(0);
    expect(o.evidenceScope.length).toBeGreaterThan(10);
    expect(o.variants.length).toBeGreaterThan(0);
    for (const v of o.variants) {
      expect(v.timing.reference?.startsWith(o.regulationRef.slice(0, 8))).toBe(true);
      expect(longestAllowedGapDays(v.timing)).toBeGreaterThan(0); // throws on an invalid rule
    }
  });

  it('lists one regulation at a time', () => {
    expect(catalogue('CFR_195').every((o) => o.regulation === 'CFR_195')).toBe(true);
    expect(catalogue('CFR_192')).toHaveLength(7);
    expect(catalogue('CFR_195')).toHaveLength(6);
    expect(catalogue()).toHaveLength(13);
  });

  it.each<[ObligationId, boolean]>([
    ['GAS_HCA_REASSESSMENT', true],
    ['CP_SURVEY', true],
    ['RECTIFIER_CHECK', false],
    ['VALVE_INSPECTION', false],
    ['PATROL', true],
    ['LEAK_SURVEY', true],
    ['ATMOSPHERIC_CORROSION', true],
    ['LIQUID_HCA_REASSESSMENT', true],
    ['LIQUID_CP_SURVEY', true],
    ['LIQUID_RECTIFIER_CHECK', false],
    ['LIQUID_VALVE_INSPECTION', false],
    ['LIQUID_ROW_PATROL', true],
    ['LIQUID_ATMOSPHERIC_CORROSION', true],
  ])('%s: evidence on an ancestor counts = %s', (id, expected) => {
    expect(obligationDefinition(id).evidenceFromAncestors).toBe(expected);
  });
});

describe('applicability (a pure predicate over asset attributes)', () => {
  it.each<[string, Partial<AssetAttributes>, ObligationId[]]>([
    ['gas segment, class 3, in an HCA', { classLocation: 3, inHca: true }, ['GAS_HCA_REASSESSMENT', 'CP_SURVEY', 'PATROL', 'LEAK_SURVEY']],
    ['gas segment outside an HCA', {}, ['CP_SURVEY', 'PATROL', 'LEAK_SURVEY']],
    [
      'gas pipeline, not cathodically protected, exposed',
      { type: 'PIPELINE', cathodicallyProtected: false, atmosphericExposure: true },
      ['PATROL', 'LEAK_SURVEY', 'ATMOSPHERIC_CORROSION'],
    ],
    ['gas valve', { type: 'VALVE' }, ['VALVE_INSPECTION']],
    ['gas valve exposed to the atmosphere', { type: 'VALVE', atmosphericExposure: true }, ['VALVE_INSPECTION', 'ATMOSPHERIC_CORROSION']],
    ['gas rectifier', { type: 'RECTIFIER' }, ['RECTIFIER_CHECK']],
    ['gas station exposed', { type: 'STATION', atmosphericExposure: true }, ['ATMOSPHERIC_CORROSION']],
    ['gas CP test point (its readings serve the pipe, it has no obligation of its own)', { type: 'CP_TEST_POINT' }, []],
    ['gas system', { type: 'SYSTEM', inHca: true }, []],
    [
      'IDLE asset keeps every obligation (ADB-2016-05: no idle status)',
      { status: 'IDLE', inHca: true },
      ['GAS_HCA_REASSESSMENT', 'CP_SURVEY', 'PATROL', 'LEAK_SURVEY'],
    ],
    ['ABANDONED asset has none (§192.727)', { status: 'ABANDONED', inHca: true }, []],
    ['PLANNED asset has none (not in service)', { status: 'PLANNED', inHca: true }, []],
    ['unknown regulation: none', { regulation: null, inHca: true }, []],
    [
      'liquid segment that could affect an HCA',
      { regulation: 'CFR_195', couldAffectHca: true },
      ['LIQUID_HCA_REASSESSMENT', 'LIQUID_CP_SURVEY', 'LIQUID_ROW_PATROL'],
    ],
    [
      'liquid segment in an HCA (could affect unless shown otherwise, §195.452(a))',
      { regulation: 'CFR_195', inHca: true },
      ['LIQUID_HCA_REASSESSMENT', 'LIQUID_CP_SURVEY', 'LIQUID_ROW_PATROL'],
    ],
    [
      'liquid segment in an HCA shown not to affect it',
      { regulation: 'CFR_195', inHca: true, couldAffectHca: false },
      ['LIQUID_CP_SURVEY', 'LIQUID_ROW_PATROL'],
    ],
    ['liquid valve, exposed', { regulation: 'CFR_195', type: 'VALVE', atmosphericExposure: true }, ['LIQUID_VALVE_INSPECTION', 'LIQUID_ATMOSPHERIC_CORROSION']],
    ['liquid rectifier', { regulation: 'CFR_195', type: 'RECTIFIER' }, ['LIQUID_RECTIFIER_CHECK']],
    ['liquid segment outside an HCA', { regulation: 'CFR_195', inHca: false }, ['LIQUID_CP_SURVEY', 'LIQUID_ROW_PATROL']],
  ])('%s', (_label, over, expected) => {
    expect(ids(asset(over))).toEqual(expected);
  });

  it('checks status and Part before the obligation’s own test', () => {
    const valve = obligationDefinition('VALVE_INSPECTION');
    expect(appliesToAsset(valve, asset({ type: 'VALVE' }))).toBe(true);
    expect(appliesToAsset(valve, asset({ type: 'VALVE', regulation: 'CFR_195' }))).toBe(false);
    expect(appliesToAsset(valve, asset({ type: 'VALVE', status: 'ABANDONED' }))).toBe(false);
  });

  it('inherits the Part, cathodic protection, offshore and odorization from ancestors, never class, HCA or crossing', () => {
    const rectifier = asset({ type: 'RECTIFIER', regulation: null, classLocation: null, inHca: null });
    const pipeline = asset({
      type: 'PIPELINE',
      regulation: 'CFR_192',
      classLocation: 4,
      inHca: true,
      cathodicallyProtected: true,
      crossing: 'HIGHWAY',
      offshore: true,
      gasOdorized: true,
    });
    expect(ids(rectifier)).toEqual([]);
    const inherited = withInheritedAttributes(rectifier, [pipeline]);
    expect(inherited).toMatchObject({
      regulation: 'CFR_192',
      cathodicallyProtected: true,
      offshore: true,
      gasOdorized: true,
      classLocation: null,
      inHca: null,
      crossing: null,
    });
    expect(ids(inherited)).toEqual(['RECTIFIER_CHECK']);
    // The asset's own values win.
    expect(withInheritedAttributes(asset({ cathodicallyProtected: false }), [pipeline]).cathodicallyProtected).toBe(false);
  });
});

describe('§192.939 GAS_HCA_REASSESSMENT: maximum reassessment interval of 7 calendar years', () => {
  table('GAS_HCA_REASSESSMENT', asset({ inHca: true }), [
    ['ILI 2020-06-15 → due the end of 2027 (7 calendar years), not 2027-06-15', ['2020-06-15'], '2027-06-16', 'OK', '2027-12-31'],
    ['the last day of the 7th calendar year is on time', ['2020-06-15'], '2027-12-31', 'DUE_SOON', '2027-12-31'],
    ['the next day is overdue', ['2020-06-15'], '2028-01-01', 'OVERDUE', '2027-12-31'],
    ['no ILI run recorded', [], '2025-01-01', 'NO_RECORD', null],
  ]);
});

describe('§192.465(a) CP_SURVEY: at least once each calendar year, but with intervals not exceeding 15 months', () => {
  table('CP_SURVEY', asset(), [
    ['within 15 months and in the next calendar year', ['2024-03-10', '2025-05-20'], '2025-06-01', 'OK', '2026-08-20'],
    ['late in the year: the calendar year comes first', ['2025-11-30'], '2026-12-31', 'DUE_SOON', '2026-12-31'],
    ['late in the year: overdue on Jan 1 of the year after next', ['2025-11-30'], '2027-01-01', 'OVERDUE', '2026-12-31'],
    ['early in the year: 15 months come first (both sides)', ['2025-01-31'], '2026-04-30', 'DUE_SOON', '2026-04-30'],
    ['early in the year: one day after 15 months', ['2025-01-31'], '2026-05-01', 'OVERDUE', '2026-04-30'],
  ]);
});

describe('§192.465(b)(1) RECTIFIER_CHECK: six times each calendar year, but with intervals not exceeding 2½ months', () => {
  const rectifier = asset({ type: 'RECTIFIER' });
  table('RECTIFIER_CHECK', rectifier, [
    ['2½ months from 2025-03-01 end on 2025-05-16', ['2025-03-01'], '2025-05-16', 'DUE_SOON', '2025-05-16'],
    ['one day later', ['2025-03-01'], '2025-05-17', 'OVERDUE', '2025-05-16'],
    ['leap year: from 2023-12-14 to 2024-02-29', ['2023-12-14'], '2024-02-29', 'DUE_SOON', '2024-02-29'],
    ['leap year: 2024-03-01 is late', ['2023-12-14'], '2024-03-01', 'OVERDUE', '2024-02-29'],
  ]);

  it('counts six per calendar year: five inspections within 2½ months of each other still break 2025', () => {
    const history = ['2024-12-20', '2025-01-20', '2025-04-01', '2025-06-10', '2025-08-20', '2025-11-01', '2026-01-10'];
    const five = evaluate('RECTIFIER_CHECK', rectifier, history, '2026-01-11');
    expect(five.violations.map((v) => [v.kind, v.calendarYear, v.completionsInYear, v.required, v.rule])).toEqual([
      ['TIMES_PER_CALENDAR_YEAR', 2025, 5, 6, 'at least 6 times each calendar year (§192.465(b)(1))'],
    ]);
    expect(evaluate('RECTIFIER_CHECK', rectifier, [...history, '2025-12-15'], '2026-01-11').violations).toEqual([]);
  });
});

describe('§192.745(a) VALVE_INSPECTION: at intervals not exceeding 15 months, but at least once each calendar year', () => {
  const valve = asset({ type: 'VALVE' });
  table('VALVE_INSPECTION', valve, [
    ['the issue: done 2025-02-01, asOf 2026-04-20 → DUE_SOON, due 2026-05-01', ['2025-02-01'], '2026-04-20', 'DUE_SOON', '2026-05-01'],
    ['the issue: asOf 2026-05-02 → OVERDUE', ['2025-02-01'], '2026-05-02', 'OVERDUE', '2026-05-01'],
    ['on the due day: still on time', ['2025-02-01'], '2026-05-01', 'DUE_SOON', '2026-05-01'],
    ['31 days before: OK', ['2025-02-01'], '2026-03-31', 'OK', '2026-05-01'],
  ]);

  it('the issue: 2024-11-15 then 2026-02-10 is within 15 months, but 2025 had none → a calendar-year violation for 2025', () => {
    const result = evaluate('VALVE_INSPECTION', valve, ['2024-11-15', '2026-02-10'], '2026-03-01');
    expect(result.state).toBe('OK');
    expect(result.violations.map((v) => [v.kind, v.calendarYear, iso(v.brokenAt)])).toEqual([['TIMES_PER_CALENDAR_YEAR', 2025, '2026-01-01']]);
  });

  it('a month-end gap: 2025-11-30 → 2027-02-28 is within 15 months; 2027-03-01 is not', () => {
    const within = evaluate('VALVE_INSPECTION', valve, ['2025-11-30', '2027-02-28'], '2027-03-05');
    expect(within.violations.filter((v) => v.kind === 'MAX_GAP')).toEqual([]);
    const beyond = evaluate('VALVE_INSPECTION', valve, ['2025-11-30', '2027-03-01'], '2027-03-05');
    expect(beyond.violations.filter((v) => v.kind === 'MAX_GAP').map((v) => iso(v.deadline))).toEqual(['2027-02-28']);
    // Both histories also left calendar year 2026 without an inspection.
    expect(within.violations.map((v) => v.calendarYear)).toEqual([2026]);
  });
});

describe('§192.705(b) PATROL: the table by class location and crossing', () => {
  it.each<[number | null, 'HIGHWAY' | 'RAILROAD' | null, string, number]>([
    // [class, crossing, max gap words, times per calendar year]
    [1, null, '15 months', 1],
    [2, null, '15 months', 1],
    [1, 'HIGHWAY', '7½ months', 2],
    [2, 'RAILROAD', '7½ months', 2],
    [3, null, '7½ months', 2],
    [3, 'HIGHWAY', '4½ months', 4],
    [4, null, '4½ months', 4],
    [4, 'RAILROAD', '4½ months', 4],
  ])('class %s, crossing %s → %s, %i× each calendar year', (cls, crossing, gap, times) => {
    const { timing } = patrolTiming(cls, crossing);
    expect(timing.words).toContain(gap);
    expect(timing.timesPerCalendarYear).toBe(times);
    expect(timing.reference).toBe('§192.705(b)');
  });

  // §192.705(b), eCFR (https://www.ecfr.gov/current/title-49/section-192.705, last amended by Amdt. 192-78, 61 FR
  // 28786; read from the eCFR export github.com/MichalOpoka/ecfr, commit 4be71cd556562e5e40cd1567e88024a34a57c8be):
  // "(b) The frequency of patrols is determined by the size of the line, the operating pressures, the class location,
  // terrain, weather, and other relevant factors, but intervals between patrols may not be longer than prescribed in the
  // following table:" — class 1, 2: "7½ months; but at least twice each calendar year" at highway and railroad
  // crossings, "15 months; but at least once each calendar year." at all other places; class 3: "4½ months; but at least
  // four times each calendar year" / "7½ months; but at least twice each calendar year."; class 4: "4½ months; but at
  // least four times each calendar year" at both. An unknown class cannot be shown to be in a laxer row, so it takes the
  // class 4 row, which every other row is no stricter than.
  it.each<['HIGHWAY' | null]>([[null], ['HIGHWAY']])('class unknown, crossing %s → the class 4 row (4½ months, four times), explained', (crossing) => {
    const variant = patrolTiming(null, crossing);
    expect(variant.timing).toBe(patrolTiming(4, null).timing);
    expect(variant.when).toBe('class location unknown: the strictest row (class 4) applies until the class is recorded');
    expect(obligationsFor(asset({ classLocation: null, crossing })).find((o) => o.obligation === 'PATROL')?.variant).toBe(variant.when);
  });

  table('PATROL', asset({ classLocation: 3 }), [
    ['class 3: a patrol 8 months after the last one is OVERDUE', ['2025-03-01'], '2025-11-01', 'OVERDUE', '2025-10-16'],
    ['class 3: 7½ months end on 2025-10-16 (on time)', ['2025-03-01'], '2025-10-16', 'DUE_SOON', '2025-10-16'],
    ['class 3: the day after', ['2025-03-01'], '2025-10-17', 'OVERDUE', '2025-10-16'],
  ]);
  table('PATROL', asset({ classLocation: 1 }), [['class 1: the same patrol 8 months on is OK (15 months)', ['2025-03-01'], '2025-11-01', 'OK', '2026-06-01']]);
  table('PATROL', asset({ classLocation: 1, crossing: 'HIGHWAY' }), [
    ['class 1 at a highway crossing: 7½ months', ['2025-03-01'], '2025-11-01', 'OVERDUE', '2025-10-16'],
  ]);
  table('PATROL', asset({ classLocation: 4 }), [['class 4: 4½ months end on 2025-07-16', ['2025-03-01'], '2025-07-16', 'DUE_SOON', '2025-07-16']]);

  it('class 3: twice each calendar year — one patrol in 2025 is a violation even with every gap within 7½ months', () => {
    const result = evaluate('PATROL', asset({ classLocation: 3 }), ['2024-12-20', '2025-07-30', '2026-02-10'], '2026-02-11');
    expect(result.violations.map((v) => [v.kind, v.calendarYear, v.completionsInYear])).toEqual([['TIMES_PER_CALENDAR_YEAR', 2025, 1]]);
  });
});

describe('§192.706 LEAK_SURVEY: 15 months and once a year; unodorized gas tighter in class 3 and 4', () => {
  it.each<[number | null, boolean | null, string, number]>([
    [1, false, '15 months', 1],
    [2, null, '15 months', 1],
    [null, false, '4½ months', 4], // class unknown, unodorized: the strictest row, class 4
    [null, null, '4½ months', 4], // both unknown: class 4, unodorized
    [null, true, '15 months', 1], // odorized gas has the base interval in every class
    [3, true, '15 months', 1],
    [3, false, '7½ months', 2],
    [3, null, '7½ months', 2], // odorization unknown: the stricter rule
    [4, true, '15 months', 1],
    [4, false, '4½ months', 4],
    [4, null, '4½ months', 4],
  ])('class %s, odorized %s → %s, %i× each calendar year', (cls, odorized, gap, times) => {
    const { timing } = leakSurveyTiming(cls, odorized);
    expect(timing.words).toContain(gap);
    expect(timing.timesPerCalendarYear).toBe(times);
  });

  it('says in the variant that an unknown class took the class 4 row', () => {
    const leak = obligationsFor(asset({ classLocation: null })).find((o) => o.obligation === 'LEAK_SURVEY');
    expect(leak?.variant).toBe(
      'class location unknown: the strictest row (class 4) applies until the class is recorded, odorization unknown (the stricter unodorized-gas interval applies)',
    );
    expect(leak?.timing.reference).toBe('§192.706(b)');
  });

  table('LEAK_SURVEY', asset({ classLocation: 3, gasOdorized: false }), [
    ['class 3 unodorized: 7½ months', ['2025-03-01'], '2025-10-17', 'OVERDUE', '2025-10-16'],
  ]);
  table('LEAK_SURVEY', asset({ classLocation: 3, gasOdorized: true }), [['class 3 odorized: 15 months', ['2025-03-01'], '2025-10-17', 'OK', '2026-06-01']]);
  table('LEAK_SURVEY', asset({ classLocation: 4, gasOdorized: false }), [
    ['class 4 unodorized: 4½ months', ['2025-03-01'], '2025-07-17', 'OVERDUE', '2025-07-16'],
  ]);
});

describe('§192.481(a) ATMOSPHERIC_CORROSION: onshore once every 3 calendar years, ≤ 39 months; offshore yearly, ≤ 15 months', () => {
  const exposed = asset({ type: 'VALVE', atmosphericExposure: true });
  table('ATMOSPHERIC_CORROSION', exposed, [
    ['early-year inspection: 39 months bind (2025-04-10)', ['2022-01-10'], '2025-04-10', 'DUE_SOON', '2025-04-10'],
    ['early-year inspection: one day after 39 months', ['2022-01-10'], '2025-04-11', 'OVERDUE', '2025-04-10'],
    ['late-year inspection: the 3rd calendar year binds (2025-12-31, before 39 months = 2026-02-10)', ['2022-11-10'], '2025-12-31', 'DUE_SOON', '2025-12-31'],
    ['late-year inspection: Jan 1 is late', ['2022-11-10'], '2026-01-01', 'OVERDUE', '2025-12-31'],
  ]);
  table('ATMOSPHERIC_CORROSION', asset({ type: 'VALVE', atmosphericExposure: true, offshore: true }), [
    ['offshore: 15 months and once a year', ['2025-03-01'], '2026-05-01', 'OK', '2026-06-01'],
  ]);
});

describe('§195.452(j)(3) LIQUID_HCA_REASSESSMENT: five-year intervals, not to exceed 68 months', () => {
  const segment = asset({ regulation: 'CFR_195', couldAffectHca: true });
  table('LIQUID_HCA_REASSESSMENT', segment, [
    ['ILI 2020-06-15 → 68 months end 2026-02-15', ['2020-06-15'], '2026-02-15', 'DUE_SOON', '2026-02-15'],
    ['one day after 68 months', ['2020-06-15'], '2026-02-16', 'OVERDUE', '2026-02-15'],
    ['five years alone would be 2025-06-15: still OK then', ['2020-06-15'], '2025-06-16', 'OK', '2026-02-15'],
    ['month end: 2019-06-30 + 68 months = 2025-02-28', ['2019-06-30'], '2025-03-01', 'OVERDUE', '2025-02-28'],
  ]);
});

describe('§195.573(a)(1) LIQUID_CP_SURVEY and §195.573(c) LIQUID_RECTIFIER_CHECK', () => {
  table('LIQUID_CP_SURVEY', asset({ regulation: 'CFR_195' }), [
    ['once each calendar year, 15 months: from 2025-01-31 due 2026-04-30', ['2025-01-31'], '2026-05-01', 'OVERDUE', '2026-04-30'],
    ['from 2025-11-30 the calendar year comes first', ['2025-11-30'], '2026-06-01', 'OK', '2026-12-31'],
  ]);
  table('LIQUID_RECTIFIER_CHECK', asset({ regulation: 'CFR_195', type: 'RECTIFIER' }), [
    ['2½ months from 2025-03-01', ['2025-03-01'], '2025-05-16', 'DUE_SOON', '2025-05-16'],
    ['one day later', ['2025-03-01'], '2025-05-17', 'OVERDUE', '2025-05-16'],
  ]);
});

describe('§195.420(b) LIQUID_VALVE_INSPECTION: at intervals not exceeding 7½ months, but at least twice each calendar year', () => {
  const valve = asset({ regulation: 'CFR_195', type: 'VALVE' });
  const twiceButEightMonthsApart = ['2025-01-10', '2025-09-10'];

  it('twice in 2025 but 8 months apart: OVERDUE from 2025-08-26 until the second inspection', () => {
    const before = evaluate('LIQUID_VALVE_INSPECTION', valve, twiceButEightMonthsApart, '2025-09-01', 30, '2025-01-01');
    expect([before.state, iso(before.dueAt)]).toEqual(['OVERDUE', '2025-08-25']);
  });

  it('after the second inspection: OK, with exactly one MAX_GAP violation (deadline 2025-08-25, broken 2025-08-26, cured 2025-09-10) and the yearly count met', () => {
    const after = evaluate('LIQUID_VALVE_INSPECTION', valve, twiceButEightMonthsApart, '2026-01-05', 30, '2025-01-01');
    expect([after.state, iso(after.dueAt)]).toEqual(['OK', '2026-04-25']);
    expect(after.violations.map((v) => [v.kind, v.rule, iso(v.deadline), iso(v.brokenAt), iso(v.previousCompletionAt), iso(v.curedAt)])).toEqual([
      ['MAX_GAP', 'at intervals not exceeding 7½ months (§195.420(b))', '2025-08-25', '2025-08-26', '2025-01-10', '2025-09-10'],
    ]);
  });

  it('the same two inspections 7½ months apart (to the day) break nothing', () => {
    expect(evaluate('LIQUID_VALVE_INSPECTION', valve, ['2025-01-10', '2025-08-25'], '2026-01-05', 30, '2025-01-01').violations).toEqual([]);
  });

  it('one inspection in a judged year breaks "twice each calendar year"', () => {
    const result = evaluate('LIQUID_VALVE_INSPECTION', valve, ['2025-05-01', '2025-12-01', '2026-06-01', '2027-01-10'], '2027-01-11', 30, '2025-01-01');
    expect(result.violations.filter((v) => v.kind === 'TIMES_PER_CALENDAR_YEAR').map((v) => [v.calendarYear, v.completionsInYear])).toEqual([[2026, 1]]);
  });
});

describe('§195.412(a) LIQUID_ROW_PATROL: at intervals not exceeding 3 weeks, but at least 26 times each calendar year', () => {
  table('LIQUID_ROW_PATROL', asset({ regulation: 'CFR_195', type: 'PIPELINE' }), [
    ['3 weeks from 2025-03-01 end on 2025-03-22', ['2025-03-01'], '2025-03-22', 'DUE_SOON', '2025-03-22'],
    ['one day later', ['2025-03-01'], '2025-03-23', 'OVERDUE', '2025-03-22'],
  ]);
});

describe('§195.583(a) LIQUID_ATMOSPHERIC_CORROSION: onshore once every 3 calendar years, ≤ 39 months', () => {
  table('LIQUID_ATMOSPHERIC_CORROSION', asset({ regulation: 'CFR_195', type: 'STATION', atmosphericExposure: true }), [
    ['late-year inspection: end of the 3rd calendar year', ['2022-11-10'], '2025-12-31', 'DUE_SOON', '2025-12-31'],
    ['early-year inspection: 39 months', ['2022-01-10'], '2025-04-11', 'OVERDUE', '2025-04-10'],
  ]);
});

describe('reassessment evidence: every integrity assessment method with a record type (§192.937(c), §195.452(j)(5))', () => {
  // §192.937(c), eCFR (https://www.ecfr.gov/current/title-49/section-192.937, as amended by Amdt. 192-125, 84 FR 52254;
  // read from the eCFR export github.com/MichalOpoka/ecfr, commit 2e4b90ba3f97d36a623e89282dc702d07632d846): "In
  // conducting the integrity reassessment, an operator must assess the integrity of the line pipe in each covered
  // segment by applying one or more of the following methods for each threat to which the covered segment is
  // susceptible." Among them "(1) Internal inspection tools.", "(2) Pressure test conducted in accordance with subpart
  // J of this part." and "(6) Direct assessment to address threats of external corrosion, internal corrosion, and
  // stress corrosion cracking." §195.452(j)(5), eCFR (same export, commit e43581862920bce09ed9a142e2cccb9ded381e55):
  // "An operator must assess the integrity of the line pipe by any of the following methods." — "(i) In-Line
  // Inspection tool or tools …", "(ii) Pressure test conducted in accordance with subpart E of this part;", "(iii)
  // External corrosion direct assessment in accordance with § 195.588; or" "(iv) Other technology …".
  it.each<[ObligationId, AssetAttributes]>([
    ['GAS_HCA_REASSESSMENT', asset({ inHca: true })],
    ['LIQUID_HCA_REASSESSMENT', asset({ regulation: 'CFR_195', couldAffectHca: true })],
  ])('%s accepts ILI_RUN, PRESSURE_TEST and DIRECT_ASSESSMENT', (obligation, a) => {
    expect(obligationDefinition(obligation).evidenceTypes).toEqual(['ILI_RUN', 'PRESSURE_TEST', 'DIRECT_ASSESSMENT']);
    expect(obligationsFor(a).find((o) => o.obligation === obligation)?.evidenceFromAncestors).toBe(true);
  });

  it('a pressure test on 2020-06-15 restarts the 7 calendar years of §192.939 like an ILI run', () => {
    // Evaluation does not depend on the method: the record's day is what counts.
    expect(iso(evaluate('GAS_HCA_REASSESSMENT', asset({ inHca: true }), ['2020-06-15'], '2026-01-01').dueAt)).toBe('2027-12-31');
  });
});

describe('PLANNED assets: no obligation until in service, but the ones that will apply are known', () => {
  // §195.452(b), eCFR (https://www.ecfr.gov/current/title-49/section-195.452; the eCFR export
  // github.com/MichalOpoka/ecfr, commit e43581862920bce09ed9a142e2cccb9ded381e55): a Category 3 pipeline must "(1)
  // Develop a written integrity management program …" by "1 year after the date the pipeline begins operation" and
  // "(2) Include in the program an identification of each pipeline or pipeline segment …" by the "Date the pipeline
  // begins operation."; the O&M intervals likewise run from operation. So a planned asset owes nothing yet.
  const planned = asset({ status: 'PLANNED', classLocation: 3, inHca: true });

  it('a PLANNED class 3 HCA segment carries none now, and these four once in service', () => {
    expect(ids(planned)).toEqual([]);
    expect(obligationsOnceInService(planned).map((o) => o.obligation)).toEqual(['GAS_HCA_REASSESSMENT', 'CP_SURVEY', 'PATROL', 'LEAK_SURVEY']);
  });

  it('an asset in service or abandoned has nothing "once in service"', () => {
    expect(obligationsOnceInService(asset())).toEqual([]);
    expect(obligationsOnceInService(asset({ status: 'ABANDONED' }))).toEqual([]);
  });
});

describe('ApplicableObligation carries the resolved timing and words', () => {
  it('names the variant and the interval in words for a class 3 crossing segment', () => {
    const patrol = obligationsFor(asset({ classLocation: 3, crossing: 'RAILROAD' })).find((o) => o.obligation === 'PATROL');
    expect(patrol).toMatchObject({
      regulationRef: '§192.705(b)',
      variant: 'class 3, at a highway or railroad crossing',
      interval: 'intervals between patrols not longer than 4½ months, but at least four times each calendar year',
      evidenceTypes: ['PATROL'],
      evidenceFromAncestors: true,
    });
  });
});
