import { useEffect, useId, useMemo, useState } from 'react';
import { messageOf } from '../errors';
import { formatDateTime, formatNumber, humanize, unitLabel, zoneLabel } from '../format';
import { readAllPages, useConnection, useQuery, type Connection } from '../hooks';
import { hasScope, useSession } from '../session';
import { LineChart, type Point } from './LineChart';
import { ErrorAlert, Loading, Status } from './Notice';
import { Pager } from './Pager';

/** Every measurement type, the way the API names them; the ones with a value over time are charted. */
const MEASUREMENT_TYPES = [
  'CP_PIPE_TO_SOIL',
  'PRESSURE',
  'RECTIFIER_OUTPUT',
  'TEMPERATURE',
  'FLOW',
  'WALL_THICKNESS_UT',
  'CORROSION_COUPON',
  'ILI_ANOMALY',
  'ILI_RUN',
  'PRESSURE_TEST',
  'DIRECT_ASSESSMENT',
  'CP_SURVEY',
  'VALVE_INSPECTION',
  'LEAK_SURVEY',
  'PATROL',
  'ATMOSPHERIC_CORROSION_INSPECTION',
] as const;
const READING_TYPES = new Set<string>(['CP_PIPE_TO_SOIL', 'PRESSURE', 'RECTIFIER_OUTPUT', 'TEMPERATURE', 'FLOW', 'WALL_THICKNESS_UT', 'CORROSION_COUPON']);

/**
 * How many measurements of each type the asset has: one request, each count made by the server (written out, not
 * generated, so schema:check and the trusted documents read it; one alias per MEASUREMENT_TYPES entry).
 */
const COUNTS_QUERY = `query ConsoleMeasurementCounts($id: ID!) {
  asset(id: $id) {
    id
    all: measurements(first: 0) { totalCount }
    CP_PIPE_TO_SOIL: measurements(type: CP_PIPE_TO_SOIL, first: 0) { totalCount }
    PRESSURE: measurements(type: PRESSURE, first: 0) { totalCount }
    RECTIFIER_OUTPUT: measurements(type: RECTIFIER_OUTPUT, first: 0) { totalCount }
    TEMPERATURE: measurements(type: TEMPERATURE, first: 0) { totalCount }
    FLOW: measurements(type: FLOW, first: 0) { totalCount }
    WALL_THICKNESS_UT: measurements(type: WALL_THICKNESS_UT, first: 0) { totalCount }
    CORROSION_COUPON: measurements(type: CORROSION_COUPON, first: 0) { totalCount }
    ILI_ANOMALY: measurements(type: ILI_ANOMALY, first: 0) { totalCount }
    ILI_RUN: measurements(type: ILI_RUN, first: 0) { totalCount }
    PRESSURE_TEST: measurements(type: PRESSURE_TEST, first: 0) { totalCount }
    DIRECT_ASSESSMENT: measurements(type: DIRECT_ASSESSMENT, first: 0) { totalCount }
    CP_SURVEY: measurements(type: CP_SURVEY, first: 0) { totalCount }
    VALVE_INSPECTION: measurements(type: VALVE_INSPECTION, first: 0) { totalCount }
    LEAK_SURVEY: measurements(type: LEAK_SURVEY, first: 0) { totalCount }
    PATROL: measurements(type: PATROL, first: 0) { totalCount }
    ATMOSPHERIC_CORROSION_INSPECTION: measurements(type: ATMOSPHERIC_CORROSION_INSPECTION, first: 0) { totalCount }
  }
}`;
type CountsData = { asset: ({ id: string } & Record<string, { totalCount: number }>) | null };

const SERIES_QUERY = `query ConsoleReadings($id: ID!, $type: MeasurementType!, $first: Int, $after: String) {
  asset(id: $id) {
    id
    measurements(type: $type, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id observedAt value unit source } }
    }
  }
}`;
interface Reading {
  id: string;
  observedAt: string;
  value: number | null;
  unit: string | null;
  source: string;
}
type SeriesData = { asset: { measurements: Connection<Reading> } | null };

const LOG_QUERY = `query ConsoleMeasurementLog($id: ID!, $type: MeasurementType, $first: Int, $after: String) {
  asset(id: $id) {
    id
    measurements(type: $type, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node { id type observedAt value unit source runId featureType depthPctWt odometerM } }
    }
  }
}`;
interface LogRow extends Reading {
  type: string;
  runId: string | null;
  featureType: string | null;
  depthPctWt: number | null;
  odometerM: number | null;
}
type LogData = { asset: { measurements: Connection<LogRow> } | null };
const pickLog = (d: LogData) => d.asset?.measurements;

