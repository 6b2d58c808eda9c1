import type { AnomalyAssessmentResolvers } from '../generated/resolvers-types';

export const AnomalyAssessment: AnomalyAssessmentResolvers = {
  measurement: (a) => ({ id: a._id }),
  asset: (a) => ({ id: a.assetId }),
  // Assessments stored before notes existed have none.
  methodNotes: (a) => a.methodNotes ?? [],
};
