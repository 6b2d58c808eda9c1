import { Badge } from '../components/Badge';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { InTenantZone } from '../components/TenantZone';
import { DueList, useObligationRefs } from './CompliancePage';
import { RiskRegisterList } from './RiskPage';
import { formatDayIn, formatNumber, humanize, zoneLabel } from '../format';
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

/** The dashboard shows the first rows of each list; each says "N of M", loads more, and links to its own page. */
const DASHBOARD_PAGE = 10;
const NO_FILTER = {};
const OVERDUE = { state: 'OVERDUE' };
const DUE_SOON = { state: 'DUE_SOON' };

function Stat({ label, value, note, tone = 'danger' }: { label: string; value: string; note?: string | undefined; tone?: 'danger' | 'muted' }) {
  return (
    <div className="stat">
      <dt>{label}</dt>
      <dd>
        <span className="stat-value">{value}</span>
        {note ? <span className={tone === 'muted' ? 'stat-note stat-note-muted' : 'stat-note'}>{note}</span> : null}
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
  rows: { label: string; value: string | null; count: number; to?: string }[] | undefined;
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
              <td className="num">
                {r.to && r.count > 0 ? (
                  <Link to={r.to} aria-label={`${formatNumber(r.count)} ${r.label}: list them`}>
                    {formatNumber(r.count)}
                  </Link>
                ) : (
                  formatNumber(r.count)
                )}
              </td>
            </tr>
          ))
        )}
      </tbody>
    </table>
  );
}

function SummarySection({ zone }: { zone: string }) {
  const { me } = useSession();
  const { data, error, loading, reload } = useQuery<Summary>(summaryQuery(me));
  const s = data?.pipelineSummary;
  const missing = ['assets:read', 'measurements:read', 'analytics:read', 'compliance:read'].filter((scope) => !hasScope(me, scope));
  const overdue = s?.complianceByState?.find((c) => c.state === 'OVERDUE')?.count;
  return (
    <section aria-labelledby="summary-heading" className="card">
      <h2 id="summary-heading">Summary</h2>
      {loading && !s ? <Loading what="the summary" /> : null}
      <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      {missing.length > 0 ? <Status tone="muted">Parts of the summary need scopes you don&apos;t have here: {missing.join(', ')}.</Status> : null}
      {s ? (
        <>
          <dl className="stats">
            {s.totalAssets !== undefined ? <Stat label="Assets" value={formatNumber(s.totalAssets)} /> : null}
            {s.totalPipelineLengthM !== undefined ? <Stat label="Pipeline length" value={`${formatNumber(s.totalPipelineLengthM / 1000, 1)} km`} /> : null}
            {s.measurementCount !== undefined ? <Stat label="Measurements" value={formatNumber(s.measurementCount)} /> : null}
            {s.latestInspectionAt !== undefined ? (
              <Stat
                label="Latest inspection"
                value={s.latestInspectionAt ? formatDayIn(s.latestInspectionAt, zone) : 'None recorded'}
                note={s.latestInspectionAt ? `a day in ${zone}` : undefined}
                tone="muted"
              />
            ) : null}
            {s.maxErf !== undefined ? (
              <Stat
                label="Highest ERF"
                value={s.maxErf === null ? '—' : formatNumber(s.maxErf, 2)}
                note={s.maxErf === null ? undefined : `MAOP over safe pressure${s.maxErf > 1 ? ': above 1, the safe pressure is below MAOP' : ''}`}
                tone="muted"
              />
            ) : null}
            {overdue !== undefined ? (
              <Stat
                label="Overdue obligations"
                value={formatNumber(overdue)}
                note={overdue > 0 ? 'past their due date: listed below' : undefined}
                tone={overdue > 0 ? 'danger' : 'muted'}
              />
            ) : null}
            {s.nextComplianceDueAt !== undefined ? (
              <Stat
                label={overdue ? 'Next upcoming due date' : 'Next compliance due'}
                value={s.nextComplianceDueAt ? formatDayIn(s.nextComplianceDueAt, zone) : 'Nothing due'}
                note={`a day in ${zone}${overdue ? `; ${formatNumber(overdue)} already overdue` : ''}`}
                tone="muted"
              />
            ) : null}
          </dl>
          {s.maxErf != null && s.maxErf > 1 ? (
            <p className="table-note">
              An ERF above 1 does not set the response by itself: an anomaly&apos;s category comes from the regulation&apos;s conditions — depth beyond 80 % of
              wall, and the failure pressure ratio against the thresholds for its class and HCA (§192.933(d), §192.714(d), §195.452(h)) — so it can be one the
              operator schedules. Each segment&apos;s anomaly table names the rule and the figures that decided it.
            </p>
          ) : null}
          <div className="count-tables">
            <CountTable caption="Assets by type" column="Type" rows={s.assetsByType?.map((r) => ({ label: humanize(r.type), value: null, count: r.count }))} />
            <CountTable
              caption="Assets by status"
              column="Status"
              rows={s.assetsByStatus?.map((r) => ({ label: humanize(r.status), value: r.status, count: r.count }))}
            />
            <CountTable
              caption="Anomalies by response category"
              column="Response category"
              rows={s.anomaliesByResponseCategory?.map((r) => ({ label: humanize(r.responseCategory), value: r.responseCategory, count: r.count }))}
            />
            {/* Analytics scores every pipeline and segment with pipe data: a pipeline is counted beside its segments. */}
            <CountTable
              caption="Pipelines and segments by risk band"
              column="Risk band"
              rows={s.segmentsByRiskBand?.map((r) => ({
                label: `${humanize(r.band).toLowerCase()} risk`,
                value: r.band,
                count: r.count,
                to: `/risk?band=${r.band}`,
              }))}
            />
            <CountTable
              caption="Compliance obligations by state"
              column="State"
              rows={s.complianceByState?.map((r) => ({
                label: `${humanize(r.state).toLowerCase()} obligations`,
                value: r.state,
                count: r.count,
                to: `/compliance?state=${r.state}`,
              }))}
            />
          </div>
        </>
      ) : null}
    </section>
  );
}

