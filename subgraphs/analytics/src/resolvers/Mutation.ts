import type { MutationResolvers } from '../generated/resolvers-types';

export const Mutation: MutationResolvers = {
  updateAnalyticsSettings: (_parent, { input }, { settings }) => settings.update(input),
};
