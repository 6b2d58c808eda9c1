import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import ExcelJS from 'exceljs';
import { generateTwoRunListing } from '../ili/generator';
import { POF_DEFAULT_PROFILE, type IliListingRow, type MappingProfile } from '../ili/listing';
import { ListingHeaderError, parseListing, parseListingFile, type ListingBatch } from '../ili/parse';
import { POF_LISTING_HEADER, writePofListingCsv, writePofListingXlsx } from '../ili/write';

const pipe = { wallThicknessMm: 9.5, outsideDiameterMm: 609.6 };

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(path.join(tmpdir(), 'ili-parse-'));
});
afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

async function writeXlsx(file: string, rows: Array<Array<string | number | null>>): Promise<void> {
  const workbook = new ExcelJS.Workbook();
  const sheet = workbook.addWorksheet('Listing');
  for (const row of rows) sheet.addRow(row);
  await workbook.xlsx.writeFile(file);
}

async function collect(batches: AsyncIterable<ListingBatch>): Promise<{ batches: ListingBatch[]; rows: IliListingRow[] }> {
  const all: ListingBatch[] = [];
  for await (const batch of batches) all.push(batch);
  return { batches: all, rows: all.flatMap((b) => b.rows) };
}

describe('ILI listing round trip: generator -> file -> parser', () => {
  const { runA, runB } = generateTwoRunListing({ features: 1500, seed: 3 });

  it('reads back every row of a generated CSV listing, in batches', async () => {
    const file = path.join(dir, 'run-a.csv');
    await writePofListingCsv(runA.rows, file);
    const { batches, rows } = await collect(parseListing(file, 'csv', POF_DEFAULT_PROFILE, pipe, { batchSize: 250 }));
    expect(batches.every((b) => b.rejected.length === 0)).toBe(true);
    expect(batches.every((b) => b.rows.length <= 250)).toBe(true);
    expect(batches.length).toBe(Math.ceil(runA.rows.length / 250));
    expect(rows).toEqual(runA.rows);
  });

  it('reads back every row of a generated XLSX listing written by the streaming writer', async () => {
    const file = path.join(dir, 'run-b.xlsx');
    await writePofListingXlsx(runB.rows, file);
    const { batches, rows } = await collect(parseListing(file, 'xlsx', POF_DEFAULT_PROFILE, pipe));
    expect(batches.flatMap((b) => b.rejected)).toEqual([]);
    expect(rows).toEqual(runB.rows);
    // Every kind the generator makes crossed the file and came back as itself.
    expect(new Set(rows.map((r) => r.kind))).toEqual(new Set(runB.rows.map((r) => r.kind)));
  });

  it('reads a stream as well as a path', async () => {
    const file = path.join(dir, 'run-a-stream.csv');
    await writePofListingCsv(runA.rows.slice(0, 100), file);
    const { rows } = await parseListingFile(Readable.from([readFileSync(file)]), 'csv', POF_DEFAULT_PROFILE, pipe);
    expect(rows).toEqual(runA.rows.slice(0, 100));
  });
});

