import type { AnomalyAssessmentResolvers } from '../generated/resolvers-types';

export const AnomalyAssessment: AnomalyAssessmentResolvers = {
  measurement: (a) => ({ id: a._id }),
  asset: (a) => ({ id: a.assetId }),
  // Assessments stored before notes existed have none.
  methodNotes: (a) => a.methodNotes ?? [],
  // Assessments stored before repairs and field results existed are open and on the tool's call.
  status: (a) => a.status ?? 'OPEN',
  supersededBy: (a) => (a.supersededBy ? { id: a.supersededBy } : null),
  overdue: (a) => (a.status ?? 'OPEN') === 'OPEN' && a.repairDueAt != null && a.repairDueAt.getTime() < Date.now(),
  depthSource: (a) => a.depthSource ?? 'TOOL',
  runId: (a) => a.runId ?? null,
  cluster: (a) =>
    a.cluster
      ? {
          lead: { id: a.cluster.leadId },
          members: a.cluster.memberIds.map((id) => ({ id })),
          memberCount: a.cluster.memberIds.length,
          rule: a.cluster.rule,
          lengthMm: a.cluster.lengthMm,
          widthMm: a.cluster.widthMm,
          maxDepthPctWt: a.cluster.maxDepthPctWt,
        }
      : null,
  fieldResult: (a, _args, { analytics }) => (a.fieldResultId ? analytics.loaders.fieldResultById.load(a.fieldResultId) : null),
  repair: (a, _args, { analytics }) => (a.repairId ? analytics.loaders.repairById.load(a.repairId) : null),
  pressureReductions: (a, _args, { analytics }) => analytics.loaders.pressureReductionsOf.load(a._id),
};
