/**
 * One schema change as reviewers name it — its coordinate, GraphQL Inspector's change type, and the definition
 * before and after — and the client operations it reaches, found from the coordinates each one reads
 * (coordinates.ts), never from the text of validation messages.
 */
import type { Change } from '@graphql-inspector/core';
import { isInputObjectType, isInterfaceType, isObjectType, type GraphQLSchema } from 'graphql';
import type { OperationReads } from './coordinates';

export interface ChangeIdentity {
  /** Schema coordinate: `Type`, `Type.field`, `Type.field(arg:)`, `Enum.VALUE`, `Input.field`, `@directive(arg:)`. */
  coordinate: string;
  /** GraphQL Inspector's change type, e.g. FIELD_TYPE_CHANGED, FIELD_REMOVED. */
  change: string;
  /** The definition's type (or default, or deprecation reason) before and after; null where there is none. */
  before: string | null;
  after: string | null;
}

/**
 * Inspector writes an argument as `Type.field.arg`, a directive argument as `@directive.arg`, and a directive
 * usage by appending `.@directive` (and `.arg`) to the path of what carries it, which is the coordinate here.
 */
export function coordinateOf(change: Change): string {
  const all = (change.path ?? '').split('.');
  const usage = all.findIndex((p, i) => i > 0 && p.startsWith('@'));
  const parts = usage > 0 ? all.slice(0, usage) : all;
  if (parts.length === 3) return `${parts[0]}.${parts[1]}(${parts[2]}:)`;
  if (parts[0]?.startsWith('@') && parts.length === 2) return `${parts[0]}(${parts[1]}:)`;
  return parts.join('.');
}

