import { useCallback, useEffect, useMemo, useState } from 'react';
import { AssetMap, configuredTiles, placed, type MapAsset, type MapSelection, type PlacedAsset } from '../components/AssetMap';
import { AssetMapLegend } from '../components/AssetMapLegend';
import { AssetMapList } from '../components/AssetMapList';
import { ErrorAlert, Status } from '../components/Notice';
import { messageOf } from '../errors';
import { formatNumber, humanize } from '../format';
import { readAllPages, useTitle, type Connection } from '../hooks';
import { Link, useRouter } from '../router';
import { hasScope, useSession } from '../session';

/** Only what the map draws and names; risk only for a credential that may read it. */
const MAP_ASSETS_QUERY = `query ConsoleMapAssets($first: Int, $after: String) {
  assets(first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { id name type status location risk { band score } } }
  }
}`;
const MAP_ASSETS_QUERY_WITHOUT_RISK = MAP_ASSETS_QUERY.replace(' risk { band score }', '');
/** Each page asks analytics for its assets' risk in one batch; 200 keeps a page's answer well under a second. */
const PAGE_SIZE = 200;

const pickAssets = (d: { assets: Connection<MapAsset> }) => d.assets;

interface Loaded {
  placed: PlacedAsset[];
  unplaced: MapAsset[];
  total: number;
}

/** The tenant's assets on a map (issue 27): every asset read through the API page by page, none left out. */
export function MapPage() {
  useTitle('Map');
  const { me, tenantId } = useSession();
  const { search } = useRouter();
  const allowed = hasScope(me, 'assets:read');
  const withRisk = hasScope(me, 'analytics:read');
  // The asset the address named on arrival ("Open on map"); selecting others later changes the address, not this.
  const [wanted] = useState(() => new URLSearchParams(search).get('asset'));
  const tiles = useMemo(configuredTiles, []);

  const [loaded, setLoaded] = useState<Loaded | null>(null);
  const [progress, setProgress] = useState<{ read: number; total: number } | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [nonce, setNonce] = useState(0);
  const [selection, setSelection] = useState<MapSelection | null>(wanted ? { id: wanted, fit: true } : null);
  const [visible, setVisible] = useState<Set<string>>(() => new Set());

  useEffect(() => {
    if (!allowed) return;
    const controller = new AbortController();
    setLoaded(null);
    setError(null);
    setProgress(null);
    readAllPages(withRisk ? MAP_ASSETS_QUERY : MAP_ASSETS_QUERY_WITHOUT_RISK, {}, pickAssets, {
      signal: controller.signal,
      pageSize: PAGE_SIZE,
      onProgress: (read, total) => !controller.signal.aborted && setProgress({ read, total }),
    }).then(
      ({ nodes, totalCount }) => {
        if (controller.signal.aborted) return;
        const drawn: PlacedAsset[] = [];
        const undrawn: MapAsset[] = [];
        for (const node of nodes) {
          const p = placed(node);
          if (p) drawn.push(p);
          else undrawn.push(node);
        }
        setLoaded({ placed: drawn, unplaced: undrawn, total: totalCount });
      },
      (err: unknown) => !controller.signal.aborted && setError(messageOf(err)),
    );
    return () => controller.abort();
  }, [allowed, withRisk, tenantId, nonce]);

  // The address follows the selection (?asset=…), so a selected asset can be linked to. Only the address: a router
  // navigation would move the focus to the page and away from the list's button or the map.
  const select = useCallback((next: MapSelection | null) => {
    setSelection(next);
    const address = next ? `/map?asset=${encodeURIComponent(next.id)}` : '/map';
    if (window.location.pathname === '/map' && address !== window.location.pathname + window.location.search) window.history.replaceState(null, '', address);
  }, []);
  const show = useCallback((id: string) => select({ id, fit: true }), [select]);

  const wantedUnplaced = wanted && loaded && !loaded.placed.some((a) => a.id === wanted) ? (loaded.unplaced.find((a) => a.id === wanted) ?? null) : null;
  const mapLabel = loaded ? `Map of ${formatNumber(loaded.placed.length)} assets. Arrow keys move the map, plus and minus zoom.` : 'Map of the assets';

  return (
    <>
      <div className="page-head">
        <h1>Map</h1>
        <p className="subtitle">
          Where the tenant's assets are, from their recorded GeoJSON: pipelines and segments coloured by risk band, components as symbols. Select one for its
          details.
        </p>
      </div>
      {!allowed ? <Status tone="muted">The map needs the assets:read scope.</Status> : null}
      {allowed ? (
        <section aria-label="Map of the assets" className="card asset-map-card">
          <ErrorAlert onRetry={() => setNonce((n) => n + 1)}>{error}</ErrorAlert>
          {!loaded && !error ? (
            <p role="status" className="status status-muted" aria-live="polite">
              Reading the assets{progress ? `: ${formatNumber(progress.read)} of ${formatNumber(progress.total)}` : '…'}
            </p>
          ) : null}
          {loaded ? (
            <p className="table-note" role="status">
              {formatNumber(loaded.placed.length)} of {formatNumber(loaded.total)} assets drawn
              {loaded.unplaced.length > 0 ? `; ${formatNumber(loaded.unplaced.length)} have no location recorded (listed below the map)` : ''}.
              {tiles ? null : ' No background map is configured: the lines are drawn on a plain background.'}
            </p>
          ) : null}
          {wanted && loaded && !wantedUnplaced && !loaded.placed.some((a) => a.id === wanted) ? (
            <Status tone="muted">There is no asset with the id in the address in this tenant.</Status>
          ) : null}
          {wantedUnplaced ? (
            <Status tone="muted">
              <Link to={`/assets/${encodeURIComponent(wantedUnplaced.id)}`}>{wantedUnplaced.name}</Link> has no location recorded, so it is not on the map.
            </Status>
          ) : null}
          <div className="asset-map-layout">
            <div className="asset-map-main">
              {loaded ? (
                <AssetMap assets={loaded.placed} selection={selection} onSelect={select} onVisibleChange={setVisible} tiles={tiles} label={mapLabel} />
              ) : (
                <div className="asset-map asset-map-empty" aria-hidden="true" />
              )}
              <AssetMapLegend withRisk={withRisk} />
            </div>
            {loaded ? <AssetMapList assets={loaded.placed} visible={visible} selectedId={selection?.id ?? null} onShow={show} /> : null}
          </div>
        </section>
      ) : null}
      {loaded && loaded.unplaced.length > 0 ? (
        <section aria-labelledby="unplaced-heading" className="card">
          <h2 id="unplaced-heading">Not on the map</h2>
          <details>
            <summary>
              {formatNumber(loaded.unplaced.length)} asset{loaded.unplaced.length === 1 ? ' has' : 's have'} no location recorded
            </summary>
            <ul className="asset-map-unplaced">
              {loaded.unplaced.map((a) => (
                <li key={a.id}>
                  <Link to={`/assets/${encodeURIComponent(a.id)}`}>{a.name}</Link> <span className="muted">· {humanize(a.type)}</span>
                </li>
              ))}
            </ul>
          </details>
        </section>
      ) : null}
    </>
  );
}
