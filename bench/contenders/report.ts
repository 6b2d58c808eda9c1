/**
 * What `npm run bench:gateway` prints: per query and load shape, each contender's median over the rounds (with the
 * spread, min–max), the ratios of Linepack to the bare @apollo/gateway, to Hive Gateway and to the subgraph ceiling
 * (computed round by round, so each ratio compares runs made minutes apart at most), the p50 overhead of
 * authentication and rate limiting at one connection, and the ingest comparison.
 */
import { median, printColumns } from '../harness';
import type { LoadMeasurement } from './load';
import { queryTitles, type QueryName } from './workload';

export type Section = 'throughput' | 'latency';

export interface Sample {
  round: number;
  section: Section;
  query: QueryName;
  row: string;
  m: LoadMeasurement;
}

export interface RowInfo {
  id: string;
  label: string;
  /** A gateway process (its CPU is the "gateway CPU" column); false for a subgraph called directly. */
  gateway: boolean;
}

export interface Stat {
  median: number;
  min: number;
  max: number;
}

export interface RowSummary {
  section: Section;
  query: QueryName;
  row: string;
  label: string;
  /** Computed from other rows (the Q2 ceiling), not measured as such. */
  derived: boolean;
  rounds: number;
  rps: Stat;
  p50Ms: Stat;
  p99Ms: Stat;
  gatewayCpuMsPerReq: Stat | null;
  subgraphCpuMsPerReq: Stat;
  ok: number;
  failed: number;
  firstFailure: string | null;
}

export interface RatioSummary {
  section: Section;
  query: QueryName;
  /** rps: higher is better for the first row; cpu (gateway CPU per request): lower is. */
  metric: 'rps' | 'cpu';
  /** e.g. "linepack-pro/hive". */
  name: string;
  label: string;
  /** The metric of the first row over the second's, per round. */
  median: number;
  min: number;
  max: number;
  target: number | null;
}

export interface OverheadSummary {
  query: QueryName;
  name: string;
  label: string;
  /** p50 at one connection, first row minus second row, ms, per round. */
  medianMs: number;
  minMs: number;
  maxMs: number;
  /** The ceiling on the median (ms), or null. */
  targetMs: number | null;
}

const stat = (values: number[]): Stat => ({ median: median(values), min: Math.min(...values), max: Math.max(...values) });

/** Q2's ceiling: both subgraph parts called directly, one after the other, with no gateway in between (per round). */
export function deriveCeiling(samples: Sample[], query: QueryName, partA: string, partB: string, id: string): Sample[] {
  const out: Sample[] = [];
  for (const a of samples.filter((s) => s.query === query && s.row === partA)) {
    const b = samples.find((s) => s.query === query && s.row === partB && s.round === a.round && s.section === a.section);
    if (!b) continue;
    const rps = a.m.rps > 0 && b.m.rps > 0 ? 1 / (1 / a.m.rps + 1 / b.m.rps) : 0;
    out.push({
      round: a.round,
      section: a.section,
      query,
      row: id,
      m: {
        connections: a.m.connections,
        durationS: a.m.durationS + b.m.durationS,
        ok: Math.min(a.m.ok, b.m.ok),
        failed: a.m.failed + b.m.failed,
        firstFailure: a.m.firstFailure ?? b.m.firstFailure,
        rps,
        p50Ms: a.m.p50Ms + b.m.p50Ms,
        p99Ms: a.m.p99Ms + b.m.p99Ms,
        contenderCpuMsPerReq: null,
        subgraphCpuMsPerReq: a.m.subgraphCpuMsPerReq + b.m.subgraphCpuMsPerReq,
        loadGeneratorCpuShare: (a.m.loadGeneratorCpuShare + b.m.loadGeneratorCpuShare) / 2,
      },
    });
  }
  return out;
}

export function summarizeRows(samples: Sample[], rows: Map<string, RowInfo & { derived?: boolean }>): RowSummary[] {
  const keys = new Map<string, Sample[]>();
  for (const s of samples) {
    const key = `${s.section}|${s.query}|${s.row}`;
    keys.set(key, [...(keys.get(key) ?? []), s]);
  }
  return [...keys.values()].map((group) => {
    const first = group[0]!;
    const info = rows.get(first.row)!;
    const cpu = group.map((s) => s.m.contenderCpuMsPerReq).filter((v): v is number => v !== null);
    return {
      section: first.section,
      query: first.query,
      row: first.row,
      label: info.label,
      derived: info.derived ?? false,
      rounds: group.length,
      rps: stat(group.map((s) => s.m.rps)),
      p50Ms: stat(group.map((s) => s.m.p50Ms)),
      p99Ms: stat(group.map((s) => s.m.p99Ms)),
      gatewayCpuMsPerReq: cpu.length ? stat(cpu) : null,
      subgraphCpuMsPerReq: stat(group.map((s) => s.m.subgraphCpuMsPerReq)),
      ok: group.reduce((sum, s) => sum + s.m.ok, 0),
      failed: group.reduce((sum, s) => sum + s.m.failed, 0),
      firstFailure: group.find((s) => s.m.firstFailure)?.m.firstFailure ?? null,
    };
  });
}

