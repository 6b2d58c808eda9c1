import type { MeasurementResolvers } from '../generated/resolvers-types';
import { selectedAssessmentFields } from '../selection';

export const Measurement: MeasurementResolvers = {
  __resolveReference: (reference) => ({ id: reference.id }),
  // Batched, reading only the fields selected (the plot's 500 a page ask for the response category alone).
  assessment: (measurement, _args, { analytics }, info) => analytics.assessment(measurement.id, selectedAssessmentFields(info)),
};
