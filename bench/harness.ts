/** Tiny benchmark harness: warm-up, timed repetitions, and a table of ratios against a baseline run in the same invocation. */
export interface Scenario {
  name: string;
  /** Work items one run handles (e.g. measurements stored), to report per-item cost. */
  items: number;
  run(iteration: number): Promise<void>;
}

export interface Result {
  name: string;
  items: number;
  medianMs: number;
  p90Ms: number;
  perItemUs: number;
}

/** The value at fraction `p` of an ascending list (nearest rank, rounding down); NaN when empty. */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

export async function measure(scenario: Scenario, repetitions: number, warmup = 2): Promise<Result> {
  for (let i = 0; i < warmup; i++) await scenario.run(-1 - i);
  const times: number[] = [];
  for (let i = 0; i < repetitions; i++) {
    const started = process.hrtime.bigint();
    await scenario.run(i);
    times.push(Number(process.hrtime.bigint() - started) / 1e6);
  }
  times.sort((a, b) => a - b);
  const medianMs = percentile(times, 0.5);
  return { name: scenario.name, items: scenario.items, medianMs, p90Ms: percentile(times, 0.9), perItemUs: (medianMs * 1000) / scenario.items };
}

/** Prints results with each scenario's per-item cost as a ratio of the first (the baseline). */
export function printTable(title: string, results: Result[]): void {
  const baseline = results[0]!;
  const rows = results.map((r) => [
    r.name,
    String(r.items),
    r.medianMs.toFixed(1),
    r.p90Ms.toFixed(1),
    r.perItemUs.toFixed(1),
    (r.perItemUs / baseline.perItemUs).toPrecision(3) + '×',
  ]);
  const header = ['scenario', 'items/run', 'median ms', 'p90 ms', 'µs/item', 'vs baseline'];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));
  console.log(`baseline: ${baseline.name}. Ratios compare runs of this invocation only; absolute times depend on the machine.`);
}

/** Median of a list (the mean of the middle two for an even count); NaN when empty. */
export function median(values: readonly number[]): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
}

/**
 * A table in this file's style: the first column left-aligned, the others right-aligned, a dashed rule under the
 * header, and optional note lines after it.
 */
export function printColumns(title: string, header: string[], rows: string[][], notes: string[] = []): void {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => (row[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ')
      .trimEnd();
  console.log(`\n${title}\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
  for (const row of rows) console.log(line(row));
  for (const note of notes) console.log(note);
}
