import { useEffect, useId, useMemo, useState } from 'react';
import { messageOf } from '../errors';
import { clockLabel, formatDayIn, formatNumber, humanize, isoDayIn, responseCategoryLabel, responseCategoryLabels, zoneLabel } from '../format';
import { readAllPages, useConnection, useCsvExport, type Connection } from '../hooks';
import { Link } from '../router';
import { Badge } from './Badge';
import { ErrorAlert, Loading, Status } from './Notice';
import { Pager } from './Pager';

const ANOMALIES_QUERY = `query ConsoleAssetAnomalies($id: ID!, $filter: AnomalyAssessmentFilter, $first: Int, $after: String) {
  asset(id: $id) {
    id
    anomalyAssessments(filter: $filter, first: $first, after: $after) {
      totalCount
      pageInfo { hasNextPage endCursor }
      edges { node {
        measurement { id observedAt runId featureType surface odometerM clockDeg depthPctWt lengthMm }
        assessable notAssessableReason depthWithTolerancePctWt failurePressureKpa safePressureKpa failurePressureRatio erf
        responseCategory ruleRef categoryReason repairDueAt overdue remainingLifeYears status
      } }
    }
  }
}`;

export interface AssessmentNode {
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
  failurePressureRatio: number | null;
  erf: number | null;
  responseCategory: string | null;
  ruleRef: string | null;
  categoryReason: string | null;
  repairDueAt: string | null;
  overdue: boolean;
  remainingLifeYears: number | null;
  status: 'OPEN' | 'REPAIRED' | 'SUPERSEDED';
}
type AnomaliesData = { asset: { id: string; anomalyAssessments: Connection<AssessmentNode> } | null };
const pickAnomalies = (d: AnomaliesData) => d.asset?.anomalyAssessments;

/**
 * The orders a reader can ask for. "urgency" is the server's own (IMMEDIATE first, then by repair due date) and is
 * paged from it; any other order needs every matching row, so the table reads them all first and then sorts them.
 */
const SORTS = {
  urgency: { label: 'Most urgent first', column: null },
  odometer: { label: 'Log distance, upstream first', column: 'odometer' },
  depth: { label: 'Deepest first', column: 'depth' },
  erf: { label: 'Highest ERF first', column: 'erf' },
  life: { label: 'Shortest remaining life first', column: 'life' },
  due: { label: 'Repair due, soonest first', column: 'due' },
} as const;
type SortKey = keyof typeof SORTS;

/** Nulls (not assessed, no due date) last in every order. */
function compareBy(key: SortKey): (a: AssessmentNode, b: AssessmentNode) => number {
  const num = (pick: (n: AssessmentNode) => number | null, direction: 1 | -1) => (a: AssessmentNode, b: AssessmentNode) => {
    const x = pick(a);
    const y = pick(b);
    if (x === null || y === null) return x === null ? (y === null ? 0 : 1) : -1;
    return (x - y) * direction || a.measurement.id.localeCompare(b.measurement.id);
  };
  switch (key) {
    case 'odometer':
      return num((n) => n.measurement.odometerM, 1);
    case 'depth':
      return num((n) => n.depthWithTolerancePctWt ?? n.measurement.depthPctWt, -1);
    case 'erf':
      return num((n) => n.erf, -1);
    case 'life':
      return num((n) => n.remainingLifeYears, 1);
    case 'due':
      return num((n) => (n.repairDueAt ? Date.parse(n.repairDueAt) : null), 1);
    default:
      return () => 0;
  }
}

const CATEGORY_OPTIONS = Object.entries(responseCategoryLabels) as [string, string][];

const CSV_HEADER = [
  'Measurement id',
  'Run',
  'Log distance (m)',
  'Clock',
  'Feature',
  'Surface',
  'Depth (% WT)',
  'Depth with tolerance (% WT)',
  'Length (mm)',
  'Failure pressure (kPa)',
  'Safe pressure (kPa)',
  'Failure pressure ratio',
  'ERF',
  'Response category',
  'Rule',
  'Why',
  'Repair due',
  'Overdue',
  'Remaining life (years)',
  'Status',
] as const;

