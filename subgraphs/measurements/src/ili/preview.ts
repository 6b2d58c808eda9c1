import type { Readable } from 'node:stream';
import { MAPPED_FIELDS, validateMappingProfile, type ValidMappingProfile } from '@linepack/lib/ili/listing';
import { ListingHeaderError, normaliseHeader, parseListing, readListingHeader, type RowError } from '@linepack/lib/ili/parse';
import { invalidInput } from '@linepack/lib/validation';
import type { AssetRefs } from '../asset-refs';
import type { IliProfileView, IliUploadDocument } from './documents';
import type { IliStore } from './store';
import { checkUploadSources, listingFormatOf, needsDimensions, pipeOf } from './upload-checks';

export const MAX_PREVIEW_ROWS = 200;

export interface IliUploadPreview {
  upload: IliUploadDocument;
  profile: IliProfileView;
  header: string[];
  columns: { field: string; column: string; found: boolean }[];
  missingColumns: string[];
  problem: string | null;
  rows: {
    rowNumber: number;
    kind: string;
    logDistanceM: number;
    jointNumber: number | null;
    clockDeg: number | null;
    depthPctWt: number | null;
    lengthMm: number | null;
    widthMm: number | null;
    dentDepthPctOd: number | null;
    vendorFeatureId: string | null;
  }[];
  rejected: { rowNumber: number; column: string | null; rule: string; value: string | null }[];
}

/** The header row, or none when the file cannot be read at all (parseListing's ListingHeaderError then says why). */
async function headerRow(stream: Readable, format: 'csv' | 'xlsx', profile: ValidMappingProfile): Promise<string[]> {
  try {
    return await readListingHeader(stream, format, profile);
  } catch (error) {
    if (error instanceof ListingHeaderError) return [];
    throw error;
  }
}

/**
 * How an upload would be read with a profile, from the start of the stored file only: the header, the profile's
 * columns against it, and the first `rowCount` data rows through the same parseListing the import job uses, so what
 * the preview accepts or rejects is what the import's first pass would.
 */
export async function previewUpload(
  args: { uploadId: string; profileId?: string | null; assetId?: string | null; rows?: number | null },
  { ili, assetRefs }: { ili: IliStore; assetRefs: AssetRefs | null },
): Promise<IliUploadPreview> {
  const violations: { field: string; message: string }[] = [];
  const rowCount = args.rows ?? 20;
  if (!Number.isInteger(rowCount) || rowCount < 1 || rowCount > MAX_PREVIEW_ROWS) violations.push({ field: 'rows', message: `must be 1–${MAX_PREVIEW_ROWS}` });
  const { upload, profile, dimensions } = await checkUploadSources(
    { uploadId: args.uploadId, profileId: args.profileId, assetId: args.assetId || null },
    { ili, assetRefs },
    '',
    violations,
  );
  if (violations.length > 0 || !upload || !profile) throw invalidInput(violations);

  const definition = validateMappingProfile(profile.definition);
  const format = listingFormatOf(upload);
  const header = await headerRow(ili.fileStream(upload), format, definition);
  const present = new Set(header.filter((cell) => cell !== '').map(normaliseHeader));
  const columns = MAPPED_FIELDS.flatMap((field) => {
    const column = definition.columns[field];
    return column === undefined ? [] : [{ field, column, found: present.has(normaliseHeader(column)) }];
  });
  const preview: IliUploadPreview = {
    upload,
    profile,
    header,
    columns,
    missingColumns: columns.filter((c) => !c.found).map((c) => c.column),
    problem: null,
    rows: [],
    rejected: [],
  };
  // As at startIliImport: a depth in mm or inches without the pipe's dimensions cannot be a % of wall.
  const depthsNeedPipe = needsDimensions(definition);
  if (depthsNeedPipe && (dimensions?.wallThicknessMm == null || dimensions.outsideDiameterMm == null))
    preview.problem = 'the profile gives depths in mm or inches: name an asset with wallThicknessMm and outsideDiameterMm to convert them';
  const pipe = pipeOf(dimensions);
  try {
    // One batch of rowCount rows, then the generator is left: its finally destroys the stream, so no further part is read.
    for await (const batch of parseListing(ili.fileStream(upload), format, definition, pipe, { batchSize: rowCount })) {
      preview.rows = batch.rows.map((row) => ({
        rowNumber: row.rowNumber,
        kind: row.kind,
        logDistanceM: row.logDistanceM,
        jointNumber: row.jointNumber,
        clockDeg: row.clockDeg,
        depthPctWt: depthsNeedPipe && preview.problem ? null : row.depthPctWt,
        lengthMm: row.lengthMm,
        widthMm: row.widthMm,
        dentDepthPctOd: depthsNeedPipe && preview.problem ? null : row.dentDepthPctOd,
        vendorFeatureId: row.vendorFeatureId,
      }));
      preview.rejected = batch.rejected.map(rowError);
      break;
    }
  } catch (error) {
    if (!(error instanceof ListingHeaderError)) throw error;
    preview.problem = error.message;
  }
  return preview;
}

/** A listing's rejected cell as a job or preview reports it (the value as text). */
export const rowError = (e: RowError) => ({ rowNumber: e.rowNumber, column: e.column, rule: e.rule, value: e.value == null ? null : String(e.value) });
