import type { MeasurementResolvers } from '../generated/resolvers-types';

export const Measurement: MeasurementResolvers = {
  __resolveReference: (reference, { measurements }) => measurements.findById(reference.id),
  id: (m) => m._id,
  asset: (m) => ({ id: m.assetId }),
};