describe('ILI listing row errors', () => {
  const { runA } = generateTwoRunListing({ features: 1000, seed: 11 });
  const sample = runA.rows.slice(0, 60);
  const metalLoss = sample.filter((r) => r.kind === 'METAL_LOSS');
  const depthRow = metalLoss[0]!;
  const clockRow = metalLoss[1]!;
  const distanceRow = sample.find((r) => r.kind === 'GIRTH_WELD' && r.rowNumber > 10)!;
  const column = (name: string) => POF_LISTING_HEADER.indexOf(name);

  /** The sample as cells, with three rows broken in three different ways. */
  async function brokenCells(): Promise<string[][]> {
    const file = path.join(dir, 'sample.csv');
    await writePofListingCsv(sample, file);
    const lines = readFileSync(file, 'utf8').trimEnd().split('\r\n');
    const cells = lines.map((line) => line.split(','));
    cells[depthRow.rowNumber - 1]![column('Max. depth [%t]')] = '120';
    cells[clockRow.rowNumber - 1]![column('Clock position [h:min]')] = '13:10';
    cells[distanceRow.rowNumber - 1]![column('Log distance [m]')] = '12,5 m';
    return cells;
  }

  const expectedErrors = () => [
    { rowNumber: depthRow.rowNumber, column: 'Max. depth [%t]', rule: 'must be a number from 0 to 100 (% of wall)', value: '120' },
    { rowNumber: clockRow.rowNumber, column: 'Clock position [h:min]', rule: 'must be a clock position from 0:00 to 12:59 (h:mm)', value: '13:10' },
    { rowNumber: distanceRow.rowNumber, column: 'Log distance [m]', rule: 'must be a number (m)', value: '12,5 m' },
  ];

  it('a CSV file with exactly 3 bad rows yields exactly 3 errors naming row, column and rule', async () => {
    const cells = await brokenCells();
    const file = path.join(dir, 'broken.csv');
    writeFileSync(file, cells.map((row) => row.map((c) => (c.includes(',') ? `"${c}"` : c)).join(',')).join('\r\n'));
    const { rows, rejected } = await parseListingFile(file, 'csv', POF_DEFAULT_PROFILE, pipe);
    expect(rejected).toEqual(expectedErrors());
    expect(rows).toHaveLength(sample.length - 3);
    expect(rows.map((r) => r.rowNumber)).not.toEqual(expect.arrayContaining([depthRow.rowNumber, clockRow.rowNumber, distanceRow.rowNumber]));
  });

  it('an XLSX file with exactly 3 bad rows yields exactly 3 errors naming row, column and rule', async () => {
    const cells = await brokenCells();
    const file = path.join(dir, 'broken.xlsx');
    // Numbers as numbers, the way Excel stores them; the broken cells stay text.
    await writeXlsx(
      file,
      cells.map((row, r) => row.map((c) => (r > 0 && c !== '' && /^-?\d+(\.\d+)?$/.test(c) ? Number(c) : c === '' ? null : c))),
    );
    const { rows, rejected } = await parseListingFile(file, 'xlsx', POF_DEFAULT_PROFILE, pipe);
    expect(rejected).toEqual(expectedErrors().map((e) => (e.value === '120' ? { ...e, value: 120 } : e)));
    expect(rows).toHaveLength(sample.length - 3);
  });

  it('reads a clock position typed into Excel as a time', async () => {
    const file = path.join(dir, 'clock-as-time.xlsx');
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('Listing');
    sheet.addRow(['Log distance [m]', 'Feature type', 'Clock position [h:min]']);
    // Excel keeps a time as a fraction of a day on its 1899-12-30 epoch, shown through an h:mm number format.
    sheet.addRow([23.139, 'Valve', new Date(Date.UTC(1899, 11, 30, 10, 32))]);
    sheet.getCell('C2').numFmt = 'h:mm';
    await workbook.xlsx.writeFile(file);
    const profile: MappingProfile = {
      ...POF_DEFAULT_PROFILE,
      columns: { logDistance: 'Log distance [m]', eventType: 'Feature type', clock: 'Clock position [h:min]' },
    };
    const { rows, rejected } = await parseListingFile(file, 'xlsx', profile, pipe);
    expect(rejected).toEqual([]);
    expect(rows[0]!.clockDeg).toBe(316);
  });

  it('applies the rules of each kind', async () => {
    const header = [
      'Log distance [m]',
      'Feature type',
      'Feature identification',
      'Girth weld Nr',
      'Joint / component length [m]',
      'Max. depth [%t]',
      'Length [mm]',
      'Depth / height [%D]',
      'Nominal thickness [mm]',
    ];
    const profile: MappingProfile = {
      ...POF_DEFAULT_PROFILE,
      columns: {
        logDistance: header[0]!,
        eventType: header[1]!,
        eventIdentification: header[2]!,
        jointNumber: header[3]!,
        jointLength: header[4]!,
        depth: header[5]!,
        length: header[6]!,
        dentDepth: header[7]!,
        wallThickness: header[8]!,
      },
    };
    const csv = [
      header.join(','),
      '10,Weld,,,,,,,', // 2: a weld with neither joint number nor length
      '11,Anomaly,Corrosion,,,30,,,', // 3: metal loss without a length
      '12,Anomaly,Corrosion,,,,40,,', // 4: metal loss without a depth
      '13,Anomaly,Dent,,,,,,', // 5: a dent without a depth
      '14,Change wall thickness,,,,,,,', // 6: a wall change without the new wall
      '15,Anomaly,Spalling,,,,,,', // 7: not in the dictionary
      ',Valve,,,,,,,', // 8: no position
      '16,Weld,,20.5,,,,,', // 9: joint number not whole
      '17,Weld,,30,11.9,,,,', // 10: fine
      '18,Anomaly,Corrosion,,,12%,25,,', // 11: fine, with a percent sign
      '19,Anomaly,Dent,,,,,101,', // 12: dent deeper than the pipe
      ',,,,,,,,', // 13: blank: skipped
      '20,Anomaly,Crack,,,,,,', // 14: a crack without a length
    ].join('\n');
    const { rows, rejected } = await parseListingFile(Readable.from([csv]), 'csv', profile, pipe);
    expect(rejected.map((e) => [e.rowNumber, e.column, e.rule])).toEqual([
      [2, 'Girth weld Nr', 'a girth weld needs a joint number or a joint length'],
      [3, 'Length [mm]', 'a metal loss needs a length (mm)'],
      [4, 'Max. depth [%t]', 'a metal loss needs a depth (% of wall)'],
      [5, 'Depth / height [%D]', 'a dent needs a depth (% of OD)'],
      [6, 'Nominal thickness [mm]', 'a wall thickness change needs the new wall thickness (mm)'],
      [7, 'Feature identification', "must be a feature the profile's event dictionary knows (such as Weld, Girth weld, Valve, Tee)"],
      [8, 'Log distance [m]', 'is required: every row needs a log distance (m)'],
      [9, 'Girth weld Nr', 'must be a whole number of 0 or more'],
      [12, 'Depth / height [%D]', 'must be a number from 0 to 100 (% of OD)'],
      [14, 'Length [mm]', 'a crack needs a length (mm)'],
    ]);
    expect(rows.map((r) => [r.rowNumber, r.kind])).toEqual([
      [10, 'GIRTH_WELD'],
      [11, 'METAL_LOSS'],
    ]);
    expect(rows[1]!.depthPctWt).toBe(12);
  });
});

