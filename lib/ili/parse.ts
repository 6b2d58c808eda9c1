import { createReadStream } from 'node:fs';
import type { Readable } from 'node:stream';
import { parse as parseCsv } from 'csv-parse';
import {
  clockDegFromHhMm,
  dentDepthPctOdFrom,
  depthPctWtFrom,
  eventLookup,
  MAPPED_FIELDS,
  metresFrom,
  millimetresFrom,
  surfaceLookup,
  normaliseEventText,
  validateMappingProfile,
  type IliEventKind,
  type IliListingRow,
  type IliSurface,
  type MappedField,
  type MappingProfile,
  type ValidMappingProfile,
} from './listing';

/** One rejected cell: the row as the user sees it, the file's own header for the column, and the broken rule in words. */
export interface RowError {
  rowNumber: number;
  column: string;
  rule: string;
  value: string | number | null;
}

export interface ListingBatch {
  rows: IliListingRow[];
  rejected: RowError[];
}

/** The pipe the listing was run in: depths given in mm or in are turned into % of wall / % of OD with these. */
export interface PipeDimensions {
  wallThicknessMm: number;
  outsideDiameterMm: number;
}

export type ListingFormat = 'csv' | 'xlsx';

export interface ParseListingOptions {
  /** Data rows per batch (accepted and rejected together); 1,000 unless set. */
  batchSize?: number;
}

/** The file cannot be read as a listing at all (no header, or columns the profile names are absent): nothing was imported. */
export class ListingHeaderError extends Error {
  constructor(
    message: string,
    readonly missingColumns: string[] = [],
  ) {
    super(message);
    this.name = 'ListingHeaderError';
  }
}

type CellValue = string | number | boolean | Date | null;

interface RawRecord {
  rowNumber: number;
  cells: CellValue[];
}

/**
 * Reads a vendor listing as batches of canonical rows and rejected cells, streaming: one batch is in memory at a time
 * (CSV through csv-parse's stream, XLSX through exceljs's streaming WorkbookReader), so a 200,000-row file is read in
 * the memory of a 1,000-row one. The header check runs before the first batch and throws ListingHeaderError.
 */
export async function* parseListing(
  input: Readable | string,
  format: ListingFormat,
  profile: MappingProfile,
  pipe: PipeDimensions,
  options: ParseListingOptions = {},
): AsyncGenerator<ListingBatch, void, undefined> {
  const validProfile = validateMappingProfile(profile);
  checkPipe(pipe);
  const batchSize = options.batchSize ?? 1000;
  if (!Number.isInteger(batchSize) || batchSize < 1) throw new RangeError('batchSize must be a whole number of 1 or more');
  const stream = typeof input === 'string' ? createReadStream(input) : input;
  const records = format === 'csv' ? csvRecords(stream, validProfile.csvDelimiter ?? ',') : notXlsxExplained(xlsxRecords(stream, validProfile.sheetName));
  try {
    let converter: RowConverter | undefined;
    let batch: ListingBatch = { rows: [], rejected: [] };
    let rowsInBatch = 0;
    for await (const record of records) {
      if (!converter) {
        converter = new RowConverter(validProfile, pipe, record.cells);
        continue;
      }
      if (record.cells.every((cell) => cellIsBlank(cell))) continue;
      const { row, errors } = converter.convert(record);
      if (row) batch.rows.push(row);
      else batch.rejected.push(...errors);
      rowsInBatch += 1;
      if (rowsInBatch >= batchSize) {
        yield batch;
        batch = { rows: [], rejected: [] };
        rowsInBatch = 0;
      }
    }
    if (!converter) throw new ListingHeaderError('the file has no header row: it is empty');
    if (rowsInBatch > 0) yield batch;
  } finally {
    stream.destroy();
  }
}

/** The whole file at once, for small files (a few thousand rows); parseListing is the API for real listings. */
export async function parseListingFile(input: Readable | string, format: ListingFormat, profile: MappingProfile, pipe: PipeDimensions): Promise<ListingBatch> {
  const all: ListingBatch = { rows: [], rejected: [] };
  for await (const batch of parseListing(input, format, profile, pipe)) {
    for (const row of batch.rows) all.rows.push(row);
    for (const error of batch.rejected) all.rejected.push(error);
  }
  return all;
}

