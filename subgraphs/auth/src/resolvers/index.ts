import { DateTimeScalar } from '@linepack/lib/scalars';
import type { Resolvers } from '../generated/resolvers-types';
import { ApiKey } from './ApiKey';
import { AuditEvent } from './AuditEvent';
import { Mutation } from './Mutation';
import { Query } from './Query';

export const resolvers: Resolvers = { Query, Mutation, ApiKey, AuditEvent, DateTime: DateTimeScalar };
