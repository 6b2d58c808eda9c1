import { pageSize } from '@linepack/lib/pagination';
import type { QueryResolvers } from '../generated/resolvers-types';

export const Query: QueryResolvers = {
  asset: (_parent, { id }, { assetById }) => assetById.load(id),
  assets: (_parent, { filter, first, after }, { assets }) => assets.list(filter ?? {}, pageSize(first), after),
  pipelineSummary: (_parent, _args, { identity }) => ({ tenantId: identity.tenantId }),
};
