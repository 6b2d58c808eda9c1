import type { MeasurementResolvers } from '../generated/resolvers-types';
import { locationOf } from '../ili/location';

export const Measurement: MeasurementResolvers = {
  // Batched (loaders.ts): N references in one `_entities` request cost one query.
  __resolveReference: (reference, { measurementById }) => measurementById.load(reference.id),
  id: (m) => m._id,
  asset: (m) => ({ id: m.assetId }),
  // Batched per request (ili/location.ts): a dig-list page of features reads each run's tally once.
  iliLocation: (m, _args, { iliLocation }) => locationOf(m, iliLocation),
};
