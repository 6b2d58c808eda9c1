import { Kind, type FieldNode, type GraphQLResolveInfo, type SelectionSetNode } from 'graphql';

/**
 * The stored document fields each GraphQL field of one type is resolved from: a subgraph's map from its SDL type to its
 * MongoDB document, so a read can project only what the operation selects.
 */
export type StoredFieldsOf<F extends string | number> = Readonly<Record<string, F | readonly F[] | undefined>>;

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

/** Adds the stored fields `selectionSet` reads; false when it names a field the map does not know. */
function collect<F extends string | number>(
  selectionSet: SelectionSetNode | undefined,
  info: GraphQLResolveInfo,
  storedFieldsOf: StoredFieldsOf<F>,
  into: Set<F>,
  depth = 0,
): boolean {
  if (!selectionSet) return true;
  // Fragments cannot spread themselves (validation), so only a pathological nesting reaches this bound.
  if (depth > 20) return false;
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) {
      const name = selection.name.value;
      if (name.startsWith('__')) continue;
      const stored = Object.hasOwn(storedFieldsOf, name) ? storedFieldsOf[name] : undefined;
      if (stored === undefined) return false;
      for (const field of Array.isArray(stored) ? (stored as readonly F[]) : [stored as F]) into.add(field);
    } else {
      const set = selection.kind === Kind.INLINE_FRAGMENT ? selection.selectionSet : info.fragments[selection.name.value]?.selectionSet;
      if (!set || !collect(set, info, storedFieldsOf, into, depth + 1)) return false;
    }
  }
  return true;
}

/** One answer per field occurrence and path: it depends only on the operation's syntax tree. */
const cache = new WeakMap<readonly FieldNode[], Map<string, readonly (string | number)[] | null>>();

/**
 * The stored fields the objects under `path` of the current field read (`[]` for the field's own object, `['edges',
 * 'node']` for a page's), with `always` (what the resolver itself needs: the id, a cursor's sort keys), sorted — so a
 * query can project only those. A field skipped by @skip/@include is still counted (one more field read, never one too
 * few). Null when a selection names a field the map does not know: read them all.
 */
export function selectedStoredFields<F extends string | number>(
  info: GraphQLResolveInfo,
  path: readonly string[],
  storedFieldsOf: StoredFieldsOf<F>,
  always: readonly F[],
): readonly F[] | null {
  const key = `${path.join('.')}|${always.join(',')}`;
  let forNodes = cache.get(info.fieldNodes);
  if (!forNodes) cache.set(info.fieldNodes, (forNodes = new Map()));
  let fields = forNodes.get(key) as readonly F[] | null | undefined;
  if (fields === undefined) {
    const nodes: FieldNode[] = [];
    if (path.length === 0) nodes.push(...info.fieldNodes);
    else for (const node of info.fieldNodes) fieldsAt(node.selectionSet, path, info, nodes);
    const into = new Set<F>(always);
    fields = nodes.every((node) => collect(node.selectionSet, info, storedFieldsOf, into)) ? [...into].sort() : null;
    forNodes.set(key, fields);
  }
  return fields;
}

/** A MongoDB projection of `fields` (undefined: the whole document), for find's `projection` option. */
export function projectionOf(fields: readonly (string | number)[] | null | undefined): Record<string, 1> | undefined {
  return fields ? Object.fromEntries(fields.map((f) => [f, 1 as const])) : undefined;
}
