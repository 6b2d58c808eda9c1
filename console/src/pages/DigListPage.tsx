import { useId, useState } from 'react';
import { Badge } from '../components/Badge';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { InTenantZone } from '../components/TenantZone';
import { Pager } from '../components/Pager';
import { toCsv, downloadText } from '../csv';
import { messageOf } from '../errors';
import { clockLabel, formatDayIn, formatNumber, humanize, isoDayIn, responseCategoryLabel, responseCategoryLabels, startOfDayIn, zoneLabel } from '../format';
import { readAllPages, useConnection, useQuery, useTitle, type Connection } from '../hooks';
import { Link } from '../router';
import { hasScope, useSession } from '../session';

/** The categories that carry a repair due date: the dig list's default. */
const DUE_CATEGORIES = ['IMMEDIATE', 'SIXTY_DAY', 'ONE_HUNDRED_EIGHTY_DAY', 'ONE_YEAR', 'TWO_YEAR'] as const;

const DIG_LIST_QUERY = `query ConsoleDigList($filter: DigListFilter, $first: Int, $after: String) {
  digList(filter: $filter, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node {
      measurement { id odometerM clockDeg depthPctWt lengthMm widthMm featureType }
      asset { id name inHca parent { id name } }
      responseCategory ruleRef discoveredAt repairDueAt overdue status depthSource depthWithTolerancePctWt erf
      pressureReductions { inForce reducedPressureKpa }
    } }
  }
}`;

interface DigRow {
  measurement: {
    id: string;
    odometerM: number | null;
    clockDeg: number | null;
    depthPctWt: number | null;
    lengthMm: number | null;
    widthMm: number | null;
    featureType: string | null;
  };
  asset: { id: string; name: string; inHca: boolean; parent: { id: string; name: string } | null };
  responseCategory: string | null;
  ruleRef: string | null;
  discoveredAt: string | null;
  repairDueAt: string | null;
  overdue: boolean;
  status: string;
  depthSource: string;
  depthWithTolerancePctWt: number | null;
  erf: number | null;
  pressureReductions: { inForce: boolean; reducedPressureKpa: number }[];
}
type DigListData = { digList: Connection<DigRow> };
const pickDigList = (d: DigListData) => d.digList;

const PIPELINES_QUERY = `query ConsoleDigPipelines { assets(filter: { type: PIPELINE }, first: 500) { totalCount edges { node { id name } } } }`;
interface PipelinesData {
  assets: { totalCount: number; edges: { node: { id: string; name: string } }[] };
}

const CSV_HEADER = [
  'Measurement id',
  'Segment',
  'Pipeline',
  'In HCA',
  'Log distance (m)',
  'Clock',
  'Feature',
  'Depth (% WT)',
  'Depth with tolerance (% WT)',
  'Depth source',
  'Length (mm)',
  'Width (mm)',
  'ERF',
  'Response category',
  'Rule',
  'Discovered',
  'Repair due',
  'Overdue',
  'Status',
  'Pressure reduction in force (kPa)',
] as const;

function csvRow(r: DigRow, zone: string | null): (string | number | null)[] {
  const reduction = r.pressureReductions.find((p) => p.inForce);
  return [
    r.measurement.id,
    r.asset.name,
    r.asset.parent?.name ?? '',
    r.asset.inHca ? 'yes' : 'no',
    r.measurement.odometerM,
    r.measurement.clockDeg === null ? '' : clockLabel(r.measurement.clockDeg),
    humanize(r.measurement.featureType),
    r.measurement.depthPctWt,
    r.depthWithTolerancePctWt,
    r.depthSource,
    r.measurement.lengthMm,
    r.measurement.widthMm,
    r.erf,
    r.responseCategory,
    r.ruleRef,
    isoDayIn(r.discoveredAt, zone),
    isoDayIn(r.repairDueAt, zone),
    r.overdue ? 'yes' : 'no',
    r.status,
    reduction ? reduction.reducedPressureKpa : '',
  ];
}

export function DigListPage() {
  return <InTenantZone>{(zone) => <DigList zone={zone} />}</InTenantZone>;
}

