import type { RepairResolvers } from '../generated/resolvers-types';

export const Repair: RepairResolvers = {
  id: (r) => r._id,
  asset: (r) => ({ id: r.assetId }),
  measurements: (r) => r.measurementIds.map((id) => ({ id })),
  assessments: async (r, _args, { analytics }) =>
    (await analytics.loaders.assessmentById.loadMany(r.measurementIds)).filter((a): a is Exclude<typeof a, Error | null> => a != null && !(a instanceof Error)),
};
