import { Badge } from '../components/Badge';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { formatDate, formatNumber, humanize, regulationLabel } from '../format';
import { useQuery, useTitle } from '../hooks';
import { Link } from '../router';
import { hasScope, useSession, type Me } from '../session';

interface Summary {
  pipelineSummary: {
    totalAssets?: number;
    totalPipelineLengthM?: number;
    assetsByType?: { type: string; count: number }[];
    assetsByStatus?: { status: string; count: number }[];
    measurementCount?: number;
    latestInspectionAt?: string | null;
    anomaliesByResponseCategory?: { responseCategory: string; count: number }[];
    segmentsByRiskBand?: { band: string; count: number }[];
    maxErf?: number | null;
    complianceByState?: { state: string; count: number }[];
    nextComplianceDueAt?: string | null;
  };
}

/** The summary asks only for the parts the credential may read (each part needs its subgraph's read scope). */
function summaryQuery(me: Me | null): string {
  const parts: string[] = [];
  if (hasScope(me, 'assets:read')) parts.push('totalAssets totalPipelineLengthM assetsByType { type count } assetsByStatus { status count }');
  if (hasScope(me, 'measurements:read')) parts.push('measurementCount latestInspectionAt');
  if (hasScope(me, 'analytics:read')) parts.push('anomaliesByResponseCategory { responseCategory count } segmentsByRiskBand { band count } maxErf');
  if (hasScope(me, 'compliance:read')) parts.push('complianceByState { state count } nextComplianceDueAt');
  return `query DashboardSummary { pipelineSummary { tenantId ${parts.join(' ')} } }`;
}

const RISK_QUERY = `query DashboardRiskRegister {
  riskRegister(first: 25) {
    totalCount
    edges { node { asset { id name } risk { score band likelihood consequence drivers computedAt } } }
  }
}`;

interface RiskData {
  riskRegister: {
    totalCount: number;
    edges: {
      node: {
        asset: { id: string; name: string };
        risk: { score: number; band: string; likelihood: number; consequence: number; drivers: string[]; computedAt: string };
      };
    }[];
  };
}

const DUE_QUERY = `query DashboardDueObligations {
  overdue: complianceStatus(filter: { state: OVERDUE }, first: 50) { totalCount edges { node { ...Row } } }
  dueSoon: complianceStatus(filter: { state: DUE_SOON }, first: 50) { totalCount edges { node { ...Row } } }
}
fragment Row on ComplianceStatusRow { asset { id name } obligation regulation state dueAt lastCompletedAt }`;

interface DueRow {
  asset: { id: string; name: string };
  obligation: string;
  regulation: string;
  state: string;
  dueAt: string | null;
  lastCompletedAt: string | null;
}
interface DueData {
  overdue: { totalCount: number; edges: { node: DueRow }[] };
  dueSoon: { totalCount: number; edges: { node: DueRow }[] };
}

function Stat({ label, value, note }: { label: string; value: string; note?: string }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>
        <span className="stat-value">{value}</span>
        {note ? <span className="stat-note">{note}</span> : null}
      </dd>
    </div>
  );
}

