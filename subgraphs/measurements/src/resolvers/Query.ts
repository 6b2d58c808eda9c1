import type { QueryResolvers } from '../generated/resolvers-types';

export const Query: QueryResolvers = {
  measurement: (_parent, { id }, { measurements }) => measurements.findById(id),
};
