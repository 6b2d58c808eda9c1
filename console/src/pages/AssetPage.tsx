import { Badge } from '../components/Badge';
import { AlongTheLine } from '../components/AlongTheLine';
import { AnomalyTable } from '../components/AnomalyTable';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { InTenantZone } from '../components/TenantZone';
import { Pager } from '../components/Pager';
import { Readings } from '../components/Readings';
import { AssetTable, ASSET_LIST_QUERY, pickAssets } from './AssetsPage';
import { formatDateTime, formatDayIn, formatNumber, humanize, regulationLabel, zoneLabel } from '../format';
import { useConnection, useQuery, useTitle } from '../hooks';
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

const RISK_QUERY = `query ConsoleAssetRisk($id: ID!) {
  asset(id: $id) { id risk { score band likelihood consequence drivers computedAt } }
}`;

interface RiskData {
  asset: {
    id: string;
    risk: { score: number; band: string; likelihood: number; consequence: number; drivers: string[]; computedAt: string } | null;
  } | null;
}
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

/** A segment's risk and its ILI anomalies (the table pages, filters, sorts and exports them). */
function IntegritySection({ id, name, zone }: { id: string; name: string; zone: string }) {
  const { me } = useSession();
  const allowed = hasScope(me, 'analytics:read') && hasScope(me, 'measurements:read');
  const riskQuery = useQuery<RiskData>(allowed ? RISK_QUERY : null, { id });
  const risk = riskQuery.data?.asset?.risk;
  return (
    <section aria-labelledby="anomalies-heading" className="card">
      <h2 id="anomalies-heading">Integrity</h2>
      {!allowed ? <Status tone="muted">Anomaly assessments need the analytics:read and measurements:read scopes.</Status> : null}
      <ErrorAlert onRetry={riskQuery.reload}>{riskQuery.error}</ErrorAlert>
      {risk ? (
        <dl className="facts facts-inline">
          <Fact label="Risk score">
            {risk.score} <Badge value={risk.band} />
          </Fact>
          <Fact label="Likelihood × consequence">
            {risk.likelihood} × {risk.consequence}
          </Fact>
          <Fact label="Computed">{formatDateTime(risk.computedAt, zone)}</Fact>
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
      {allowed ? <AnomalyTable assetId={id} assetName={name} zone={zone} /> : null}
    </section>
  );
}

function ComplianceSection({ id, zone }: { id: string; zone: string }) {
  const { me } = useSession();
  const allowed = hasScope(me, 'compliance:read');
  const { data, error, loading, reload } = useQuery<ComplianceData>(allowed ? COMPLIANCE_QUERY : null, { id });
  const c = data?.asset?.compliance;
  if (!allowed) return null;
  return (
    <section aria-labelledby="compliance-heading" className="card">
      <h2 id="compliance-heading">Compliance</h2>
      {loading && !data ? <Loading what="compliance" /> : null}
      <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      {c && c.obligations.length > 0 ? (
        <p>
          <Link to={`/compliance?asset=${encodeURIComponent(id)}`}>This asset&apos;s obligations as of another date (audit)</Link>
        </p>
      ) : null}
      {c ? (
        <div className="table-wrap" tabIndex={0}>
          <table className="table table-compact">
            <caption>Obligations now (days in {zoneLabel(zone)})</caption>
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
function AssetFacts({ asset, zone }: { asset: NonNullable<AssetData['asset']>; zone: string }) {
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
      <Fact label="Installed">{formatDayIn(asset.installedAt, zone)}</Fact>
      <Fact label="Updated">{formatDateTime(asset.updatedAt, zone)}</Fact>
    </dl>
  );
}

export function AssetPage({ id }: { id: string }) {
  return <InTenantZone>{(zone) => <AssetView id={id} zone={zone ?? 'UTC'} />}</InTenantZone>;
}

function AssetView({ id, zone }: { id: string; zone: string }) {
  const { me } = useSession();
  // Rule days (due dates) are counted in the tenant's zone, so every date here is shown in it, named.
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
        <AssetFacts asset={asset} zone={zone} />
      </section>
      <ChildrenSection id={asset.id} name={asset.name} />
      {line && hasScope(me, 'measurements:read') ? <AlongTheLine assetId={asset.id} withCategory={hasScope(me, 'analytics:read')} zone={zone} /> : null}
      <Readings assetId={asset.id} zone={zone} maopKpa={asset.maopKpa} />
      {asset.type === 'SEGMENT' ? <IntegritySection id={asset.id} name={asset.name} zone={zone} /> : null}
      <ComplianceSection id={asset.id} zone={zone} />
    </>
  );
}
