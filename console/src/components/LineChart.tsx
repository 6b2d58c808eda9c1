import { useId } from 'react';
import { formatDate, formatNumber } from '../format';

export interface Point {
  at: Date;
  value: number;
}

interface LineChartProps {
  points: Point[];
  /** e.g. "CP_PIPE_TO_SOIL": the chart is named "Chart of <label> over time". */
  label: string;
  /** The value axis title, with its unit: "Pipe-to-soil potential (mV)". */
  yTitle: string;
  width?: number;
  height?: number;
  /** Join the points with a line (a reading over time); false for events such as ILI anomalies of a run. */
  connect?: boolean;
}

/** "Nice" ticks for an axis from lo to hi. */
function ticks(lo: number, hi: number, count: number): number[] {
  if (lo === hi) {
    const pad = Math.abs(lo) * 0.1 || 1;
    lo -= pad;
    hi += pad;
  }
  const raw = (hi - lo) / count;
  const magnitude = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * magnitude).find((s) => s >= raw) ?? raw;
  const start = Math.floor(lo / step) * step;
  const out: number[] = [];
  for (let i = 0; i < 50; i++) {
    const v = Number((start + i * step).toPrecision(12));
    out.push(v);
    if (v >= hi) break;
  }
  return out;
}

/**
 * A small hand-written SVG line chart: time on x, the series' value on y, with axes, ticks and the unit in
 * the axis title. The points are also in a table below the chart for screen readers and for reading exact values.
 */
export function LineChart({ points, label, yTitle, width = 760, height = 300, connect = true }: LineChartProps) {
  const titleId = useId();
  const margin = { top: 16, right: 48, bottom: 48, left: 72 };
  const innerW = width - margin.left - margin.right;
  const innerH = height - margin.top - margin.bottom;
  const sorted = [...points].sort((a, b) => a.at.getTime() - b.at.getTime());

  const times = sorted.map((p) => p.at.getTime());
  const values = sorted.map((p) => p.value);
  let t0 = Math.min(...times);
  let t1 = Math.max(...times);
  if (t0 === t1) {
    t0 -= 86_400_000 * 15;
    t1 += 86_400_000 * 15;
  }
  const yTicks = ticks(Math.min(...values), Math.max(...values), 5);
  const y0 = yTicks[0]!;
  const y1 = yTicks[yTicks.length - 1]!;
  const x = (t: number) => margin.left + ((t - t0) / (t1 - t0)) * innerW;
  const y = (v: number) => margin.top + innerH - ((v - y0) / (y1 - y0 || 1)) * innerH;

  const xTickCount = Math.min(6, Math.max(2, sorted.length));
  const xTicks = Array.from({ length: xTickCount }, (_, i) => t0 + ((t1 - t0) * i) / (xTickCount - 1));
  const path = sorted.map((p, i) => `${i === 0 ? 'M' : 'L'}${x(p.at.getTime()).toFixed(1)},${y(p.value).toFixed(1)}`).join(' ');

  return (
    <svg
      role="img"
      aria-label={`Chart of ${label} over time`}
      aria-describedby={titleId}
      viewBox={`0 0 ${width} ${height}`}
      className="chart"
      preserveAspectRatio="xMidYMid meet"
    >
      <desc id={titleId}>
        {sorted.length} points from {formatDate(sorted[0]?.at.toISOString())} to {formatDate(sorted[sorted.length - 1]?.at.toISOString())}; {yTitle} from{' '}
        {formatNumber(Math.min(...values), 2)} to {formatNumber(Math.max(...values), 2)}. The table below lists every point.
      </desc>
      <g className="chart-grid" aria-hidden="true">
        {yTicks.map((v) => (
          <line key={`gy${v}`} x1={margin.left} x2={margin.left + innerW} y1={y(v)} y2={y(v)} />
        ))}
      </g>
      <g className="chart-axis" aria-hidden="true">
        <line x1={margin.left} x2={margin.left} y1={margin.top} y2={margin.top + innerH} />
        <line x1={margin.left} x2={margin.left + innerW} y1={margin.top + innerH} y2={margin.top + innerH} />
        {yTicks.map((v) => (
          <g key={`ty${v}`}>
            <line x1={margin.left - 5} x2={margin.left} y1={y(v)} y2={y(v)} />
            <text x={margin.left - 8} y={y(v)} textAnchor="end" dominantBaseline="middle">
              {formatNumber(v, 2)}
            </text>
          </g>
        ))}
        {xTicks.map((t) => (
          <g key={`tx${t}`}>
            <line x1={x(t)} x2={x(t)} y1={margin.top + innerH} y2={margin.top + innerH + 5} />
            <text x={x(t)} y={margin.top + innerH + 18} textAnchor="middle">
              {formatDate(new Date(t).toISOString())}
            </text>
          </g>
        ))}
        <text className="chart-axis-title" x={margin.left + innerW / 2} y={height - 6} textAnchor="middle">
          Observed (date)
        </text>
        <text className="chart-axis-title" transform={`translate(16 ${margin.top + innerH / 2}) rotate(-90)`} textAnchor="middle">
          {yTitle}
        </text>
      </g>
      {connect ? <path className="chart-line" d={path} fill="none" aria-hidden="true" /> : null}
      <g className={connect ? 'chart-points' : 'chart-points chart-points-only'} aria-hidden="true">
        {sorted.map((p, i) => (
          <circle key={i} cx={x(p.at.getTime())} cy={y(p.value)} r={connect ? (sorted.length > 60 ? 2 : 3.5) : 4.5}>
            <title>
              {formatDate(p.at.toISOString())}: {formatNumber(p.value, 2)}
            </title>
          </circle>
        ))}
      </g>
    </svg>
  );
}