/** The file's first row as text (what a profile's columns are matched against), reading no further than that row. */
export async function readListingHeader(input: Readable | string, format: ListingFormat, profile: MappingProfile): Promise<string[]> {
  const validProfile = validateMappingProfile(profile);
  const stream = typeof input === 'string' ? createReadStream(input) : input;
  const records = format === 'csv' ? csvRecords(stream, validProfile.csvDelimiter ?? ',') : notXlsxExplained(xlsxRecords(stream, validProfile.sheetName));
  try {
    for await (const record of records)
      return record.cells.map((cell) => (cellIsBlank(cell) ? '' : String(cell instanceof Date ? cell.toISOString() : cell).trim()));
    return [];
  } finally {
    stream.destroy();
  }
}

function checkPipe(pipe: PipeDimensions): void {
  for (const key of ['wallThicknessMm', 'outsideDiameterMm'] as const) {
    if (!(Number.isFinite(pipe[key]) && pipe[key] > 0)) throw new RangeError(`pipe.${key} must be a number greater than 0`);
  }
}

async function* csvRecords(stream: Readable, delimiter: string): AsyncGenerator<RawRecord> {
  // Blank lines are kept (not skipped) so that record N is row N as a spreadsheet opening the file shows it.
  const parser = parseCsv({ delimiter, bom: true, relax_column_count: true, skip_empty_lines: false, relax_quotes: false });
  stream.on('error', (error) => parser.destroy(error));
  stream.pipe(parser);
  let rowNumber = 0;
  for await (const record of parser as AsyncIterable<string[]>) {
    rowNumber += 1;
    yield { rowNumber, cells: record };
  }
}

async function* xlsxRecords(stream: Readable, sheetName: string | undefined): AsyncGenerator<RawRecord> {
  // exceljs is most of what parsing a listing loads (0.2–0.4 CPU-seconds): every process that can import one (the
  // measurements subgraph, its job runner thread) paid for it at start, most of them never reading a workbook.
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded with the first workbook
  const ExcelJS = require('exceljs') as typeof import('exceljs');
  // styles: 'cache' so that a clock position typed into Excel as a time arrives as a Date rather than a day fraction.
  const workbook = new ExcelJS.stream.xlsx.WorkbookReader(stream, {
    worksheets: 'emit',
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'ignore',
    entries: 'ignore',
  });
  // exceljs pipes the input into its unzipper without forwarding the input's errors (a missing file, a failed read):
  // waiting on the next row would then never end, so every wait also listens for them.
  const inputFailed = new Promise<never>((_, reject) => stream.once('error', reject));
  inputFailed.catch(() => undefined);
  let found = false;
  for await (const worksheet of failingWith(workbook, inputFailed)) {
    const wanted = !found && (sheetName === undefined || (worksheet as unknown as { name?: string }).name === sheetName);
    // Every worksheet is read to its end: the reader streams one zip entry after the other and cannot skip one.
    for await (const row of failingWith(worksheet, inputFailed)) {
      if (!wanted) continue;
      const values = row.values as unknown[];
      yield { rowNumber: row.number, cells: values.slice(1).map(excelCellValue) };
    }
    if (wanted) found = true;
  }
  if (!found && sheetName !== undefined) throw new ListingHeaderError(`the workbook has no worksheet named "${sheetName}"`);
}

/** An unzip failure (the file is CSV, or damaged) said in words; read errors (a missing file) stay as they are. */
async function* notXlsxExplained(records: AsyncGenerator<RawRecord>): AsyncGenerator<RawRecord> {
  try {
    yield* records;
  } catch (error) {
    if (error instanceof Error && !('code' in error) && /signature|zip|end of central directory/i.test(error.message)) {
      throw new ListingHeaderError(`the file is not an XLSX workbook (${error.message})`);
    }
    throw error;
  }
}

/** The items of `source`, or the rejection of `failure` as soon as it comes, even while an item is awaited. */
async function* failingWith<T>(source: AsyncIterable<T>, failure: Promise<never>): AsyncGenerator<T> {
  const iterator = source[Symbol.asyncIterator]();
  for (;;) {
    const next = await Promise.race([iterator.next(), failure]);
    if (next.done) return;
    yield next.value;
  }
}

/** exceljs cell values (rich text, formulas, hyperlinks, errors) as the plain value a person sees in the cell. */
function excelCellValue(value: unknown): CellValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value instanceof Date) return value;
  if (typeof value === 'object') {
    const v = value as { richText?: Array<{ text: string }>; result?: unknown; text?: unknown; error?: string };
    if (Array.isArray(v.richText)) return v.richText.map((part) => part.text).join('');
    if ('result' in v) return excelCellValue(v.result);
    if (typeof v.text === 'string') return v.text;
    if (typeof v.error === 'string') return v.error;
  }
  return String(value);
}

function cellIsBlank(cell: CellValue): boolean {
  return cell === null || (typeof cell === 'string' && cell.trim() === '');
}

