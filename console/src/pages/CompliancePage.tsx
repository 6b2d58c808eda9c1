import { useId, useMemo, useState } from 'react';
import { Badge } from '../components/Badge';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { InTenantZone } from '../components/TenantZone';
import { Pager } from '../components/Pager';
import { endOfDayIn, formatDayIn, formatNumber, humanize, isoDayIn, regulationLabel, zoneLabel } from '../format';
import { useConnection, useCsvExport, useFiltersInAddress, useQuery, useTitle, type Connection } from '../hooks';
import { Link, useRouter } from '../router';
import { hasScope, useSession } from '../session';

export const DUE_QUERY = `query ConsoleComplianceStatus($filter: ComplianceStatusFilter, $asOf: DateTime, $first: Int, $after: String) {
  complianceStatus(filter: $filter, asOf: $asOf, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { asset { id name type } obligation regulation state dueDate dueAt lastCompletedAt timeZone } }
  }
}`;

export interface DueRow {
  asset: { id: string; name: string; type: string };
  obligation: string;
  regulation: string;
  state: string;
  dueDate: string | null;
  dueAt: string | null;
  lastCompletedAt: string | null;
  timeZone: string;
}
type DueData = { complianceStatus: Connection<DueRow> };
export const pickDue = (d: DueData) => d.complianceStatus;

/** How many rows each state has, with the page's other filters: four counts made by the server in one request. */
const STATE_COUNTS_QUERY = `query ConsoleComplianceCounts($overdue: ComplianceStatusFilter, $dueSoon: ComplianceStatusFilter, $noRecord: ComplianceStatusFilter, $ok: ComplianceStatusFilter, $asOf: DateTime) {
  overdue: complianceStatus(filter: $overdue, asOf: $asOf, first: 0) { totalCount }
  dueSoon: complianceStatus(filter: $dueSoon, asOf: $asOf, first: 0) { totalCount }
  noRecord: complianceStatus(filter: $noRecord, asOf: $asOf, first: 0) { totalCount }
  ok: complianceStatus(filter: $ok, asOf: $asOf, first: 0) { totalCount }
}`;
type CountsData = Record<'overdue' | 'dueSoon' | 'noRecord' | 'ok', { totalCount: number }>;

const OBLIGATIONS_QUERY = `query ConsoleComplianceObligations { complianceObligations { obligation regulation regulationRef title } }`;
interface ObligationsData {
  complianceObligations: { obligation: string; regulation: string; regulationRef: string; title: string }[];
}

/** Each obligation's section of the regulation (§192.706 …), from the API's own list, to show beside its name. */
const refsOf = (data: ObligationsData | null) => new Map((data?.complianceObligations ?? []).map((o) => [o.obligation, o.regulationRef]));

export function useObligationRefs(allowed: boolean): Map<string, string> {
  const { data } = useQuery<ObligationsData>(allowed ? OBLIGATIONS_QUERY : null);
  return useMemo(() => refsOf(data), [data]);
}

const ASSET_NAME_QUERY = `query ConsoleComplianceAsset($id: ID!) { asset(id: $id) { id name } }`;

const STATES = [
  { value: 'OVERDUE', key: 'overdue', label: 'Overdue' },
  { value: 'DUE_SOON', key: 'dueSoon', label: 'Due soon' },
  { value: 'NO_RECORD', key: 'noRecord', label: 'No record' },
  { value: 'OK', key: 'ok', label: 'OK' },
] as const;

/** "2026-03" → "March 2026": the calendar's month headings. */
function monthLabel(day: string): string {
  const [y, m] = day.split('-').map(Number) as [number, number];
  return new Intl.DateTimeFormat(undefined, { year: 'numeric', month: 'long', timeZone: 'UTC' }).format(new Date(Date.UTC(y, m - 1, 1)));
}

