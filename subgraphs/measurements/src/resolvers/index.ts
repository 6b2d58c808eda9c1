import { DateTimeScalar } from '@linepack/lib/scalars';
import type { Resolvers } from '../generated/resolvers-types';
import { Asset } from './Asset';
import { Measurement } from './Measurement';
import { MeasurementConnection } from './MeasurementConnection';
import { Mutation } from './Mutation';
import { PipelineSummary } from './PipelineSummary';
import { Query } from './Query';

export const resolvers: Resolvers = { Query, Mutation, Asset, Measurement, MeasurementConnection, PipelineSummary, DateTime: DateTimeScalar };
