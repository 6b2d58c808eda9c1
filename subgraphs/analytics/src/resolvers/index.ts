import { DateTimeScalar } from '@linepack/lib/scalars';
import type { Resolvers } from '../generated/resolvers-types';
import { AnalyticsSettings } from './AnalyticsSettings';
import { AnomalyAssessment } from './AnomalyAssessment';
import { Asset } from './Asset';
import { FieldResult } from './FieldResult';
import { IliRun } from './IliRun';
import { IliRunComparison } from './IliRunComparison';
import { IliUnityPlotPoint } from './IliUnityPlotPoint';
import { Measurement } from './Measurement';
import { Mutation } from './Mutation';
import { PipelineSummary } from './PipelineSummary';
import { PressureReduction } from './PressureReduction';
import { Query } from './Query';
import { Repair } from './Repair';
import { RiskRegisterEntry } from './RiskRegisterEntry';

export const resolvers: Resolvers = {
  Query,
  Mutation,
  Asset,
  Measurement,
  PipelineSummary,
  AnomalyAssessment,
  AnalyticsSettings,
  RiskRegisterEntry,
  FieldResult,
  Repair,
  PressureReduction,
  IliRun,
  IliRunComparison,
  IliUnityPlotPoint,
  DateTime: DateTimeScalar,
};
