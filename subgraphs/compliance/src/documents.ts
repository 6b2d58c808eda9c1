import type { TenantDocument } from '@linepack/lib/tenant-collection';

/**
 * The compliance database (`<prefix>_compliance`), fed by domain events: what compliance keeps of
 * each asset, the evidence (inspection records and the measurements that count as completions), and
 * one status row per (asset, obligation) materialised for fast tenant-wide lists.
 */
export type ComplianceState = 'OK' | 'DUE_SOON' | 'OVERDUE' | 'NO_RECORD' | 'NOT_EVALUATED' | 'NOT_IN_SERVICE';
/** The states a status row can be in (rows exist only for assets in service that compliance has received). */
export const ROW_STATES = ['OK', 'DUE_SOON', 'OVERDUE', 'NO_RECORD'] as const satisfies readonly ComplianceState[];
export type RegulationCode = 'CFR_192' | 'CFR_195';

/** An asset as compliance needs it (from `asset.upserted`): what decides which obligations apply. */
export interface AssetProjection extends TenantDocument {
  _id: string;
  version: number;
  type: string;
  name: string;
  parentId: string | null;
  status: string;
  regulation: RegulationCode | null;
  classLocation: number | null;
  inHca: boolean;
  couldAffectHca: boolean | null;
  cathodicallyProtected: boolean | null;
  atmosphericExposure: boolean | null;
  /** Absent in projections written before assets recorded it (read as unknown). */
  offshore?: boolean | null;
  gasOdorized?: boolean | null;
  crossing: 'HIGHWAY' | 'RAILROAD' | null;
  sourceEventId: string;
}

/** A recorded completion (from `measurement.recorded` of an evidence type); it never changes. */
export interface EvidenceProjection extends TenantDocument {
  _id: string;
  assetId: string;
  type: string;
  observedAt: Date;
  sourceEventId: string;
}

/**
 * One (asset, obligation) row, evaluated when its inputs last changed. `dueAt` holds for any `asOf`
 * from `lastEvidenceAt` on (the state follows from it and `asOf`); earlier instants are evaluated from
 * the evidence on the fly.
 */
export interface StatusRow extends TenantDocument {
  /** `<assetId>:<obligation>` */
  _id: string;
  assetId: string;
  obligation: string;
  regulation: RegulationCode;
  lastCompletedAt: Date | null;
  /** The last on-time calendar day in the tenant's time zone, stored as 00:00Z of that date (see domain/calendar). */
  dueAt: Date | null;
  /** The newest evidence considered (null: none). */
  lastEvidenceAt: Date | null;
  computedAt: Date;
}

export const COMPLIANCE_COLLECTIONS = {
  assets: 'assets',
  evidence: 'evidence',
  status: 'status',
} as const;

/**
 * The tenants' settings: not a projection of events, so outside COMPLIANCE_COLLECTIONS (which a
 * rebuild drops and replays).
 */
export const COMPLIANCE_SETTINGS_COLLECTION = 'settings';

/** One tenant's compliance settings; absent fields have their defaults. */
export interface ComplianceSettingsDocument {
  /** The tenant id. */
  _id: string;
  /** IANA zone, canonical (domain/calendar canonicalTimeZone). */
  timeZone?: string;
}

/** PipelineSummary is keyed by tenant; compliance resolves its part from that key alone. */
export interface SummaryParent {
  tenantId: string;
}

/** The assets subgraph owns Asset; here it is only its key. */
export interface AssetReference {
  id: string;
}
