import { DateTimeScalar } from '@linepack/lib/scalars';
import type { Resolvers } from '../generated/resolvers-types';
import { Asset } from './Asset';
import { ComplianceStatusConnection } from './ComplianceStatusConnection';
import { ComplianceStatusRow } from './ComplianceStatusRow';
import { Mutation } from './Mutation';
import { PipelineSummary } from './PipelineSummary';
import { Query } from './Query';

export const resolvers: Resolvers = { Query, Mutation, Asset, PipelineSummary, ComplianceStatusConnection, ComplianceStatusRow, DateTime: DateTimeScalar };