/** The type of what `coordinate` names in `schema` (a field, argument or input field), or null. */
function typeAt(schema: GraphQLSchema | null, coordinate: string): string | null {
  const m = /^([^.@(]+)\.([^.(]+)(?:\(([^:]+):\))?$/.exec(coordinate);
  if (!schema || !m) return null;
  const type = schema.getType(m[1]!);
  if (!(isObjectType(type) || isInterfaceType(type) || isInputObjectType(type))) return null;
  const field = type.getFields()[m[2]!];
  if (!field) return null;
  if (!m[3]) return String(field.type);
  const argument = 'args' in field ? field.args.find((a) => a.name === m[3]) : undefined;
  return argument ? String(argument.type) : null;
}

const text = (value: unknown): string | null => (value === undefined || value === null ? null : String(value));

/**
 * Before and after, from Inspector's meta where it carries them (old…/new… and added…Type), else from the
 * schemas: a removed field's type is read from the baseline, an added one's from the new schema.
 */
export function identityOf(change: Change, oldSchema: GraphQLSchema | null, newSchema: GraphQLSchema | null): ChangeIdentity {
  const coordinate = coordinateOf(change);
  const meta = (change.meta ?? {}) as Record<string, unknown>;
  const keys = Object.keys(meta);
  const oldKey = keys.find((k) => /^old[A-Z]/.test(k));
  const newKey = keys.find((k) => /^new[A-Z]/.test(k));
  let before = oldKey ? text(meta[oldKey]) : null;
  let after = newKey ? text(meta[newKey]) : null;
  if (!oldKey && !newKey) {
    const addedType = keys.find((k) => /^added\w*Type$/.test(k) && k !== 'addedTypeKind');
    if (/DEPRECATION_(REASON_)?ADDED$/.test(change.type))
      after = text(meta['deprecationReason'] ?? meta['addedDeprecationReason'] ?? meta['addedValueDeprecationReason']);
    else if (/REMOVED$/.test(change.type)) before = typeAt(oldSchema, coordinate);
    else if (/ADDED$/.test(change.type)) after = addedType ? text(meta[addedType]) : typeAt(newSchema, coordinate);
  }
  return { coordinate, change: change.type, before, after };
}

/** How one operation's reads meet a change: a short phrase for the report, or null when they do not. */
export type ReaderMatch = string | null;

const split = (coordinate: string) => {
  const m = /^([^.(]+)(?:\.([^.(]+))?(?:\(([^:]+):\))?$/.exec(coordinate);
  return { type: m?.[1] ?? coordinate, member: m?.[2] ?? null, argument: m?.[3] ?? null };
};

/**
 * Whether an operation with `reads` is reached by `change`. Output changes reach the operations that select the
 * field; input changes reach those that write the argument, input field or enum value, and — as "may send" —
 * those whose variables can carry it; additions reach only those a required addition refuses (an argument or
 * input field without a default) or, for an enum value or union member, those that receive the type.
 *
 * What the change names is read once: the returned matcher is asked for every client operation (a check asks
 * changes × operations, about 270 operations each).
 */
export function readerMatcher(change: Change): (reads: OperationReads) => ReaderMatch {
  const coordinate = coordinateOf(change);
  const { type, member } = split(coordinate);
  const field = member ? `${type}.${member}` : type;
  const meta = (change.meta ?? {}) as Record<string, unknown>;
  const deprecated = deprecatedCoordinate(change);
  const target = deprecated ? split(deprecated) : null;
  return (reads) => matchReader(change, reads, { coordinate, type, field, meta, deprecated, target });
}

function matchReader(
  change: Change,
  reads: OperationReads,
  named: { coordinate: string; type: string; field: string; meta: Record<string, unknown>; deprecated: string | null; target: ReturnType<typeof split> | null },
): ReaderMatch {
  const { coordinate, type, field, meta, deprecated, target } = named;
  switch (change.type) {
    case 'FIELD_REMOVED':
    case 'FIELD_TYPE_CHANGED':
    case 'FIELD_DEPRECATION_ADDED':
    case 'FIELD_DEPRECATION_REASON_ADDED':
    case 'FIELD_DEPRECATION_REASON_CHANGED':
      return reads.coordinates.has(coordinate) ? `reads ${coordinate}` : null;
    case 'FIELD_ARGUMENT_REMOVED':
    case 'FIELD_ARGUMENT_TYPE_CHANGED':
      return reads.coordinates.has(coordinate) ? `passes ${coordinate}` : null;
    case 'FIELD_ARGUMENT_ADDED':
      if (!meta['isAddedFieldArgumentBreaking']) return null;
      return reads.coordinates.has(field) && !reads.coordinates.has(coordinate) ? `reads ${field} without ${coordinate}` : null;
    case 'FIELD_ARGUMENT_DEFAULT_CHANGED':
      return reads.coordinates.has(field) && !reads.coordinates.has(coordinate) ? `reads ${field} relying on the default of ${coordinate}` : null;
    case 'ENUM_VALUE_REMOVED':
    case 'ENUM_VALUE_DEPRECATION_REASON_ADDED':
    case 'ENUM_VALUE_DEPRECATION_REASON_CHANGED':
      return reads.coordinates.has(coordinate) ? `sends ${coordinate}` : maySendFor(reads, coordinate, type);
    case 'ENUM_VALUE_ADDED':
      return reads.receivedTypes.has(type) ? `receives ${type}` : null;
    case 'INPUT_FIELD_REMOVED':
    case 'INPUT_FIELD_TYPE_CHANGED':
      return reads.coordinates.has(coordinate) ? `sends ${coordinate}` : maySendFor(reads, coordinate, type);
    case 'INPUT_FIELD_ADDED':
      if (meta['isAddedInputFieldTypeNullable'] !== false || meta['addedFieldDefault'] !== undefined) return null;
      return reads.types.has(type) ? `sends ${type} without ${coordinate}` : null;
    case 'INPUT_FIELD_DEFAULT_VALUE_CHANGED':
      return reads.types.has(type) && !reads.coordinates.has(coordinate) ? `sends ${type} relying on the default of ${coordinate}` : null;
    case 'TYPE_REMOVED':
    case 'TYPE_KIND_CHANGED':
      return reads.types.has(type) ? `uses ${type}` : null;
    case 'UNION_MEMBER_REMOVED': {
      const removed = text(meta['removedUnionMemberTypeName']);
      return removed && reads.types.has(type) && reads.types.has(removed) ? `selects ${removed} in ${type}` : null;
    }
    case 'UNION_MEMBER_ADDED':
      return reads.receivedTypes.has(type) ? `receives ${type}` : null;
    case 'OBJECT_TYPE_INTERFACE_REMOVED': {
      const removed = text(meta['removedInterfaceName']);
      return removed && reads.types.has(type) && reads.types.has(removed) ? `uses ${type} as ${removed}` : null;
    }
    case 'OBJECT_TYPE_INTERFACE_ADDED': {
      const added = text(meta['addedInterfaceName']);
      return added && reads.receivedTypes.has(added) ? `receives ${added}` : null;
    }
    default: {
      if (!deprecated || !target) return null;
      if (reads.coordinates.has(deprecated)) return `${target.argument ? 'passes' : 'sends'} ${deprecated}`;
      return target.argument ? null : maySendFor(reads, deprecated, target.type);
    }
  }
}

const maySendFor = (reads: OperationReads, coordinate: string, input: string) => {
  const variable = reads.variableTypes.get(input);
  return variable ? `may send ${coordinate} through ${variable}` : null;
};

/**
 * The argument or input field an added `@deprecated` marks: Inspector reports those as directive usages, while
 * fields and enum values have their own FIELD_DEPRECATION_ADDED and ENUM_VALUE_DEPRECATION_REASON_ADDED.
 */
function deprecatedCoordinate(change: Change): string | null {
  const meta = (change.meta ?? {}) as Record<string, unknown>;
  if (meta['addedDirectiveName'] !== 'deprecated') return null;
  if (change.type === 'DIRECTIVE_USAGE_ARGUMENT_DEFINITION_ADDED')
    return `${text(meta['typeName'])}.${text(meta['fieldName'])}(${text(meta['argumentName'])}:)`;
  if (change.type === 'DIRECTIVE_USAGE_INPUT_FIELD_DEFINITION_ADDED') return `${text(meta['inputObjectName'])}.${text(meta['inputFieldName'])}`;
  return null;
}

/** A deprecation: reported with the operations that still read or send what it deprecates. */
export const isDeprecation = (change: Change) =>
  change.type === 'FIELD_DEPRECATION_ADDED' || change.type === 'ENUM_VALUE_DEPRECATION_REASON_ADDED' || deprecatedCoordinate(change) !== null;