/** A header cell as columns are matched: trimmed, inner whitespace collapsed, lower case. */
export function normaliseHeader(text: string): string {
  return text.trim().replace(/\s+/g, ' ').toLowerCase();
}

const NUMBER_TEXT = /^[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?$/;

const KIND_NAMES: Record<IliEventKind, string> = {
  GIRTH_WELD: 'a girth weld',
  VALVE: 'a valve',
  TEE: 'a tee',
  BEND: 'a bend',
  FLANGE: 'a flange',
  WALL_THICKNESS_CHANGE: 'a wall thickness change',
  REFERENCE_MARKER: 'a reference marker',
  OTHER_TALLY: 'a tally item',
  METAL_LOSS: 'a metal loss',
  DENT: 'a dent',
  CRACK: 'a crack',
  GOUGE: 'a gouge',
  LAMINATION: 'a lamination',
  WELD_ANOMALY: 'a weld anomaly',
};

/** Checks on a number that hold whatever the row: one function each, not one per row. */
const isWholeNonNegative = (n: number) => Number.isInteger(n) && n >= 0;
const isPositive = (n: number) => n > 0;
const isNonNegative = (n: number) => n >= 0;
const isDegrees = (n: number) => n >= 0 && n <= 360;

/** The rules a profile's units put into words: said once per file, not once per row. */
interface UnitRules {
  distance: string;
  distanceRequired: string;
  jointLength: string;
  wall: string;
  depth: string;
  size: string;
  dent: string;
  metalLossNeedsDepth: string;
  needsLength: string;
  dentNeedsDepth: string;
  wallChangeNeedsWall: string;
}

function unitRules(units: ValidMappingProfile['units']): UnitRules {
  return {
    distance: `must be a number (${units.distance})`,
    distanceRequired: `is required: every row needs a log distance (${units.distance})`,
    jointLength: `must be a number greater than 0 (${units.distance})`,
    wall: `must be a number greater than 0 (${units.sizes})`,
    depth:
      units.depth === 'PCT_WT' ? 'must be a number from 0 to 100 (% of wall)' : `must be a number from 0 to the wall thickness (${units.depth.toLowerCase()})`,
    size: `must be a number of 0 or more (${units.sizes})`,
    dent:
      units.dentDepth === 'PCT_OD'
        ? 'must be a number from 0 to 100 (% of OD)'
        : `must be a number from 0 to the outside diameter (${units.dentDepth.toLowerCase()})`,
    metalLossNeedsDepth: units.depth === 'PCT_WT' ? 'a depth (% of wall)' : `a depth (${units.depth.toLowerCase()})`,
    needsLength: `a length (${units.sizes})`,
    dentNeedsDepth: units.dentDepth === 'PCT_OD' ? 'a depth (% of OD)' : `a depth (${units.dentDepth.toLowerCase()})`,
    wallChangeNeedsWall: `the new wall thickness (${units.sizes})`,
  };
}

/**
 * One data row's cells as the converter reads them, and what is wrong with them. An object with methods rather than
 * eight closures made for each row: run from source (`npm start`; tsx keeps function names by naming every closure as
 * it is made), parsing a 100,000-feature listing took 1.3–2.1 CPU-seconds with the closures and 0.7–1.3 with the
 * methods, and an import parses its listing twice (checked, then written). The bundled image parses as fast either way.
 */
class RowCells {
  readonly errors: RowError[] = [];

  constructor(
    private readonly record: RawRecord,
    private readonly columnIndex: ReadonlyMap<MappedField, number>,
    private readonly columns: ValidMappingProfile['columns'],
  ) {}

  /** The cell, or null when the profile maps no column to the field or the cell is blank. */
  raw(field: MappedField): CellValue {
    const index = this.columnIndex.get(field);
    if (index === undefined) return null;
    const cell = this.record.cells[index];
    return cell === undefined || cellIsBlank(cell) ? null : cell;
  }

  reject(field: MappedField, rule: string, value: CellValue = this.raw(field)): void {
    const column = this.columns[field] ?? `(${field}: no column in the profile)`;
    this.errors.push({ rowNumber: this.record.rowNumber, column, rule, value: reportedValue(value) });
  }

  text(field: MappedField): string | null {
    const value = this.raw(field);
    if (value === null) return null;
    if (value instanceof Date) return value.toISOString();
    return String(value).trim();
  }

  /** A number, or null when the cell is blank; a cell that is not a number is rejected with `rule`. */
  number(field: MappedField, rule: string, allowPercentSign = false): number | null {
    const value = this.raw(field);
    if (value === null) return null;
    if (typeof value === 'number') {
      if (Number.isFinite(value)) return value;
      this.reject(field, rule);
      return null;
    }
    let s = String(value).trim();
    if (allowPercentSign && s.endsWith('%')) s = s.slice(0, -1).trim();
    if (!NUMBER_TEXT.test(s)) {
      this.reject(field, rule);
      return null;
    }
    return Number(s);
  }

  /** A number that passes `ok`, or null (blank, or rejected with `rule`). */
  checked(field: MappedField, rule: string, ok: (n: number) => boolean, allowPercentSign = false): number | null {
    const n = this.number(field, rule, allowPercentSign);
    if (n === null) return null;
    if (ok(n)) return n;
    this.reject(field, rule);
    return null;
  }

  /** A blank cell a feature of `kind` cannot do without; a cell with a bad value was rejected with its own rule. */
  needs(kind: IliEventKind, field: MappedField, present: boolean, what: string): void {
    if (!present && this.raw(field) === null) this.reject(field, `${KIND_NAMES[kind]} needs ${what}`);
  }
}

/** Turns the cells of one data row into a canonical row, or the list of what is wrong with it. */
class RowConverter {
  private readonly columnIndex = new Map<MappedField, number>();
  private readonly events: ReadonlyMap<string, IliEventKind>;
  private readonly surfaces: ReadonlyMap<string, IliSurface>;
  private readonly eventExamples: string;
  private readonly rules: UnitRules;

  constructor(
    private readonly profile: ValidMappingProfile,
    private readonly pipe: PipeDimensions,
    headerCells: CellValue[],
  ) {
    const positions = new Map<string, number[]>();
    headerCells.forEach((cell, index) => {
      if (cellIsBlank(cell)) return;
      const key = normaliseHeader(String(cell instanceof Date ? cell.toISOString() : cell));
      positions.set(key, [...(positions.get(key) ?? []), index]);
    });
    const missing: string[] = [];
    const duplicated: string[] = [];
    for (const field of MAPPED_FIELDS) {
      const name = profile.columns[field];
      if (name === undefined) continue;
      const found = positions.get(normaliseHeader(name));
      if (!found) missing.push(name);
      else if (found.length > 1) duplicated.push(name);
      else this.columnIndex.set(field, found[0]!);
    }
    if (missing.length > 0) {
      throw new ListingHeaderError(
        `the header row lacks ${missing.length === 1 ? 'the column' : 'the columns'} ${missing.map((m) => `"${m}"`).join(', ')} that profile "${profile.id}" maps`,
        missing,
      );
    }
    if (duplicated.length > 0) {
      throw new ListingHeaderError(`the header row has ${duplicated.map((d) => `"${d}"`).join(', ')} more than once, so which one to read is unclear`);
    }
    this.events = eventLookup(profile);
    this.surfaces = surfaceLookup(profile);
    this.eventExamples = Object.keys(profile.events).slice(0, 4).join(', ');
    this.rules = unitRules(profile.units);
  }

  convert(record: RawRecord): { row: IliListingRow | null; errors: RowError[] } {
    const cells = new RowCells(record, this.columnIndex, this.profile.columns);
    const { errors } = cells;
    const { rowNumber } = record;
    const units = this.profile.units;
    const rules = this.rules;

    const kind = this.kindOf(cells);

    let logDistanceM: number | null = null;
    const distance = cells.number('logDistance', rules.distance);
    if (distance !== null) logDistanceM = metresFrom(distance, units.distance);
    else if (cells.raw('logDistance') === null) cells.reject('logDistance', rules.distanceRequired);

    const jointNumber = cells.checked('jointNumber', 'must be a whole number of 0 or more', isWholeNonNegative);
    const jointLength = cells.checked('jointLength', rules.jointLength, isPositive);
    const jointLengthM = jointLength === null ? null : metresFrom(jointLength, units.distance);
    const wall = cells.checked('wallThickness', rules.wall, isPositive);
    const wallThicknessMm = wall === null ? null : millimetresFrom(wall, units.sizes);

    let clockDeg: number | null = null;
    if (units.clock === 'DEGREES') {
      clockDeg = cells.checked('clock', 'must be a number from 0 to 360 (degrees)', isDegrees);
    } else {
      const clock = cells.raw('clock');
      if (clock !== null) {
        // A time typed into Excel is a Date on 1899-12-30; its UTC hours and minutes are the clock face.
        const deg =
          clock instanceof Date
            ? clockDegFromHhMm(`${clock.getUTCHours()}:${String(clock.getUTCMinutes()).padStart(2, '0')}`)
            : clockDegFromHhMm(String(clock));
        if (deg === null) cells.reject('clock', 'must be a clock position from 0:00 to 12:59 (h:mm)');
        clockDeg = deg;
      }
    }

    const depth = cells.checked('depth', rules.depth, isNonNegative, units.depth === 'PCT_WT');
    let depthPctWt: number | null = null;
    if (depth !== null) {
      const pct = depthPctWtFrom(depth, units.depth, wallThicknessMm ?? this.pipe.wallThicknessMm);
      if (pct <= 100) depthPctWt = pct;
      else cells.reject('depth', rules.depth);
    }

    const length = cells.checked('length', rules.size, isNonNegative);
    const lengthMm = length === null ? null : millimetresFrom(length, units.sizes);
    const width = cells.checked('width', rules.size, isNonNegative);
    const widthMm = width === null ? null : millimetresFrom(width, units.sizes);

    const dent = cells.checked('dentDepth', rules.dent, isNonNegative, units.dentDepth === 'PCT_OD');
    let dentDepthPctOd: number | null = null;
    if (dent !== null) {
      const pct = dentDepthPctOdFrom(dent, units.dentDepth, this.pipe.outsideDiameterMm);
      if (pct <= 100) dentDepthPctOd = pct;
      else cells.reject('dentDepth', rules.dent);
    }

    let surface: IliSurface | null = null;
    const surfaceText = cells.text('surface');
    if (surfaceText !== null) {
      surface = this.surfaces.get(normaliseEventText(surfaceText)) ?? null;
      if (surface === null) cells.reject('surface', `must be one of ${[...this.surfaces.keys()].slice(0, 6).join(', ')} (external, internal or mid-wall)`);
    }

    if (kind !== null) {
      if (kind === 'GIRTH_WELD' && jointNumber === null && jointLengthM === null && cells.raw('jointNumber') === null && cells.raw('jointLength') === null) {
        cells.reject(this.profile.columns.jointNumber ? 'jointNumber' : 'jointLength', 'a girth weld needs a joint number or a joint length');
      }
      if (kind === 'METAL_LOSS') {
        cells.needs(kind, 'depth', depthPctWt !== null, rules.metalLossNeedsDepth);
        cells.needs(kind, 'length', lengthMm !== null, rules.needsLength);
      }
      if (kind === 'CRACK' || kind === 'GOUGE') cells.needs(kind, 'length', lengthMm !== null, rules.needsLength);
      if (kind === 'DENT') cells.needs(kind, 'dentDepth', dentDepthPctOd !== null, rules.dentNeedsDepth);
      if (kind === 'WALL_THICKNESS_CHANGE') cells.needs(kind, 'wallThickness', wallThicknessMm !== null, rules.wallChangeNeedsWall);
    }

    if (errors.length > 0 || kind === null || logDistanceM === null) return { row: null, errors };
    return {
      row: {
        rowNumber,
        kind,
        logDistanceM,
        vendorFeatureId: cells.text('vendorFeatureId'),
        jointNumber,
        jointLengthM,
        wallThicknessMm,
        clockDeg,
        depthPctWt,
        lengthMm,
        widthMm,
        dentDepthPctOd,
        surface,
        markerName: cells.text('markerName'),
        comment: cells.text('comment'),
      },
      errors,
    };
  }

  /**
   * The type text first, then the identification text: POF files say "Anomaly" / "Corrosion", and a "Weld" that is
   * also a wall-thickness change stays a weld.
   */
  private kindOf(cells: RowCells): IliEventKind | null {
    const type = cells.raw('eventType');
    const identification = cells.raw('eventIdentification');
    const typeText = type === null ? null : String(type);
    const identificationText = identification === null ? null : String(identification);
    if (typeText === null && identificationText === null) {
      cells.reject('eventType', 'is required: every row needs a feature type');
      return null;
    }
    const byType = typeText === null ? undefined : this.events.get(normaliseEventText(typeText));
    if (byType) return byType;
    const byIdentification = identificationText === null ? undefined : this.events.get(normaliseEventText(identificationText));
    if (byIdentification) return byIdentification;
    const rule = `must be a feature the profile's event dictionary knows (such as ${this.eventExamples})`;
    if (identificationText !== null && this.columnIndex.has('eventIdentification')) cells.reject('eventIdentification', rule);
    else cells.reject('eventType', rule);
    return null;
  }
}

function reportedValue(value: CellValue): string | number | null {
  if (value === null || typeof value === 'number' || typeof value === 'string') return value;
  if (value instanceof Date) return value.toISOString();
  return String(value);
}
