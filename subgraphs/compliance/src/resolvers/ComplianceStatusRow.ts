import type { ComplianceStatusRowResolvers } from '../generated/resolvers-types';

export const ComplianceStatusRow: ComplianceStatusRowResolvers = {
  asset: (row) => ({ id: row.assetId }),
};
