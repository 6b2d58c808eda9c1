import { useEffect, useId, useState } from 'react';
import { Badge } from '../components/Badge';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { Pager } from '../components/Pager';
import { formatNumber, humanize, regulationLabel } from '../format';
import { useConnection, useSettled, useTitle, type Connection } from '../hooks';
import { Link, useRouter } from '../router';
import { hasScope, useSession } from '../session';

export const ASSET_TYPES = ['SYSTEM', 'PIPELINE', 'SEGMENT', 'VALVE', 'FITTING', 'LAUNCHER_RECEIVER', 'CP_TEST_POINT', 'RECTIFIER', 'STATION'] as const;
const ASSET_STATUSES = ['PLANNED', 'ACTIVE', 'IDLE', 'ABANDONED'] as const;

export const ASSET_LIST_QUERY = `query ConsoleAssetList($filter: AssetFilter, $orderBy: AssetOrderInput, $first: Int, $after: String) {
  assets(filter: $filter, orderBy: $orderBy, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id name type status regulation classLocation inHca lengthM parent { id name } } }
  }
}`;

export interface AssetRow {
  id: string;
  name: string;
  type: string;
  status: string;
  regulation: string | null;
  classLocation: number | null;
  inHca: boolean;
  lengthM: number | null;
  parent: { id: string; name: string } | null;
}

export const pickAssets = (d: { assets: Connection<AssetRow> }) => d.assets;

const REGULATIONS = ['CFR_192', 'CFR_195'] as const;
const CLASS_LOCATIONS = ['1', '2', '3', '4'] as const;

/** The orders the API offers (AssetOrderInput), as a reader names them; `FIELD:DIRECTION` in the select and the address. */
const SORTS: [string, string][] = [
  ['NAME:ASC', 'Name, A to Z'],
  ['NAME:DESC', 'Name, Z to A'],
  ['TYPE:ASC', 'Type'],
  ['STATUS:ASC', 'Status'],
  ['CLASS_LOCATION:DESC', 'Class location, 4 to 1'],
  ['CLASS_LOCATION:ASC', 'Class location, 1 to 4'],
  ['REGULATION:ASC', 'Regulation'],
];
const DEFAULT_SORT = 'NAME:ASC';

/**
 * The filters and the order live in the address (?q=&type=&status=&hca=&regulation=&class=&sort=), so a search can be
 * bookmarked, shared and gone back to. A value the page does not offer is dropped rather than sent to the API.
 */
function readFilters(search: string) {
  const params = new URLSearchParams(search);
  const oneOf = (name: string, allowed: readonly string[]) => {
    const value = params.get(name) ?? '';
    return allowed.includes(value) ? value : '';
  };
  return {
    q: params.get('q') ?? '',
    type: oneOf('type', ASSET_TYPES),
    status: oneOf('status', ASSET_STATUSES),
    hca: oneOf('hca', ['yes', 'no']),
    regulation: oneOf('regulation', REGULATIONS),
    classLocation: oneOf('class', CLASS_LOCATIONS),
    sort:
      oneOf(
        'sort',
        SORTS.map(([value]) => value),
      ) || DEFAULT_SORT,
  };
}

