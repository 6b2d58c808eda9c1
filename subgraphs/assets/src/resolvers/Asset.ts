import type { AssetResolvers } from '../generated/resolvers-types';

export const Asset: AssetResolvers = {
  __resolveReference: (reference, { assetById }) => assetById.load(reference.id),
  id: (asset) => asset._id,
  parent: (asset, _args, { assetById }) => (asset.parentId ? assetById.load(asset.parentId) : null),
  lengthM: (asset) => (asset.beginStationM != null && asset.endStationM != null ? asset.endStationM - asset.beginStationM : null),
};