/** Limits worth drawing across a series: the CP criterion, and the pipe's MAOP under its pressures. */
function referenceFor(type: string, maopKpa: number | null): { value: number; label: string } | null {
  if (type === 'CP_PIPE_TO_SOIL') return { value: -850, label: '−850 mV criterion (SP0169)' };
  if (type === 'PRESSURE' && maopKpa !== null) return { value: maopKpa, label: `MAOP ${formatNumber(maopKpa)} kPa` };
  return null;
}

/** One series with a value (CP, pressure, …), every point read from the server page by page, charted and tabled. */
function ReadingSeries({ assetId, type, zone, maopKpa }: { assetId: string; type: string; zone: string; maopKpa: number | null }) {
  const [readings, setReadings] = useState<Reading[] | null>(null);
  const [progress, setProgress] = useState<{ loaded: number; total: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    const controller = new AbortController();
    setReadings(null);
    setError(null);
    setProgress(null);
    readAllPages<SeriesData, Reading>(SERIES_QUERY, { id: assetId, type }, (d) => d.asset?.measurements, {
      signal: controller.signal,
      onProgress: (loaded, total) => setProgress({ loaded, total }),
    }).then(
      ({ nodes }) => !controller.signal.aborted && setReadings(nodes),
      (err: unknown) => !controller.signal.aborted && setError(messageOf(err)),
    );
    return () => controller.abort();
  }, [assetId, type, nonce]);

  const points = useMemo(
    () =>
      (readings ?? [])
        .filter((r) => typeof r.value === 'number' && Number.isFinite(r.value))
        .map((r) => ({ at: new Date(r.observedAt), value: r.value!, source: r.source }) as Point & { source: string })
        .sort((a, b) => a.at.getTime() - b.at.getTime()),
    [readings],
  );
  const unit = unitLabel(readings?.find((r) => r.unit)?.unit);
  const title = `${humanize(type)}${unit ? ` (${unit})` : ''}`;
  const withoutValue = (readings?.length ?? 0) - points.length;

  if (error) return <ErrorAlert onRetry={() => setNonce((n) => n + 1)}>{error}</ErrorAlert>;
  if (readings === null) {
    return (
      <p role="status" className="status status-muted">
        Loading the readings{progress ? `: ${formatNumber(progress.loaded)} of ${formatNumber(progress.total)}` : ''}…
      </p>
    );
  }
  if (points.length === 0) return <Status tone="muted">These {formatNumber(readings.length)} records carry no value to chart.</Status>;
  return (
    <>
      <LineChart points={points} yTitle={title} zone={zone} reference={referenceFor(type, maopKpa)} />
      <p className="table-note">
        All {formatNumber(points.length)} readings are plotted
        {withoutValue > 0 ? ` (${formatNumber(withoutValue)} more recorded without a value)` : ''}. Drag the handles under the chart, scroll or pinch to choose
        a time range.
      </p>
      <div className="table-wrap table-scroll" tabIndex={0}>
        <table className="table table-compact">
          <caption>
            {humanize(type)} readings{unit ? ` in ${unit}` : ''}, oldest first ({zoneLabel(zone)})
          </caption>
          <thead>
            <tr>
              <th scope="col">Observed</th>
              <th scope="col" className="num">
                Value{unit ? ` (${unit})` : ''}
              </th>
              <th scope="col">Source</th>
            </tr>
          </thead>
          <tbody>
            {points.map((p, i) => (
              <tr key={i}>
                <td className="nowrap">{formatDateTime(p.at.toISOString(), zone)}</td>
                <td className="num">{formatNumber(p.value, 2)}</td>
                <td>{humanize(p.source)}</td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
    </>
  );
}

/**
 * Every measurement of the asset, newest first, of one type or all, paged from the server; folded until opened (the
 * chart's table already lists the readings), and read only then.
 */
function MeasurementLog({ assetId, counts, total, zone }: { assetId: string; counts: [string, number][]; total: number; zone: string }) {
  const [open, setOpen] = useState(false);
  return (
    <details className="measurement-log" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Measurement log: all {formatNumber(total)} records, every type, newest first</summary>
      {open ? <MeasurementLogTable assetId={assetId} counts={counts} zone={zone} /> : null}
    </details>
  );
}

function MeasurementLogTable({ assetId, counts, zone }: { assetId: string; counts: [string, number][]; zone: string }) {
  const [type, setType] = useState('');
  const selectId = useId();
  const log = useConnection(LOG_QUERY, { id: assetId, type: type || null }, pickLog);
  return (
    <>
      <div className="toolbar">
        <div className="field field-inline">
          <label htmlFor={selectId}>Type</label>
          <select id={selectId} value={type} onChange={(e) => setType(e.target.value)}>
            <option value="">Every type</option>
            {counts.map(([t, n]) => (
              <option key={t} value={t}>
                {humanize(t)} ({formatNumber(n)})
              </option>
            ))}
          </select>
        </div>
      </div>
      <ErrorAlert onRetry={log.reload}>{log.error}</ErrorAlert>
      {log.totalCount === null && log.loading ? <Loading what="the measurement log" /> : null}
      {log.totalCount !== null ? (
        <>
          <div className="table-wrap" tabIndex={0}>
            <table className="table table-compact">
              <caption>Measurements, newest first ({zoneLabel(zone)})</caption>
              <thead>
                <tr>
                  <th scope="col">Observed</th>
                  <th scope="col">Type</th>
                  <th scope="col" className="num">
                    Value
                  </th>
                  <th scope="col">Source</th>
                  <th scope="col">Details</th>
                </tr>
              </thead>
              <tbody>
                {log.nodes.length === 0 ? (
                  <tr>
                    <td colSpan={5} className="empty">
                      No measurement of this type.
                    </td>
                  </tr>
                ) : (
                  log.nodes.map((m) => (
                    <tr key={m.id}>
                      <td className="nowrap">{formatDateTime(m.observedAt, zone)}</td>
                      <td className="nowrap">{humanize(m.type)}</td>
                      <td className="num nowrap">{m.value === null ? '—' : `${formatNumber(m.value, 2)} ${unitLabel(m.unit)}`}</td>
                      <td>{humanize(m.source)}</td>
                      <td>
                        {m.type === 'ILI_ANOMALY'
                          ? `${humanize(m.featureType)} at ${formatNumber(m.odometerM, 1)} m, ${formatNumber(m.depthPctWt, 0)} % of wall (run ${m.runId ?? '—'})`
                          : ''}
                      </td>
                    </tr>
                  ))
                )}
              </tbody>
            </table>
          </div>
          <Pager
            shown={log.nodes.length}
            total={log.totalCount}
            noun="measurements"
            hasNextPage={log.hasNextPage}
            loading={log.loading}
            onLoadMore={log.loadMore}
          />
        </>
      ) : null}
    </>
  );
}

/**
 * An asset's measurements: its readings over time (a chart of one series with every point and a range selector, and
 * the points in a table) and the log of everything recorded on it, paged. ILI features are read along the line.
 */
export function Readings({ assetId, zone, maopKpa }: { assetId: string; zone: string; maopKpa: number | null }) {
  const { me } = useSession();
  const allowed = hasScope(me, 'measurements:read');
  const counts = useQuery<CountsData>(allowed ? COUNTS_QUERY : null, { id: assetId });
  const [chosen, setChosen] = useState<string | null>(null);
  const selectId = useId();
  const asset = counts.data?.asset;
  const present: [string, number][] = asset ? MEASUREMENT_TYPES.map((t): [string, number] => [t, asset[t]?.totalCount ?? 0]).filter(([, n]) => n > 0) : [];
  const series = present.filter(([t]) => READING_TYPES.has(t));
  const type = chosen && series.some(([t]) => t === chosen) ? chosen : (series[0]?.[0] ?? null);
  const total = asset?.['all']?.totalCount ?? 0;

  return (
    <section aria-labelledby="measurements-heading" className="card">
      <h2 id="measurements-heading">Measurements</h2>
      {!allowed ? <Status tone="muted">Measurements need the measurements:read scope.</Status> : null}
      {counts.loading && !counts.data ? <Loading what="measurements" /> : null}
      <ErrorAlert onRetry={counts.reload}>{counts.error}</ErrorAlert>
      {asset ? (
        total === 0 ? (
          <Status tone="muted">No measurements have been recorded on this asset yet.</Status>
        ) : (
          <>
            <h3>Readings over time</h3>
            {series.length === 0 ? (
              <Status tone="muted">No readings (CP, pressure, …) to chart here; the log below lists what is recorded.</Status>
            ) : (
              <>
                <div className="toolbar">
                  <div className="field field-inline">
                    <label htmlFor={selectId}>Series</label>
                    <select id={selectId} value={type ?? ''} onChange={(e) => setChosen(e.target.value)}>
                      {series.map(([t, n]) => (
                        <option key={t} value={t}>
                          {humanize(t)} ({formatNumber(n)} reading{n === 1 ? '' : 's'})
                        </option>
                      ))}
                    </select>
                  </div>
                </div>
                {type ? <ReadingSeries key={type} assetId={assetId} type={type} zone={zone} maopKpa={maopKpa} /> : null}
              </>
            )}
            <MeasurementLog assetId={assetId} counts={present} total={total} zone={zone} />
          </>
        )
      ) : null}
    </section>
  );
}
