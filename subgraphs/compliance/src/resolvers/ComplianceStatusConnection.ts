import type { ComplianceStatusConnectionResolvers } from '../generated/resolvers-types';

export const ComplianceStatusConnection: ComplianceStatusConnectionResolvers = {
  // Counted only when asked for: walking the pages of a large tenant costs a page each, not a count each.
  totalCount: (page) => page.count(),
};
