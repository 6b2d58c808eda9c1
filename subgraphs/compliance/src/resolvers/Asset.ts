import { formatCalendarDay, startOfLocalDay } from '../domain/calendar';
import type { AssetResolvers } from '../generated/resolvers-types';
import { dueSoonDaysOf } from './Query';

export const Asset: AssetResolvers = {
  __resolveReference: (reference) => ({ id: reference.id }),
  compliance: async (asset, { asOf, dueSoonDays }, { compliance }) => {
    const result = await compliance.assetCompliance(asset.id, asOf ?? new Date(), dueSoonDaysOf(dueSoonDays));
    return {
      asOf: result.asOf,
      state: result.state,
      timeZone: result.timeZone,
      obligations: result.obligations.map((o) => ({
        obligation: o.obligation.obligation,
        state: o.state,
        regulationRef: o.obligation.regulationRef,
        rule: o.obligation.rule,
        explanation: o.obligation.explanation,
        lastCompletedAt: o.lastCompletedAt,
        dueDate: o.dueAt ? formatCalendarDay(o.dueAt) : null,
        dueAt: o.dueAt ? startOfLocalDay(o.dueAt, result.timeZone) : null,
        evidence: o.evidence.map((e) => ({ id: e._id, observedAt: e.observedAt, type: e.type, assetId: e.assetId })),
        violations: o.violations,
      })),
    };
  },
};
