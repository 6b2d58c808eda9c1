import { fieldError } from '@linepack/lib/errors';
import { startOfLocalDay } from '../domain/calendar';
import type { PipelineSummaryResolvers } from '../generated/resolvers-types';

export const PipelineSummary: PipelineSummaryResolvers = {
  __resolveReference: (reference, { identity }) => {
    if (reference.tenantId !== identity.tenantId) throw fieldError('FORBIDDEN', 'pipeline summary of another tenant');
    return { tenantId: reference.tenantId };
  },
  complianceByState: (_summary, _args, { compliance }) => compliance.countsByState(new Date(), 30),
  nextComplianceDueAt: async (_summary, _args, { compliance }) => {
    const day = await compliance.nextDueAt(new Date());
    return day ? startOfLocalDay(day, await compliance.timeZone()) : null;
  },
};
