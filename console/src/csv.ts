/**
 * CSV as RFC 4180 has it (comma-separated, CRLF line ends, a field quoted when it holds a comma, a quote or a line
 * break, quotes doubled), with a byte-order mark so spreadsheet programs read the file as UTF-8. A field starting
 * with = + - @ is prefixed with an apostrophe: a spreadsheet would otherwise run it as a formula (CSV injection).
 * lib/ (the CLI's writer) is Node code the console bundle cannot import, so the console keeps this one.
 */
export type CsvValue = string | number | boolean | null | undefined;

function csvField(value: CsvValue): string {
  if (value === null || value === undefined) return '';
  let text = typeof value === 'number' ? (Number.isFinite(value) ? String(value) : '') : String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

export function toCsv(header: readonly string[], rows: readonly (readonly CsvValue[])[]): string {
  return '\ufeff' + [header, ...rows].map((row) => row.map(csvField).join(',')).join('\r\n') + '\r\n';
}

/** Hands the text to the browser as a download (a same-origin blob: URL; nothing leaves the page). */
export function downloadText(fileName: string, text: string, type = 'text/csv;charset=utf-8'): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement('a');
  link.href = url;
  link.download = fileName;
  document.body.appendChild(link);
  link.click();
  link.remove();
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
