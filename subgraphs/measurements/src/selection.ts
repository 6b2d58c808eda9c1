import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
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

/** Adds the stored fields `selectionSet` reads (through fragments, each once); false when it names a field this does not know. */
function collect(selectionSet: SelectionSetNode | undefined, info: GraphQLResolveInfo, into: Set<MeasurementField>, seen: Set<string>): boolean {
  if (!selectionSet) return true;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (name.startsWith('__')) continue;
      const stored = storedFieldOf[name as keyof typeof storedFieldOf] as MeasurementField | readonly MeasurementField[] | undefined;
      if (!stored) return false;
      for (const field of Array.isArray(stored) ? (stored as readonly MeasurementField[]) : [stored as MeasurementField]) into.add(field);
    } else if (selection.kind === Kind.INLINE_FRAGMENT) {
      if (!collect(selection.selectionSet, info, into, seen)) return false;
    } else {
      const name = selection.name.value;
      if (seen.has(name)) continue;
      seen.add(name);
      const fragment = info.fragments[name];
      if (!fragment || !collect(fragment.selectionSet, info, into, seen)) return false;
    }
  }
  return true;
}

/** One answer per field occurrence: graphql-js passes the same fieldNodes array for every item of a list. */
const cache = new WeakMap<readonly FieldNode[], readonly MeasurementField[]>();

/**
 * The stored fields the selection under the current (Measurement-typed) field reads, sorted, `_id` always
 * included — so a query can project only those. A field skipped by @skip/@include is still counted (one more
 * field read, never one too few); a selection this cannot read (an unknown field) reads every field.
 */
export function selectedMeasurementFields(info: GraphQLResolveInfo): readonly MeasurementField[] {
  let fields = cache.get(info.fieldNodes);
  if (!fields) {
    const into = new Set<MeasurementField>(['_id']);
    const seen = new Set<string>();
    const known = info.fieldNodes.every((node) => collect(node.selectionSet, info, into, seen));
    fields = known ? [...into].sort() : ALL_MEASUREMENT_FIELDS;
    cache.set(info.fieldNodes, fields);
  }
  return fields;
}
