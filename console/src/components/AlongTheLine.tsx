import { useEffect, useMemo, useState } from 'react';
import { clockLabel, formatDayIn, formatNumber, humanize, responseCategoryLabels, zoneLabel } from '../format';
import { messageOf } from '../errors';
import { readAllPages, useQuery, type Connection } from '../hooks';
import { ErrorAlert, Loading, Status } from './Notice';
import { EChart, loadECharts } from './EChart';
import { UnityPlot } from './UnityPlot';
import type { EChartsCoreOption } from 'echarts/core';

const RUNS_QUERY = `query ConsoleIliRuns($id: ID!) {
  asset(id: $id) { id iliRuns { id vendor runDate status featureCount girthWeldCount tallyItemCount } }
}`;

export interface IliRunSummary {
  id: string;
  vendor: string;
  runDate: string;
  status: string;
  featureCount: number;
  girthWeldCount: number;
  tallyItemCount: number;
  /** Features recorded with this runId but no imported run (no tally): recorded one by one through the API. */
  withoutListing?: boolean;
}
interface RunsData {
  asset: { id: string; iliRuns: IliRunSummary[] } | null;
}

const FEATURES_QUERY = `query ConsoleIliFeatures($id: ID!, $run: String!, $first: Int, $after: String) {
  asset(id: $id) {
    id
    measurements(type: ILI_ANOMALY, runId: $run, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { odometerM clockDeg depthPctWt featureType assessment { responseCategory } } }
    }
  }
}`;
/** The same without the assessment, for a credential without analytics:read. */
const FEATURES_QUERY_WITHOUT_CATEGORY = FEATURES_QUERY.replace(' assessment { responseCategory }', '');

/** How many ILI features the asset has over every run: more than its imported runs hold means some were recorded one by one. */
const FEATURE_COUNT_QUERY = `query ConsoleIliFeatureCount($id: ID!) {
  asset(id: $id) { id measurements(type: ILI_ANOMALY, first: 0) { totalCount } }
}`;
interface FeatureCountData {
  asset: { id: string; measurements: { totalCount: number } } | null;
}

/** Only the run and date of each feature: what finding the runs recorded without a listing needs. */
const FEATURE_RUNS_QUERY = `query ConsoleIliFeatureRuns($id: ID!, $first: Int, $after: String) {
  asset(id: $id) {
    id
    measurements(type: ILI_ANOMALY, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { runId observedAt } }
    }
  }
}`;

/** What the plot draws of a feature, and no more: 500 a page, 40 pages for a 20,000-feature run. */
interface Feature {
  odometerM: number | null;
  clockDeg: number | null;
  depthPctWt: number | null;
  featureType: string | null;
  assessment?: { responseCategory: string | null } | null;
}

const TALLY_QUERY = `query ConsoleIliTally($run: ID!, $first: Int, $after: String) {
  iliRun(id: $run) {
    id
    tally(first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { kind logDistanceM jointNumber name } }
    }
  }
}`;
interface TallyItem {
  kind: string;
  logDistanceM: number;
  jointNumber: number | null;
  name: string | null;
}

/** Category colours, most urgent first; the legend names them, so the colour is never the only cue. */
const categories: { value: string; label: string; colour: string; symbol: string }[] = [
  { value: 'IMMEDIATE', label: responseCategoryLabels.IMMEDIATE, colour: '#b42318', symbol: 'diamond' },
  { value: 'SIXTY_DAY', label: responseCategoryLabels.SIXTY_DAY, colour: '#d9480f', symbol: 'triangle' },
  { value: 'ONE_HUNDRED_EIGHTY_DAY', label: responseCategoryLabels.ONE_HUNDRED_EIGHTY_DAY, colour: '#e67700', symbol: 'triangle' },
  { value: 'ONE_YEAR', label: responseCategoryLabels.ONE_YEAR, colour: '#e67700', symbol: 'triangle' },
  { value: 'TWO_YEAR', label: responseCategoryLabels.TWO_YEAR, colour: '#b08900', symbol: 'rect' },
  { value: 'MONITORED', label: responseCategoryLabels.MONITORED, colour: '#3b6ea8', symbol: 'circle' },
  { value: 'OTHER', label: responseCategoryLabels.OTHER, colour: '#3b6ea8', symbol: 'circle' },
  { value: '', label: 'Not assessed', colour: '#8a94a3', symbol: 'emptyCircle' },
];

