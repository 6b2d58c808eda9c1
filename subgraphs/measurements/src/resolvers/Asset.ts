import { pageSize } from '@linepack/lib/pagination';
import type { AssetResolvers } from '../generated/resolvers-types';

export const Asset: AssetResolvers = {
  __resolveReference: (reference) => ({ id: reference.id }),
  measurements: (asset, { type, from, to, first, after }, { measurements }) => measurements.list({ assetId: asset.id, type, from, to }, pageSize(first), after),
  latestMeasurement: (asset, { type }, { measurements }) => measurements.latest(asset.id, type),
};