function csvRow(n: AssessmentNode, zone: string): (string | number | null)[] {
  return [
    n.measurement.id,
    n.measurement.runId,
    n.measurement.odometerM,
    n.measurement.clockDeg === null ? '' : clockLabel(n.measurement.clockDeg),
    humanize(n.measurement.featureType),
    n.measurement.surface ? humanize(n.measurement.surface) : '',
    n.measurement.depthPctWt,
    n.depthWithTolerancePctWt,
    n.measurement.lengthMm,
    n.failurePressureKpa,
    n.safePressureKpa,
    n.failurePressureRatio,
    n.erf,
    n.assessable ? n.responseCategory : `not assessable: ${n.notAssessableReason ?? 'missing data'}`,
    n.ruleRef,
    n.categoryReason,
    isoDayIn(n.repairDueAt, zone),
    n.overdue ? 'yes' : 'no',
    n.remainingLifeYears,
    n.status,
  ];
}

/** One header cell that says whether the rows are sorted by it (aria-sort), for screen readers as for eyes. */
function Th({ children, sorted, num }: { children: string; sorted?: 'ascending' | 'descending' | undefined; num?: boolean }) {
  return (
    <th scope="col" className={num ? 'num' : undefined} aria-sort={sorted}>
      {children}
      {sorted ? <span aria-hidden="true">{sorted === 'ascending' ? ' ▲' : ' ▼'}</span> : null}
    </th>
  );
}

const CLIENT_PAGE = 50;

/** A reason longer than this shows three lines and a toggle for the rest (the regulation's words it quotes). */
const WHY_TEXT_CLAMP_CHARS = 180;

/**
 * The rule and reason behind a call. Each quotes its paragraph of the regulation in full, which made every row of a
 * segment's table ten lines tall: three lines are shown, the rest on request (the CSV export keeps it whole).
 */
function WhyText({ text }: { text: string }) {
  const [expanded, setExpanded] = useState(false);
  const id = useId();
  if (text.length <= WHY_TEXT_CLAMP_CHARS) return <span className="why-text">{text}</span>;
  return (
    <>
      <span id={id} className={expanded ? 'why-text' : 'why-text why-text-clamped'}>
        {text}
      </span>
      <button type="button" className="link-button why-toggle" aria-controls={id} aria-expanded={expanded} onClick={() => setExpanded(!expanded)}>
        {expanded ? 'Less' : 'Full rule text'}
      </button>
    </>
  );
}

/**
 * A segment's ILI anomalies with their assessment: filtered by the server (response category, open or the history
 * too), paged ("N of M", load more), sortable on the columns an engineer works by, and exported whole as CSV. Repair
 * due dates are days in the tenant's zone, past ones flagged from the API's `overdue`; each category shows the rule and
 * the reason that decided it.
 */