export function ratio(
  samples: Sample[],
  section: Section,
  query: QueryName,
  a: string,
  b: string,
  label: string,
  target: number | null = null,
  metric: 'rps' | 'cpu' = 'rps',
): RatioSummary | null {
  const value = (m: LoadMeasurement) => (metric === 'rps' ? m.rps : m.contenderCpuMsPerReq);
  const values: number[] = [];
  for (const x of samples.filter((s) => s.section === section && s.query === query && s.row === a)) {
    const y = samples.find((s) => s.section === section && s.query === query && s.row === b && s.round === x.round);
    const [vx, vy] = [value(x.m), y ? value(y.m) : null];
    if (vx !== null && vy) values.push(vx / vy);
  }
  if (!values.length) return null;
  return { section, query, metric, name: `${metric === 'cpu' ? 'cpu:' : ''}${a}/${b}`, label, ...stat(values), target };
}

export function overhead(samples: Sample[], query: QueryName, a: string, b: string, label: string, targetMs: number | null = null): OverheadSummary | null {
  const values: number[] = [];
  for (const x of samples.filter((s) => s.section === 'latency' && s.query === query && s.row === a)) {
    const y = samples.find((s) => s.section === 'latency' && s.query === query && s.row === b && s.round === x.round);
    if (y) values.push(x.m.p50Ms - y.m.p50Ms);
  }
  if (!values.length) return null;
  const s = stat(values);
  return { query, name: `${a}-${b}`, label, medianMs: s.median, minMs: s.min, maxMs: s.max, targetMs };
}

// ───────────────────────────── printing ─────────────────────────────

const int = (n: number) => Math.round(n).toLocaleString('en-US');
const ms = (n: number) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0));
const cpuMs = (n: number) => (n < 1 ? n.toFixed(3) : n < 10 ? n.toFixed(2) : n.toFixed(1));
const times = (n: number) => `${n.toFixed(2)}×`;

export function printRowTable(title: string, rows: RowSummary[]): void {
  printColumns(
    title,
    ['contender', 'RPS', 'RPS min–max', 'p50 ms', 'p99 ms', 'gateway CPU ms/req', 'subgraphs CPU ms/req', 'failed'],
    rows.map((r) => [
      r.label,
      int(r.rps.median),
      `${int(r.rps.min)}–${int(r.rps.max)}`,
      // A window a loaded machine answered nothing in has no latency (not 0 ms).
      r.ok ? ms(r.p50Ms.median) : 'no answer',
      r.ok ? ms(r.p99Ms.median) : 'no answer',
      r.gatewayCpuMsPerReq ? cpuMs(r.gatewayCpuMsPerReq.median) : '—',
      cpuMs(r.subgraphCpuMsPerReq.median),
      r.failed ? `${r.failed} !` : '0',
    ]),
  );
}

export function printRatioTable(title: string, ratios: RatioSummary[]): void {
  if (!ratios.length) return;
  printColumns(
    title,
    ['ratio (round by round)', 'median', 'min–max', 'target', ''],
    ratios.map((r) => [
      r.label,
      times(r.median),
      `${r.min.toFixed(2)}–${r.max.toFixed(2)}`,
      r.target === null ? '' : `≥ ${r.target.toFixed(1)}×`,
      r.target === null ? '' : r.median >= r.target ? 'met' : 'not met',
    ]),
  );
}

export function printOverheadTable(title: string, overheads: OverheadSummary[]): void {
  if (!overheads.length) return;
  printColumns(
    title,
    ['p50 at 1 connection, difference', 'median ms', 'min–max ms', 'target', ''],
    overheads.map((o) => [
      o.label,
      o.medianMs.toFixed(2),
      `${o.minMs.toFixed(2)} – ${o.maxMs.toFixed(2)}`,
      o.targetMs === null ? '' : `≤ ${o.targetMs.toFixed(2)} ms`,
      o.targetMs === null ? '' : o.medianMs <= o.targetMs ? 'met' : 'not met',
    ]),
  );
}

export function sectionTitle(query: QueryName, section: Section, connections: number, seconds: number, rounds: number, identical: boolean): string {
  const shape = section === 'throughput' ? `${connections} connections` : '1 connection';
  // Q0 sends no subgraph request: nothing to vary or de-duplicate, so both modes send the same request.
  const requests =
    query === 'Q0' ? 'the same query varied or identical (no subgraph request to de-duplicate)' : identical ? 'IDENTICAL requests' : 'varied requests';
  return `${queryTitles[query]}\n  ${shape}, ${seconds} s × ${rounds} round${rounds === 1 ? '' : 's'}, ${requests}; medians over the rounds`;
}
