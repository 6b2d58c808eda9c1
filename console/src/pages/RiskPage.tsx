import { useEffect, useId, useMemo, useState } from 'react';
import { Badge } from '../components/Badge';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { InTenantZone } from '../components/TenantZone';
import { Pager } from '../components/Pager';
import { formatDateTime, humanize, isoDayIn, regulationLabel } from '../format';
import { readAllPages, useConnection, useCsvExport, useFiltersInAddress, useTitle, type Connection } from '../hooks';
import { Link, useRouter } from '../router';
import { hasScope, useSession } from '../session';

export const RISK_QUERY = `query ConsoleRiskRegister($filter: RiskRegisterFilter, $first: Int, $after: String) {
  riskRegister(filter: $filter, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node {
      asset { id name type regulation classLocation inHca parent { id name } }
      risk { score band likelihood consequence drivers potentialImpactRadiusM computedAt }
    } }
  }
}`;

export interface RiskRow {
  asset: {
    id: string;
    name: string;
    type: string;
    regulation: string | null;
    classLocation: number | null;
    inHca: boolean;
    parent: { id: string; name: string } | null;
  };
  risk: {
    score: number;
    band: string;
    likelihood: number;
    consequence: number;
    drivers: string[];
    potentialImpactRadiusM: number | null;
    computedAt: string;
  };
}
type RiskData = { riskRegister: Connection<RiskRow> };
export const pickRisk = (d: RiskData) => d.riskRegister;

const BANDS = ['VERY_HIGH', 'HIGH', 'MEDIUM', 'LOW'] as const;

const PIPELINES_QUERY = `query ConsoleRiskPipelines($first: Int, $after: String) {
  assets(filter: { type: PIPELINE }, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id name } }
  }
}`;
type PipelinesData = { assets: Connection<{ id: string; name: string }> };

/** Every pipeline of the tenant (read page by page: the filter's list is never cut off), by name. */
function usePipelines(allowed: boolean): { id: string; name: string }[] {
  const [pipelines, setPipelines] = useState<{ id: string; name: string }[]>([]);
  useEffect(() => {
    if (!allowed) return;
    const controller = new AbortController();
    readAllPages<PipelinesData, { id: string; name: string }>(PIPELINES_QUERY, {}, (d) => d.assets, { signal: controller.signal }).then(
      ({ nodes }) => !controller.signal.aborted && setPipelines(nodes),
      () => undefined,
    );
    return () => controller.abort();
  }, [allowed]);
  return pipelines;
}

/** The register's rows: each pipe with its score, band, likelihood × consequence and the drivers in words. */
export function RiskTable({ rows, caption, zone }: { rows: RiskRow[]; caption: string; zone: string }) {
  return (
    <div className="table-wrap" tabIndex={0}>
      <table className="table table-compact">
        <caption>{caption}</caption>
        <thead>
          <tr>
            <th scope="col">Pipeline or segment</th>
            <th scope="col" className="num">
              Score
            </th>
            <th scope="col">Band</th>
            <th scope="col" className="num">
              Likelihood
            </th>
            <th scope="col" className="num">
              Consequence
            </th>
            <th scope="col">Drivers</th>
            <th scope="col">Computed</th>
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td colSpan={7} className="empty">
                No pipeline or segment matches. Scores appear once pipe is registered with its geometry and assessed.
              </td>
            </tr>
          ) : (
            rows.map(({ asset, risk }) => (
              <tr key={asset.id}>
                <th scope="row">
                  <Link to={`/assets/${encodeURIComponent(asset.id)}`}>{asset.name}</Link>
                  <span className="cell-note">
                    {humanize(asset.type)}
                    {asset.parent ? ` of ${asset.parent.name}` : ''}
                    {asset.inHca ? ' · in an HCA' : ''}
                  </span>
                </th>
                <td className="num">{risk.score}</td>
                <td>
                  <Badge value={risk.band} />
                </td>
                <td className="num">{risk.likelihood}</td>
                <td className="num">{risk.consequence}</td>
                <td className="drivers">
                  {risk.drivers.length ? (
                    <ul>
                      {risk.drivers.map((d) => (
                        <li key={d}>{d}</li>
                      ))}
                    </ul>
                  ) : (
                    '—'
                  )}
                </td>
                <td className="nowrap">{formatDateTime(risk.computedAt, zone)}</td>
              </tr>
            ))
          )}
        </tbody>
      </table>
    </div>
  );
}

const CSV_HEADER = [
  'Asset id',
  'Name',
  'Type',
  'Part of',
  'Regulation',
  'Class location',
  'In HCA',
  'Score',
  'Band',
  'Likelihood',
  'Consequence',
  'Potential impact radius (m)',
  'Drivers',
  'Computed',
] as const;

/**
 * The register as the server pages it: its rows, "N of M" and "Load more" (the dashboard shows the first `pageSize`,
 * this page 50 at a time).
 */
export function RiskRegisterList({ filter, zone, pageSize = 50 }: { filter: Record<string, unknown>; zone: string; pageSize?: number }) {
  const register = useConnection(RISK_QUERY, { filter }, pickRisk, pageSize);
  return (
    <>
      <ErrorAlert onRetry={register.reload}>{register.error}</ErrorAlert>
      {register.loading && register.totalCount === null ? <Loading what="the risk register" /> : null}
      {register.totalCount !== null ? (
        <>
          <RiskTable rows={register.nodes} caption="Risk register, highest score first" zone={zone} />
          <Pager
            shown={register.nodes.length}
            total={register.totalCount}
            noun="pipelines and segments"
            hasNextPage={register.hasNextPage}
            loading={register.loading}
            onLoadMore={register.loadMore}
          />
        </>
      ) : null}
    </>
  );
}

