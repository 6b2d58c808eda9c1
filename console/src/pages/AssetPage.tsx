import { useMemo, useState } from 'react';
import { Badge } from '../components/Badge';
import { LineChart, type Point } from '../components/LineChart';
import { AlongTheLine } from '../components/AlongTheLine';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { Pager } from '../components/Pager';
import { AssetTable, ASSET_LIST_QUERY, pickAssets } from './AssetsPage';
import { formatDate, formatDateTime, formatDayIn, formatNumber, humanize, regulationLabel, unitLabel, zoneLabel } from '../format';
import { useConnection, useQuery, useTenantTimeZone, useTitle, type Connection } from '../hooks';
import { Link } from '../router';
import { hasScope, useSession } from '../session';

const ASSET_QUERY = `query ConsoleAsset($id: ID!) {
  asset(id: $id) {
    id name type status product regulation parent { id name }
    beginStationM endStationM lengthM outsideDiameterMm wallThicknessMm smysMpa maopKpa classLocation inHca installedAt updatedAt
  }
}`;

interface AssetData {
  asset: {
    id: string;
    name: string;
    type: string;
    status: string;
    product: string | null;
    regulation: string | null;
    parent: { id: string; name: string } | null;
    beginStationM: number | null;
    endStationM: number | null;
    lengthM: number | null;
    outsideDiameterMm: number | null;
    wallThicknessMm: number | null;
    smysMpa: number | null;
    maopKpa: number | null;
    classLocation: number | null;
    inHca: boolean;
    installedAt: string | null;
    updatedAt: string;
  } | null;
}

const MEASUREMENTS_QUERY = `query ConsoleAssetMeasurements($id: ID!) {
  asset(id: $id) {
    id
    measurements(first: 500) { totalCount edges { node { id type observedAt value unit source } } }
  }
}`;

interface MeasurementNode {
  id: string;
  type: string;
  observedAt: string;
  value: number | null;
  unit: string | null;
  source: string;
}
interface MeasurementsData {
  asset: { id: string; measurements: { totalCount: number; edges: { node: MeasurementNode }[] } } | null;
}

const RISK_QUERY = `query ConsoleAssetRisk($id: ID!) {
  asset(id: $id) { id risk { score band likelihood consequence drivers computedAt } }
}`;

const ANOMALIES_QUERY = `query ConsoleAssetAnomalies($id: ID!, $statuses: [AnomalyStatus!], $first: Int, $after: String) {
  asset(id: $id) {
    id
    anomalyAssessments(filter: { statuses: $statuses }, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node {
        measurement { id observedAt runId featureType surface odometerM clockDeg depthPctWt lengthMm }
        assessable notAssessableReason depthWithTolerancePctWt failurePressureKpa safePressureKpa erf
        responseCategory ruleRef categoryReason repairDueAt overdue remainingLifeYears status
      } }
    }
  }
}`;

interface AssessmentNode {
  measurement: {
    id: string;
    observedAt: string;
    runId: string | null;
    featureType: string | null;
    surface: string | null;
    odometerM: number | null;
    clockDeg: number | null;
    depthPctWt: number | null;
    lengthMm: number | null;
  };
  assessable: boolean;
  notAssessableReason: string | null;
  depthWithTolerancePctWt: number | null;
  failurePressureKpa: number | null;
  safePressureKpa: number | null;
  erf: number | null;
  responseCategory: string | null;
  ruleRef: string | null;
  categoryReason: string | null;
  repairDueAt: string | null;
  overdue: boolean;
  remainingLifeYears: number | null;
  status: 'OPEN' | 'REPAIRED' | 'SUPERSEDED';
}
interface RiskData {
  asset: {
    id: string;
    risk: { score: number; band: string; likelihood: number; consequence: number; drivers: string[]; computedAt: string } | null;
  } | null;
}
interface AnomaliesData {
  asset: { id: string; anomalyAssessments: Connection<AssessmentNode> } | null;
}
const pickAnomalies = (d: AnomaliesData) => d.asset?.anomalyAssessments;

const COMPLIANCE_QUERY = `query ConsoleAssetCompliance($id: ID!) {
  asset(id: $id) { id compliance { state obligations { obligation state regulationRef dueAt lastCompletedAt } } }
}`;
interface ComplianceData {
  asset: {
    id: string;
    compliance: {
      state: string;
      obligations: { obligation: string; state: string; regulationRef: string; dueAt: string | null; lastCompletedAt: string | null }[];
    };
  } | null;
}

