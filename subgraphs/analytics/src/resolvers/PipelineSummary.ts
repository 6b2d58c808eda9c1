import { fieldError } from '@linepack/lib/errors';
import type { PipelineSummaryResolvers } from '../generated/resolvers-types';

export const PipelineSummary: PipelineSummaryResolvers = {
  __resolveReference: (reference, { identity }) => {
    if (reference.tenantId !== identity.tenantId) throw fieldError('FORBIDDEN', 'pipeline summary of another tenant');
    return { tenantId: reference.tenantId };
  },
  anomaliesByResponseCategory: (_s, _a, { analytics }) => analytics.countsByCategory(),
  segmentsByRiskBand: (_s, _a, { analytics }) => analytics.countsByBand(),
  maxErf: (_s, _a, { analytics }) => analytics.maxErf(),
  oldestAnalyticsComputedAt: (_s, _a, { analytics }) => analytics.oldestComputedAt(),
};
