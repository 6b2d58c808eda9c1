import { Badge } from '../components/Badge';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { InTenantZone } from '../components/TenantZone';
import { downloadText, toCsv } from '../csv';
import { clockLabel, formatDayIn, formatNumber, humanize, isoDayIn, zoneLabel } from '../format';
import { useQuery, useTitle } from '../hooks';
import { Link } from '../router';
import { hasScope, useSession } from '../session';

const WELD = 'jointNumber logDistanceM distanceM';
const MARKER = 'name kind logDistanceM distanceM';
const SHEET_QUERY = `query ConsoleDigSheet($id: ID!) {
  measurement(id: $id) {
    id type observedAt odometerM clockDeg depthPctWt lengthMm widthMm featureType runId
    asset { id name inHca outsideDiameterMm wallThicknessMm maopKpa parent { id name } }
    iliLocation {
      runId jointNumber distanceFromUpstreamWeldM logDistanceM clockDeg
      upstreamWeld { ${WELD} } downstreamWeld { ${WELD} }
      upstreamMarker { ${MARKER} } downstreamMarker { ${MARKER} }
    }
    ASSESSMENT
  }
}`;
const ASSESSMENT =
  'assessment { responseCategory ruleRef categoryReason discoveredAt repairDueAt status overdue depthSource depthWithTolerancePctWt failurePressureKpa safePressureKpa erf }';

interface Weld {
  jointNumber: number | null;
  logDistanceM: number;
  distanceM: number;
}
interface Marker {
  name: string | null;
  kind: string;
  logDistanceM: number;
  distanceM: number;
}
interface SheetData {
  measurement: {
    id: string;
    type: string;
    observedAt: string;
    odometerM: number | null;
    clockDeg: number | null;
    depthPctWt: number | null;
    lengthMm: number | null;
    widthMm: number | null;
    featureType: string | null;
    runId: string | null;
    asset: {
      id: string;
      name: string;
      inHca: boolean;
      outsideDiameterMm: number | null;
      wallThicknessMm: number | null;
      maopKpa: number | null;
      parent: { id: string; name: string } | null;
    };
    iliLocation: {
      runId: string;
      jointNumber: number | null;
      distanceFromUpstreamWeldM: number | null;
      logDistanceM: number;
      clockDeg: number | null;
      upstreamWeld: Weld | null;
      downstreamWeld: Weld | null;
      upstreamMarker: Marker | null;
      downstreamMarker: Marker | null;
    } | null;
    assessment?: {
      responseCategory: string | null;
      ruleRef: string | null;
      categoryReason: string | null;
      discoveredAt: string | null;
      repairDueAt: string | null;
      status: string;
      overdue: boolean;
      depthSource: string;
      depthWithTolerancePctWt: number | null;
      failurePressureKpa: number | null;
      safePressureKpa: number | null;
      erf: number | null;
    } | null;
  } | null;
}

const metres = (v: number | null | undefined) => (v === null || v === undefined ? '—' : `${formatNumber(v, 2)} m`);

function weldText(w: Weld | null, direction: 'upstream' | 'downstream'): string {
  if (!w) return '—';
  return `${metres(w.distanceM)} ${direction} (girth weld${w.jointNumber !== null ? ` of joint ${w.jointNumber}` : ''}, log ${metres(w.logDistanceM)})`;
}
function markerText(m: Marker | null, direction: 'upstream' | 'downstream'): string {
  if (!m) return '—';
  return `${metres(m.distanceM)} ${direction} (${humanize(m.kind)}${m.name ? ` ${m.name}` : ''}, log ${metres(m.logDistanceM)})`;
}

function Row({ label, children }: { label: string; children: React.ReactNode }) {
  return (
    <tr>
      <th scope="row">{label}</th>
      <td>{children}</td>
    </tr>
  );
}

export function DigSheetPage({ id }: { id: string }) {
  return <InTenantZone>{(zone) => <DigSheet id={id} zone={zone} />}</InTenantZone>;
}

/**
 * One anomaly's dig sheet: where the crew finds it (distance and direction from the nearest girth welds and reference
 * markers, joint, clock), what it is (dimensions), and why and by when it is dug (category, rule, due date in the
 * tenant's zone). Laid out for paper: Print gives just the sheet (@media print); the CSV holds the same lines.
 */