export function AssetTable({ rows, caption, showParent = true }: { rows: AssetRow[]; caption: string; showParent?: boolean }) {
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="table table-compact asset-table">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Name</th>
            <th scope="col">Type</th>
            <th scope="col">Status</th>
            {showParent ? <th scope="col">Part of</th> : null}
            <th scope="col">Regulation</th>
            <th scope="col" className="num">
              Class
            </th>
            <th scope="col">HCA</th>
            <th scope="col" className="num">
              Length (m)
            </th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={showParent ? 8 : 7} className="empty">
                No asset matches.
              </td>
            </tr>
          ) : (
            rows.map((a) => (
              <tr key={a.id}>
                <th scope="row">
                  <Link to={`/assets/${encodeURIComponent(a.id)}`}>{a.name}</Link>
                </th>
                <td className="nowrap">{humanize(a.type)}</td>
                <td>
                  <Badge value={a.status} />
                </td>
                {showParent ? <td>{a.parent ? <Link to={`/assets/${encodeURIComponent(a.parent.id)}`}>{a.parent.name}</Link> : '—'}</td> : null}
                <td className="nowrap">{regulationLabel(a.regulation)}</td>
                <td className="num">{a.classLocation ?? '—'}</td>
                <td>{a.inHca ? 'Yes' : 'No'}</td>
                <td className="num">{formatNumber(a.lengthM, 0)}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

export function AssetsPage() {
  useTitle('Assets');
  const { me } = useSession();
  const { search } = useRouter();
  const initial = readFilters(search);
  const [q, setQ] = useState(initial.q);
  const [type, setType] = useState(initial.type);
  const [status, setStatus] = useState(initial.status);
  const [hca, setHca] = useState(initial.hca);
  const [regulation, setRegulation] = useState(initial.regulation);
  const [classLocation, setClassLocation] = useState(initial.classLocation);
  const [sort, setSort] = useState(initial.sort);
  const settledQ = useSettled(q.trim());
  const searchId = useId();

  useEffect(() => {
    const params = new URLSearchParams();
    if (settledQ) params.set('q', settledQ);
    if (type) params.set('type', type);
    if (status) params.set('status', status);
    if (hca) params.set('hca', hca);
    if (regulation) params.set('regulation', regulation);
    if (classLocation) params.set('class', classLocation);
    if (sort !== DEFAULT_SORT) params.set('sort', sort);
    const next = params.toString();
    // The address only: a router navigation would move focus to the page and out of the search box mid-typing.
    if (next !== window.location.search.replace(/^\?/, '')) window.history.replaceState(null, '', `/assets${next ? `?${next}` : ''}`);
  }, [settledQ, type, status, hca, regulation, classLocation, sort]);

  const filter: Record<string, unknown> = {};
  if (settledQ) filter['nameContains'] = settledQ.slice(0, 100);
  if (type) filter['type'] = type;
  if (status) filter['status'] = status;
  if (hca) filter['inHca'] = hca === 'yes';
  if (regulation) filter['regulation'] = regulation;
  if (classLocation) filter['classLocation'] = Number(classLocation);
  const [field, direction] = sort.split(':');
  const allowed = hasScope(me, 'assets:read');
  const list = useConnection(allowed ? ASSET_LIST_QUERY : null, { filter, orderBy: { field, direction } }, pickAssets);

  return (
    <>
      <div className="page-head">
        <h1>Assets</h1>
        <p className="subtitle">Every asset of the tenant. Type part of a name to find it; filter and sort below.</p>
      </div>
      {!allowed ? <Status tone="muted">The asset list needs the assets:read scope.</Status> : null}
      <section aria-label="Find assets" className="card">
        <form className="filters filters-pairs" role="search" onSubmit={(e) => e.preventDefault()}>
          <div className="field filter-grow">
            <label htmlFor={searchId}>Name contains</label>
            <input id={searchId} type="search" value={q} maxLength={100} autoComplete="off" onChange={(e) => setQ(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="asset-type">Type</label>
            <select id="asset-type" value={type} onChange={(e) => setType(e.target.value)}>
              <option value="">Any type</option>
              {ASSET_TYPES.map((t) => (
                <option key={t} value={t}>
                  {humanize(t)}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="asset-status">Status</label>
            <select id="asset-status" value={status} onChange={(e) => setStatus(e.target.value)}>
              <option value="">Any status</option>
              {ASSET_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {humanize(s)}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="asset-hca">High consequence area</label>
            <select id="asset-hca" value={hca} onChange={(e) => setHca(e.target.value)}>
              <option value="">In or outside</option>
              <option value="yes">In an HCA</option>
              <option value="no">Outside HCAs</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor="asset-regulation">Regulation</label>
            <select id="asset-regulation" value={regulation} onChange={(e) => setRegulation(e.target.value)}>
              <option value="">Any regulation</option>
              {REGULATIONS.map((r) => (
                <option key={r} value={r}>
                  {regulationLabel(r)}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="asset-class">Class location</label>
            <select id="asset-class" value={classLocation} onChange={(e) => setClassLocation(e.target.value)}>
              <option value="">Any class</option>
              {CLASS_LOCATIONS.map((c) => (
                <option key={c} value={c}>
                  Class {c}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="asset-sort">Sort by</label>
            <select id="asset-sort" value={sort} onChange={(e) => setSort(e.target.value)}>
              {SORTS.map(([value, label]) => (
                <option key={value} value={value}>
                  {label}
                </option>
              ))}
            </select>
          </div>
        </form>
      </section>
      <section aria-label="Matching assets" className="card">
        <ErrorAlert onRetry={list.reload}>{list.error}</ErrorAlert>
        {list.loading && list.totalCount === null ? <Loading what="assets" /> : null}
        {list.totalCount !== null ? (
          <>
            <AssetTable rows={list.nodes} caption="Assets" />
            <Pager
              shown={list.nodes.length}
              total={list.totalCount}
              noun="assets"
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
