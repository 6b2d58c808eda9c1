import { pageSize } from '@linepack/lib/pagination';
import { safeText, validateInput } from '@linepack/lib/validation';
import type { AssetResolvers } from '../generated/resolvers-types';
import { selectedConnectionNodeFields, selectedMeasurementFields } from '../selection';

export const Asset: AssetResolvers = {
  __resolveReference: (reference) => ({ id: reference.id }),
  iliRuns: (asset, _args, { ili }) => ili.runsOf(asset.id),
  // Reading only the fields the page's nodes select (selection.ts).
  measurements: (asset, { type, from, to, runId, first, after }, { measurements }, info) =>
    measurements.list(
      // A run id is what recording accepts (runIds are at most 100 characters): anything else matches nothing and is refused.
      { assetId: asset.id, type, from, to, runId: runId == null ? null : validateInput(safeText(100), runId, 'runId') },
      pageSize(first),
      after,
      selectedConnectionNodeFields(info),
    ),
  // Batched (loaders.ts): a page of assets costs one query, reading only the fields selected.
  latestMeasurement: (asset, { type }, { latestMeasurement }, info) =>
    latestMeasurement.load({ assetId: asset.id, type: type ?? null, fields: selectedMeasurementFields(info) }),
};
