import { useEffect, useMemo, useRef, useState } from 'react';
import { createPortal } from 'react-dom';
import * as L from 'leaflet';
import 'leaflet/dist/leaflet.css';
import { Badge } from './Badge';
import { formatNumber, humanize } from '../format';
import { Link } from '../router';

/** An asset as the map reads it: only the fields it draws and names. */
export interface MapAsset {
  id: string;
  name: string;
  type: string;
  status: string;
  /** The GeoJSON scalar as the API sends it (RFC 7946 Point or LineString, [longitude, latitude(, elevation)]). */
  location: unknown;
  /** Absent without analytics:read; null when analytics has no result for the asset (only pipe has one). */
  risk?: { band: string; score: number } | null;
}

export type Shape = { kind: 'line'; latLngs: L.LatLngTuple[] } | { kind: 'point'; latLng: L.LatLngTuple };

/** An asset with a location the map can draw. */
export interface PlacedAsset extends MapAsset {
  shape: Shape;
  bounds: L.LatLngBounds;
}

/** Raster tiles the operator configured (CONSOLE_MAP_TILE_URL), handed to the page by the gateway in <meta> tags. */
export interface MapTiles {
  url: string;
  attribution: string | null;
}

export function configuredTiles(): MapTiles | null {
  const url = document.querySelector<HTMLMetaElement>('meta[name="linepack-map-tiles"]')?.content;
  if (!url || !/^https?:\/\//.test(url)) return null;
  return { url, attribution: document.querySelector<HTMLMetaElement>('meta[name="linepack-map-attribution"]')?.content || null };
}

function position(value: unknown): L.LatLngTuple | null {
  if (!Array.isArray(value) || value.length < 2) return null;
  const [lng, lat] = value as unknown[];
  if (typeof lng !== 'number' || typeof lat !== 'number' || !Number.isFinite(lng) || !Number.isFinite(lat)) return null;
  if (Math.abs(lng) > 180 || Math.abs(lat) > 90) return null;
  // GeoJSON is [longitude, latitude]; Leaflet wants [latitude, longitude]. Elevation is not drawn.
  return [lat, lng];
}

/** The asset's shape from its GeoJSON, or null when it has none the map can draw (the API accepts only these two). */
export function shapeOf(location: unknown): Shape | null {
  if (!location || typeof location !== 'object') return null;
  const { type, coordinates } = location as { type?: unknown; coordinates?: unknown };
  if (type === 'Point') {
    const latLng = position(coordinates);
    return latLng ? { kind: 'point', latLng } : null;
  }
  if (type === 'LineString' && Array.isArray(coordinates)) {
    const latLngs = coordinates.map(position);
    if (latLngs.length < 2 || latLngs.some((p) => p === null)) return null;
    return { kind: 'line', latLngs: latLngs as L.LatLngTuple[] };
  }
  return null;
}

export function placed(asset: MapAsset): PlacedAsset | null {
  const shape = shapeOf(asset.location);
  if (!shape) return null;
  const bounds = shape.kind === 'line' ? L.latLngBounds(shape.latLngs) : L.latLngBounds([shape.latLng, shape.latLng]);
  return { ...asset, shape, bounds };
}

/**
 * Risk band colours, low to very high: blue to dark red varies in lightness as well as hue, so the bands stay apart
 * for colour-blind readers, and each keeps at least 4:1 against the map's background (WCAG 1.4.11 asks 3:1 of
 * graphics). Lines without a risk result are dashed as well as grey: colour is never the only cue.
 */
export const RISK_BANDS = [
  { band: 'LOW', label: 'Low (score 1–4)', colour: '#2b6cb0' },
  { band: 'MEDIUM', label: 'Medium (5–9)', colour: '#a15c00' },
  { band: 'HIGH', label: 'High (10–14)', colour: '#d0361a' },
  { band: 'VERY_HIGH', label: 'Very high (15–25)', colour: '#7a0a2a' },
] as const;
export const NO_RISK_COLOUR = '#5f6b7a';
export const NO_RISK_DASH = '6 6';
/** The page's focus colour, for the selected asset's halo. */
const HALO_COLOUR = '#1a73e8';

export function riskColour(asset: MapAsset): string {
  return RISK_BANDS.find((b) => b.band === asset.risk?.band)?.colour ?? NO_RISK_COLOUR;
}

/** A pipeline is drawn wide under its segments, so both show where a tenant recorded both routes. */
export function lineWeight(type: string): number {
  return type === 'PIPELINE' ? 9 : 4;
}

/** Point symbols by asset type: a valve's bow tie (as on a P&ID), a rectifier's square, a test point's circle. */
export type PointSymbol = 'valve' | 'rectifier' | 'test-point' | 'other';
export function pointSymbol(type: string): PointSymbol {
  if (type === 'VALVE') return 'valve';
  if (type === 'RECTIFIER') return 'rectifier';
  if (type === 'CP_TEST_POINT') return 'test-point';
  return 'other';
}

const symbolPaths: Record<PointSymbol, string> = {
  valve: '<path d="M3 4 L11 11 L3 18 Z M19 4 L11 11 L19 18 Z" />',
  rectifier: '<rect x="4" y="4" width="14" height="14" rx="1" />',
  'test-point': '<circle cx="11" cy="11" r="7" />',
  other: '<path d="M11 2 L20 11 L11 20 L2 11 Z" />',
};

/** The symbol as SVG markup (a fixed string: no asset data goes into it). */
export function symbolSvg(symbol: PointSymbol): string {
  return `<svg viewBox="0 0 22 22" width="22" height="22" aria-hidden="true" focusable="false" class="asset-symbol">${symbolPaths[symbol]}</svg>`;
}

/** The same symbol for the legend and the list. */
export function SymbolSwatch({ symbol }: { symbol: PointSymbol }) {
  return <span className="asset-symbol-swatch" aria-hidden="true" dangerouslySetInnerHTML={{ __html: symbolSvg(symbol) }} />;
}

/**
 * Where the popup of a line opens when it was chosen from the list, not clicked: halfway along it (in degrees, which
 * is close enough over the length of one line to place a popup).
 */
function anchorOf(asset: PlacedAsset): L.LatLngTuple {
  if (asset.shape.kind === 'point') return asset.shape.latLng;
  const points = asset.shape.latLngs;
  const legs = points.slice(1).map((p, i) => Math.hypot(p[0] - points[i]![0], p[1] - points[i]![1]));
  let remaining = legs.reduce((sum, leg) => sum + leg, 0) / 2;
  for (let i = 0; i < legs.length; i++) {
    const leg = legs[i]!;
    if (remaining <= leg && leg > 0) {
      const [a, b] = [points[i]!, points[i + 1]!];
      const t = remaining / leg;
      return [a[0] + (b[0] - a[0]) * t, a[1] + (b[1] - a[1]) * t];
    }
    remaining -= leg;
  }
  return points[0]!;
}

export interface MapSelection {
  id: string;
  /** Fit the view to the asset (chosen from the list or the address), or leave it (clicked on the map). */
  fit: boolean;
  /** Where it was clicked, for the popup. */
  at?: L.LatLng;
}

function AssetSummary({ asset }: { asset: PlacedAsset }) {
  return (
    <div className="asset-map-popup">
      <p className="asset-map-popup-name">
        <Link to={`/assets/${encodeURIComponent(asset.id)}`}>{asset.name}</Link>
      </p>
      <p>
        {humanize(asset.type)} · {humanize(asset.status)}
      </p>
      {asset.risk !== undefined ? (
        <p>
          Risk:{' '}
          {asset.risk ? (
            <>
              <Badge value={asset.risk.band} /> score {formatNumber(asset.risk.score)}
            </>
          ) : (
            'no result'
          )}
        </p>
      ) : null}
    </div>
  );
}

/**
 * The tenant's assets on a Leaflet map: lines coloured by risk band, points by type. With no tiles configured nothing
 * is requested from anywhere (a plain background and a scale bar); with tiles, only from the configured server.
 * Each drawn feature carries data-asset-id, and the selected one the class asset-selected.
 */
export function AssetMap({
  assets,
  selection,
  onSelect,
  onVisibleChange,
  tiles,
  label,
}: {
  assets: PlacedAsset[];
  selection: MapSelection | null;
  onSelect(selection: MapSelection | null): void;
  onVisibleChange(ids: Set<string>): void;
  tiles: MapTiles | null;
  label: string;
}) {
  const box = useRef<HTMLDivElement>(null);
  const [map, setMap] = useState<L.Map | null>(null);
  const layers = useRef(new Map<string, L.Path | L.Marker>());
  const popupContent = useMemo(() => document.createElement('div'), []);
  const popup = useMemo(() => L.popup({ maxWidth: 280, autoPanPadding: [16, 16] }).setContent(popupContent), [popupContent]);
  const callbacks = useRef({ onSelect, onVisibleChange });
  callbacks.current = { onSelect, onVisibleChange };
  const selectedId = selection?.id ?? null;
  const selectedRef = useRef(selectedId);
  selectedRef.current = selectedId;

  useEffect(() => {
    const element = box.current;
    if (!element) return;
    const still = window.matchMedia('(prefers-reduced-motion: reduce)').matches;
    const created = L.map(element, {
      zoomControl: true,
      attributionControl: false,
      maxZoom: 19,
      minZoom: 2,
      fadeAnimation: !still,
      zoomAnimation: !still,
      markerZoomAnimation: !still,
    });
    // The map box is one tab stop (arrow keys pan, + and − zoom); it is named for screen readers.
    element.setAttribute('role', 'region');
    element.setAttribute('aria-roledescription', 'map');
    L.control.scale({ metric: true, imperial: true, position: 'bottomleft' }).addTo(created);
    if (tiles) {
      L.tileLayer(tiles.url, { maxZoom: 19 }).addTo(created);
      const credit = L.control.attribution({ prefix: false }).addTo(created);
      // Leaflet writes attributions as HTML: the operator's text is shown as text.
      if (tiles.attribution) credit.addAttribution(escapeHtml(tiles.attribution));
    }
    created.createPane('assetHalo').style.zIndex = '350';
    created.on('popupclose', () => {
      if (selectedRef.current !== null) callbacks.current.onSelect(null);
    });
    const observer = new ResizeObserver(() => created.invalidateSize());
    observer.observe(element);
    setMap(created);
    return () => {
      observer.disconnect();
      // Removing the map closes its popup: that is the page going away, not the reader closing it.
      created.off('popupclose');
      created.remove();
      setMap(null);
    };
  }, [tiles]);

  useEffect(() => {
    box.current?.setAttribute('aria-label', label);
  }, [label]);

  // The features: pipelines first (underneath), then the other lines, then the points (their own pane, on top).
  useEffect(() => {
    if (!map) return;
    const group = L.featureGroup().addTo(map);
    const drawn = layers.current;
    drawn.clear();
    const order = (a: PlacedAsset) => (a.shape.kind === 'point' ? 2 : a.type === 'PIPELINE' ? 0 : 1);
    for (const asset of [...assets].sort((a, b) => order(a) - order(b))) {
      let layer: L.Path | L.Marker;
      if (asset.shape.kind === 'line') {
        const known = asset.risk !== undefined && asset.risk !== null;
        layer = L.polyline(asset.shape.latLngs, {
          color: riskColour(asset),
          weight: lineWeight(asset.type),
          opacity: 1,
          dashArray: known ? undefined : NO_RISK_DASH,
          lineCap: 'butt',
          className: `asset-feature asset-line asset-line-${asset.type.toLowerCase()}`,
        });
      } else {
        const symbol = pointSymbol(asset.type);
        layer = L.marker(asset.shape.latLng, {
          // The list beside the map is the keyboard's way to every asset; hundreds of markers would be as many tab stops.
          keyboard: false,
          icon: L.divIcon({ className: `asset-feature asset-point asset-point-${symbol}`, html: symbolSvg(symbol), iconSize: [22, 22], iconAnchor: [11, 11] }),
        });
      }
      layer.on('click', (event: L.LeafletMouseEvent) => {
        L.DomEvent.stopPropagation(event);
        callbacks.current.onSelect({ id: asset.id, fit: false, at: event.latlng });
      });
      // Leaflet creates the element when the layer reaches the map, which waits for the map's first view.
      layer.on('add', () => layer.getElement()?.setAttribute('data-asset-id', asset.id));
      layer.addTo(group);
      drawn.set(asset.id, layer);
    }
    const report = () => {
      const view = map.getBounds();
      callbacks.current.onVisibleChange(new Set(assets.filter((a) => view.intersects(a.bounds)).map((a) => a.id)));
    };
    map.on('moveend', report);
    // The first view: the asset the address names, else every asset drawn.
    const focus = assets.find((a) => a.id === selectedRef.current);
    if (focus) map.fitBounds(focus.bounds, { padding: [32, 32], maxZoom: 17 });
    else if (assets.length > 0)
      map.fitBounds(
        assets.reduce((all, a) => all.extend(a.bounds), L.latLngBounds([])),
        { padding: [24, 24], maxZoom: 14 },
      );
    else map.setView([20, 0], 2);
    report();
    return () => {
      map.off('moveend', report);
      group.remove();
      drawn.clear();
    };
  }, [map, assets]);

  // The selected asset: a halo under it, its class, the view fitted to it when asked, its popup.
  const selectedAsset = selection ? (assets.find((a) => a.id === selection.id) ?? null) : null;
  useEffect(() => {
    if (!map || !selection || !selectedAsset) {
      map?.closePopup(popup);
      return;
    }
    const halo =
      selectedAsset.shape.kind === 'line'
        ? L.polyline(selectedAsset.shape.latLngs, {
            pane: 'assetHalo',
            color: HALO_COLOUR,
            weight: lineWeight(selectedAsset.type) + 10,
            opacity: 0.45,
            interactive: false,
          })
        : L.circleMarker(selectedAsset.shape.latLng, {
            pane: 'assetHalo',
            radius: 17,
            color: HALO_COLOUR,
            weight: 3,
            fillColor: HALO_COLOUR,
            fillOpacity: 0.25,
            interactive: false,
          });
    halo.addTo(map);
    const element = layers.current.get(selectedAsset.id)?.getElement();
    element?.classList.add('asset-selected');
    if (selection.fit) {
      if (selectedAsset.shape.kind === 'point') map.setView(selectedAsset.shape.latLng, Math.max(map.getZoom(), 14));
      else map.fitBounds(selectedAsset.bounds, { padding: [32, 32], maxZoom: 17 });
    }
    popup.setLatLng(selection.at ?? anchorOf(selectedAsset)).openOn(map);
    return () => {
      halo.remove();
      element?.classList.remove('asset-selected');
    };
  }, [map, selection, selectedAsset, popup]);

  return (
    <>
      <div ref={box} className="asset-map" />
      {selectedAsset ? createPortal(<AssetSummary asset={selectedAsset} />, popupContent) : null}
    </>
  );
}

function escapeHtml(text: string): string {
  return text.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}