describe('ILI listing header check', () => {
  it('is one error naming every column the profile maps and the file lacks', async () => {
    const header = POF_LISTING_HEADER.filter((h) => h !== 'Max. depth [%t]' && h !== 'Surface location');
    const csv = `${header.join(',')}\n1,Weld,,GW-1,10,12,0,9.5,,,,,,,,\n`;
    const read = parseListingFile(Readable.from([csv]), 'csv', POF_DEFAULT_PROFILE, pipe);
    await expect(read).rejects.toThrow(ListingHeaderError);
    await expect(parseListingFile(Readable.from([csv]), 'csv', POF_DEFAULT_PROFILE, pipe)).rejects.toThrow(
      'the header row lacks the columns "Max. depth [%t]", "Surface location" that profile "pof-100-default" maps',
    );
  });

  it('matches headers ignoring case and spacing, and ignores columns the profile does not map', async () => {
    const csv = 'LOG DISTANCE  [M],feature type,Extra column\n5.5,Weld,x\n';
    const profile: MappingProfile = {
      ...POF_DEFAULT_PROFILE,
      columns: { logDistance: 'Log distance [m]', eventType: 'Feature type', jointNumber: 'Extra column' },
    };
    const { rejected } = await parseListingFile(Readable.from([csv]), 'csv', profile, pipe);
    expect(rejected).toEqual([{ rowNumber: 2, column: 'Extra column', rule: 'must be a whole number of 0 or more', value: 'x' }]);
  });

  it('fails, rather than waits, on a file it cannot read or that is not a workbook', async () => {
    for (const format of ['csv', 'xlsx'] as const) {
      await expect(parseListingFile(path.join(dir, `missing.${format}`), format, POF_DEFAULT_PROFILE, pipe)).rejects.toThrow('ENOENT');
    }
    const csvAsXlsx = path.join(dir, 'listing-really-csv.xlsx');
    writeFileSync(csvAsXlsx, `${POF_LISTING_HEADER.join(',')}\n1,Weld,,,10,12,,,,,,,,,,\n`);
    await expect(parseListingFile(csvAsXlsx, 'xlsx', POF_DEFAULT_PROFILE, pipe)).rejects.toThrow('the file is not an XLSX workbook');
  });

  it('refuses an empty file', async () => {
    await expect(parseListingFile(Readable.from(['']), 'csv', POF_DEFAULT_PROFILE, pipe)).rejects.toThrow('the file has no header row');
  });
});