function RiskSection({ zone }: { zone: string }) {
  const { me } = useSession();
  const allowed = hasScope(me, 'analytics:read') && hasScope(me, 'assets:read');
  return (
    <section aria-labelledby="risk-heading" className="card">
      <div className="card-head">
        <h2 id="risk-heading">Risk</h2>
        {allowed ? <Link to="/risk">Open the risk register</Link> : null}
      </div>
      {!allowed ? <Status tone="muted">The risk register needs the analytics:read and assets:read scopes.</Status> : null}
      {allowed ? <RiskRegisterList filter={NO_FILTER} zone={zone} pageSize={DASHBOARD_PAGE} /> : null}
    </section>
  );
}

function DueSection({ zone }: { zone: string }) {
  const { me } = useSession();
  const allowed = hasScope(me, 'compliance:read') && hasScope(me, 'assets:read');
  const refs = useObligationRefs(allowed);
  return (
    <section aria-labelledby="due-heading" className="card">
      <div className="card-head">
        <h2 id="due-heading">Compliance</h2>
        {allowed ? <Link to="/compliance">Open the compliance calendar</Link> : null}
      </div>
      {!allowed ? <Status tone="muted">Compliance obligations need the compliance:read and assets:read scopes.</Status> : null}
      {allowed ? (
        <>
          <DueList
            filter={OVERDUE}
            asOf={null}
            pageSize={DASHBOARD_PAGE}
            noun="overdue obligations"
            caption={`Overdue (days in ${zoneLabel(zone)})`}
            zone={zone}
            refs={refs}
            empty="Nothing is overdue."
          />
          <DueList
            filter={DUE_SOON}
            asOf={null}
            pageSize={DASHBOARD_PAGE}
            noun="obligations due soon"
            caption={`Due in the next 30 days (days in ${zoneLabel(zone)})`}
            zone={zone}
            refs={refs}
            empty="Nothing is due in the next 30 days."
          />
        </>
      ) : null}
    </section>
  );
}

export function DashboardPage() {
  return <InTenantZone>{(zone) => <DashboardView zone={zone ?? 'UTC'} />}</InTenantZone>;
}

function DashboardView({ zone }: { zone: string }) {
  useTitle('Pipeline at a glance');
  const { me } = useSession();
  // Compliance and repair days are counted in the tenant's zone: the dashboard's dates are days there, named.
  const tenant = me?.tenants.find((t) => t.tenantId === me.tenantId);
  return (
    <>
      <div className="page-head">
        <h1>Pipeline at a glance</h1>
        {tenant ? <p className="subtitle">{tenant.name}</p> : null}
      </div>
      <SummarySection zone={zone} />
      <RiskSection zone={zone} />
      <DueSection zone={zone} />
    </>
  );
}
