import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';
import type { AssetDocument } from './documents';
import type { Asset } from './generated/resolvers-types';

export type AssetField = keyof AssetDocument;

/**
 * The stored fields each Asset field is resolved from (resolvers/Asset.ts). Typed against the generated Asset type,
 * so a field added to the SDL fails the type check here until it is mapped.
 */
const storedFieldsOf: Record<Exclude<keyof Asset, '__typename'>, readonly AssetField[]> = {
  id: ['_id'],
  type: ['type'],
  name: ['name'],
  parent: ['parentId'],
  status: ['status'],
  product: ['product'],
  regulation: ['regulation'],
  beginStationM: ['beginStationM'],
  endStationM: ['endStationM'],
  lengthM: ['beginStationM', 'endStationM'],
  outsideDiameterMm: ['outsideDiameterMm'],
  wallThicknessMm: ['wallThicknessMm'],
  smysMpa: ['smysMpa'],
  maopKpa: ['maopKpa'],
  classLocation: ['classLocation'],
  inHca: ['inHca'],
  smtsMpa: ['smtsMpa'],
  couldAffectHca: ['couldAffectHca'],
  cathodicallyProtected: ['cathodicallyProtected'],
  atmosphericExposure: ['atmosphericExposure'],
  offshore: ['offshore'],
  gasOdorized: ['gasOdorized'],
  crossing: ['crossing'],
  location: ['location'],
  installedAt: ['installedAt'],
  version: ['version'],
  createdAt: ['createdAt'],
  updatedAt: ['updatedAt'],
};

/** The field nodes reached from `selectionSet` by following `path` (field names), through fragments. */
function fieldsAt(selectionSet: SelectionSetNode | undefined, path: readonly string[], info: GraphQLResolveInfo, into: FieldNode[]): void {
  if (!selectionSet) return;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      if (selection.name.value !== path[0]) continue;
      if (path.length === 1) into.push(selection);
      else fieldsAt(selection.selectionSet, path.slice(1), info, into);
    } else {
      const set = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : info.fragments[selection.name.value]?.selectionSet;
      fieldsAt(set, path, info, into);
    }
  }
}

/** Adds the stored fields `selectionSet` reads; false when it names a field this does not know. */
function collect(selectionSet: SelectionSetNode | undefined, info: GraphQLResolveInfo, into: Set<AssetField>, depth = 0): boolean {
  if (!selectionSet) return true;
  // Fragments cannot spread themselves (validation), so only a pathological nesting reaches this bound.
  if (depth > 20) return false;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (name.startsWith('__')) continue;
      const stored = storedFieldsOf[name as keyof typeof storedFieldsOf] as readonly AssetField[] | undefined;
      if (!stored) return false;
      for (const field of stored) into.add(field);
    } else {
      const set = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : info.fragments[selection.name.value]?.selectionSet;
      if (!set || !collect(set, info, into, depth + 1)) return false;
    }
  }
  return true;
}

/** One answer per field occurrence: it depends only on the operation's syntax tree. */
const cache = new WeakMap<readonly FieldNode[], Map<string, readonly AssetField[] | null>>();

/**
 * The stored fields the assets under `path` of the current field read (`['edges', 'node']` for a page), sorted,
 * `_id` always included — so a query can project only those. A field skipped by @skip/@include is still counted
 * (one more field read, never one too few). Null when a selection names a field this does not know: read them all.
 */
export function selectedAssetFields(info: GraphQLResolveInfo, path: readonly string[]): readonly AssetField[] | null {
  const key = path.join('.');
  let forNodes = cache.get(info.fieldNodes);
  if (!forNodes) cache.set(info.fieldNodes, (forNodes = new Map()));
  let fields = forNodes.get(key);
  if (fields === undefined) {
    const nodes: FieldNode[] = [];
    for (const node of info.fieldNodes) fieldsAt(node.selectionSet, path, info, nodes);
    const into = new Set<AssetField>(['_id']);
    fields = nodes.every((node) => collect(node.selectionSet, info, into)) ? [...into].sort() : null;
    forNodes.set(key, fields);
  }
  return fields;
}
