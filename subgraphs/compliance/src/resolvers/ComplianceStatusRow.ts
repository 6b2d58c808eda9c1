import { formatCalendarDay, startOfLocalDay } from '../domain/calendar';
import type { ComplianceStatusRowResolvers } from '../generated/resolvers-types';

export const ComplianceStatusRow: ComplianceStatusRowResolvers = {
  asset: (row) => ({ id: row.assetId }),
  // Rows hold the due day of the tenant's zone; the API gives that day and the instant it begins there.
  dueDate: (row) => (row.dueAt ? formatCalendarDay(row.dueAt) : null),
  dueAt: (row) => (row.dueAt ? startOfLocalDay(row.dueAt, row.timeZone) : null),
};
