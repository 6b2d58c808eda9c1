/**
 * The dig CSV (lib/ili/dig-csv.ts) as RFC 4180 defines the format (https://www.rfc-editor.org/rfc/rfc4180, §2):
 * "Each record is located on a separate line, delimited by a line break (CRLF)"; "Fields containing line breaks
 * (CRLF), double quotes, and commas should be enclosed in double-quotes"; "If double-quotes are used to enclose fields,
 * then a double-quote appearing inside a field must be escaped by preceding it with another double quote."
 */
import { parse } from 'csv-parse/sync';
import { csvField, DIG_COLUMNS, digCsv, type DigRow } from '../ili/dig-csv';

const row: DigRow = {
  measurement: {
    id: 'm-1',
    observedAt: '2025-05-01T00:00:00-05:00',
    odometerM: 1234.567,
    clockDeg: 187.5,
    depthPctWt: 62,
    lengthMm: 140,
    widthMm: 55,
    featureType: 'METAL_LOSS',
    asset: { id: 'a-1', name: 'Line 7, "MP 0–10"\r\nnorth' },
    iliLocation: {
      runId: 'r-1',
      jointNumber: 1030,
      distanceFromUpstreamWeldM: 3.21,
      upstreamWeld: { jointNumber: 1030, logDistanceM: 1231.357, distanceM: 3.21 },
      downstreamWeld: { jointNumber: 1040, logDistanceM: 1243.1, distanceM: 8.533 },
      upstreamMarker: { name: 'AGM 3', kind: 'REFERENCE_MARKER', logDistanceM: 1100, distanceM: 134.567 },
      downstreamMarker: null,
      logDistanceM: 1234.567,
      clockDeg: 187.5,
    },
  },
  assessment: {
    responseCategory: 'IMMEDIATE',
    ruleRef: '49 CFR 192.933(d)(1)(i)',
    discoveredAt: '2025-05-01T00:00:00Z',
    repairDueAt: '2025-05-01T00:00:00Z',
    status: 'OPEN',
    overdue: true,
    depthSource: 'TOOL',
  },
};

test('fields with a comma, quote or line break are quoted and their quotes doubled; others are not', () => {
  expect(csvField('plain')).toBe('plain');
  expect(csvField('a,b')).toBe('"a,b"');
  expect(csvField('say "hi"')).toBe('"say ""hi"""');
  expect(csvField('two\r\nlines')).toBe('"two\r\nlines"');
  expect(csvField(null)).toBe('');
  expect(csvField(undefined)).toBe('');
  expect(csvField(3.5)).toBe('3.5');
});

test('a file reads back (csv-parse) as the values written: units in the headers, instants in ISO 8601 UTC, CRLF records', () => {
  const text = digCsv([row, { measurement: { id: 'm-2' }, assessment: null }]);
  expect(text.endsWith('\r\n')).toBe(true);
  const records = parse(text, { columns: true }) as Record<string, string>[];
  expect(records).toHaveLength(2);
  const [first, second] = records;
  expect(Object.keys(first!)).toEqual(DIG_COLUMNS.map((c) => c.header));
  expect(first).toMatchObject({
    'Measurement ID': 'm-1',
    Asset: 'Line 7, "MP 0–10"\r\nnorth',
    'Response category': 'IMMEDIATE',
    Rule: '49 CFR 192.933(d)(1)(i)',
    'Repair due (UTC)': '2025-05-01T00:00:00.000Z',
    // -05:00 written as the same instant in UTC.
    'Observed at (UTC)': '2025-05-01T05:00:00.000Z',
    Overdue: 'true',
    'Log distance [m]': '1234.567',
    'Joint number': '1030',
    'Distance from upstream weld [m]': '3.21',
    'Distance to downstream weld [m]': '8.533',
    'Upstream marker': 'AGM 3',
    'Distance from upstream marker [m]': '134.567',
    'Downstream marker': '',
    'Clock [deg]': '187.5',
    'Clock [h:mm]': '6:15',
    'Depth [% wt]': '62',
    'Length [mm]': '140',
    'Width [mm]': '55',
  });
  // What the API did not give is empty, never "null" or "undefined".
  expect(Object.entries(second!).filter(([, v]) => v !== '')).toEqual([['Measurement ID', 'm-2']]);
  for (const header of ['Log distance [m]', 'Depth [% wt]', 'Length [mm]', 'Clock [deg]']) expect(DIG_COLUMNS.map((c) => c.header)).toContain(header);
});
