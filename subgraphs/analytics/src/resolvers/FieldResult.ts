import type { FieldResultResolvers } from '../generated/resolvers-types';

export const FieldResult: FieldResultResolvers = {
  id: (r) => r._id,
  measurement: (r) => ({ id: r.measurementId }),
  asset: (r) => ({ id: r.assetId }),
  // Results recorded before profiles existed have none.
  profile: (r) => r.profile?.map((p) => ({ axialPositionMm: p.axialMm, depthMm: p.depthMm })) ?? null,
  assessment: (r, _args, { analytics }) => analytics.loaders.assessmentById.load(r.measurementId),
};
