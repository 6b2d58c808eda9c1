import { pageSize } from '@linepack/lib/pagination';
import { checkIdArgument, textLimits } from '@linepack/lib/validation';
import { fieldError } from '@linepack/lib/errors';
import type { QueryResolvers } from '../generated/resolvers-types';

export const Query: QueryResolvers = {
  asset: (_parent, { id }, { assetById }) => assetById.load(checkIdArgument(id, 'id')),
  assets: (_parent, { filter, first, after }, { assets }) => {
    // Matched as an escaped literal; bounded so a scan stays cheap on every database.
    if (filter?.nameContains && filter.nameContains.length > textLimits.search) {
      throw fieldError('BAD_USER_INPUT', `filter.nameContains: at most ${textLimits.search} characters`, { field: 'filter.nameContains' });
    }
    if (filter?.parentId) checkIdArgument(filter.parentId, 'filter.parentId');
    return assets.list(filter ?? {}, pageSize(first), after);
  },
  pipelineSummary: (_parent, _args, { identity }) => ({ tenantId: identity.tenantId }),
};
