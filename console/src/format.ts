/** Display helpers: dates in the reader's locale, every time of day with its zone named, numbers with units. */
const dateFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: '2-digit' });
const dateTimeFormats = new Map<string, Intl.DateTimeFormat>();

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : dateFormat.format(d);
}

/**
 * An instant with its time zone named ("Nov 27, 2026, 06:10 UTC"): in `zone` (an IANA name; the console passes the
 * tenant's, so every reader sees the same clock) or, without one, in the reader's own zone.
 */
export function formatDateTime(value: string | null | undefined, zone?: string): string {
  if (!value) return '—';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return value;
  const key = zone ?? '';
  let format = dateTimeFormats.get(key);
  if (!format) {
    format = new Intl.DateTimeFormat(undefined, {
      year: 'numeric',
      month: 'short',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      timeZoneName: 'short',
      ...(zone ? { timeZone: zone } : {}),
    });
    dateTimeFormats.set(key, format);
  }
  return format.format(d);
}

/** The reader's own IANA time zone (the browser's), e.g. "Europe/Berlin". */
export const readerTimeZone = new Intl.DateTimeFormat().resolvedOptions().timeZone;

const zonedDateTimeFormat = new Intl.DateTimeFormat(undefined, {
  year: 'numeric',
  month: 'short',
  day: '2-digit',
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  timeZoneName: 'short',
});

/** An instant with seconds and the zone it is shown in ("Mar 04, 2026, 14:05:09 GMT+1"): for logs, where the moment matters. */
export function formatInstant(value: string | null | undefined): string {
  if (!value) return '—';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : zonedDateTimeFormat.format(d);
}

export function formatNumber(value: number | null | undefined, digits = 0): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return '—';
  return value.toLocaleString(undefined, { maximumFractionDigits: digits, minimumFractionDigits: 0 });
}

/** SCREAMING_SNAKE enum values as words: ONE_YEAR → "One year", CP_TEST_POINT → "CP test point". */
const keepUpper = new Set(['CP', 'ILI', 'UT', 'HCA', 'ROW', 'NGL', 'CO2', 'SCADA', 'CFR']);
export function humanize(value: string | null | undefined): string {
  if (!value) return '—';
  const words = value.split('_').map((w, i) => (keepUpper.has(w) ? w : i === 0 ? w.charAt(0) + w.slice(1).toLowerCase() : w.toLowerCase()));
  return words.join(' ');
}

export const unitLabels: Record<string, string> = {
  MM: 'mm',
  PERCENT_WT: '% wall thickness',
  MV: 'mV',
  A: 'A',
  V: 'V',
  KPA: 'kPa',
  CELSIUS: '°C',
  M3_PER_H: 'm³/h',
  MM_PER_YEAR: 'mm/year',
};

export function unitLabel(unit: string | null | undefined): string {
  if (!unit) return '';
  return unitLabels[unit] ?? unit;
}

export function regulationLabel(value: string | null | undefined): string {
  if (!value) return '—';
  const m = /^CFR_(\d+)$/.exec(value);
  return m ? `49 CFR ${m[1]}` : humanize(value);
}

/**
 * A date as the calendar day it is in `zone` (the tenant's IANA zone, where repair and compliance days are counted),
 * so a reader in another zone sees the same day the rule counts; in UTC when the zone is not known.
 */
export function formatDayIn(value: string | null | undefined, zone: string | null): string {
  if (!value) return '—';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return value;
  return new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: '2-digit', timeZone: zone ?? 'UTC' }).format(d);
}

/** YYYY-MM-DD of the instant in `zone` (UTC when unknown): for CSV files and date inputs. */
export function isoDayIn(value: string | null | undefined, zone: string | null): string {
  if (!value) return '';
  const d = new Date(value);
  if (Number.isNaN(d.getTime())) return value;
  return new Intl.DateTimeFormat('en-CA', { year: 'numeric', month: '2-digit', day: '2-digit', timeZone: zone ?? 'UTC' }).format(d);
}

const wallClocks = new Map<string, Intl.DateTimeFormat>();

/**
 * How far `zone`'s wall clock is ahead of UTC at the instant `ms` (negative west of Greenwich), read back from Intl:
 * no time-zone library is needed for it.
 */
export function zoneOffsetMs(ms: number, zone: string): number {
  let format = wallClocks.get(zone);
  if (!format) {
    format = new Intl.DateTimeFormat('en-US', {
      timeZone: zone,
      hourCycle: 'h23',
      year: 'numeric',
      month: '2-digit',
      day: '2-digit',
      hour: '2-digit',
      minute: '2-digit',
      second: '2-digit',
    });
    wallClocks.set(zone, format);
  }
  const parts = format.formatToParts(new Date(ms));
  const get = (type: string) => Number(parts.find((p) => p.type === type)?.value);
  const asIfUtc = Date.UTC(get('year'), get('month') - 1, get('day'), get('hour'), get('minute'), get('second'));
  return asIfUtc - (ms - (ms % 1000));
}

/** The start (00:00) of a YYYY-MM-DD day in `zone`, as an instant: what a "due before" filter sends. */
export function startOfDayIn(day: string, zone: string | null): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const utcGuess = Date.UTC(y, m - 1, d);
  if (!zone) return new Date(utcGuess).toISOString();
  return new Date(utcGuess - zoneOffsetMs(utcGuess, zone)).toISOString();
}

/** The last instant (23:59:59.999) of a YYYY-MM-DD day in `zone`: an audit "as of" a day sees that whole day. */
export function endOfDayIn(day: string, zone: string | null): string {
  const [y, m, d] = day.split('-').map(Number) as [number, number, number];
  const next = new Date(Date.UTC(y, m - 1, d + 1)).toISOString().slice(0, 10);
  return new Date(new Date(startOfDayIn(next, zone)).getTime() - 1).toISOString();
}

/** "America/Chicago" → "Chicago time (America/Chicago)"; null → "UTC". */
export function zoneLabel(zone: string | null): string {
  if (!zone) return 'UTC';
  const city = zone.split('/').pop()?.replace(/_/g, ' ');
  return city && city !== zone ? `${city} time (${zone})` : zone;
}

/** Response categories in words: one table for the dig list, its filters and the chart legend. */
export const responseCategoryLabels = {
  IMMEDIATE: 'Immediate',
  SIXTY_DAY: '60-day',
  ONE_HUNDRED_EIGHTY_DAY: '180-day',
  ONE_YEAR: 'One year',
  TWO_YEAR: 'Two year',
  MONITORED: 'Monitored',
  OTHER: 'Other (operator schedules)',
} as const;

/** A response category in words; undefined for a value the table does not name. */
export function responseCategoryLabel(value: string): string | undefined {
  return (responseCategoryLabels as Record<string, string | undefined>)[value];
}

/** Clock position as the face reads it (0° = 12:00, 90° = 3:00). */
export function clockLabel(deg: number | null | undefined): string {
  if (deg === null || deg === undefined || !Number.isFinite(deg)) return '—';
  const minutes = Math.round((((deg % 360) + 360) % 360) * 2) % 720;
  const h = Math.floor(minutes / 60);
  return `${h === 0 ? 12 : h}:${String(minutes % 60).padStart(2, '0')}`;
}