export function AnomalyTable({ assetId, assetName, zone }: { assetId: string; assetName: string; zone: string }) {
  const ids = { category: useId(), sort: useId(), history: useId() };
  // Open anomalies by default: a repaired one or one a newer ILI run reported again is history, shown on request.
  const [history, setHistory] = useState(false);
  const [category, setCategory] = useState('');
  const [sort, setSort] = useState<SortKey>('urgency');
  const csv = useCsvExport<AnomaliesData, AssessmentNode>('the anomalies');

  const filter = useMemo(() => {
    const f: Record<string, unknown> = {};
    if (!history) f['statuses'] = ['OPEN'];
    if (category === 'NOT_ASSESSABLE') f['assessable'] = false;
    else if (category) f['responseCategory'] = category;
    return f;
  }, [history, category]);
  const variables = useMemo(() => ({ id: assetId, filter }), [assetId, filter]);
  const paged = useConnection(sort === 'urgency' ? ANOMALIES_QUERY : null, variables, pickAnomalies);

  // Any other order: every matching row, read page by page, then sorted here.
  const [all, setAll] = useState<{ nodes: AssessmentNode[] | null; progress: string | null; error: string | null }>({
    nodes: null,
    progress: null,
    error: null,
  });
  const [shown, setShown] = useState(CLIENT_PAGE);
  const [nonce, setNonce] = useState(0);
  useEffect(() => {
    setShown(CLIENT_PAGE);
    if (sort === 'urgency') return;
    const controller = new AbortController();
    setAll({ nodes: null, progress: null, error: null });
    readAllPages<AnomaliesData, AssessmentNode>(ANOMALIES_QUERY, variables, pickAnomalies, {
      signal: controller.signal,
      onProgress: (loaded, total) => setAll((s) => ({ ...s, progress: `${formatNumber(loaded)} of ${formatNumber(total)}` })),
    }).then(
      ({ nodes }) => !controller.signal.aborted && setAll({ nodes: [...nodes].sort(compareBy(sort)), progress: null, error: null }),
      (err: unknown) => !controller.signal.aborted && setAll({ nodes: null, progress: null, error: messageOf(err) }),
    );
    return () => controller.abort();
  }, [sort, variables, nonce]);

  const serverSorted = sort === 'urgency';
  const rows = serverSorted ? paged.nodes : (all.nodes?.slice(0, shown) ?? []);
  const total = serverSorted ? paged.totalCount : (all.nodes?.length ?? null);
  const error = serverSorted ? paged.error : all.error;
  const column = SORTS[sort].column;
  const ascending = sort === 'odometer' || sort === 'life' || sort === 'due';
  const mark = (c: string) => (column === c ? (ascending ? 'ascending' : 'descending') : undefined);

  const exportCsv = () =>
    csv.run({
      query: ANOMALIES_QUERY,
      variables,
      pick: pickAnomalies,
      fileName: `anomalies-${assetName.replace(/[^\p{L}\p{N}]+/gu, '-').replace(/^-|-$/g, '')}-${isoDayIn(new Date().toISOString(), zone)}.csv`,
      header: CSV_HEADER,
      // In the order the table shows.
      rows: (nodes) => (serverSorted ? nodes : [...nodes].sort(compareBy(sort))).map((n) => csvRow(n, zone)),
    });

  return (
    <>
      <form className="filters" aria-label="Filter and sort the anomalies" onSubmit={(e) => e.preventDefault()}>
        <div className="field">
          <label htmlFor={ids.category}>Response category</label>
          <select id={ids.category} value={category} onChange={(e) => setCategory(e.target.value)}>
            <option value="">Every category</option>
            {CATEGORY_OPTIONS.map(([value, label]) => (
              <option key={value} value={value}>
                {label}
              </option>
            ))}
            <option value="NOT_ASSESSABLE">Not assessable</option>
          </select>
        </div>
        <div className="field">
          <label htmlFor={ids.sort}>Sort</label>
          <select id={ids.sort} value={sort} onChange={(e) => setSort(e.target.value as SortKey)}>
            {(Object.keys(SORTS) as SortKey[]).map((k) => (
              <option key={k} value={k}>
                {SORTS[k].label}
              </option>
            ))}
          </select>
        </div>
        <label className="checkbox filter-check" htmlFor={ids.history}>
          <input id={ids.history} type="checkbox" checked={history} onChange={(e) => setHistory(e.target.checked)} />
          Include history: repaired anomalies and older runs&apos; calls a newer run reported again
        </label>
        <button type="button" className="button button-small filter-action" disabled={csv.progress !== null} onClick={exportCsv}>
          Export CSV
        </button>
      </form>
      {csv.progress ? <Status tone="muted">{csv.progress}</Status> : null}
      <ErrorAlert>{csv.error}</ErrorAlert>
      <ErrorAlert onRetry={serverSorted ? paged.reload : () => setNonce((n) => n + 1)}>{error}</ErrorAlert>
      {total === null && !error ? (
        serverSorted ? (
          <Loading what="anomaly assessments" />
        ) : (
          <p role="status" className="status status-muted">
            Reading every matching anomaly to sort them{all.progress ? `: ${all.progress}` : ''}…
          </p>
        )
      ) : null}
      {total !== null ? (
        <>
          <div className="table-wrap" tabIndex={0}>
            <table className="table table-compact table-wrap-head">
              <caption>
                {history ? 'Anomalies' : 'Open anomalies'}, {SORTS[sort].label.toLowerCase()} (repair due dates are days in {zoneLabel(zone)})
              </caption>
              <thead>
                <tr>
                  <Th num sorted={mark('odometer')}>
                    Log distance (m)
                  </Th>
                  <Th>Clock</Th>
                  <Th>Feature</Th>
                  <Th num sorted={mark('depth')}>
                    Depth (% WT)
                  </Th>
                  <Th num>With tolerance (% WT)</Th>
                  <Th num>Length (mm)</Th>
                  <Th num>Failure pressure (kPa)</Th>
                  <Th num>Failure pressure ratio</Th>
                  <Th num sorted={mark('erf')}>
                    ERF
                  </Th>
                  <Th>Response and why</Th>
                  <Th sorted={mark('due')}>Repair due</Th>
                  <Th num sorted={mark('life')}>
                    Remaining life (years)
                  </Th>
                  {history ? <Th>Status</Th> : null}
                </tr>
              </thead>
              <tbody>
                {rows.length === 0 ? (
                  <tr>
                    <td colSpan={history ? 13 : 12} className="empty">
                      {category
                        ? 'No anomaly on this asset matches these filters.'
                        : history
                          ? 'No in-line inspection anomalies are recorded on this asset.'
                          : 'No open in-line inspection anomalies on this asset.'}
                    </td>
                  </tr>
                ) : (
                  rows.map((node) => (
                    <tr key={node.measurement.id} className={node.overdue ? 'row-overdue' : undefined}>
                      <td className="num">{formatNumber(node.measurement.odometerM, 1)}</td>
                      <td className="nowrap">{clockLabel(node.measurement.clockDeg)}</td>
                      <td className="nowrap">
                        {humanize(node.measurement.featureType)}
                        {node.measurement.surface ? <span className="muted"> · {humanize(node.measurement.surface).toLowerCase()}</span> : null}
                      </td>
                      <td className="num">{formatNumber(node.measurement.depthPctWt, 1)}</td>
                      <td className="num">{formatNumber(node.depthWithTolerancePctWt, 1)}</td>
                      <td className="num">{formatNumber(node.measurement.lengthMm, 0)}</td>
                      <td className="num">{formatNumber(node.failurePressureKpa, 0)}</td>
                      <td className="num">{formatNumber(node.failurePressureRatio, 2)}</td>
                      <td className="num">{formatNumber(node.erf, 2)}</td>
                      <td className="why">
                        {node.assessable ? (
                          <>
                            <Badge value={node.responseCategory} label={node.responseCategory ? responseCategoryLabel(node.responseCategory) : undefined} />
                            <WhyText text={`${node.ruleRef ?? ''}${node.categoryReason ? `: ${node.categoryReason}` : ''}`} />
                          </>
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
                        {node.repairDueAt && node.status === 'OPEN' ? (
                          <>
                            {' '}
                            <Link
                              to={`/digs/${encodeURIComponent(node.measurement.id)}`}
                              aria-label={`Dig sheet for the anomaly at ${formatNumber(node.measurement.odometerM, 1)} m`}
                            >
                              Sheet
                            </Link>
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
          {serverSorted ? (
            <Pager shown={rows.length} total={total} noun="anomalies" hasNextPage={paged.hasNextPage} loading={paged.loading} onLoadMore={paged.loadMore} />
          ) : (
            <Pager
              shown={rows.length}
              total={total}
              noun="anomalies"
              hasNextPage={rows.length < total}
              loading={false}
              onLoadMore={() => setShown((n) => n + CLIENT_PAGE)}
            />
          )}
          <p className="table-note">
            ERF is the MAOP over the safe pressure (failure pressure × the design factor of §192.111 or §195.106); above 1 the safe pressure is below the MAOP.
            It does not decide the response: the category comes from the regulation&apos;s conditions — depth beyond 80 % of wall, and the failure pressure
            ratio against the thresholds of the pipe&apos;s class and HCA (gas: §192.933(d) in an HCA, §192.714(d) outside; liquid: §195.452(h)) — so an anomaly
            with an ERF above 1 can be one the operator schedules. Each row names the rule and the figures that decided it.
          </p>
        </>
      ) : null}
    </>
  );
}
