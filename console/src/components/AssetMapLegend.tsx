import { lineWeight, NO_RISK_COLOUR, NO_RISK_DASH, RISK_BANDS, SymbolSwatch, type PointSymbol } from './AssetMap';

function LineSwatch({ colour, weight = 4, dashed = false }: { colour: string; weight?: number; dashed?: boolean }) {
  return (
    <svg className="asset-line-swatch" viewBox="0 0 36 14" width="36" height="14" aria-hidden="true" focusable="false">
      <line x1="2" y1="7" x2="34" y2="7" stroke={colour} strokeWidth={weight} strokeDasharray={dashed ? NO_RISK_DASH : undefined} />
    </svg>
  );
}

const points: { symbol: PointSymbol; label: string }[] = [
  { symbol: 'valve', label: 'Valve' },
  { symbol: 'rectifier', label: 'Rectifier' },
  { symbol: 'test-point', label: 'CP test point' },
  { symbol: 'other', label: 'Other component or station' },
];

/** What the colours, widths and symbols mean; the words are the legend, the swatches only repeat the map's marks. */
export function AssetMapLegend({ withRisk }: { withRisk: boolean }) {
  return (
    <div className="asset-map-legend">
      <h2 className="visually-hidden">Legend</h2>
      {withRisk ? (
        <ul className="legend-list" aria-label="Lines: risk band">
          {RISK_BANDS.map((b) => (
            <li key={b.band}>
              <LineSwatch colour={b.colour} />
              {b.label}
            </li>
          ))}
          <li>
            <LineSwatch colour={NO_RISK_COLOUR} dashed />
            No risk result
          </li>
        </ul>
      ) : (
        <p className="table-note">Lines are not coloured by risk: that needs the analytics:read scope.</p>
      )}
      <ul className="legend-list" aria-label="Line widths and point symbols">
        <li>
          <LineSwatch colour={NO_RISK_COLOUR} weight={lineWeight('PIPELINE')} />
          Pipeline (under its segments)
        </li>
        <li>
          <LineSwatch colour={NO_RISK_COLOUR} weight={lineWeight('SEGMENT')} />
          Segment
        </li>
        {points.map((p) => (
          <li key={p.symbol}>
            <SymbolSwatch symbol={p.symbol} />
            {p.label}
          </li>
        ))}
      </ul>
    </div>
  );
}
