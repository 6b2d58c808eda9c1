import { hhMmFromClockDeg } from './listing';

/**
 * Dig list and dig sheet rows as CSV (RFC 4180: fields with a comma, quote or line break are quoted, quotes doubled,
 * CRLF line ends), one row per anomaly, for `linepack digs` and the console. Every column that holds a quantity names
 * its unit; instants are ISO 8601 in UTC; a value the API did not give is an empty field, never "null". The rows are
 * what the dig-list and dig-sheet queries answer (the contract of issue 25), so both exports have the same columns.
 */

export interface DigWeld {
  jointNumber: number | null;
  logDistanceM: number;
  distanceM: number;
}

export interface DigMarker {
  name: string | null;
  kind: string;
  logDistanceM: number;
  distanceM: number;
}

export interface DigLocation {
  runId: string;
  jointNumber: number | null;
  distanceFromUpstreamWeldM: number | null;
  upstreamWeld: DigWeld | null;
  downstreamWeld: DigWeld | null;
  upstreamMarker: DigMarker | null;
  downstreamMarker: DigMarker | null;
  logDistanceM: number;
  clockDeg: number | null;
}

/** The anomaly as measured: Measurement fields of the measurements subgraph (asset from assets). */
export interface DigMeasurement {
  id: string;
  type?: string;
  observedAt?: string | null;
  odometerM?: number | null;
  clockDeg?: number | null;
  depthPctWt?: number | null;
  lengthMm?: number | null;
  widthMm?: number | null;
  featureType?: string | null;
  runId?: string | null;
  asset?: { id: string; name?: string | null } | null;
  iliLocation?: DigLocation | null;
}

/** Its assessment: AnomalyAssessment fields of the analytics subgraph. */
export interface DigAssessment {
  responseCategory?: string | null;
  ruleRef?: string | null;
  discoveredAt?: string | null;
  repairDueAt?: string | null;
  status?: string | null;
  overdue?: boolean | null;
  depthSource?: string | null;
}

export interface DigRow {
  measurement: DigMeasurement;
  assessment: DigAssessment | null;
}

type Cell = string | number | boolean | null | undefined;

/** An instant as ISO 8601 UTC, whatever offset the API wrote it with. */
const iso = (value: string | null | undefined): string | null => (value ? new Date(value).toISOString() : null);

/** The columns, in order: header (with unit) and how each row fills it. */
export const DIG_COLUMNS: readonly { header: string; cell: (row: DigRow) => Cell }[] = [
  { header: 'Measurement ID', cell: (r) => r.measurement.id },
  { header: 'Asset ID', cell: (r) => r.measurement.asset?.id },
  { header: 'Asset', cell: (r) => r.measurement.asset?.name },
  { header: 'Response category', cell: (r) => r.assessment?.responseCategory },
  { header: 'Rule', cell: (r) => r.assessment?.ruleRef },
  { header: 'Discovered at (UTC)', cell: (r) => iso(r.assessment?.discoveredAt) },
  { header: 'Repair due (UTC)', cell: (r) => iso(r.assessment?.repairDueAt) },
  { header: 'Overdue', cell: (r) => r.assessment?.overdue },
  { header: 'Status', cell: (r) => r.assessment?.status },
  { header: 'Depth source', cell: (r) => r.assessment?.depthSource },
  { header: 'Feature type', cell: (r) => r.measurement.featureType },
  { header: 'Observed at (UTC)', cell: (r) => iso(r.measurement.observedAt) },
  { header: 'Run ID', cell: (r) => r.measurement.iliLocation?.runId ?? r.measurement.runId },
  { header: 'Log distance [m]', cell: (r) => r.measurement.iliLocation?.logDistanceM ?? r.measurement.odometerM },
  { header: 'Joint number', cell: (r) => r.measurement.iliLocation?.jointNumber },
  { header: 'Distance from upstream weld [m]', cell: (r) => r.measurement.iliLocation?.distanceFromUpstreamWeldM },
  { header: 'Upstream weld log distance [m]', cell: (r) => r.measurement.iliLocation?.upstreamWeld?.logDistanceM },
  { header: 'Downstream weld joint number', cell: (r) => r.measurement.iliLocation?.downstreamWeld?.jointNumber },
  { header: 'Distance to downstream weld [m]', cell: (r) => r.measurement.iliLocation?.downstreamWeld?.distanceM },
  { header: 'Upstream marker', cell: (r) => r.measurement.iliLocation?.upstreamMarker?.name },
  { header: 'Upstream marker kind', cell: (r) => r.measurement.iliLocation?.upstreamMarker?.kind },
  { header: 'Distance from upstream marker [m]', cell: (r) => r.measurement.iliLocation?.upstreamMarker?.distanceM },
  { header: 'Downstream marker', cell: (r) => r.measurement.iliLocation?.downstreamMarker?.name },
  { header: 'Downstream marker kind', cell: (r) => r.measurement.iliLocation?.downstreamMarker?.kind },
  { header: 'Distance to downstream marker [m]', cell: (r) => r.measurement.iliLocation?.downstreamMarker?.distanceM },
  { header: 'Clock [deg]', cell: (r) => r.measurement.clockDeg },
  { header: 'Clock [h:mm]', cell: (r) => (r.measurement.clockDeg == null ? null : hhMmFromClockDeg(r.measurement.clockDeg)) },
  { header: 'Depth [% wt]', cell: (r) => r.measurement.depthPctWt },
  { header: 'Length [mm]', cell: (r) => r.measurement.lengthMm },
  { header: 'Width [mm]', cell: (r) => r.measurement.widthMm },
];

/** One field, quoted when RFC 4180 requires it. */
export function csvField(value: Cell): string {
  if (value === null || value === undefined) return '';
  const text = String(value);
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export const digCsvHeader = (): string => DIG_COLUMNS.map((column) => csvField(column.header)).join(',') + '\r\n';

export const digCsvRow = (row: DigRow): string => DIG_COLUMNS.map((column) => csvField(column.cell(row))).join(',') + '\r\n';

/** A whole file: the header and one line per row. */
export function digCsv(rows: Iterable<DigRow>): string {
  let out = digCsvHeader();
  for (const row of rows) out += digCsvRow(row);
  return out;
}