function Fact({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <div className="fact">
      <dt>{label}</dt>
      <dd>{children}</dd>
    </div>
  );
}

function withUnit(value: number | null | undefined, unit: string, digits = 1): string {
  return value === null || value === undefined ? '—' : `${formatNumber(value, digits)} ${unit}`;
}

/** The plotted value of a measurement (ILI anomalies are never plotted here: they are read along the line). */
function plotted(m: MeasurementNode): number | null {
  return typeof m.value === 'number' && Number.isFinite(m.value) ? m.value : null;
}

function MeasurementsSection({ id }: { id: string }) {
  const { me } = useSession();
  const allowed = hasScope(me, 'measurements:read');
  const { data, error, loading, reload } = useQuery<MeasurementsData>(allowed ? MEASUREMENTS_QUERY : null, { id });
  const [chosen, setChosen] = useState<string | null>(null);

  const series = useMemo(() => {
    const byType = new Map<string, { points: (Point & { source: string })[]; unit: string | null }>();
    for (const { node } of data?.asset?.measurements.edges ?? []) {
      // ILI features are read along the line (by log distance), not against their run date, where they stack in strips.
      if (node.type === 'ILI_ANOMALY') continue;
      const v = plotted(node);
      if (v === null) continue;
      const entry = byType.get(node.type) ?? { points: [], unit: node.unit };
      entry.points.push({ at: new Date(node.observedAt), value: v, source: node.source });
      byType.set(node.type, entry);
    }
    return [...byType.entries()].sort((a, b) => b[1].points.length - a[1].points.length || a[0].localeCompare(b[0]));
  }, [data]);

  const records = (data?.asset?.measurements.edges ?? []).filter(({ node }) => plotted(node) === null && node.type !== 'ILI_ANOMALY');
  const type = chosen && series.some(([t]) => t === chosen) ? chosen : (series[0]?.[0] ?? null);
  const current = series.find(([t]) => t === type)?.[1];
  const points = current ? [...current.points].sort((a, b) => a.at.getTime() - b.at.getTime()) : [];
  const unit = unitLabel(current?.unit);
  const total = data?.asset?.measurements.totalCount ?? 0;
  const loaded = data?.asset?.measurements.edges.length ?? 0;

  return (
    <section aria-labelledby="measurements-heading" className="card">
      <h2 id="measurements-heading">Measurements</h2>
      {!allowed ? <Status tone="muted">Measurements need the measurements:read scope.</Status> : null}
      {loading && !data ? <Loading what="measurements" /> : null}
      <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      {data?.asset ? (
        series.length === 0 ? (
          <Status tone="muted">
            {total === 0
              ? 'No measurements have been recorded on this asset yet.'
              : records.length === 0
                ? 'No readings (CP, pressure, …) to chart: the ILI features of this asset are read along the line.'
                : `This asset has ${formatNumber(total)} inspection record${total === 1 ? '' : 's'} but no readings to chart.`}
          </Status>
        ) : (
          <>
            <div className="toolbar">
              <div className="field field-inline">
                <label htmlFor="series-select">Series</label>
                <select id="series-select" value={type ?? ''} onChange={(e) => setChosen(e.target.value)}>
                  {series.map(([t, s]) => (
                    <option key={t} value={t}>
                      {humanize(t)} ({s.points.length} point{s.points.length === 1 ? '' : 's'})
                    </option>
                  ))}
                </select>
              </div>
              {total > loaded ? (
                <p className="table-note">
                  Showing the first {formatNumber(loaded)} of {formatNumber(total)} measurements.
                </p>
              ) : null}
            </div>
            {type ? <LineChart points={points} label={type} yTitle={`${humanize(type)}${unit ? ` (${unit})` : ''}`} /> : null}
            <div className="table-wrap table-scroll" tabIndex={0}>
              <table className="table table-compact">
                <caption>
                  {humanize(type)} readings{unit ? ` in ${unit}` : ''}
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
                      <td className="nowrap">{formatDateTime(p.at.toISOString())}</td>
                      <td className="num">{formatNumber(p.value, 2)}</td>
                      <td>{humanize(p.source)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
            {records.length > 0 ? (
              <p className="table-note">
                Also {records.length} inspection record{records.length === 1 ? '' : 's'} without a reading (
                {[...new Set(records.map((r) => humanize(r.node.type)))].join(', ')}).
              </p>
            ) : null}
          </>
        )
      ) : null}
    </section>
  );
}

function AnomaliesSection({ id }: { id: string }) {
  const { me } = useSession();
  const allowed = hasScope(me, 'analytics:read') && hasScope(me, 'measurements:read');
  const riskQuery = useQuery<RiskData>(allowed ? RISK_QUERY : null, { id });
  // Open anomalies by default: a repaired one or one a newer ILI run reported again is history, shown on request.
  const [history, setHistory] = useState(false);
  const anomalies = useConnection(allowed ? ANOMALIES_QUERY : null, { id, statuses: history ? null : ['OPEN'] }, pickAnomalies);
  const zone = useTenantTimeZone();
  const rows = anomalies.nodes;
  const risk = riskQuery.data?.asset?.risk;
  return (
    <section aria-labelledby="anomalies-heading" className="card">
      <h2 id="anomalies-heading">Integrity</h2>
      {!allowed ? <Status tone="muted">Anomaly assessments need the analytics:read and measurements:read scopes.</Status> : null}
      {anomalies.loading && anomalies.totalCount === null ? <Loading what="anomaly assessments" /> : null}
      <ErrorAlert onRetry={riskQuery.reload}>{riskQuery.error}</ErrorAlert>
      <ErrorAlert onRetry={anomalies.reload}>{anomalies.error}</ErrorAlert>
      {risk ? (
        <dl className="facts facts-inline">
          <Fact label="Risk score">
            {risk.score} <Badge value={risk.band} />
          </Fact>
          <Fact label="Likelihood × consequence">
            {risk.likelihood} × {risk.consequence}
          </Fact>
          <Fact label="Computed">{formatDateTime(risk.computedAt)}</Fact>
          <div className="fact fact-wide">
            <dt>Drivers</dt>
            <dd>
              {risk.drivers.length ? (
                <ul className="plain-list">
                  {risk.drivers.map((d) => (
                    <li key={d}>{d}</li>
                  ))}
                </ul>
              ) : (
                '—'
              )}
            </dd>
          </div>
        </dl>
      ) : null}
      {allowed ? (
        <div className="toolbar">
          <div className="field field-inline">
            <input id="anomaly-history" type="checkbox" checked={history} onChange={(e) => setHistory(e.target.checked)} />
            <label htmlFor="anomaly-history">Include history: repaired anomalies and older runs&apos; calls a newer run reported again</label>
          </div>
        </div>
      ) : null}
      {anomalies.totalCount !== null ? (
        <>
          <div className="table-wrap" tabIndex={0}>
            <table className="table table-compact table-wrap-head">
              <caption>
                {history ? 'Anomalies' : 'Open anomalies'}, most urgent first (repair due dates in {zoneLabel(zone)})
              </caption>
              <thead>
                <tr>
                  <th scope="col" className="num">
                    Odometer (m)
                  </th>
                  <th scope="col" className="num">
                    Clock (°)
                  </th>
                  <th scope="col">Feature</th>
                  <th scope="col" className="num">
                    Depth (% WT)
                  </th>
                  <th scope="col" className="num">
                    With tolerance (% WT)
                  </th>
                  <th scope="col" className="num">
                    Length (mm)
                  </th>
                  <th scope="col" className="num">
                    Failure pressure (kPa)
                  </th>
                  <th scope="col" className="num">
                    ERF
                  </th>
                  <th scope="col">Response</th>
                  <th scope="col">Repair due</th>
                  <th scope="col" className="num">
                    Remaining life (years)
                  </th>
                  {history ? <th scope="col">Status</th> : null}
                </tr>
              </thead>
              <tbody>
                {rows.length === 0 ? (
                  <tr>
                    <td colSpan={history ? 12 : 11} className="empty">
                      {history ? 'No in-line inspection anomalies are recorded on this asset.' : 'No open in-line inspection anomalies on this asset.'}
                    </td>
                  </tr>
                ) : (
                  rows.map((node) => (
                    <tr key={node.measurement.id}>
                      <td className="num">{formatNumber(node.measurement.odometerM, 1)}</td>
                      <td className="num">{formatNumber(node.measurement.clockDeg, 0)}</td>
                      <td className="nowrap">
                        {humanize(node.measurement.featureType)}
                        {node.measurement.surface ? <span className="muted"> · {humanize(node.measurement.surface).toLowerCase()}</span> : null}
                      </td>
                      <td className="num">{formatNumber(node.measurement.depthPctWt, 1)}</td>
                      <td className="num">{formatNumber(node.depthWithTolerancePctWt, 1)}</td>
                      <td className="num">{formatNumber(node.measurement.lengthMm, 0)}</td>
                      <td className="num">{formatNumber(node.failurePressureKpa, 0)}</td>
                      <td className="num">{formatNumber(node.erf, 2)}</td>
                      <td>
                        {node.assessable ? (
                          <span title={[node.ruleRef, node.categoryReason].filter(Boolean).join(' — ')}>
                            <Badge value={node.responseCategory} />
                          </span>
                        ) : (
                          <span className="muted">Not assessable: {node.notAssessableReason ?? 'missing data'}</span>
                        )}
                      </td>
                      <td className="nowrap">
                        {formatDayIn(node.repairDueAt, zone)}
                        {node.overdue ? (
                          <>
                            {' '}
                            <Badge value="OVERDUE" />
                          </>
                        ) : null}
                      </td>
                      <td className="num">{formatNumber(node.remainingLifeYears, 1)}</td>
                      {history ? (
                        <td>
                          <Badge value={node.status} />
                        </td>
                      ) : null}
                    </tr>
                  ))
                )}
              </tbody>
            </table>
          </div>
          <Pager
            shown={rows.length}
            total={anomalies.totalCount}
            noun="anomalies"
            hasNextPage={anomalies.hasNextPage}
            loading={anomalies.loading}
            onLoadMore={anomalies.loadMore}
          />
        </>
      ) : null}
    </section>
  );
}

function ComplianceSection({ id }: { id: string }) {
  const { me } = useSession();
  const allowed = hasScope(me, 'compliance:read');
  const { data, error, loading, reload } = useQuery<ComplianceData>(allowed ? COMPLIANCE_QUERY : null, { id });
  const c = data?.asset?.compliance;
  const zone = useTenantTimeZone();
  if (!allowed) return null;
  return (
    <section aria-labelledby="compliance-heading" className="card">
      <h2 id="compliance-heading">Compliance</h2>
      {loading && !data ? <Loading what="compliance" /> : null}
      <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      {c ? (
        <div className="table-wrap" tabIndex={0}>
          <table className="table table-compact">
            <caption>Obligations (days in {zoneLabel(zone)})</caption>
            <thead>
              <tr>
                <th scope="col">Obligation</th>
                <th scope="col">Rule</th>
                <th scope="col">State</th>
                <th scope="col">Due</th>
                <th scope="col">Last completed</th>
              </tr>
            </thead>
            <tbody>
              {c.obligations.length === 0 ? (
                <tr>
                  <td colSpan={5} className="empty">
                    No regulatory obligation applies to this asset.
                  </td>
                </tr>
              ) : (
                c.obligations.map((o) => (
                  <tr key={o.obligation}>
                    <td>{humanize(o.obligation)}</td>
                    <td className="nowrap">{o.regulationRef}</td>
                    <td>
                      <Badge value={o.state} />
                    </td>
                    <td className="nowrap">{formatDayIn(o.dueAt, zone)}</td>
                    <td className="nowrap">{o.lastCompletedAt ? formatDayIn(o.lastCompletedAt, zone) : 'Never'}</td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
        </div>
      ) : null}
    </section>
  );
}

/** The assets directly below this one (a system's pipelines, a pipeline's segments and components), all of them, paged. */
function ChildrenSection({ id, name }: { id: string; name: string }) {
  const children = useConnection(ASSET_LIST_QUERY, { filter: { parentId: id } }, pickAssets);
  if (children.totalCount === 0) return null;
  return (
    <section aria-labelledby="children-heading" className="card">
      <h2 id="children-heading">Below {name}</h2>
      <ErrorAlert onRetry={children.reload}>{children.error}</ErrorAlert>
      {children.loading && children.totalCount === null ? <Loading what="the assets below this one" /> : null}
      {children.totalCount !== null ? (
        <>
          <AssetTable rows={children.nodes} caption="Assets below this one" showParent={false} />
          <Pager
            shown={children.nodes.length}
            total={children.totalCount}
            noun="assets"
            hasNextPage={children.hasNextPage}
            loading={children.loading}
            onLoadMore={children.loadMore}
          />
        </>
      ) : null}
    </section>
  );
}

/**
 * What an asset's details say depends on what it is: pipe fields (diameter, wall, SMYS, MAOP, class, length) for a
 * pipeline or segment; for a system what it carries and under which rule; for a component (a rectifier, a valve, a test
 * point) where it sits and what it belongs to, its readings following below — never a rectifier's "outside diameter".
 */
function AssetFacts({ asset }: { asset: NonNullable<AssetData['asset']> }) {
  const line = asset.type === 'PIPELINE' || asset.type === 'SEGMENT';
  const component = !line && asset.type !== 'SYSTEM';
  const stations =
    asset.beginStationM === null && asset.endStationM === null
      ? null
      : asset.beginStationM === asset.endStationM
        ? withUnit(asset.beginStationM, 'm', 0)
        : `${withUnit(asset.beginStationM, 'm', 0)} – ${withUnit(asset.endStationM, 'm', 0)}`;
  return (
    <dl className="facts">
      {component && asset.parent ? (
        <Fact label="Part of">
          <Link to={`/assets/${encodeURIComponent(asset.parent.id)}`}>{asset.parent.name}</Link>
        </Fact>
      ) : null}
      {/* A component carries no product of its own: shown only when one was recorded on it. */}
      {!component || asset.product ? <Fact label="Product">{humanize(asset.product)}</Fact> : null}
      {!component || asset.regulation ? <Fact label="Regulation">{regulationLabel(asset.regulation)}</Fact> : null}
      {line || stations ? <Fact label={component && asset.beginStationM === asset.endStationM ? 'Station' : 'Stations'}>{stations ?? '—'}</Fact> : null}
      {line ? (
        <>
          <Fact label="Length">{withUnit(asset.lengthM, 'm', 0)}</Fact>
          <Fact label="Outside diameter">{withUnit(asset.outsideDiameterMm, 'mm')}</Fact>
          <Fact label="Wall thickness">{withUnit(asset.wallThicknessMm, 'mm')}</Fact>
          <Fact label="SMYS">{withUnit(asset.smysMpa, 'MPa', 0)}</Fact>
          <Fact label="MAOP">{withUnit(asset.maopKpa, 'kPa', 0)}</Fact>
          <Fact label="Class location">{asset.classLocation ?? '—'}</Fact>
        </>
      ) : null}
      {asset.type !== 'SYSTEM' ? <Fact label="In HCA">{asset.inHca ? 'Yes' : 'No'}</Fact> : null}
      <Fact label="Installed">{formatDate(asset.installedAt)}</Fact>
      <Fact label="Updated">{formatDateTime(asset.updatedAt)}</Fact>
    </dl>
  );
}

export function AssetPage({ id }: { id: string }) {
  const { me } = useSession();
  const { data, error, loading, reload } = useQuery<AssetData>(ASSET_QUERY, { id });
  const asset = data?.asset;
  useTitle(asset?.name ?? (data ? 'Asset not found' : 'Asset'));

  if (loading && !data) return <Loading what="the asset" />;
  if (error) {
    return (
      <>
        <h1>Asset</h1>
        <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      </>
    );
  }
  if (!asset) {
    return (
      <>
        <h1>Asset not found</h1>
        <Status>
          There is no asset with this id in this tenant. <Link to="/dashboard">Back to the dashboard</Link>
        </Status>
      </>
    );
  }
  const line = asset.type === 'PIPELINE' || asset.type === 'SEGMENT';
  return (
    <>
      <nav aria-label="Breadcrumb" className="breadcrumb">
        <ol>
          <li>
            <Link to="/assets">Assets</Link>
          </li>
          {asset.parent ? (
            <li>
              <Link to={`/assets/${encodeURIComponent(asset.parent.id)}`}>{asset.parent.name}</Link>
            </li>
          ) : null}
          <li aria-current="page">{asset.name}</li>
        </ol>
      </nav>
      <div className="page-head">
        <h1>{asset.name}</h1>
        <p className="subtitle">
          {humanize(asset.type)} · <Badge value={asset.status} />
        </p>
        <p>
          <Link to={`/map?asset=${encodeURIComponent(asset.id)}`}>Open on map</Link>
        </p>
        {line && hasScope(me, 'measurements:write') ? (
          <p>
            <Link to={`/assets/${encodeURIComponent(asset.id)}/ili-import`}>Import an ILI listing</Link>
          </p>
        ) : null}
      </div>
      <section aria-label="Asset details" className="card">
        <AssetFacts asset={asset} />
      </section>
      <ChildrenSection id={asset.id} name={asset.name} />
      {line && hasScope(me, 'measurements:read') ? <AlongTheLine assetId={asset.id} withCategory={hasScope(me, 'analytics:read')} /> : null}
      <MeasurementsSection id={asset.id} />
      {asset.type === 'SEGMENT' ? <AnomaliesSection id={asset.id} /> : null}
      <ComplianceSection id={asset.id} />
    </>
  );
}