function Row({ r, zone, refs }: { r: DueRow; zone: string; refs: Map<string, string> }) {
  return (
    <tr className={r.state === 'OVERDUE' ? 'row-overdue' : undefined}>
      <th scope="row">
        <Link to={`/assets/${encodeURIComponent(r.asset.id)}`}>{r.asset.name}</Link>
        <span className="cell-note">{humanize(r.asset.type)}</span>
      </th>
      <td>
        {humanize(r.obligation)}
        {refs.has(r.obligation) ? <span className="cell-note">{refs.get(r.obligation)}</span> : null}
      </td>
      <td className="nowrap">{regulationLabel(r.regulation)}</td>
      <td>
        <Badge value={r.state} />
      </td>
      <td className="nowrap">{r.dueAt ? formatDayIn(r.dueAt, zone) : 'No record to count from'}</td>
      <td className="nowrap">{r.lastCompletedAt ? formatDayIn(r.lastCompletedAt, zone) : 'Never'}</td>
    </tr>
  );
}

/**
 * (asset, obligation) rows with their state and due day. `byMonth` groups them under month headings in the order the
 * server gives (soonest due first, rows with no record last): the due-date calendar.
 */
export function DueTable({
  rows,
  caption,
  zone,
  refs,
  empty,
  byMonth = false,
}: {
  rows: DueRow[];
  caption: string;
  zone: string;
  refs: Map<string, string>;
  empty: string;
  byMonth?: boolean;
}) {
  const head = (
    <thead>
      <tr>
        <th scope="col">Asset</th>
        <th scope="col">Obligation</th>
        <th scope="col">Regulation</th>
        <th scope="col">State</th>
        <th scope="col">Due (last on-time day)</th>
        <th scope="col">Last completed</th>
      </tr>
    </thead>
  );
  const groups = useMemo(() => {
    if (!byMonth) return [{ key: 'all', label: null as string | null, rows }];
    const out: { key: string; label: string | null; rows: DueRow[] }[] = [];
    for (const r of rows) {
      const day = r.dueAt ? isoDayIn(r.dueAt, zone) : null;
      const key = day ? day.slice(0, 7) : 'none';
      const last = out[out.length - 1];
      if (last && last.key === key) last.rows.push(r);
      else out.push({ key, label: day ? monthLabel(day) : 'No record: never done, so nothing to count a due date from', rows: [r] });
    }
    return out;
  }, [rows, byMonth, zone]);
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="table table-compact due-table">
        <caption>{caption}</caption>
        {head}
        {rows.length === 0 ? (
          <tbody>
            <tr>
              <td colSpan={6} className="empty">
                {empty}
              </td>
            </tr>
          </tbody>
        ) : (
          groups.map((g) => (
            <tbody key={g.key}>
              {g.label ? (
                <tr className="group-row">
                  <th scope="rowgroup" colSpan={6}>
                    {g.label}
                  </th>
                </tr>
              ) : null}
              {g.rows.map((r) => (
                <Row key={`${r.asset.id}:${r.obligation}`} r={r} zone={zone} refs={refs} />
              ))}
            </tbody>
          ))
        )}
      </table>
    </div>
  );
}

/** Rows as the server pages them, in a DueTable with "N of M" and "Load more" (the dashboard's two lists, this page's one). */
export function DueList({
  filter,
  asOf,
  pageSize = 50,
  noun,
  ...table
}: {
  filter: Record<string, unknown>;
  asOf: string | null;
  pageSize?: number;
  noun: string;
  caption: string;
  zone: string;
  refs: Map<string, string>;
  empty: string;
  byMonth?: boolean;
}) {
  const list = useConnection(DUE_QUERY, { filter, asOf }, pickDue, pageSize);
  return (
    <>
      <ErrorAlert onRetry={list.reload}>{list.error}</ErrorAlert>
      {list.loading && list.totalCount === null ? <Loading what={`the ${noun}`} /> : null}
      {list.totalCount !== null ? (
        <>
          <DueTable rows={list.nodes} {...table} />
          <Pager
            shown={list.nodes.length}
            total={list.totalCount}
            noun={noun}
            hasNextPage={list.hasNextPage}
            loading={list.loading}
            onLoadMore={list.loadMore}
          />
        </>
      ) : null}
    </>
  );
}

