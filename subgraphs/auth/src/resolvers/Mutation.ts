import type { MutationResolvers } from '../generated/resolvers-types';
import { auditContextOf } from '../audit-context';
import { asGraphQLErrors } from './errors';

export const Mutation: MutationResolvers = {
  createApiKey: async (_parent, { input }, { identity, store }) =>
    asGraphQLErrors(
      store.createApiKey(
        {
          tenantId: identity.tenantId,
          name: input.name,
          scopes: input.scopes,
          tier: input.tier ?? 'FREE',
          expiresInDays: input.expiresInDays ?? null,
        },
        await auditContextOf(identity, store),
      ),
    ),
  revokeApiKey: async (_parent, { id }, { identity, store }) =>
    asGraphQLErrors(store.revokeApiKey(identity.tenantId, id, await auditContextOf(identity, store))),
};
