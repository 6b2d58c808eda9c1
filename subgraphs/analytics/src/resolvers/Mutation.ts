import type { MutationResolvers } from '../generated/resolvers-types';

export const Mutation: MutationResolvers = {
  updateAnalyticsSettings: (_parent, { input }, { settings }) => settings.update(input),
  recordFieldResult: (_parent, { input }, { analytics, identity }) => analytics.digs.recordFieldResult(input, identity),
  recordRepair: (_parent, { input }, { analytics, identity }) => analytics.digs.recordRepair(input, identity),
  recordPressureReduction: (_parent, { input }, { analytics, identity }) => analytics.digs.recordPressureReduction(input, identity),
  liftPressureReduction: (_parent, { id, liftedAt }, { analytics }) => analytics.digs.liftPressureReduction(id, liftedAt),
};
