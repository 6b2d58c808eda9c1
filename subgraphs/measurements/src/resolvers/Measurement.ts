import type { MeasurementResolvers } from '../generated/resolvers-types';

export const Measurement: MeasurementResolvers = {
  // Batched (loaders.ts): N references in one `_entities` request cost one query.
  __resolveReference: (reference, { measurementById }) => measurementById.load(reference.id),
  id: (m) => m._id,
  asset: (m) => ({ id: m.assetId }),
};
