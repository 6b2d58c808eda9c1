import { useMemo } from 'react';
import type { EChartsCoreOption } from 'echarts/core';
import { formatDateTime, formatNumber, zoneOffsetMs } from '../format';
import { EChart } from './EChart';

export interface Point {
  at: Date;
  value: number;
}

interface LineChartProps {
  /** Every point of the series, in any order (none is sampled away). */
  points: Point[];
  /** What is plotted, with its unit: "CP pipe to soil (mV)"; the value axis title and the chart's name. */
  yTitle: string;
  /** The IANA zone the time axis reads in (the tenant's); its name is in the axis title. */
  zone: string;
  /** A limit drawn across the chart, e.g. the −850 mV criterion or the MAOP. */
  reference?: { value: number; label: string } | null;
  height?: number;
}

/** A bound a little past `value`, rounded to a step that suits the data's spread, so the limit line is not on the frame. */
function niceBound(value: number, extent: { min: number; max: number }, direction: 'up' | 'down'): number {
  const spread = Math.max(Math.abs(extent.max - extent.min), Math.abs(value) * 0.02, 1);
  const step = 10 ** Math.floor(Math.log10(spread / 5));
  return direction === 'up' ? Math.ceil((value + step) / step) * step : Math.floor((value - step) / step) * step;
}

/**
 * A reading over time (CP potentials, pressures, …): every point on an ECharts time axis with a range selector below
 * it (drag its handles, or scroll and pinch on the chart) and, optionally, a limit drawn across. ECharts draws a time
 * axis in UTC or in the browser's zone only, so each point is placed at its wall-clock time in `zone` (the instant
 * plus that zone's offset then) and the axis is read as UTC: ticks fall on that zone's midnights and labels read its
 * clock; the tooltip formats the true instant in `zone`.
 */
export function LineChart({ points, yTitle, zone, reference, height = 340 }: LineChartProps) {
  const sorted = useMemo(() => [...points].sort((a, b) => a.at.getTime() - b.at.getTime()), [points]);
  const option = useMemo<EChartsCoreOption>(() => {
    const data = sorted.map((p) => {
      const ms = p.at.getTime();
      return { value: [ms + zoneOffsetMs(ms, zone), p.value], at: p.at.toISOString() };
    });
    return {
      animation: false,
      useUTC: true,
      textStyle: { fontFamily: 'system-ui, sans-serif' },
      grid: { left: 64, right: 24, top: 28, bottom: 92 },
      tooltip: {
        trigger: 'axis',
        confine: true,
        formatter: (items: { data: { value: [number, number]; at: string } }[]) => {
          const d = items[0]?.data;
          return d ? `${formatDateTime(d.at, zone)}: ${formatNumber(d.value[1], 2)}` : '';
        },
      },
      xAxis: {
        type: 'time',
        name: `Observed (${zone})`,
        nameLocation: 'middle',
        nameGap: 28,
        axisLabel: { hideOverlap: true },
      },
      // The limit is always in view (a −850 mV line under readings of −900 to −1,000 mV would otherwise be off the axis).
      yAxis: {
        type: 'value',
        scale: true,
        name: yTitle,
        nameLocation: 'middle',
        nameGap: 48,
        ...(reference
          ? {
              min: (extent: { min: number; max: number }) => niceBound(Math.min(extent.min, reference.value), extent, 'down'),
              max: (extent: { min: number; max: number }) => niceBound(Math.max(extent.max, reference.value), extent, 'up'),
              // The bounds are off the ticks' step: their labels would crowd the nearest tick's.
              axisLabel: { showMinLabel: false, showMaxLabel: false },
            }
          : {}),
      },
      dataZoom: [
        { type: 'inside', filterMode: 'none' },
        { type: 'slider', filterMode: 'none', bottom: 8, height: 24, labelFormatter: '' },
      ],
      series: [
        {
          name: yTitle,
          type: 'line',
          data,
          showSymbol: data.length <= 120,
          symbolSize: 5,
          lineStyle: { width: 1.5, color: '#0b5cad' },
          itemStyle: { color: '#0b5cad' },
          markLine: reference
            ? {
                silent: true,
                symbol: 'none',
                lineStyle: { color: '#b42318', type: 'dashed' },
                label: { formatter: reference.label, position: 'insideEndTop', color: '#7a1a12' },
                data: [{ yAxis: reference.value }],
              }
            : undefined,
        },
      ],
    };
  }, [sorted, zone, yTitle, reference]);

  let low = Infinity;
  let high = -Infinity;
  for (const p of sorted) {
    low = Math.min(low, p.value);
    high = Math.max(high, p.value);
  }
  const label =
    sorted.length === 0
      ? `${yTitle}: no readings`
      : `${yTitle} over time: all ${formatNumber(sorted.length)} readings from ${formatDateTime(sorted[0]!.at.toISOString(), zone)} to ${formatDateTime(
          sorted[sorted.length - 1]!.at.toISOString(),
          zone,
        )}, from ${formatNumber(low, 2)} to ${formatNumber(high, 2)}${
          reference ? `; ${reference.label} drawn across` : ''
        }. The table below lists every reading.`;
  return <EChart option={option} height={height} label={label} />;
}
