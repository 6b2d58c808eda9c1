/** Display helpers: dates in the reader's locale with UTC noted where it matters, numbers with units. */
const dateFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: '2-digit' });
const dateTimeFormat = new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'short', day: '2-digit', hour: '2-digit', minute: '2-digit' });

export function formatDate(value: string | null | undefined): string {
  if (!value) return '—';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : dateFormat.format(d);
}

export function formatDateTime(value: string | null | undefined): string {
  if (!value) return '—';
  const d = new Date(value);
  return Number.isNaN(d.getTime()) ? value : dateTimeFormat.format(d);
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
