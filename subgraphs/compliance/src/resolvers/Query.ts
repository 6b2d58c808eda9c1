import { pageSize } from '@linepack/lib/pagination';
import { fieldError } from '@linepack/lib/errors';
import type { QueryResolvers } from '../generated/resolvers-types';
import { obligationCatalogue } from '../rules';

/** DUE_SOON looks at most a year ahead. */
export function dueSoonDaysOf(value: number | null | undefined): number {
  const days = value ?? 30;
  if (!Number.isInteger(days) || days < 0 || days > 366)
    throw fieldError('BAD_USER_INPUT', 'dueSoonDays must be an integer from 0 to 366', { field: 'dueSoonDays' });
  return days;
}

export const Query: QueryResolvers = {
  complianceObligations: (_parent, { regulation }) => obligationCatalogue(regulation ?? null),
  complianceStatus: (_parent, { filter, asOf, dueSoonDays, first, after }, { compliance }) =>
    compliance.statusPage(filter ?? {}, asOf ?? new Date(), dueSoonDaysOf(dueSoonDays), pageSize(first), after),
  complianceSettings: (_parent, _args, { settings }) => settings.get(),
};
