import { pageSize } from '@linepack/lib/pagination';
import type { AssetResolvers } from '../generated/resolvers-types';

export const Asset: AssetResolvers = {
  __resolveReference: (reference) => ({ id: reference.id }),
  anomalyAssessments: (asset, { filter, first, after }, { analytics }) => analytics.assessmentsOf(asset.id, filter ?? {}, pageSize(first), after),
  risk: (asset, _args, { analytics }) => analytics.risk(asset.id),
};