/**
 * The vocabulary and values of the POF pipe tally example: Pipeline Operators Forum, "Specifications and requirements
 * for intelligent pig inspection of pipelines", 2016 edition (superseded by POF 100, November 2021), Appendix 6
 * "Typical example of Pipe tally". Rows transcribed from it (log distance, feature type, feature identification,
 * girth weld number, joint length, nominal / measured thickness, clock, surface, max depth, length x width, dent depth):
 *   "1.136 Weld Change wall thickness 20 Seamless 8.001 508 12 12.3"
 *   "23.139 Anomaly Corrosion 8.4 2.001 10:32 Ext 18% 25% 126 42 GENE"
 *   "30.143 Above ground marker Marker AGM 1"
 *   "35.001 Anomaly Dent, Kinked 8.3 12.860 0:22 Ext Inw 2.7% 45x78"
 *   "35.801 Anomaly Gouge Cluster GOCL-01 8.3 2.800 0:10 Ext 8% 15% 38 20 AXGR"
 *   "44.144 Weld Bend begin 60 Long seam 2.004 508 12 12.2"
 *   "44.999 Anomly Corrosion Cluster COCL-01 12.1 0.855 8:36 Ext 32% 32% 42 25 PITT"
 *   "47.151 Anomaly Mill anomaly Cluster MACL-01 8.4 1.003 8:53 Int 17% 36% 159 120 GENE"
 */
