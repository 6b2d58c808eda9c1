import type { FieldResultResolvers } from '../generated/resolvers-types';

export const FieldResult: FieldResultResolvers = {
  id: (r) => r._id,
  measurement: (r) => ({ id: r.measurementId }),
  asset: (r) => ({ id: r.assetId }),
  assessment: (r, _args, { analytics }) => analytics.loaders.assessmentById.load(r.measurementId),
};
