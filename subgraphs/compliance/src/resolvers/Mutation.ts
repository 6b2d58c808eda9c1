import type { MutationResolvers } from '../generated/resolvers-types';

export const Mutation: MutationResolvers = {
  updateComplianceSettings: (_parent, { input }, { settings }) => settings.update(input),
};
