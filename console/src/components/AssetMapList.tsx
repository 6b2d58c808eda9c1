import { Badge } from './Badge';
import { formatNumber, humanize } from '../format';
import { Link } from '../router';
import { NO_RISK_COLOUR, NO_RISK_DASH, pointSymbol, riskColour, SymbolSwatch, type PlacedAsset } from './AssetMap';

function Mark({ asset }: { asset: PlacedAsset }) {
  if (asset.shape.kind === 'point') return <SymbolSwatch symbol={pointSymbol(asset.type)} />;
  const colour = riskColour(asset);
  return (
    <svg className="asset-line-swatch" viewBox="0 0 24 14" width="24" height="14" aria-hidden="true" focusable="false">
      <line x1="2" y1="7" x2="22" y2="7" stroke={colour} strokeWidth={4} strokeDasharray={colour === NO_RISK_COLOUR ? NO_RISK_DASH : undefined} />
    </svg>
  );
}

/** Highest risk first, then by name: the list a reader works down. */
function byRiskThenName(a: PlacedAsset, b: PlacedAsset): number {
  return (b.risk?.score ?? -1) - (a.risk?.score ?? -1) || a.name.localeCompare(b.name) || a.id.localeCompare(b.id);
}

/**
 * The assets in the map's view as a list: the way to every drawn asset by keyboard and screen reader (each links to
 * its page, and "Show" selects it on the map), and the same facts as the map in words.
 */
export function AssetMapList({
  assets,
  visible,
  selectedId,
  onShow,
}: {
  assets: PlacedAsset[];
  visible: Set<string>;
  selectedId: string | null;
  onShow(id: string): void;
}) {
  const inView = assets.filter((a) => visible.has(a.id)).sort(byRiskThenName);
  return (
    <section className="asset-map-list" aria-labelledby="map-list-heading">
      <h2 id="map-list-heading">In view</h2>
      <p className="table-note" role="status" aria-live="polite">
        {formatNumber(inView.length)} of {formatNumber(assets.length)} mapped assets in view
      </p>
      {inView.length > 0 ? (
        <ul className="asset-map-items" aria-label="Assets in view">
          {inView.map((a) => (
            <li key={a.id} className={a.id === selectedId ? 'selected' : undefined}>
              <Mark asset={a} />
              <span className="asset-map-item-text">
                <Link to={`/assets/${encodeURIComponent(a.id)}`}>{a.name}</Link>
                <span className="muted">
                  {' '}
                  · {humanize(a.type)}
                  {a.risk ? (
                    <>
                      {' · '}
                      <Badge value={a.risk.band} />
                    </>
                  ) : null}
                </span>
              </span>
              <button
                type="button"
                className="button button-small"
                aria-label={`Show ${a.name} on the map`}
                aria-pressed={a.id === selectedId}
                onClick={() => onShow(a.id)}
              >
                Show
              </button>
            </li>
          ))}
        </ul>
      ) : (
        <p className="status status-muted">Nothing drawn in this part of the map: zoom out or move it.</p>
      )}
    </section>
  );
}
