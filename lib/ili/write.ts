import { once } from 'node:events';
import { createWriteStream } from 'node:fs';
import { finished } from 'node:stream/promises';
import ExcelJS from 'exceljs';
import { csvField } from './dig-csv';
import { hhMmFromClockDeg, POF_COLUMNS, type IliEventKind, type IliListingRow, type IliSurface } from './listing';

/**
 * Writes canonical rows as a vendor would lay them out in the POF pipe tally (POF_DEFAULT_PROFILE's columns), so that
 * the synthetic listings exercise the importer the way a real file does: POF's "Feature type" / "Feature
 * identification" pair, clock as h:mm, surface as Ext/Int, and the extra "Abs. dist. to upstream weld [m]" column the
 * POF tally has and the importer does not read.
 */

export const UPSTREAM_WELD_COLUMN = 'Abs. dist. to upstream weld [m]';

export const POF_LISTING_HEADER: readonly string[] = [
  POF_COLUMNS.logDistance,
  POF_COLUMNS.eventType,
  POF_COLUMNS.eventIdentification,
  POF_COLUMNS.vendorFeatureId,
  POF_COLUMNS.jointNumber,
  POF_COLUMNS.jointLength,
  UPSTREAM_WELD_COLUMN,
  POF_COLUMNS.wallThickness,
  POF_COLUMNS.clock,
  POF_COLUMNS.surface,
  POF_COLUMNS.depth,
  POF_COLUMNS.length,
  POF_COLUMNS.width,
  POF_COLUMNS.dentDepth,
  POF_COLUMNS.markerName,
  POF_COLUMNS.comment,
];

/** The POF words written for each kind: [Feature type, Feature identification]. */
export const POF_FEATURE_WORDS: Readonly<Record<IliEventKind, readonly [string, string]>> = {
  GIRTH_WELD: ['Weld', ''],
  VALVE: ['Valve', ''],
  TEE: ['Tee', ''],
  BEND: ['Bend', ''],
  FLANGE: ['Flange', ''],
  WALL_THICKNESS_CHANGE: ['Change wall thickness', ''],
  REFERENCE_MARKER: ['Above ground marker', ''],
  OTHER_TALLY: ['Installation', ''],
  METAL_LOSS: ['Anomaly', 'Corrosion'],
  DENT: ['Anomaly', 'Dent'],
  CRACK: ['Anomaly', 'Crack'],
  GOUGE: ['Anomaly', 'Gouge'],
  LAMINATION: ['Anomaly', 'Lamination'],
  WELD_ANOMALY: ['Anomaly', 'Girth weld anomaly'],
};

const SURFACE_WORDS: Record<IliSurface, string> = { EXTERNAL: 'Ext', INTERNAL: 'Int', MID_WALL: 'Mid' };

type Cell = string | number | null;

/** Turns rows into POF cells, tracking the upstream girth weld for the distance-to-weld column. */
function pofCells(): (row: IliListingRow) => Cell[] {
  let upstreamWeldM: number | null = null;
  return (row) => {
    if (row.kind === 'GIRTH_WELD') upstreamWeldM = row.logDistanceM;
    const [type, identification] = POF_FEATURE_WORDS[row.kind];
    const isCluster = row.kind === 'METAL_LOSS' && row.comment?.startsWith('COCL-');
    return [
      row.logDistanceM,
      type,
      isCluster ? 'Corrosion cluster' : identification,
      row.vendorFeatureId,
      row.jointNumber,
      row.jointLengthM,
      upstreamWeldM === null ? null : Math.round((row.logDistanceM - upstreamWeldM) * 1000) / 1000,
      row.wallThicknessMm,
      row.clockDeg === null ? null : hhMmFromClockDeg(row.clockDeg),
      row.surface === null ? null : SURFACE_WORDS[row.surface],
      row.depthPctWt,
      row.lengthMm,
      row.widthMm,
      row.dentDepthPctOd,
      row.markerName,
      row.comment,
    ];
  };
}

/** Streams rows to a CSV file (RFC 4180 quoting, CRLF line ends as Excel writes them). */
export async function writePofListingCsv(rows: Iterable<IliListingRow>, path: string): Promise<void> {
  const out = createWriteStream(path);
  const toCells = pofCells();
  const write = async (line: string) => {
    if (!out.write(line)) await once(out, 'drain');
  };
  await write(POF_LISTING_HEADER.map(csvField).join(',') + '\r\n');
  let chunk = '';
  for (const row of rows) {
    chunk += toCells(row).map(csvField).join(',') + '\r\n';
    if (chunk.length > 64 * 1024) {
      await write(chunk);
      chunk = '';
    }
  }
  if (chunk) await write(chunk);
  out.end();
  await finished(out);
}

/** Streams rows to an XLSX file through exceljs's streaming WorkbookWriter: each row is committed as it is added. */
export async function writePofListingXlsx(rows: Iterable<IliListingRow>, path: string, sheetName = 'Pipe tally'): Promise<void> {
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: path, useSharedStrings: false, useStyles: false });
  const sheet = workbook.addWorksheet(sheetName);
  sheet.addRow([...POF_LISTING_HEADER]).commit();
  const toCells = pofCells();
  for (const row of rows) sheet.addRow(toCells(row)).commit();
  sheet.commit();
  await workbook.commit();
}
