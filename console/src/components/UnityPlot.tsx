import { useEffect, useMemo, useState } from 'react';
import { messageOf } from '../errors';
import { formatDayIn, formatNumber } from '../format';
import { readAllPages, type Connection } from '../hooks';
import { EChart } from './EChart';
import type { IliRunSummary } from './AlongTheLine';
import type { EChartsCoreOption } from 'echarts/core';

const UNITY_QUERY = `query ConsoleUnityPlot($run: ID!, $first: Int, $after: String) {
  iliRun(id: $run) {
    id
    comparison {
      state years matchedCount newFeatureCount weldPairCount assessedFeatureCount
      olderRun { id vendor runDate }
      unityPlot(first: $first, after: $after) {
        totalCount
        pageInfo { hasNextPage endCursor }
        edges { node { olderDepthPctWt newerDepthPctWt } }
      }
    }
  }
}`;

interface UnityPoint {
  olderDepthPctWt: number;
  newerDepthPctWt: number;
}
interface Comparison {
  state: string;
  years: number | null;
  matchedCount: number;
  newFeatureCount: number;
  weldPairCount: number;
  assessedFeatureCount: number;
  olderRun: { id: string; vendor: string; runDate: string } | null;
  unityPlot: Connection<UnityPoint>;
}

function unityOption(points: UnityPoint[], older: string, newer: string): EChartsCoreOption {
  return {
    animation: false,
    textStyle: { fontFamily: 'system-ui, sans-serif' },
    grid: { left: 52, right: 16, top: 16, bottom: 48 },
    tooltip: {
      trigger: 'item',
      confine: true,
      formatter: (p: { value: [number, number] }) => `${formatNumber(p.value[0], 0)} % → ${formatNumber(p.value[1], 0)} % of wall`,
    },
    xAxis: { type: 'value', min: 0, max: 100, name: `Depth in ${older} (% wall)`, nameLocation: 'middle', nameGap: 28 },
    yAxis: { type: 'value', min: 0, max: 100, name: `Depth in ${newer} (% wall)`, nameLocation: 'middle', nameGap: 36 },
    series: [
      {
        name: 'Matched features',
        type: 'scatter',
        symbolSize: 5,
        large: points.length > 3000,
        itemStyle: { color: '#0b5cad' },
        data: points.map((p) => [p.olderDepthPctWt, p.newerDepthPctWt]),
        // The line of no change: points above it grew (or the tools disagree within their tolerance).
        markLine: { silent: true, symbol: 'none', lineStyle: { color: '#55606e', type: 'dashed' }, data: [[{ coord: [0, 0] }, { coord: [100, 100] }]] },
      },
    ],
  };
}

/**
 * The unity plot of a run against the previous run of its segment (IliRun.comparison.unityPlot): each matched feature's
 * depth in the older run against its depth in this one, every pair read page by page, with the comparison's counts.
 */
export function UnityPlot({ current, zone }: { current: IliRunSummary; zone: string }) {
  const [comparison, setComparison] = useState<Omit<Comparison, 'unityPlot'> | null>(null);
  const [points, setPoints] = useState<UnityPoint[] | null>(null);
  const [unavailable, setUnavailable] = useState<string | null>(null);

  useEffect(() => {
    if (current.withoutListing) return;
    const controller = new AbortController();
    setPoints(null);
    setComparison(null);
    setUnavailable(null);
    let summary: Comparison | null = null;
    readAllPages<{ iliRun: { comparison: Comparison | null } | null }, UnityPoint>(
      UNITY_QUERY,
      { run: current.id },
      (d) => {
        summary = d.iliRun?.comparison ?? null;
        return summary?.unityPlot;
      },
      { signal: controller.signal },
    ).then(
      ({ nodes }) => {
        if (controller.signal.aborted) return;
        setComparison(summary);
        setPoints(nodes);
      },
      (err: unknown) => !controller.signal.aborted && setUnavailable(messageOf(err)),
    );
    return () => controller.abort();
  }, [current.id, current.withoutListing]);

  const older = comparison?.olderRun ? `${comparison.olderRun.vendor}, ${formatDayIn(comparison.olderRun.runDate, zone)}` : '';
  const newer = `${current.vendor}, ${formatDayIn(current.runDate, zone)}`;
  const option = useMemo(() => (points && points.length > 0 ? unityOption(points, older, newer) : null), [points, older, newer]);

  if (current.withoutListing) return null;
  if (unavailable) return <p className="status status-muted">The run comparison is not available: {unavailable}</p>;
  if (!comparison) return null;
  return (
    <section aria-labelledby="unity-heading" className="unity">
      <h3 id="unity-heading">Run comparison</h3>
      {!comparison.olderRun ? (
        <p className="table-note">This is the first run of the segment: there is no older run to compare with, so every feature takes the floor growth rate.</p>
      ) : (
        <>
          <p className="table-note">
            Compared with {older} ({formatNumber(comparison.years, 1)} years earlier){comparison.state === 'PENDING' ? ', still being assessed' : ''}:{' '}
            {formatNumber(comparison.matchedCount)} features matched, {formatNumber(comparison.newFeatureCount)} new, {formatNumber(comparison.weldPairCount)}{' '}
            girth welds paired.
          </p>
          {option ? (
            <EChart
              option={option}
              height={360}
              className="echart echart-square"
              label={`Unity plot: depth in ${older} against depth in ${newer} for ${formatNumber(points?.length ?? 0)} matched features; points above the diagonal grew.`}
            />
          ) : null}
        </>
      )}
    </section>
  );
}