function DigSheet({ id, zone }: { id: string; zone: string | null }) {
  const { me } = useSession();
  const query = hasScope(me, 'analytics:read') ? SHEET_QUERY.replace('ASSESSMENT', ASSESSMENT) : SHEET_QUERY.replace('ASSESSMENT', '');
  const { data, error, loading, reload } = useQuery<SheetData>(hasScope(me, 'measurements:read') ? query : null, { id });
  const m = data?.measurement;
  useTitle(m ? `Dig sheet: ${m.asset.name} at ${formatNumber(m.odometerM, 1)} m` : 'Dig sheet');

  if (!hasScope(me, 'measurements:read')) return <Status tone="muted">A dig sheet needs the measurements:read scope.</Status>;
  if (loading && !data) return <Loading what="the dig sheet" />;
  if (error) {
    return (
      <>
        <h1>Dig sheet</h1>
        <ErrorAlert onRetry={reload}>{error}</ErrorAlert>
      </>
    );
  }
  if (!m) {
    return (
      <>
        <h1>Dig sheet not found</h1>
        <Status>
          There is no anomaly with this id in this tenant. <Link to="/digs">Back to the dig list</Link>
        </Status>
      </>
    );
  }
  const loc = m.iliLocation;
  const a = m.assessment ?? null;
  const lines: [string, string][] = [
    ['Segment', m.asset.name],
    ['Pipeline', m.asset.parent?.name ?? '—'],
    ['In HCA', m.asset.inHca ? 'Yes' : 'No'],
    ['Log distance', metres(loc?.logDistanceM ?? m.odometerM)],
    ['Joint', loc?.jointNumber !== null && loc?.jointNumber !== undefined ? String(loc.jointNumber) : '—'],
    ['From the upstream girth weld', metres(loc?.distanceFromUpstreamWeldM)],
    ['Upstream girth weld', weldText(loc?.upstreamWeld ?? null, 'upstream')],
    ['Downstream girth weld', weldText(loc?.downstreamWeld ?? null, 'downstream')],
    ['Upstream reference marker', markerText(loc?.upstreamMarker ?? null, 'upstream')],
    ['Downstream reference marker', markerText(loc?.downstreamMarker ?? null, 'downstream')],
    ['Clock position', clockLabel(loc?.clockDeg ?? m.clockDeg)],
    ['Feature', humanize(m.featureType)],
    ['Depth', m.depthPctWt === null ? '—' : `${formatNumber(m.depthPctWt, 1)} % of wall`],
    ['Length', m.lengthMm === null ? '—' : `${formatNumber(m.lengthMm, 0)} mm`],
    ['Width', m.widthMm === null ? '—' : `${formatNumber(m.widthMm, 0)} mm`],
    ['Wall thickness', m.asset.wallThicknessMm === null ? '—' : `${formatNumber(m.asset.wallThicknessMm, 2)} mm`],
    ['Outside diameter', m.asset.outsideDiameterMm === null ? '—' : `${formatNumber(m.asset.outsideDiameterMm, 1)} mm`],
    ['Inspected', formatDayIn(m.observedAt, zone)],
  ];
  if (a) {
    lines.push(
      ['Response category', humanize(a.responseCategory)],
      ['Rule', a.ruleRef ?? '—'],
      ['Why', a.categoryReason ?? '—'],
      [
        'Assessed on',
        a.depthSource === 'FIELD' ? 'The field (NDE) result' : `The tool's call with tolerance (${formatNumber(a.depthWithTolerancePctWt, 1)} % of wall)`,
      ],
      ['ERF', formatNumber(a.erf, 2)],
      ['Discovered', formatDayIn(a.discoveredAt, zone)],
      ['Repair due', `${formatDayIn(a.repairDueAt, zone)}${a.overdue ? ' (overdue)' : ''}`],
      ['Status', humanize(a.status)],
    );
  }
  return (
    <article className="dig-sheet">
      <nav aria-label="Breadcrumb" className="breadcrumb no-print">
        <ol>
          <li>
            <Link to="/digs">Dig list</Link>
          </li>
          <li aria-current="page">Dig sheet</li>
        </ol>
      </nav>
      <div className="page-head page-head-actions">
        <div>
          <h1>
            Dig sheet: {m.asset.name} at {formatNumber(loc?.logDistanceM ?? m.odometerM, 2)} m
          </h1>
          <p className="subtitle">
            {humanize(m.featureType)} · {a ? <Badge value={a.responseCategory} /> : null} {a?.overdue ? <Badge value="OVERDUE" /> : null} · dates in{' '}
            {zoneLabel(zone)}
          </p>
        </div>
        <div className="no-print sheet-actions">
          <button type="button" className="button button-primary" onClick={() => window.print()}>
            Print
          </button>
          <button
            type="button"
            className="button"
            onClick={() =>
              downloadText(
                `dig-sheet-${m.id}.csv`,
                toCsv(['Field', 'Value'], [...lines, ['Measurement id', m.id], ['Due date (YYYY-MM-DD)', isoDayIn(a?.repairDueAt, zone)]]),
              )
            }
          >
            Download CSV
          </button>
        </div>
      </div>
      {!loc ? <Status tone="muted">This anomaly was not imported from a run's listing, so it has no girth weld or marker references.</Status> : null}
      <section aria-label="Dig sheet" className="card">
        <div className="table-wrap" tabIndex={0}>
          <table className="table sheet-table">
            <caption>Where to dig, what to expect, by when</caption>
            <tbody>
              {lines.map(([label, value]) => (
                <Row key={label} label={label}>
                  {value}
                </Row>
              ))}
            </tbody>
          </table>
        </div>
      </section>
      <p className="print-only">Measurement {m.id}. Printed from Linepack.</p>
    </article>
  );
}