const CSV_HEADER = [
  'Asset id',
  'Asset',
  'Asset type',
  'Obligation',
  'Regulation',
  'State',
  'Due (last on-time day)',
  'Last completed',
  'Time zone',
  'As of',
] as const;

/** The filters live in the address (?asOf=&state=&obligation=&regulation=&asset=), so an audit view can be shared. */
function readFilters(search: string) {
  const params = new URLSearchParams(search);
  const state = params.get('state') ?? '';
  const asOf = params.get('asOf') ?? '';
  const regulation = params.get('regulation') ?? '';
  return {
    state: STATES.some((s) => s.value === state) ? state : '',
    asOf: /^\d{4}-\d{2}-\d{2}$/.test(asOf) ? asOf : '',
    obligation: /^[A-Z_]{1,60}$/.test(params.get('obligation') ?? '') ? params.get('obligation')! : '',
    regulation: regulation === 'CFR_192' || regulation === 'CFR_195' ? regulation : '',
    asset: params.get('asset')?.slice(0, 100) ?? '',
  };
}

export function CompliancePage() {
  return <InTenantZone>{(zone) => <ComplianceView zone={zone ?? 'UTC'} />}</InTenantZone>;
}

/**
 * Compliance as a due-date calendar: every (asset, obligation) row of the tenant — NO_RECORD included — in due-date
 * order under month headings, with each state's count, filtered and paged by the server, as of today or, for an
 * audit, as of the end of any past day (evidence recorded after it does not count). Days are the tenant's, where the
 * regulation's calendar months and years are counted.
 */
