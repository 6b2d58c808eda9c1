import type { Db } from 'mongodb';
import { ensureOutboxIndex, type OutboxEntry } from '@linepack/lib/events/outbox';
import type { IliEventKind } from '@linepack/lib/ili/listing';
import type { JobDocument } from '@linepack/lib/jobs';
import type { Connection } from '@linepack/lib/pagination';
import type { TenantDocument } from '@linepack/lib/tenant-collection';
import type { IliImportCheckpoint, IliImportInput } from './import-job';

/**
 * The ILI programme's records in the measurements database: runs, their pipe tally, uploaded listing files and the
 * tenant's mapping profiles. A run's features are ILI_ANOMALY measurements with the run's id as `runId` (they are
 * observations like any other, delivered on measurement.recorded to analytics and compliance); the tally is kept
 * beside them because only the run's own views (alignment, dig sheets) read it.
 */
export const ILI_COLLECTIONS = {
  runs: 'ili_runs',
  tally: 'ili_tally',
  uploads: 'ili_uploads',
  uploadParts: 'ili_upload_parts',
  profiles: 'ili_profiles',
} as const;

export type IliRunStatus = 'IMPORTING' | 'COMPLETE' | 'FAILED';
export type IliToolTechnology = 'MFL' | 'TFI' | 'UT' | 'UTCD' | 'EMAT' | 'CALIPER' | 'IMU';
export type IliListingFormat = 'CSV' | 'XLSX';

export interface IliRunDocument extends TenantDocument {
  _id: string;
  assetId: string;
  vendor: string;
  toolTechnologies: IliToolTechnology[];
  runDate: Date;
  toolTolerancePctWt: number | null;
  certaintyPct: number;
  discoveredAt: Date;
  status: IliRunStatus;
  featureCount: number;
  tallyItemCount: number;
  girthWeldCount: number;
  importId: string;
  createdAt: Date;
  /** ili.run.started / ili.run.imported, until the relay has published them (analytics compares runs from them). */
  outbox?: OutboxEntry[];
}

export interface IliTallyDocument extends TenantDocument {
  /** `<runId>:<rowNumber>`: writing a chunk again (a resumed import) stores nothing twice. */
  _id: string;
  runId: string;
  kind: IliEventKind;
  logDistanceM: number;
  jointNumber: number | null;
  jointLengthM: number | null;
  wallThicknessMm: number | null;
  name: string | null;
  rowNumber: number;
}

export interface IliUploadDocument extends TenantDocument {
  _id: string;
  fileName: string;
  format: IliListingFormat;
  sizeBytes: number;
  sha256: string;
  receivedBytes: number;
  receivedParts: number;
  createdAt: Date;
}

export interface IliUploadPartDocument extends TenantDocument {
  /** `<uploadId>:<index>`. */
  _id: string;
  uploadId: string;
  index: number;
  data: Buffer;
  sha256: string;
}

export interface IliProfileDocument extends TenantDocument {
  _id: string;
  name: string;
  vendor: string;
  definition: Record<string, unknown>;
  updatedAt: Date;
}

export async function ensureIliIndexes(db: Db): Promise<void> {
  await db.collection(ILI_COLLECTIONS.runs).createIndex({ tenantId: 1, assetId: 1, runDate: -1 }, { name: 'tenant_asset_run_date' });
  await ensureOutboxIndex(db.collection<IliRunDocument>(ILI_COLLECTIONS.runs));
  await db.collection(ILI_COLLECTIONS.tally).createIndex({ tenantId: 1, runId: 1, logDistanceM: 1 }, { name: 'tenant_run_distance' });
  // A feature's location (ili/location.ts): the nearest girth weld or marker before or after a log distance on one run.
  await db.collection(ILI_COLLECTIONS.tally).createIndex({ tenantId: 1, runId: 1, kind: 1, logDistanceM: 1 }, { name: 'tenant_run_kind_distance' });
  await db.collection(ILI_COLLECTIONS.uploadParts).createIndex({ tenantId: 1, uploadId: 1, index: 1 }, { name: 'tenant_upload_index' });
  await db.collection(ILI_COLLECTIONS.profiles).createIndex({ tenantId: 1, name: 1 }, { unique: true, name: 'tenant_name' });
}

export type IliImportJob = JobDocument<IliImportInput, IliImportCheckpoint>;
export type IliTallyPage = Connection<IliTallyDocument>;
export interface IliProfileView {
  id: string;
  name: string;
  vendor: string | null;
  definition: Record<string, unknown>;
}

/** The tally kinds run alignment reads: girth welds (the joint-length fingerprint), wall changes and the named anchors. */
export const ALIGNMENT_TALLY_KINDS: readonly IliEventKind[] = ['GIRTH_WELD', 'WALL_THICKNESS_CHANGE', 'REFERENCE_MARKER', 'VALVE', 'TEE', 'FLANGE'];

/** The run as its events describe it (../events.ts iliRunStartedData). */
export function iliRunEventFields(run: Pick<IliRunDocument, '_id' | 'assetId' | 'runDate' | 'discoveredAt' | 'toolTolerancePctWt' | 'certaintyPct'>) {
  return {
    id: run._id,
    assetId: run.assetId,
    runDate: run.runDate,
    discoveredAt: run.discoveredAt,
    toolTolerancePctWt: run.toolTolerancePctWt,
    certaintyPct: run.certaintyPct,
  };
}