/** The filters live in the address (?band=&min=&regulation=&pipeline=&hca=), so a view of the register can be shared. */
function readFilters(search: string) {
  const params = new URLSearchParams(search);
  const band = params.get('band') ?? '';
  const regulation = params.get('regulation') ?? '';
  const min = Number(params.get('min') ?? '');
  const hca = params.get('hca') ?? '';
  return {
    band: (BANDS as readonly string[]).includes(band) ? band : '',
    regulation: regulation === 'CFR_192' || regulation === 'CFR_195' ? regulation : '',
    min: Number.isInteger(min) && min >= 1 && min <= 25 ? String(min) : '',
    pipeline: params.get('pipeline')?.slice(0, 100) ?? '',
    hca: hca === 'yes' || hca === 'no' ? hca : '',
  };
}

export function RiskPage() {
  return <InTenantZone>{(zone) => <RiskView zone={zone ?? 'UTC'} />}</InTenantZone>;
}

/**
 * The risk register: every scored pipeline and segment, highest score first, filtered by the server (band, lowest
 * score, regulation), paged ("N of M", load more) and exported whole as CSV.
 */
function RiskView({ zone }: { zone: string }) {
  useTitle('Risk register');
  const { me } = useSession();
  const { search } = useRouter();
  const initial = readFilters(search);
  const [band, setBand] = useState(initial.band);
  const [min, setMin] = useState(initial.min);
  const [regulation, setRegulation] = useState(initial.regulation);
  const [pipeline, setPipeline] = useState(initial.pipeline);
  const [hca, setHca] = useState(initial.hca);
  const csv = useCsvExport<RiskData, RiskRow>('the risk register');
  const ids = { band: useId(), min: useId(), regulation: useId(), pipeline: useId(), hca: useId() };
  const allowed = hasScope(me, 'analytics:read') && hasScope(me, 'assets:read');
  const pipelines = usePipelines(allowed);

  useFiltersInAddress('/risk', { band, min, regulation, pipeline, hca });

  const filter = useMemo(() => {
    const f: Record<string, unknown> = {};
    if (band) f['band'] = band;
    if (min) f['minScore'] = Number(min);
    if (regulation) f['regulation'] = regulation;
    if (pipeline) f['pipelineId'] = pipeline;
    if (hca) f['inHca'] = hca === 'yes';
    return f;
  }, [band, min, regulation, pipeline, hca]);
  const exportCsv = () =>
    csv.run({
      query: RISK_QUERY,
      variables: { filter },
      pick: pickRisk,
      fileName: `risk-register-${isoDayIn(new Date().toISOString(), zone)}.csv`,
      header: CSV_HEADER,
      rows: (nodes) =>
        nodes.map(({ asset, risk }) => [
          asset.id,
          asset.name,
          asset.type,
          asset.parent?.name ?? '',
          asset.regulation,
          asset.classLocation,
          asset.inHca ? 'yes' : 'no',
          risk.score,
          risk.band,
          risk.likelihood,
          risk.consequence,
          risk.potentialImpactRadiusM === null ? null : Math.round(risk.potentialImpactRadiusM),
          risk.drivers.join('; '),
          risk.computedAt,
        ]),
    });

  return (
    <>
      <div className="page-head page-head-actions">
        <div>
          <h1>Risk register</h1>
          <p className="subtitle">
            Every scored pipeline and segment, highest score first: likelihood × consequence on the 5 × 5 matrix, with what drove each. A pipeline with pipe
            data is scored as well as its segments.
          </p>
        </div>
        {allowed ? (
          <button type="button" className="button" disabled={csv.progress !== null} onClick={exportCsv}>
            Export CSV
          </button>
        ) : null}
      </div>
      {!allowed ? <Status tone="muted">The risk register needs the analytics:read and assets:read scopes.</Status> : null}
      {csv.progress ? <Status tone="muted">{csv.progress}</Status> : null}
      <ErrorAlert>{csv.error}</ErrorAlert>
      <section aria-label="Filter the risk register" className="card">
        <form className="filters" onSubmit={(e) => e.preventDefault()}>
          <div className="field">
            <label htmlFor={ids.band}>Band</label>
            <select id={ids.band} value={band} onChange={(e) => setBand(e.target.value)}>
              <option value="">Every band</option>
              {BANDS.map((b) => (
                <option key={b} value={b}>
                  {humanize(b)}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor={ids.min}>Lowest score</label>
            <select id={ids.min} value={min} onChange={(e) => setMin(e.target.value)}>
              <option value="">Any score</option>
              {Array.from({ length: 25 }, (_, i) => String(i + 1)).map((n) => (
                <option key={n} value={n}>
                  {n} or more
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
          <div className="field">
            <label htmlFor={ids.pipeline}>Pipeline</label>
            <select id={ids.pipeline} value={pipeline} onChange={(e) => setPipeline(e.target.value)}>
              <option value="">Every pipeline</option>
              {pipeline && !pipelines.some((p) => p.id === pipeline) ? <option value={pipeline}>The pipeline in the address</option> : null}
              {pipelines.map((p) => (
                <option key={p.id} value={p.id}>
                  {p.name} and its segments
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
        </form>
      </section>
      {allowed ? (
        <section aria-label="Scored pipe" className="card">
          <RiskRegisterList filter={filter} zone={zone} />
        </section>
      ) : null}
    </>
  );
}