/** One point of a category's series: [log distance m, depth % wall or clock hours, the other of the two, feature type]. */
type Point = [number, number, number, string];

function alongTheLineOption(features: Feature[], tally: TallyItem[], runLabel: string): EChartsCoreOption {
  const byCategory = new Map<string, Point[]>();
  for (const f of features) {
    if (f.odometerM === null) continue;
    const key = f.assessment?.responseCategory ?? '';
    const list = byCategory.get(key) ?? [];
    list.push([f.odometerM, f.depthPctWt ?? 0, f.clockDeg ?? NaN, humanize(f.featureType)]);
    byCategory.set(key, list);
  }
  const welds = tally.filter((t) => t.kind === 'GIRTH_WELD');
  let lo = Infinity;
  let hi = -Infinity;
  for (const x of [...features.map((f) => f.odometerM), ...tally.map((t) => t.logDistanceM)]) {
    if (x === null || !Number.isFinite(x)) continue;
    lo = Math.min(lo, x);
    hi = Math.max(hi, x);
  }
  const pad = Number.isFinite(lo) ? Math.max((hi - lo) * 0.01, 1) : 0;
  const extent = Number.isFinite(lo) ? { min: Math.floor(lo - pad), max: Math.ceil(hi + pad) } : { min: 0, max: 1 };
  const others = tally.filter((t) => t.kind !== 'GIRTH_WELD');
  const shown = categories.filter((c) => byCategory.has(c.value));
  // A whole run (20,000 features) is drawn in one frame, each large series as one path: points as plain arrays (an
  // object per point cost ECharts most of its time), no progressive drawing (chunks of 400 points a frame took
  // seconds to reach the last one).
  const large = features.length > 3000;
  const big = { large, largeThreshold: 2000, progressive: 0 };
  const depthSeries = shown.map((c) => ({
    name: c.label,
    type: 'scatter',
    xAxisIndex: 0,
    yAxisIndex: 0,
    symbol: c.symbol,
    symbolSize: 6,
    ...big,
    itemStyle: { color: c.colour },
    // [x, depth, clock (degrees), kind]
    data: byCategory.get(c.value)!,
  }));
  const clockSeries = shown.map((c) => ({
    name: c.label,
    type: 'scatter',
    xAxisIndex: 1,
    yAxisIndex: 1,
    symbol: c.symbol,
    symbolSize: 5,
    ...big,
    itemStyle: { color: c.colour },
    // [x, clock (hours), depth, kind]
    data: byCategory
      .get(c.value)!
      .filter(([, , clock]) => Number.isFinite(clock))
      .map(([x, depth, clock, kind]): Point => [x, (clock / 30) % 12, depth, kind]),
  }));
  return {
    animation: false,
    textStyle: { fontFamily: 'system-ui, sans-serif' },
    legend: { top: 0, type: 'scroll', data: shown.map((c) => c.label) },
    tooltip: {
      trigger: 'item',
      confine: true,
      formatter: (p: { seriesName: string; seriesIndex: number; data: Point | { value: [number, string]; name: string } }) => {
        const d = p.data;
        if (!Array.isArray(d)) return `${d.name} at ${formatNumber(d.value[0], 1)} m`;
        const [x, y, other, kind] = d;
        // The depth panel's series come first: there y is the depth, else the clock in hours.
        const [depth, clock] = p.seriesIndex < shown.length ? [y, other] : [other, y * 30];
        return `${kind || 'Feature'} (${p.seriesName}) at ${formatNumber(x, 1)} m: ${formatNumber(depth, 0)} % wall at ${clockLabel(clock)}`;
      },
    },
    // Depth, clock and tally one above the other on the same left and right edges (outerBoundsMode 'none': ECharts 6
    // would otherwise narrow each panel by its own labels' width, and a log distance would sit at three places); the
    // tally axis's numbers and name clear the zoom slider below them.
    grid: [
      { left: 64, right: 16, top: 40, height: '38%', outerBoundsMode: 'none' },
      { left: 64, right: 16, top: '56%', height: '18%', outerBoundsMode: 'none' },
      { left: 64, right: 16, top: '78%', height: 24, outerBoundsMode: 'none' },
    ],
    // One log-distance range for the three panels (each axis fitting its own data put the same distance at three
    // different places), a little wider than the data so nothing sits on the frame.
    xAxis: [0, 1, 2].map((i) => ({
      type: 'value',
      gridIndex: i,
      min: extent.min,
      max: extent.max,
      axisLabel: { show: i === 2, formatter: (v: number) => formatNumber(v, 0) },
      name: i === 2 ? `Log distance (m), ${runLabel}` : undefined,
      nameLocation: 'middle',
      nameGap: 26,
      splitLine: { show: i !== 2 },
    })),
    yAxis: [
      { type: 'value', gridIndex: 0, min: 0, max: 100, name: 'Depth (% wall)', nameLocation: 'middle', nameGap: 36, inverse: true },
      {
        type: 'value',
        gridIndex: 1,
        min: 0,
        max: 12,
        interval: 3,
        name: 'Clock',
        nameLocation: 'middle',
        nameGap: 44,
        axisLabel: { formatter: (v: number) => `${v === 0 ? 12 : v}:00` },
      },
      { type: 'category', gridIndex: 2, data: ['Tally'], axisTick: { show: false }, axisLabel: { show: true } },
    ],
    dataZoom: [
      { type: 'inside', xAxisIndex: [0, 1, 2], filterMode: 'none' },
      {
        type: 'slider',
        xAxisIndex: [0, 1, 2],
        filterMode: 'none',
        bottom: 6,
        height: 18,
        showDataShadow: false,
        labelFormatter: (v: number) => formatNumber(v, 0),
      },
    ],
    series: [
      ...depthSeries,
      ...clockSeries,
      {
        name: 'Girth welds',
        type: 'scatter',
        xAxisIndex: 2,
        yAxisIndex: 2,
        symbol: 'rect',
        symbolSize: [1, 18],
        large: welds.length > 3000,
        progressive: 0,
        itemStyle: { color: '#55606e' },
        data: welds.map((w) => ({ value: [w.logDistanceM, 'Tally'], name: `Girth weld${w.jointNumber !== null ? ` (joint ${w.jointNumber})` : ''}` })),
      },
      {
        name: 'Markers and fittings',
        type: 'scatter',
        xAxisIndex: 2,
        yAxisIndex: 2,
        symbol: 'pin',
        symbolSize: 16,
        itemStyle: { color: '#0b5cad' },
        data: others.map((t) => ({ value: [t.logDistanceM, 'Tally'], name: `${humanize(t.kind)}${t.name ? ` ${t.name}` : ''}` })),
      },
    ],
  };
}

