import { pageSize } from '@linepack/lib/pagination';
import { checkIdArgument, textLimits } from '@linepack/lib/validation';
import { fieldError } from '@linepack/lib/errors';
import type { QueryResolvers } from '../generated/resolvers-types';
import { defaultAssetOrder } from '../repository';
import { selectedAssetFields } from '../selection';

export const Query: QueryResolvers = {
  asset: (_parent, { id }, { assetById }) => assetById.load(checkIdArgument(id, 'id')),
  assets: (_parent, { filter, orderBy, first, after }, { assets }, info) => {
    // Matched as an escaped literal; bounded so a scan stays cheap on every database.
    if (filter?.nameContains && filter.nameContains.length > textLimits.search) {
      throw fieldError('BAD_USER_INPUT', `filter.nameContains: at most ${textLimits.search} characters`, { field: 'filter.nameContains' });
    }
    if (filter?.parentId) checkIdArgument(filter.parentId, 'filter.parentId');
    if (filter?.classLocation != null && (filter.classLocation < 1 || filter.classLocation > 4)) {
      throw fieldError('BAD_USER_INPUT', 'filter.classLocation: a class location is 1, 2, 3 or 4 (49 CFR 192.5)', { field: 'filter.classLocation' });
    }
    const order = orderBy ? { field: orderBy.field, direction: orderBy.direction ?? 'ASC' } : defaultAssetOrder;
    // Only the fields the page's assets are read for travel (for the gateway's Q2 fetch: four of about thirty).
    return assets.list(filter ?? {}, pageSize(first), after, selectedAssetFields(info, ['edges', 'node']), order);
  },
  pipelineSummary: (_parent, _args, { identity }) => ({ tenantId: identity.tenantId }),
};
