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
const nodeCache = new WeakMap<readonly FieldNode[], readonly MeasurementField[]>();

/** The selection sets of the fields named `name` directly in `selectionSet` (through fragments); null: one it cannot follow. */
function subselections(
  selectionSet: SelectionSetNode | undefined,
  name: string,
  info: GraphQLResolveInfo,
  seen = new Set<string>(),
): SelectionSetNode[] | null {
  const found: SelectionSetNode[] = [];
  for (const selection of selectionSet?.selections ?? []) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value === name && selection.selectionSet) found.push(selection.selectionSet);
      continue;
    }
    let inner: SelectionSetNode | undefined;
    if (selection.kind === Kind.INLINE_FRAGMENT) inner = selection.selectionSet;
    else {
      if (seen.has(selection.name.value)) continue;
      seen.add(selection.name.value);
      inner = info.fragments[selection.name.value]?.selectionSet;
      if (!inner) return null;
    }
    const deeper = subselections(inner, name, info, seen);
    if (!deeper) return null;
    found.push(...deeper);
  }
  return found;
}

/**
 * The stored fields a MeasurementConnection's `edges { node { … } }` read under the current field, plus the page's
 * sort keys (observedAt, _id: every edge's cursor is made from them), sorted — so a page can project only those. A
 * 120,000-reading answer (500 assets' pages of 240) read whole documents of some thirty fields each to answer three.
 */
export function selectedConnectionNodeFields(info: GraphQLResolveInfo): readonly MeasurementField[] {
  let fields = nodeCache.get(info.fieldNodes);
  if (!fields) {
    const into = new Set<MeasurementField>(['_id', 'observedAt']);
    const seen = new Set<string>();
    const known = info.fieldNodes.every((field) => {
      const edges = subselections(field.selectionSet, 'edges', info);
      const nodes = edges?.map((edge) => subselections(edge, 'node', info));
      return !!nodes && nodes.every((sets) => sets !== null && sets.every((set) => collect(set, info, into, seen)));
    });
    fields = known ? [...into].sort() : ALL_MEASUREMENT_FIELDS;
    nodeCache.set(info.fieldNodes, fields);
  }
  return fields;
}

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
