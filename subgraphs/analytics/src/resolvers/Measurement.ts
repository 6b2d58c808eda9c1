import type { MeasurementResolvers } from '../generated/resolvers-types';

export const Measurement: MeasurementResolvers = {
  __resolveReference: (reference) => ({ id: reference.id }),
  assessment: (measurement, _args, { analytics }) => analytics.assessment(measurement.id),
};