/**
 * An ILI run read the way an integrity engineer reads it: every feature by log distance with its depth (% wall) and
 * clock position, coloured by response category, over the run's girth welds and reference markers; drag or pinch to
 * zoom. Only the chosen run is read (Asset.measurements with its runId), page by page until every feature of it is
 * in (nothing is sampled away). Run dates are days in the tenant's zone.
 */
export function AlongTheLine({ assetId, withCategory, zone }: { assetId: string; withCategory: boolean; zone: string }) {
  const runs = useQuery<RunsData>(RUNS_QUERY, { id: assetId });
  const featureCount = useQuery<FeatureCountData>(FEATURE_COUNT_QUERY, { id: assetId });
  const [runId, setRunId] = useState<string | null>(null);
  const [loose, setLoose] = useState<IliRunSummary[] | null>(null);
  const [features, setFeatures] = useState<Feature[] | null>(null);
  const [tally, setTally] = useState<TallyItem[] | null>(null);
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [nonce, setNonce] = useState(0);
  const list = useMemo(() => runs.data?.asset?.iliRuns ?? [], [runs.data]);
  const totalFeatures = featureCount.data?.asset?.measurements.totalCount ?? null;
  const listedFeatures = list.reduce((n, r) => n + r.featureCount, 0);

  // Features recorded one by one through the API carry a runId but have no imported run (no listing, no tally). Only
  // when the asset has more features than its imported runs list is there any: then their runs are found by reading
  // each feature's run and date (nothing else), once.
  useEffect(() => {
    if (!runs.data || totalFeatures === null) return;
    if (totalFeatures <= listedFeatures) return setLoose([]);
    const controller = new AbortController();
    setLoose(null);
    const known = new Set(list.map((r) => r.id));
    readAllPages<{ asset: { measurements: Connection<{ runId: string | null; observedAt: string }> } | null }, { runId: string | null; observedAt: string }>(
      FEATURE_RUNS_QUERY,
      { id: assetId },
      (d) => d.asset?.measurements,
      { signal: controller.signal },
    ).then(
      ({ nodes }) => {
        if (controller.signal.aborted) return;
        const found = new Map<string, IliRunSummary>();
        for (const f of nodes) {
          if (!f.runId || known.has(f.runId)) continue;
          const entry = found.get(f.runId) ?? {
            id: f.runId,
            vendor: f.runId,
            runDate: f.observedAt,
            status: 'COMPLETE',
            featureCount: 0,
            girthWeldCount: 0,
            tallyItemCount: 0,
            withoutListing: true,
          };
          entry.featureCount += 1;
          if (f.observedAt < entry.runDate) entry.runDate = f.observedAt;
          found.set(f.runId, entry);
        }
        setLoose([...found.values()]);
      },
      (err: unknown) => !controller.signal.aborted && setError(messageOf(err)),
    );
    return () => controller.abort();
  }, [assetId, runs.data, list, totalFeatures, listedFeatures, nonce]);

  // Imported runs, and the runs of features recorded without a listing, newest first.
  const complete = useMemo(
    () => [...list.filter((r) => r.status === 'COMPLETE'), ...(loose ?? [])].sort((a, b) => b.runDate.localeCompare(a.runDate)),
    [list, loose],
  );
  const run = complete.find((r) => r.id === runId) ?? complete[0] ?? null;
  const runKey = run?.id ?? null;
  const runWithoutListing = run?.withoutListing ?? false;

  // The chosen run's features only.
  useEffect(() => {
    if (!runKey) return;
    // The plot's library loads while the pages arrive (a failure shows where the chart would be).
    loadECharts().catch(() => undefined);
    const controller = new AbortController();
    setError(null);
    setFeatures(null);
    setProgress(null);
    readAllPages<{ asset: { measurements: Connection<Feature> } | null }, Feature>(
      withCategory ? FEATURES_QUERY : FEATURES_QUERY_WITHOUT_CATEGORY,
      { id: assetId, run: runKey },
      (d) => d.asset?.measurements,
      { signal: controller.signal, onProgress: (loaded, total) => setProgress({ loaded, total }) },
    ).then(
      ({ nodes }) => !controller.signal.aborted && setFeatures(nodes),
      (err: unknown) => !controller.signal.aborted && setError(messageOf(err)),
    );
    return () => controller.abort();
  }, [assetId, runKey, withCategory, nonce]);

  useEffect(() => {
    if (!runKey) return;
    if (runWithoutListing) return setTally([]);
    const controller = new AbortController();
    setTally(null);
    readAllPages<{ iliRun: { tally: Connection<TallyItem> } | null }, TallyItem>(TALLY_QUERY, { run: runKey }, (d) => d.iliRun?.tally, {
      signal: controller.signal,
    }).then(
      ({ nodes }) => !controller.signal.aborted && setTally(nodes),
      (err: unknown) => !controller.signal.aborted && setError(messageOf(err)),
    );
    return () => controller.abort();
  }, [runKey, runWithoutListing, nonce]);

  const runFeatures = features ?? [];
  const runLabel = run ? `${run.vendor}, ${formatDayIn(run.runDate, zone)}` : '';
  const option = useMemo(() => (tally && features ? alongTheLineOption(features, tally, runLabel) : null), [features, tally, runLabel]);
  const deepest = runFeatures.reduce<Feature | null>((a, f) => ((f.depthPctWt ?? -1) > (a?.depthPctWt ?? -1) ? f : a), null);
  const settled = runs.data !== null && loose !== null;

  return (
    <section aria-labelledby="along-heading" className="card">
      <h2 id="along-heading">Along the line</h2>
      {runs.loading && !runs.data ? <Loading what="ILI runs" /> : null}
      <ErrorAlert onRetry={runs.reload}>{runs.error}</ErrorAlert>
      <ErrorAlert onRetry={featureCount.reload}>{featureCount.error}</ErrorAlert>
      {settled && complete.length === 0 ? (
        <Status tone="muted">
          {list.length === 0 ? 'No ILI features are recorded on this asset.' : 'No ILI run of this asset has finished importing yet.'}
        </Status>
      ) : null}
      {runs.data && !settled && complete.length === 0 && !error ? <Loading what="the ILI runs of this asset" /> : null}
      {run ? (
        <>
          <div className="toolbar">
            <div className="field field-inline">
              <label htmlFor="ili-run">ILI run</label>
              <select id="ili-run" value={run.id} onChange={(e) => setRunId(e.target.value)}>
                {complete.map((r) => (
                  <option key={r.id} value={r.id}>
                    {r.vendor}, {formatDayIn(r.runDate, zone)} ({formatNumber(r.featureCount)} features)
                  </option>
                ))}
              </select>
            </div>
            <p className="table-note">
              {run.withoutListing
                ? `${formatNumber(run.featureCount)} features recorded without a listing (no pipe tally, so no girth welds to show).`
                : `${formatNumber(run.featureCount)} features, ${formatNumber(run.girthWeldCount)} girth welds, ${formatNumber(run.tallyItemCount)} tally items.`}{' '}
              Run dates are days in {zoneLabel(zone)}. Drag the slider, scroll or pinch to zoom.
            </p>
          </div>
          <ErrorAlert onRetry={() => setNonce((n) => n + 1)}>{error}</ErrorAlert>
          {features === null || tally === null ? (
            error ? null : (
              <p role="status" className="status status-muted">
                Loading the run{progress ? `: ${formatNumber(progress.loaded)} of ${formatNumber(progress.total)} ILI features` : ''}…
              </p>
            )
          ) : option ? (
            <>
              <EChart
                option={option}
                height={460}
                label={`ILI features of the run of ${runLabel} by log distance: ${formatNumber(runFeatures.length)} features${
                  deepest ? `, deepest ${formatNumber(deepest.depthPctWt, 0)} % of wall at ${formatNumber(deepest.odometerM, 1)} m` : ''
                }; ${formatNumber(tally.filter((t) => t.kind === 'GIRTH_WELD').length)} girth welds.`}
              />
              <p className="table-note">
                Showing all {formatNumber(runFeatures.length)} of {formatNumber(run.featureCount)} features of this run. Depth is % of wall (deeper is lower);
                clock is the position around the pipe looking downstream.
              </p>
            </>
          ) : null}
          {withCategory ? <UnityPlot current={run} zone={zone} /> : null}
        </>
      ) : null}
    </section>
  );
}
