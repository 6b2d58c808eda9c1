import type { QueryResolvers } from '../generated/resolvers-types';
import { obligationCatalogue } from '../obligations';

export const Query: QueryResolvers = {
  complianceObligations: (_parent, { regulation }) => obligationCatalogue.filter((rule) => regulation == null || rule.regulation === regulation),
};
