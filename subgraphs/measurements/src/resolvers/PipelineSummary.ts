import { fieldError } from '@linepack/lib/errors';
import type { PipelineSummaryResolvers } from '../generated/resolvers-types';

export const PipelineSummary: PipelineSummaryResolvers = {
  __resolveReference: (reference, { identity }) => {
    if (reference.tenantId !== identity.tenantId) throw fieldError('FORBIDDEN', 'pipeline summary of another tenant');
    return { tenantId: reference.tenantId };
  },
  measurementCount: (_summary, _args, { measurements }) => measurements.count(),
  latestInspectionAt: (_summary, _args, { measurements }) => measurements.latestInspectionAt(),
};
