import type { ApiKeyResolvers } from '../generated/resolvers-types';

export const ApiKey: ApiKeyResolvers = {
  id: (key) => key._id,
};
