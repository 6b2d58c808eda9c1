import type { AuditEventResolvers } from '../generated/resolvers-types';

export const AuditEvent: AuditEventResolvers = {
  id: (event) => event._id,
};
