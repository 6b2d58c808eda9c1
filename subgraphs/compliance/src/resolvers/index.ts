import type { Resolvers } from '../generated/resolvers-types';
import { Query } from './Query';

export const resolvers: Resolvers = { Query };
