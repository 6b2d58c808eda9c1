import { fieldError } from '@linepack/lib/errors';
import type { PipelineSummaryResolvers } from '../generated/resolvers-types';
import type { SubgraphContext } from '../context';
import type { AssetSummaryCounts } from '../repository';

/** One aggregation per request however many summary fields are selected. */
const countsByContext = new WeakMap<SubgraphContext, Promise<AssetSummaryCounts>>();
function counts(context: SubgraphContext): Promise<AssetSummaryCounts> {
  let pending = countsByContext.get(context);
  if (!pending) {
    pending = context.assets.summary();
    countsByContext.set(context, pending);
  }
  return pending;
}

export const PipelineSummary: PipelineSummaryResolvers = {
  __resolveReference: (reference, { identity }) => {
    // A summary is only ever about the caller's own tenant, whatever the representation claims.
    if (reference.tenantId !== identity.tenantId) throw fieldError('FORBIDDEN', 'pipeline summary of another tenant');
    return { tenantId: reference.tenantId };
  },
  totalAssets: async (_summary, _args, context) => (await counts(context)).totalAssets,
  assetsByType: async (_summary, _args, context) => (await counts(context)).byType,
  assetsByStatus: async (_summary, _args, context) => (await counts(context)).byStatus,
  totalPipelineLengthM: async (_summary, _args, context) => (await counts(context)).totalPipelineLengthM,
};