function ComplianceView({ zone }: { zone: string }) {
  useTitle('Compliance calendar');
  const { me } = useSession();
  const { search } = useRouter();
  const initial = readFilters(search);
  const [asOfDay, setAsOfDay] = useState(initial.asOf);
  const [state, setState] = useState(initial.state);
  const [obligation, setObligation] = useState(initial.obligation);
  const [regulation, setRegulation] = useState(initial.regulation);
  const [asset, setAsset] = useState(initial.asset);
  const csv = useCsvExport<DueData, DueRow>('the obligations');
  const ids = { asOf: useId(), obligation: useId(), regulation: useId() };
  const allowed = hasScope(me, 'compliance:read') && hasScope(me, 'assets:read');
  const today = isoDayIn(new Date().toISOString(), zone);

  useFiltersInAddress('/compliance', { asOf: asOfDay, state, obligation, regulation, asset });

  const obligations = useQuery<ObligationsData>(allowed ? OBLIGATIONS_QUERY : null);
  const refs = useMemo(() => refsOf(obligations.data), [obligations.data]);
  const assetName = useQuery<{ asset: { id: string; name: string } | null }>(allowed && asset ? ASSET_NAME_QUERY : null, { id: asset });
  // The end of the chosen day in the tenant's zone: an audit "as of March 31" counts what was done on March 31.
  const asOf = asOfDay ? endOfDayIn(asOfDay, zone) : null;
  const base = useMemo(() => {
    const f: Record<string, unknown> = {};
    if (obligation) f['obligation'] = obligation;
    if (regulation) f['regulation'] = regulation;
    if (asset) f['assetId'] = asset;
    return f;
  }, [obligation, regulation, asset]);
  const filter = useMemo(() => (state ? { ...base, state } : base), [base, state]);
  const counts = useQuery<CountsData>(allowed ? STATE_COUNTS_QUERY : null, {
    overdue: { ...base, state: 'OVERDUE' },
    dueSoon: { ...base, state: 'DUE_SOON' },
    noRecord: { ...base, state: 'NO_RECORD' },
    ok: { ...base, state: 'OK' },
    asOf,
  });
  const allCount = counts.data ? STATES.reduce((n, s) => n + counts.data![s.key].totalCount, 0) : null;

  const exportCsv = () =>
    csv.run({
      query: DUE_QUERY,
      variables: { filter, asOf },
      pick: pickDue,
      fileName: `compliance-as-of-${asOfDay || today}.csv`,
      header: CSV_HEADER,
      rows: (nodes) =>
        nodes.map((r) => [
          r.asset.id,
          r.asset.name,
          r.asset.type,
          r.obligation,
          r.regulation,
          r.state,
          r.dueDate ?? '',
          isoDayIn(r.lastCompletedAt, r.timeZone),
          r.timeZone,
          asOf ?? 'now',
        ]),
    });

  const asOfWords = asOfDay ? `as of the end of ${formatDayIn(`${asOfDay}T12:00:00Z`, 'UTC')}` : 'as of now';
  return (
    <>
      <div className="page-head page-head-actions">
        <div>
          <h1>Compliance calendar</h1>
          <p className="subtitle">
            Every obligation of every asset in service, soonest due first, by month; those never done (no record) last. Days are in {zoneLabel(zone)}, where the
            rules count calendar months and years.
          </p>
        </div>
        {allowed ? (
          <button type="button" className="button" disabled={csv.progress !== null} onClick={exportCsv}>
            Export CSV
          </button>
        ) : null}
      </div>
      {!allowed ? <Status tone="muted">Compliance obligations need the compliance:read and assets:read scopes.</Status> : null}
      {csv.progress ? <Status tone="muted">{csv.progress}</Status> : null}
      <ErrorAlert>{csv.error}</ErrorAlert>
      <section aria-label="Filter the obligations" className="card">
        <form className="filters" onSubmit={(e) => e.preventDefault()}>
          <div className="field">
            <label htmlFor={ids.asOf}>As of (audit)</label>
            <input id={ids.asOf} type="date" value={asOfDay} max={today} onChange={(e) => setAsOfDay(e.target.value)} aria-describedby={`${ids.asOf}-hint`} />
            <span id={`${ids.asOf}-hint`} className="field-hint">
              {asOfDay ? 'Evidence recorded after this day does not count.' : 'Empty: now.'}
            </span>
          </div>
          <div className="field">
            <label htmlFor={ids.obligation}>Obligation</label>
            <select id={ids.obligation} value={obligation} onChange={(e) => setObligation(e.target.value)}>
              <option value="">Every obligation</option>
              {(obligations.data?.complianceObligations ?? []).map((o) => (
                <option key={o.obligation} value={o.obligation}>
                  {humanize(o.obligation)} ({o.regulationRef})
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.regulation}>Regulation</label>
            <select id={ids.regulation} value={regulation} onChange={(e) => setRegulation(e.target.value)}>
              <option value="">Every regulation</option>
              <option value="CFR_192">{regulationLabel('CFR_192')} (gas)</option>
              <option value="CFR_195">{regulationLabel('CFR_195')} (liquid)</option>
            </select>
          </div>
          {asset ? (
            <div className="field">
              <span className="field-label">Asset</span>
              <span>
                {assetName.data?.asset?.name ?? asset}{' '}
                <button type="button" className="button button-small" onClick={() => setAsset('')}>
                  Every asset
                </button>
              </span>
            </div>
          ) : null}
        </form>
        <ErrorAlert onRetry={counts.reload}>{counts.error}</ErrorAlert>
        <div className="state-filter" role="group" aria-label={`State, with how many obligations are in each ${asOfWords}`}>
          <button type="button" className="button button-small state-button" aria-pressed={state === ''} onClick={() => setState('')}>
            Every state{allCount !== null ? ` (${formatNumber(allCount)})` : ''}
          </button>
          {STATES.map((s) => (
            <button key={s.value} type="button" className="button button-small state-button" aria-pressed={state === s.value} onClick={() => setState(s.value)}>
              {s.label}
              {counts.data ? ` (${formatNumber(counts.data[s.key].totalCount)})` : ''}
            </button>
          ))}
        </div>
      </section>
      {allowed ? (
        <section aria-label="Obligations by due date" className="card">
          <DueList
            filter={filter}
            asOf={asOf}
            noun="obligations"
            caption={`${state ? `${STATES.find((s) => s.value === state)!.label} obligations` : 'Obligations'} ${asOfWords}, by due date (days in ${zoneLabel(zone)})`}
            zone={zone}
            refs={refs}
            empty="No obligation matches."
            byMonth
          />
        </section>
      ) : null}
    </>
  );
}
