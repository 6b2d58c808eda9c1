import { Base64Scalar, DateTimeScalar } from '@linepack/lib/scalars';
import type { Resolvers } from '../generated/resolvers-types';
import { Asset } from './Asset';
import { IliImport } from './IliImport';
import { IliMappingProfile } from './IliMappingProfile';
import { IliRun } from './IliRun';
import { IliUpload } from './IliUpload';
import { Measurement } from './Measurement';
import { MeasurementConnection } from './MeasurementConnection';
import { Mutation } from './Mutation';
import { PipelineSummary } from './PipelineSummary';
import { Query } from './Query';

export const resolvers: Resolvers = {
  Query,
  Mutation,
  Asset,
  IliImport,
  IliMappingProfile,
  IliRun,
  IliUpload,
  Measurement,
  MeasurementConnection,
  PipelineSummary,
  DateTime: DateTimeScalar,
  Base64: Base64Scalar,
};