describe('POF vocabulary', () => {
  const header = POF_LISTING_HEADER;
  const line = (cells: Record<string, string>) => header.map((h) => cells[h] ?? '').join(',');
  const rows = [
    line({
      'Log distance [m]': '1.136',
      'Feature type': 'Weld',
      'Feature identification': 'Change wall thickness',
      'Girth weld Nr': '20',
      'Joint / component length [m]': '8.001',
      'Nominal thickness [mm]': '12',
    }),
    line({
      'Log distance [m]': '23.139',
      'Feature type': 'Anomaly',
      'Feature identification': 'Corrosion',
      'Nominal thickness [mm]': '8',
      'Clock position [h:min]': '10:32',
      'Surface location': 'Ext',
      'Max. depth [%t]': '25%',
      'Length [mm]': '126',
      'Width [mm]': '42',
    }),
    line({ 'Log distance [m]': '30.143', 'Feature type': 'Above ground marker', 'Feature identification': 'Marker', 'Marker name': 'AGM 1' }),
    line({
      'Log distance [m]': '35.001',
      'Feature type': 'Anomaly',
      'Feature identification': '"Dent, Kinked"',
      'Clock position [h:min]': '0:22',
      'Surface location': 'Ext',
      'Length [mm]': '45',
      'Width [mm]': '78',
      'Depth / height [%D]': '2.7%',
    }),
    line({
      'Log distance [m]': '35.801',
      'Feature type': 'Anomaly',
      'Feature identification': 'Gouge Cluster',
      'Clock position [h:min]': '0:10',
      'Surface location': 'Ext',
      'Max. depth [%t]': '15%',
      'Length [mm]': '38',
      'Width [mm]': '20',
      'Comment / Cluster ID': 'GOCL-01',
    }),
    line({
      'Log distance [m]': '44.144',
      'Feature type': 'Weld',
      'Feature identification': 'Bend begin',
      'Girth weld Nr': '60',
      'Joint / component length [m]': '2.004',
      'Nominal thickness [mm]': '12',
    }),
    line({
      'Log distance [m]': '44.999',
      'Feature type': 'Anomly',
      'Feature identification': 'Corrosion Cluster',
      'Clock position [h:min]': '8:36',
      'Surface location': 'Ext',
      'Max. depth [%t]': '32%',
      'Length [mm]': '42',
      'Width [mm]': '25',
      'Comment / Cluster ID': 'COCL-01',
    }),
    line({
      'Log distance [m]': '47.151',
      'Feature type': 'Anomaly',
      'Feature identification': 'Mill anomaly Cluster',
      'Clock position [h:min]': '8:53',
      'Surface location': 'Int',
      'Max. depth [%t]': '36%',
      'Length [mm]': '159',
      'Width [mm]': '120',
      'Comment / Cluster ID': 'MACL-01',
    }),
  ];
  const pofPipe = { wallThicknessMm: 8, outsideDiameterMm: 508 };

  it('maps the POF feature types and identifications to kinds, ignoring case', async () => {
    const { rows: parsed, rejected } = await parseListingFile(Readable.from([[header.join(','), ...rows].join('\n')]), 'csv', POF_DEFAULT_PROFILE, pofPipe);
    expect(rejected).toEqual([]);
    expect(parsed.map((r) => [r.logDistanceM, r.kind])).toEqual([
      [1.136, 'GIRTH_WELD'],
      [23.139, 'METAL_LOSS'],
      [30.143, 'REFERENCE_MARKER'],
      [35.001, 'DENT'],
      [35.801, 'GOUGE'],
      [44.144, 'GIRTH_WELD'],
      [44.999, 'METAL_LOSS'],
      [47.151, 'METAL_LOSS'],
    ]);
    const corrosion = parsed[1]!;
    expect(corrosion).toMatchObject({ clockDeg: 316, surface: 'EXTERNAL', depthPctWt: 25, lengthMm: 126, widthMm: 42, wallThicknessMm: 8 });
    expect(parsed[3]).toMatchObject({ clockDeg: 11, dentDepthPctOd: 2.7 });
    expect(parsed[0]).toMatchObject({ jointNumber: 20, jointLengthM: 8.001, wallThicknessMm: 12 });
    expect(parsed[2]!.markerName).toBe('AGM 1');
    expect(parsed[7]).toMatchObject({ surface: 'INTERNAL', clockDeg: 266.5, comment: 'MACL-01' });
  });
});

