import { DateTimeScalar } from '@linepack/lib/scalars';
import type { Resolvers } from '../generated/resolvers-types';
import { ApiKey } from './ApiKey';
import { Mutation } from './Mutation';
import { Query } from './Query';

export const resolvers: Resolvers = { Query, Mutation, ApiKey, DateTime: DateTimeScalar };
