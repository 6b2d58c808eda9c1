import type { MutationResolvers } from '../generated/resolvers-types';
import { asGraphQLErrors } from './errors';

export const Mutation: MutationResolvers = {
  createApiKey: (_parent, { input }, { identity, store }) =>
    asGraphQLErrors(
      store.createApiKey({
        tenantId: identity.tenantId,
        name: input.name,
        scopes: input.scopes,
        tier: input.tier ?? 'FREE',
        expiresInDays: input.expiresInDays ?? null,
      }),
    ),
  revokeApiKey: (_parent, { id }, { identity, store }) => asGraphQLErrors(store.revokeApiKey(identity.tenantId, id)),
};
