import type { OutboxEntry } from '@linepack/lib/events/outbox';
import type { Connection } from '@linepack/lib/pagination';
import type { TenantDocument } from '@linepack/lib/tenant-collection';

export type AssetType = 'SYSTEM' | 'PIPELINE' | 'SEGMENT' | 'VALVE' | 'FITTING' | 'LAUNCHER_RECEIVER' | 'CP_TEST_POINT' | 'RECTIFIER' | 'STATION';
export type AssetStatus = 'PLANNED' | 'ACTIVE' | 'IDLE' | 'ABANDONED';
export type Product = 'NATURAL_GAS' | 'CRUDE_OIL' | 'REFINED_PRODUCTS' | 'NGL' | 'CO2' | 'HYDROGEN';
export type Regulation = 'CFR_192' | 'CFR_195';

export type GeoJsonGeometry =
  | { type: 'Point'; coordinates: [number, number] | [number, number, number] }
  | { type: 'LineString'; coordinates: ([number, number] | [number, number, number])[] };

/** An asset as stored in the assets database (collection `assets`). */
export interface AssetDocument extends TenantDocument {
  _id: string;
  type: AssetType;
  name: string;
  /** Lower-cased name: serves case-insensitive search from an index. */
  nameLower: string;
  parentId: string | null;
  status: AssetStatus;
  product: Product | null;
  regulation: Regulation | null;
  beginStationM: number | null;
  endStationM: number | null;
  outsideDiameterMm: number | null;
  wallThicknessMm: number | null;
  smysMpa: number | null;
  maopKpa: number | null;
  classLocation: number | null;
  inHca: boolean;
  /** Part 195: the segment could affect a high consequence area (§195.452(a)); null = not assessed. */
  couldAffectHca?: boolean | null;
  /** Under cathodic protection (§192.463 / §195.571); null = not recorded. */
  cathodicallyProtected?: boolean | null;
  /** Pipe exposed to the atmosphere (§192.479 / §195.581); null = not recorded. */
  atmosphericExposure?: boolean | null;
  /** Offshore (§192.3 / §195.2), which sets the atmospheric-corrosion interval; null = not recorded. */
  offshore?: boolean | null;
  /** Gas odorized per §192.625, which sets the class 3/4 leakage-survey interval; null = not recorded. */
  gasOdorized?: boolean | null;
  /** At a highway or railroad crossing (§192.705(b)); null = none. */
  crossing?: 'HIGHWAY' | 'RAILROAD' | null;
  /** Specified minimum tensile strength; needed for the (SMYS + SMTS)/2 flow stress. */
  smtsMpa?: number | null;
  location: GeoJsonGeometry | null;
  installedAt: Date | null;
  version: number;
  createdAt: Date;
  updatedAt: Date;
  /**
   * Set when createAsset named an idempotencyKey: `scope` is the tenant id and the key (`<tenantId>/<key>`, unique:
   * tenant_idempotency_key), `inputDigest` the SHA-256 of the validated input it was created from.
   */
  idempotency?: { scope: string; inputDigest: string };
  /** Domain events written with this change, until the relay has published them. */
  outbox?: OutboxEntry[];
}

export { ASSET_UPSERTED } from './events';

/** The body of an asset.upserted event: the asset as of that version (what consumers project). */
export function assetEventData(asset: Omit<AssetDocument, 'outbox'>): Record<string, unknown> {
  const { _id, nameLower: _nameLower, outbox: _outbox, idempotency: _idempotency, ...fields } = asset as AssetDocument;
  return { id: _id, ...fields };
}

/** PipelineSummary is keyed by tenant; this subgraph resolves its fields from that key alone. */
export interface PipelineSummaryParent {
  tenantId: string;
}

/**
 * A page of assets as the resolvers see it: the total is counted only when the selection reads `totalCount`
 * (resolvers/AssetConnection.ts), so a page read for its rows alone — the gateway's fetch for a list of assets with
 * their measurements — costs one query, not two.
 */
export interface AssetPage extends Omit<Connection<AssetDocument>, 'totalCount'> {
  count(): Promise<number>;
}
