import type { ValidMappingProfile } from '@linepack/lib/ili/listing';
import type { ListingFormat, PipeDimensions } from '@linepack/lib/ili/parse';
import type { Violation } from '@linepack/lib/validation';
import type { AssetRefs } from '../asset-refs';
import type { IliProfileView, IliUploadDocument } from './documents';
import type { IliStore } from './store';

/** An asset's pipe dimensions as AssetRefs gives them. */
export type AssetDimensions = Awaited<ReturnType<AssetRefs['dimensions']>>;

/** Why an upload whose parts have not all arrived cannot be read yet. */
export const incompleteUpload = (upload: IliUploadDocument): string =>
  `the upload has ${upload.receivedBytes} of its ${upload.sizeBytes} bytes; send the remaining parts first`;

/**
 * The upload, the mapping profile and the asset that startIliImport and previewUpload name, read and checked the same
 * way: each one missing (or the upload incomplete) is a violation of `${prefix}uploadId`, `${prefix}profileId` or
 * `${prefix}assetId`, pushed in that order. The asset is looked up only when `assetId` is not null and assetRefs exist.
 */
export async function checkUploadSources(
  args: { uploadId: string; profileId?: string | null; assetId: string | null },
  { ili, assetRefs }: { ili: IliStore; assetRefs: AssetRefs | null },
  prefix: string,
  violations: Violation[],
): Promise<{ upload: IliUploadDocument | null; profile: IliProfileView | null; dimensions: AssetDimensions }> {
  const upload = await ili.upload(args.uploadId);
  if (!upload) violations.push({ field: `${prefix}uploadId`, message: 'no upload with this id in your tenant' });
  else if (upload.receivedBytes !== upload.sizeBytes) violations.push({ field: `${prefix}uploadId`, message: incompleteUpload(upload) });
  const profile = await ili.profile(args.profileId);
  if (!profile) violations.push({ field: `${prefix}profileId`, message: 'no mapping profile with this id in your tenant' });
  const dimensions = args.assetId !== null && assetRefs ? await assetRefs.dimensions(ili.tenantId, args.assetId) : null;
  if (args.assetId !== null && assetRefs && !dimensions) violations.push({ field: `${prefix}assetId`, message: 'no asset with this id in your tenant' });
  return { upload, profile, dimensions };
}

/** Depths in mm or inches are turned into % of wall / % of OD with the pipe's dimensions; in % they are not needed. */
export const needsDimensions = (definition: ValidMappingProfile): boolean => definition.units.depth !== 'PCT_WT' || definition.units.dentDepth !== 'PCT_OD';

/** The pipe a listing is read with: placeholders of 1 where the asset has no dimensions (used only when !needsDimensions). */
export const pipeOf = (dimensions: AssetDimensions): PipeDimensions => ({
  wallThicknessMm: dimensions?.wallThicknessMm ?? 1,
  outsideDiameterMm: dimensions?.outsideDiameterMm ?? 1,
});

/** The stored upload's format as parseListing names it. */
export const listingFormatOf = (upload: IliUploadDocument): ListingFormat => (upload.format === 'CSV' ? 'csv' : 'xlsx');
