import type { GraphQLResolveInfo } from 'graphql';
import { selectedStoredFields } from '@linepack/lib/selection';
import type { MeasurementDocument } from './documents';
import type { Measurement } from './generated/resolvers-types';

export type MeasurementField = keyof MeasurementDocument;

/**
 * The stored field each Measurement field is resolved from (resolvers/Measurement.ts). Typed against the generated
 * Measurement type, so a field added to the SDL fails the type check here until it is mapped.
 */
const storedFieldOf: Record<Exclude<keyof Measurement, '__typename'>, MeasurementField | readonly MeasurementField[]> = {
  id: '_id',
  asset: 'assetId',
  type: 'type',
  observedAt: 'observedAt',
  stationM: 'stationM',
  value: 'value',
  unit: 'unit',
  source: 'source',
  idempotencyKey: 'idempotencyKey',
  runId: 'runId',
  featureType: 'featureType',
  surface: 'surface',
  odometerM: 'odometerM',
  clockDeg: 'clockDeg',
  depthPctWt: 'depthPctWt',
  lengthMm: 'lengthMm',
  widthMm: 'widthMm',
  dentDepthPctOd: 'dentDepthPctOd',
  dentHasMetalLoss: 'dentHasMetalLoss',
  dentHasCracking: 'dentHasCracking',
  dentHasStressRiser: 'dentHasStressRiser',
  interactsWithGirthWeld: 'interactsWithGirthWeld',
  interactsWithSeamWeld: 'interactsWithSeamWeld',
  atPipelineCrossing: 'atPipelineCrossing',
  metalLossKind: 'metalLossKind',
  recordedAt: 'recordedAt',
  // Only features an import stored have a location (ili/location.ts isImportedFeature).
  iliLocation: ['runId', 'odometerM', 'clockDeg', 'idempotencyKey'],
};

/** Every stored field a client can read: what a selection this cannot read precisely falls back to. */
const ALL_MEASUREMENT_FIELDS: readonly MeasurementField[] = [...new Set(Object.values(storedFieldOf).flat())].sort();

/**
 * The stored fields the measurements under `path` of the current field read (`[]` for a Measurement-typed field,
 * `['edges', 'node']` for a page), sorted, `_id` always included — so a query can project only those. A field skipped
 * by @skip/@include is still counted (one more field read, never one too few); a selection this cannot read (an
 * unknown field) reads every field.
 */
export function selectedMeasurementFields(info: GraphQLResolveInfo, path: readonly string[] = []): readonly MeasurementField[] {
  return selectedStoredFields<MeasurementField>(info, path, storedFieldOf, ['_id']) ?? ALL_MEASUREMENT_FIELDS;
}

/**
 * The stored fields a MeasurementConnection's `edges { node { … } }` read under the current field, plus the page's
 * sort keys (observedAt, _id: every edge's cursor is made from them), sorted — so a page can project only those. A
 * 120,000-reading answer (500 assets' pages of 240) read whole documents of some thirty fields each to answer three.
 */
export function selectedConnectionNodeFields(info: GraphQLResolveInfo): readonly MeasurementField[] {
  return selectedStoredFields<MeasurementField>(info, ['edges', 'node'], storedFieldOf, ['_id', 'observedAt']) ?? ALL_MEASUREMENT_FIELDS;
}
