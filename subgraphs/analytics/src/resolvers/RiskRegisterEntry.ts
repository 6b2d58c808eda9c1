import type { RiskRegisterEntryResolvers } from '../generated/resolvers-types';

export const RiskRegisterEntry: RiskRegisterEntryResolvers = {
  asset: (risk) => ({ id: risk._id }),
  risk: (risk) => risk,
};
