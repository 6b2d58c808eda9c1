import { z } from 'zod';
import { decodeCursor, encodeCursor, pageSize, toConnection } from '@linepack/lib/pagination';
import type { QueryResolvers } from '../generated/resolvers-types';

const auditCursor = z.object({ at: z.string().datetime(), id: z.string().min(1) });
const tenantUserCursor = z.object({ email: z.string().min(1) });

export const Query: QueryResolvers = {
  me: async (_parent, _args, { identity, store }) => {
    if (identity.kind === 'api_key') {
      const tenant = await store.findTenant(identity.tenantId);
      return {
        id: identity.subject,
        kind: 'API_KEY',
        email: null,
        tenantId: identity.tenantId,
        tenants: tenant ? [{ tenantId: tenant._id, name: tenant.name, role: null, tier: tenant.tier }] : [],
        scopes: identity.scopes,
      };
    }
    const user = await store.findUser(identity.subject);
    const tenants = await store.tenants.find({ _id: { $in: user?.memberships.map((m) => m.tenantId) ?? [] } }).toArray();
    return {
      id: identity.subject,
      kind: 'USER',
      email: user?.email ?? null,
      tenantId: identity.tenantId,
      tenants: (user?.memberships ?? []).flatMap((m) => {
        const tenant = tenants.find((t) => t._id === m.tenantId);
        return tenant ? [{ tenantId: m.tenantId, name: tenant.name, role: m.role, tier: tenant.tier }] : [];
      }),
      scopes: identity.scopes,
    };
  },
  apiKeys: (_parent, _args, { identity, store }) => store.listApiKeys(identity.tenantId),
  users: async (_parent, _args, { identity, store }) =>
    (await store.tenantUsers(identity.tenantId)).map(({ user, role }) => ({ id: user._id, email: user.email, role, createdAt: user.createdAt })),
  tenantUsers: async (_parent, { emailContains, role, first, after }, { identity, store }) => {
    const size = pageSize(first);
    const cursor = decodeCursor(after, tenantUserCursor);
    const page = await store.tenantUsersPage(identity.tenantId, { emailContains: emailContains ?? null, role: role ?? null }, size, cursor?.email ?? null);
    const rows = page.rows.map(({ user, role: memberRole }) => ({ id: user._id, email: user.email, role: memberRole, createdAt: user.createdAt }));
    return toConnection(rows, size, page.totalCount, (u) => encodeCursor({ email: u.email }));
  },
  auditEvents: async (_parent, { filter, first, after }, { identity, store }) => {
    const size = pageSize(first);
    const cursor = decodeCursor(after, auditCursor);
    const page = await store.audit.list(
      identity.tenantId,
      {
        types: filter?.types ?? null,
        actorId: filter?.actorId ?? null,
        targetId: filter?.targetId ?? null,
        from: filter?.from ?? null,
        to: filter?.to ?? null,
      },
      size,
      cursor ? { at: new Date(cursor.at), id: cursor.id } : null,
    );
    return toConnection(page.rows, size, page.totalCount, (e) => encodeCursor({ at: e.at.toISOString(), id: e._id }));
  },
};
