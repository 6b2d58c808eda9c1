import type { AssetConnectionResolvers } from '../generated/resolvers-types';

export const AssetConnection: AssetConnectionResolvers = {
  // Counted only when asked for: most list reads want the rows, and a count is a second query.
  totalCount: (page) => page.count(),
};
