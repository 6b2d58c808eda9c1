import type { MeasurementConnectionResolvers } from '../generated/resolvers-types';

export const MeasurementConnection: MeasurementConnectionResolvers = {
  // Counted only when asked for: a page read for its rows costs one query, not two.
  totalCount: (page) => page.count(),
};
