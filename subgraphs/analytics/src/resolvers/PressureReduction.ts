import type { PressureReductionResolvers } from '../generated/resolvers-types';

const DAY_MS = 86_400_000;

export const PressureReduction: PressureReductionResolvers = {
  id: (r) => r._id,
  asset: (r) => ({ id: r.assetId }),
  measurements: (r) => r.measurementIds.map((id) => ({ id })),
  inForce: (r) => r.liftedAt == null,
  // Whole days, so "more than 365" reads as §192.933(a)(2) counts it.
  inForceDays: (r) => Math.floor(((r.liftedAt ?? new Date()).getTime() - r.effectiveAt.getTime()) / DAY_MS),
};