/**
 * The dig list: every open anomaly with a repair due date across the tenant, soonest due first, with the filters an
 * integrity team works by; overdue rows are flagged in words; due dates are the calendar days of the tenant's time
 * zone, where §192.933 counts them. The CSV holds every matching row, read page by page from the server.
 */
function DigList({ zone }: { zone: string | null }) {
  useTitle('Dig list');
  const { me } = useSession();
  const allowed = hasScope(me, 'analytics:read');
  const [categories, setCategories] = useState<string[]>([...DUE_CATEGORIES]);
  const [dueBefore, setDueBefore] = useState('');
  const [pipelineId, setPipelineId] = useState('');
  const [hca, setHca] = useState('');
  const [includeRepaired, setIncludeRepaired] = useState(false);
  const [exporting, setExporting] = useState<string | null>(null);
  const [exportError, setExportError] = useState<string | null>(null);
  const ids = { due: useId(), pipeline: useId(), hca: useId(), repaired: useId() };
  const pipelines = useQuery<PipelinesData>(hasScope(me, 'assets:read') ? PIPELINES_QUERY : null);

  const filter: Record<string, unknown> = { responseCategories: categories, includeRepaired };
  if (dueBefore) filter['dueBefore'] = startOfDayIn(dueBefore, zone);
  if (pipelineId) filter['pipelineId'] = pipelineId;
  if (hca) filter['inHca'] = hca === 'yes';
  const noCategory = categories.length === 0;
  const list = useConnection(allowed && !noCategory ? DIG_LIST_QUERY : null, { filter }, pickDigList);

  const exportCsv = () => {
    setExporting('Reading the dig list…');
    setExportError(null);
    readAllPages<DigListData, DigRow>(DIG_LIST_QUERY, { filter }, pickDigList, {
      onProgress: (loaded, total) => setExporting(`Reading the dig list: ${formatNumber(loaded)} of ${formatNumber(total)}…`),
    }).then(
      ({ nodes }) => {
        const today = isoDayIn(new Date().toISOString(), zone);
        downloadText(
          `dig-list-${today}.csv`,
          toCsv(
            CSV_HEADER,
            nodes.map((r) => csvRow(r, zone)),
          ),
        );
        setExporting(null);
      },
      (err: unknown) => {
        setExporting(null);
        setExportError(`The export failed. ${messageOf(err)}`);
      },
    );
  };

  return (
    <>
      <div className="page-head page-head-actions">
        <div>
          <h1>Dig list</h1>
          <p className="subtitle">Open anomalies that need a response, soonest repair due date first. Dates are days in {zoneLabel(zone)}.</p>
        </div>
        {allowed ? (
          <button type="button" className="button" disabled={exporting !== null || noCategory} onClick={exportCsv}>
            Export CSV
          </button>
        ) : null}
      </div>
      {!allowed ? <Status tone="muted">The dig list needs the analytics:read scope.</Status> : null}
      {exporting ? <Status tone="muted">{exporting}</Status> : null}
      <ErrorAlert>{exportError}</ErrorAlert>
      <section aria-label="Filter the dig list" className="card">
        <form className="filters" onSubmit={(e) => e.preventDefault()}>
          <fieldset className="field checkbox-group">
            <legend>Response category</legend>
            {DUE_CATEGORIES.map((c) => (
              <label key={c} className="checkbox">
                <input
                  type="checkbox"
                  checked={categories.includes(c)}
                  onChange={(e) =>
                    setCategories((now) => (e.target.checked ? DUE_CATEGORIES.filter((x) => x === c || now.includes(x)) : now.filter((x) => x !== c)))
                  }
                />
                {responseCategoryLabels[c]}
              </label>
            ))}
          </fieldset>
          <div className="field">
            <label htmlFor={ids.due}>Due before</label>
            <input id={ids.due} type="date" value={dueBefore} onChange={(e) => setDueBefore(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor={ids.pipeline}>Pipeline</label>
            <select id={ids.pipeline} value={pipelineId} onChange={(e) => setPipelineId(e.target.value)}>
              <option value="">Every pipeline</option>
              {(pipelines.data?.assets.edges ?? []).map(({ node }) => (
                <option key={node.id} value={node.id}>
                  {node.name}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.hca}>High consequence area</label>
            <select id={ids.hca} value={hca} onChange={(e) => setHca(e.target.value)}>
              <option value="">In or outside</option>
              <option value="yes">In an HCA</option>
              <option value="no">Outside HCAs</option>
            </select>
          </div>
          <label className="checkbox filter-check" htmlFor={ids.repaired}>
            <input id={ids.repaired} type="checkbox" checked={includeRepaired} onChange={(e) => setIncludeRepaired(e.target.checked)} />
            Include repaired
          </label>
        </form>
      </section>
      <section aria-label="Anomalies to dig" className="card">
        {noCategory ? <Status tone="muted">Choose at least one response category.</Status> : null}
        <ErrorAlert onRetry={list.reload}>{list.error}</ErrorAlert>
        {list.loading && list.totalCount === null && !noCategory ? <Loading what="the dig list" /> : null}
        {list.totalCount !== null && !noCategory ? (
          <>
            <div className="table-wrap" tabIndex={0}>
              <table className="table table-compact">
                <caption>Dig list, soonest due first</caption>
                <thead>
                  <tr>
                    <th scope="col">Repair due</th>
                    <th scope="col">Category</th>
                    <th scope="col">Segment</th>
                    <th scope="col" className="num">
                      Log distance (m)
                    </th>
                    <th scope="col">Clock</th>
                    <th scope="col">Feature</th>
                    <th scope="col" className="num">
                      Depth (% WT)
                    </th>
                    <th scope="col" className="num">
                      Length (mm)
                    </th>
                    <th scope="col">Rule</th>
                    <th scope="col">Dig sheet</th>
                  </tr>
                </thead>
                <tbody>
                  {list.nodes.length === 0 ? (
                    <tr>
                      <td colSpan={10} className="empty">
                        No open anomaly matches: nothing to dig.
                      </td>
                    </tr>
                  ) : (
                    list.nodes.map((r) => (
                      <tr key={r.measurement.id} className={r.overdue ? 'row-overdue' : undefined}>
                        <td className="nowrap">
                          {formatDayIn(r.repairDueAt, zone)}
                          {r.overdue ? (
                            <>
                              {' '}
                              <Badge value="OVERDUE" />
                            </>
                          ) : null}
                          {r.status === 'REPAIRED' ? (
                            <>
                              {' '}
                              <Badge value="OK" label="Repaired" />
                            </>
                          ) : null}
                        </td>
                        <td>
                          <Badge value={r.responseCategory} label={r.responseCategory ? responseCategoryLabel(r.responseCategory) : undefined} />
                        </td>
                        <td className="nowrap">
                          <Link to={`/assets/${encodeURIComponent(r.asset.id)}`}>{r.asset.name}</Link>
                        </td>
                        <td className="num">{formatNumber(r.measurement.odometerM, 1)}</td>
                        <td className="nowrap">{clockLabel(r.measurement.clockDeg)}</td>
                        <td className="nowrap">{humanize(r.measurement.featureType)}</td>
                        <td className="num">
                          {formatNumber(r.measurement.depthPctWt, 0)}
                          {r.depthSource === 'FIELD' ? ' (field)' : ''}
                        </td>
                        <td className="num">{formatNumber(r.measurement.lengthMm, 0)}</td>
                        <td className="nowrap">{r.ruleRef ?? '—'}</td>
                        <td>
                          <Link
                            to={`/digs/${encodeURIComponent(r.measurement.id)}`}
                            aria-label={`Dig sheet for the anomaly at ${formatNumber(r.measurement.odometerM, 1)} m on ${r.asset.name}`}
                          >
                            Sheet
                          </Link>
                        </td>
                      </tr>
                    ))
                  )}
                </tbody>
              </table>
            </div>
            <Pager
              shown={list.nodes.length}
              total={list.totalCount}
              noun="anomalies"
              hasNextPage={list.hasNextPage}
              loading={list.loading}
              onLoadMore={list.loadMore}
            />
          </>
        ) : null}
      </section>
    </>
  );
}
