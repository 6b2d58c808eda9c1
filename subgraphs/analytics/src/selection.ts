import type { GraphQLResolveInfo } from 'graphql';
import { selectedStoredFields } from '@linepack/lib/selection';
import type { AssessmentDocument } from './documents';
import type { AnomalyAssessment } from './generated/resolvers-types';

export type AssessmentField = keyof AssessmentDocument;

/**
 * The stored fields each AnomalyAssessment field is resolved from (resolvers/AnomalyAssessment.ts, the rest by name).
 * Typed against the generated type, so a field added to the SDL fails the type check here until it is mapped.
 */
const storedFieldsOf: Record<Exclude<keyof AnomalyAssessment, '__typename'>, readonly AssessmentField[]> = {
  measurement: ['_id'],
  asset: ['assetId'],
  assessable: ['assessable'],
  notAssessableReason: ['notAssessableReason'],
  depthPctWt: ['depthPctWt'],
  depthWithTolerancePctWt: ['depthWithTolerancePctWt'],
  depthSource: ['depthSource'],
  failurePressureKpa: ['failurePressureKpa'],
  nominalFailurePressureKpa: ['nominalFailurePressureKpa'],
  safePressureKpa: ['safePressureKpa'],
  failurePressureRatio: ['failurePressureRatio'],
  erf: ['erf'],
  exceedanceProbability: ['exceedanceProbability'],
  responseCategory: ['responseCategory'],
  ruleRef: ['ruleRef'],
  categoryReason: ['categoryReason'],
  discoveredAt: ['discoveredAt'],
  repairDueAt: ['repairDueAt'],
  overdue: ['status', 'repairDueAt'],
  growthRateMmPerYear: ['growthRateMmPerYear'],
  growthBasis: ['growthBasis'],
  matchedMeasurementId: ['matchedMeasurementId'],
  remainingLifeYears: ['remainingLifeYears'],
  remainingLifeLimit: ['remainingLifeLimit'],
  methodNotes: ['methodNotes'],
  status: ['status'],
  supersededBy: ['supersededBy'],
  repair: ['repairId'],
  fieldResult: ['fieldResultId'],
  pressureReductions: ['_id'],
  cluster: ['cluster'],
  runId: ['runId'],
  modelVersion: ['modelVersion'],
  computedAt: ['computedAt'],
  sourceEventId: ['sourceEventId'],
};

/**
 * The stored fields the AnomalyAssessment of the current field reads, sorted, `_id` always included — so
 * a read can project only those (the along-the-line plot asks 500 assessments a page for their response category
 * alone). Null when a selection names a field this does not know: read them all.
 */
export function selectedAssessmentFields(info: GraphQLResolveInfo): readonly AssessmentField[] | null {
  return selectedStoredFields<AssessmentField>(info, [], storedFieldsOf, ['_id']);
}