describe('ILI listing in feet and inches', () => {
  // A US vendor: feet, inches, depth in inches, dent depth in inches, clock in degrees, semicolons.
  const profile: MappingProfile = {
    id: 'us-vendor',
    name: 'US vendor MFL',
    vendor: 'Vendor US',
    columns: {
      logDistance: 'Odometer (ft)',
      eventType: 'Event',
      jointNumber: 'Joint',
      jointLength: 'Jt Len (ft)',
      wallThickness: 'WT (in)',
      clock: 'Orientation (deg)',
      depth: 'Depth (in)',
      length: 'Length (in)',
      width: 'Width (in)',
      dentDepth: 'Dent Depth (in)',
    },
    units: { distance: 'ft', sizes: 'in', depth: 'IN', dentDepth: 'IN', clock: 'DEGREES' },
    events: { GW: 'GIRTH_WELD', 'Ext ML': 'METAL_LOSS', 'Int ML': 'METAL_LOSS', Dent: 'DENT' },
    csvDelimiter: ';',
  };
  const csv = [
    'Odometer (ft);Event;Joint;Jt Len (ft);WT (in);Orientation (deg);Depth (in);Length (in);Width (in);Dent Depth (in)',
    '1000;GW;100;40;0.375;;;;;',
    '1012.5;ext ml;100;;0.375;90;0.1;2;1.5;',
    '1020;Int ML;100;;;270;0.095;1;1;',
    '1030.25;DENT;100;;;355.5;;3;4;0.5',
  ].join('\n');

  it('converts to metres, millimetres, % of wall and % of OD exactly (hand-computed)', async () => {
    const { rows, rejected } = await parseListingFile(Readable.from([csv]), 'csv', profile, { wallThicknessMm: 9.525, outsideDiameterMm: 609.6 });
    expect(rejected).toEqual([]);
    const [weld, external, internal, dent] = rows as [IliListingRow, IliListingRow, IliListingRow, IliListingRow];
    // 1,000 ft x 0.3048 = 304.8 m; 40 ft = 12.192 m; 0.375 in x 25.4 = 9.525 mm.
    expect(weld.logDistanceM).toBeCloseTo(304.8, 9);
    expect(weld.jointLengthM).toBeCloseTo(12.192, 9);
    expect(weld.wallThicknessMm).toBeCloseTo(9.525, 9);
    // 1,012.5 ft = 308.61 m; 0.1 in in a 0.375 in wall = 26.667 %; 2 in = 50.8 mm; 1.5 in = 38.1 mm.
    expect(external.logDistanceM).toBeCloseTo(308.61, 9);
    expect(external.depthPctWt).toBeCloseTo((0.1 / 0.375) * 100, 9);
    expect(external.depthPctWt).toBeCloseTo(26.6667, 3);
    expect(external.lengthMm).toBeCloseTo(50.8, 9);
    expect(external.widthMm).toBeCloseTo(38.1, 9);
    expect(external.clockDeg).toBe(90);
    // No wall in the row: the pipe's 9.525 mm. 0.095 in = 2.413 mm = 25.333 % of 9.525 mm.
    expect(internal.depthPctWt).toBeCloseTo(25.3333, 3);
    expect(internal.logDistanceM).toBeCloseTo(310.896, 9);
    // 0.5 in = 12.7 mm of a 609.6 mm (24 in) OD = 2.0833 %.
    expect(dent.dentDepthPctOd).toBeCloseTo(2.08333, 4);
    expect(dent.logDistanceM).toBeCloseTo(314.0202, 9);
    expect(dent.clockDeg).toBe(355.5);
  });

  it('refuses a depth deeper than the wall once converted', async () => {
    const deep = csv.replace('1020;Int ML;100;;;270;0.095', '1020;Int ML;100;;;270;0.4');
    const { rejected } = await parseListingFile(Readable.from([deep]), 'csv', profile, { wallThicknessMm: 9.525, outsideDiameterMm: 609.6 });
    expect(rejected).toEqual([{ rowNumber: 4, column: 'Depth (in)', rule: 'must be a number from 0 to the wall thickness (in)', value: '0.4' }]);
  });
});

describe('ILI listing memory', () => {
  it('holds one batch at a time while streaming a larger XLSX listing (heap measured, not asserted)', async () => {
    const { runA } = generateTwoRunListing({ features: 20000, seed: 5 });
    const file = path.join(dir, 'large.xlsx');
    await writePofListingXlsx(runA.rows, file);
    const heap: number[] = [];
    let count = 0;
    for await (const batch of parseListing(file, 'xlsx', POF_DEFAULT_PROFILE, pipe)) {
      count += batch.rows.length + batch.rejected.length;
      if (count % 5000 < 1000) heap.push(Math.round(process.memoryUsage().heapUsed / 1e6));
    }
    expect(count).toBe(runA.rows.length);
    process.stdout.write(`ili parse: ${count} rows of XLSX; heap used (MB) every ~5,000 rows: ${heap.join(', ')}\n`);
  });
});
