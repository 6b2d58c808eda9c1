import { pageSize } from '@linepack/lib/pagination';
import type { AssetResolvers } from '../generated/resolvers-types';
import { selectedMeasurementFields } from '../selection';

export const Asset: AssetResolvers = {
  __resolveReference: (reference) => ({ id: reference.id }),
  iliRuns: (asset, _args, { ili }) => ili.runsOf(asset.id),
  measurements: (asset, { type, from, to, first, after }, { measurements }) => measurements.list({ assetId: asset.id, type, from, to }, pageSize(first), after),
  // Batched (loaders.ts): a page of assets costs one query, reading only the fields selected.
  latestMeasurement: (asset, { type }, { latestMeasurement }, info) =>
    latestMeasurement.load({ assetId: asset.id, type: type ?? null, fields: selectedMeasurementFields(info) }),
};