function CountTable({
  caption,
  column,
  rows,
}: {
  caption: string;
  column: string;
  rows: { label: string; value: string | null; count: number }[] | undefined;
}) {
  if (!rows) return null;
  return (
    <table className="table table-compact count-table">
      <caption>{caption}</caption>
      <thead>
        <tr>
          <th scope="col">{column}</th>
          <th scope="col" className="num">
            Count
          </th>
        </tr>
      </thead>
      <tbody>
        {rows.length === 0 ? (
          <tr>
            <td colSpan={2} className="empty">
              None yet
            </td>
          </tr>
        ) : (
          rows.map((r) => (
            <tr key={r.label}>
              <td>{r.value ? <Badge value={r.value} /> : r.label}</td>
              <td className="num">{formatNumber(r.count)}</td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

function SummarySection() {
  const { me } = useSession();
  const { data, error, loading, reload } = useQuery<Summary>(summaryQuery(me));
  const s = data?.pipelineSummary;
  const missing = ['assets:read', 'measurements:read', 'analytics:read', 'compliance:read'].filter((scope) => !hasScope(me, scope));
  return (
    <section aria-labelledby="summary-heading" className="card">
      <h2 id="summary-heading">Summary</h2>
      {loading && !s ? <Loading what="the summary" /> : null}
      <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      {missing.length > 0 ? <Status tone="muted">Parts of the summary need scopes you don't have here: {missing.join(', ')}.</Status> : null}
      {s ? (
        <>
          <dl className="stats">
            {s.totalAssets !== undefined ? <Stat label="Assets" value={formatNumber(s.totalAssets)} /> : null}
            {s.totalPipelineLengthM !== undefined ? <Stat label="Pipeline length" value={`${formatNumber(s.totalPipelineLengthM / 1000, 1)} km`} /> : null}
            {s.measurementCount !== undefined ? <Stat label="Measurements" value={formatNumber(s.measurementCount)} /> : null}
            {s.latestInspectionAt !== undefined ? (
              <Stat label="Latest inspection" value={s.latestInspectionAt ? formatDate(s.latestInspectionAt) : 'None recorded'} />
            ) : null}
            {s.maxErf !== undefined ? (
              <Stat
                label="Highest ERF"
                value={s.maxErf === null ? '—' : formatNumber(s.maxErf, 2)}
                note={s.maxErf !== null && s.maxErf >= 1 ? 'at or above 1: repair' : undefined}
              />
            ) : null}
            {s.nextComplianceDueAt !== undefined ? (
              <Stat label="Next compliance due" value={s.nextComplianceDueAt ? formatDate(s.nextComplianceDueAt) : 'Nothing due'} />
            ) : null}
          </dl>
          <div className="count-tables">
            <CountTable caption="Assets by type" column="Type" rows={s.assetsByType?.map((r) => ({ label: humanize(r.type), value: null, count: r.count }))} />
            <CountTable
              caption="Assets by status"
              column="Status"
              rows={s.assetsByStatus?.map((r) => ({ label: r.status, value: r.status, count: r.count }))}
            />
            <CountTable
              caption="Anomalies by response category"
              column="Response category"
              rows={s.anomaliesByResponseCategory?.map((r) => ({ label: r.responseCategory, value: r.responseCategory, count: r.count }))}
            />
            <CountTable
              caption="Segments by risk band"
              column="Risk band"
              rows={s.segmentsByRiskBand?.map((r) => ({ label: r.band, value: r.band, count: r.count }))}
            />
            <CountTable
              caption="Compliance by state"
              column="State"
              rows={s.complianceByState?.map((r) => ({ label: r.state, value: r.state, count: r.count }))}
            />
          </div>
        </>
      ) : null}
    </section>
  );
}

function RiskSection() {
  const { me } = useSession();
  const allowed = hasScope(me, 'analytics:read') && hasScope(me, 'assets:read');
  const { data, error, loading, reload } = useQuery<RiskData>(allowed ? RISK_QUERY : null);
  const rows = data?.riskRegister.edges ?? [];
  return (
    <section aria-labelledby="risk-heading" className="card">
      <h2 id="risk-heading">Risk</h2>
      {!allowed ? <Status tone="muted">The risk register needs the analytics:read and assets:read scopes.</Status> : null}
      {loading && !data ? <Loading what="the risk register" /> : null}
      <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      {data ? (
        <div className="table-wrap" tabIndex={0}>
          <table className="table">
            <caption>Risk register</caption>
            <thead>
              <tr>
                <th scope="col">Segment</th>
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
                    No segment has a risk score yet. Scores appear once segments are registered and assessed.
                  </td>
                </tr>
              ) : (
                rows.map(({ node }) => (
                  <tr key={node.asset.id}>
                    <th scope="row" className="nowrap">
                      <Link to={`/assets/${encodeURIComponent(node.asset.id)}`}>{node.asset.name}</Link>
                    </th>
                    <td className="num">{node.risk.score}</td>
                    <td>
                      <Badge value={node.risk.band} />
                    </td>
                    <td className="num">{node.risk.likelihood}</td>
                    <td className="num">{node.risk.consequence}</td>
                    <td className="drivers">
                      {node.risk.drivers.length ? (
                        <ul>
                          {node.risk.drivers.map((d) => (
                            <li key={d}>{d}</li>
                          ))}
                        </ul>
                      ) : (
                        '—'
                      )}
                    </td>
                    <td className="nowrap">{formatDate(node.risk.computedAt)}</td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
          {data.riskRegister.totalCount > rows.length ? (
            <p className="table-note">
              Showing the {rows.length} highest of {data.riskRegister.totalCount} segments.
            </p>
          ) : null}
        </div>
      ) : null}
    </section>
  );
}

function DueSection() {
  const { me } = useSession();
  const allowed = hasScope(me, 'compliance:read') && hasScope(me, 'assets:read');
  const { data, error, loading, reload } = useQuery<DueData>(allowed ? DUE_QUERY : null);
  const rows = data ? [...data.overdue.edges, ...data.dueSoon.edges].map((e) => e.node) : [];
  const more = data ? data.overdue.totalCount + data.dueSoon.totalCount - rows.length : 0;
  return (
    <section aria-labelledby="due-heading" className="card">
      <h2 id="due-heading">Compliance</h2>
      {!allowed ? <Status tone="muted">Compliance obligations need the compliance:read and assets:read scopes.</Status> : null}
      {loading && !data ? <Loading what="compliance obligations" /> : null}
      <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      {data ? (
        <div className="table-wrap" tabIndex={0}>
          <table className="table">
            <caption>Overdue and due soon</caption>
            <thead>
              <tr>
                <th scope="col">Asset</th>
                <th scope="col">Obligation</th>
                <th scope="col">Regulation</th>
                <th scope="col">State</th>
                <th scope="col">Due</th>
                <th scope="col">Last completed</th>
              </tr>
            </thead>
            <tbody>
              {rows.length === 0 ? (
                <tr>
                  <td colSpan={6} className="empty">
                    Nothing is overdue or due in the next 30 days.
                  </td>
                </tr>
              ) : (
                rows.map((r) => (
                  <tr key={`${r.asset.id}:${r.obligation}`}>
                    <th scope="row" className="nowrap">
                      <Link to={`/assets/${encodeURIComponent(r.asset.id)}`}>{r.asset.name}</Link>
                    </th>
                    <td>{humanize(r.obligation)}</td>
                    <td className="nowrap">{regulationLabel(r.regulation)}</td>
                    <td>
                      <Badge value={r.state} />
                    </td>
                    <td className="nowrap">{formatDate(r.dueAt)}</td>
                    <td className="nowrap">{r.lastCompletedAt ? formatDate(r.lastCompletedAt) : 'Never'}</td>
                  </tr>
                ))
              )}
            </tbody>
          </table>
          {more > 0 ? <p className="table-note">{more} more not shown (the 50 soonest of each state are listed).</p> : null}
        </div>
      ) : null}
    </section>
  );
}

export function DashboardPage() {
  useTitle('Pipeline at a glance');
  const { me } = useSession();
  const tenant = me?.tenants.find((t) => t.tenantId === me.tenantId);
  return (
    <>
      <div className="page-head">
        <h1>Pipeline at a glance</h1>
        {tenant ? <p className="subtitle">{tenant.name}</p> : null}
      </div>
      <SummarySection />
      <RiskSection />
      <DueSection />
    </>
  );
}
