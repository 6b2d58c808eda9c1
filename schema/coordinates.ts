/**
 * What an operation reads, as schema coordinates (the GraphQL schema-coordinates RFC's spelling:
 * `Type.field`, `Type.field(arg:)`, `Input.field`, `Enum.VALUE`, `@directive(arg:)`), found with graphql-js's
 * own TypeInfo so that aliases, fragments and interfaces resolve exactly as the server resolves them.
 * schema:check names the operations a change touches from these sets rather than from validation messages.
 */
import {
  Kind,
  TypeInfo,
  buildASTSchema,
  parse,
  printSchema,
  getNamedType,
  isEnumType,
  isInputObjectType,
  typeFromAST,
  visit,
  visitWithTypeInfo,
  type DefinitionNode,
  type DocumentNode,
  type GraphQLNamedType,
  type GraphQLSchema,
} from 'graphql';

export interface OperationReads {
  /** Coordinates written in the operation: selected fields, given arguments, input-object literal fields, enum literals. */
  coordinates: Set<string>;
  /** Named types the operation touches: selected fields' types, type conditions, argument and variable types. */
  types: Set<string>;
  /** Named types of the fields it selects: what it receives (an added enum value can arrive in these). */
  receivedTypes: Set<string>;
  /**
   * Input objects and enums whose values may come from a variable, with the variable that can carry them: the
   * operation does not say which fields or values it sends, so a change to any of them may reach it.
   */
  variableTypes: Map<string, string>;
}

export const emptyReads = (): OperationReads => ({ coordinates: new Set(), types: new Set(), receivedTypes: new Set(), variableTypes: new Map() });

/** Input objects and enums a value of `type` can contain, the type itself included. */
function sendableTypes(type: GraphQLNamedType, out = new Set<string>()): Set<string> {
  if (out.has(type.name)) return out;
  if (isEnumType(type)) out.add(type.name);
  if (isInputObjectType(type)) {
    out.add(type.name);
    for (const field of Object.values(type.getFields())) sendableTypes(getNamedType(field.type), out);
  }
  return out;
}

/**
 * The coordinates `document` reads in `schema`, added to `into`. Parts the schema does not define are skipped
 * (TypeInfo yields no definition for them); schema:check reads against unionSchema(baseline, new) so that both
 * removed and added coordinates resolve.
 */
export function readsOf(schema: GraphQLSchema, document: DocumentNode, into: OperationReads = emptyReads()): OperationReads {
  const typeInfo = new TypeInfo(schema);
  visit(
    document,
    visitWithTypeInfo(typeInfo, {
      Field(node) {
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        // __typename and introspection are the same in every schema.
        if (!parent || !field || node.name.value.startsWith('__')) return;
        into.coordinates.add(`${parent.name}.${field.name}`);
        const named = getNamedType(field.type);
        into.types.add(named.name);
        into.receivedTypes.add(named.name);
      },
      Argument(node) {
        const argument = typeInfo.getArgument();
        if (!argument) return;
        into.types.add(getNamedType(argument.type).name);
        const directive = typeInfo.getDirective();
        if (directive) {
          into.coordinates.add(`@${directive.name}(${node.name.value}:)`);
          return;
        }
        const parent = typeInfo.getParentType();
        const field = typeInfo.getFieldDef();
        if (parent && field) into.coordinates.add(`${parent.name}.${field.name}(${node.name.value}:)`);
      },
      ObjectField(node) {
        const input = typeInfo.getParentInputType();
        const named = input ? getNamedType(input) : null;
        if (named && isInputObjectType(named) && named.getFields()[node.name.value]) {
          into.coordinates.add(`${named.name}.${node.name.value}`);
          into.types.add(named.name);
        }
      },
      EnumValue(node) {
        const input = typeInfo.getInputType();
        const named = input ? getNamedType(input) : null;
        if (named && isEnumType(named) && named.getValue(node.value)) into.coordinates.add(`${named.name}.${node.value}`);
      },
      VariableDefinition(node) {
        const type = typeFromAST(schema, node.type);
        if (!type) return;
        const named = getNamedType(type);
        into.types.add(named.name);
        for (const sendable of sendableTypes(named)) if (!into.variableTypes.has(sendable)) into.variableTypes.set(sendable, `$${node.variable.name.value}`);
      },
      InlineFragment(node) {
        if (node.typeCondition) into.types.add(node.typeCondition.name.value);
      },
      FragmentDefinition(node) {
        into.types.add(node.typeCondition.name.value);
      },
    }),
  );
  return into;
}

type Member = { name: { value: string } };
const withMissing = <T extends Member>(kept: readonly T[] | undefined, other: readonly T[] | undefined): T[] => {
  const names = new Set((kept ?? []).map((m) => m.name.value));
  return [...(kept ?? []), ...(other ?? []).filter((m) => !names.has(m.name.value))];
};

/**
 * A schema holding everything either schema defines — the new definition where both have one, plus the members
 * (fields, arguments, input fields, enum values, union members) only the baseline has. Reading an operation
 * against it finds a removed field inside a field added since the baseline, which neither schema alone resolves.
 */
export function unionSchema(baseline: GraphQLSchema | null, next: GraphQLSchema): GraphQLSchema {
  if (!baseline) return next;
  const named = (schema: GraphQLSchema) =>
    new Map(parse(printSchema(schema)).definitions.flatMap((d) => ('name' in d && d.name ? [[d.name.value, d] as [string, DefinitionNode]] : [])));
  const before = named(baseline);
  const merged = [...named(next)].map(([name, d]) => {
    const old = before.get(name);
    before.delete(name);
    if (!old || old.kind !== d.kind) return d;
    switch (d.kind) {
      case Kind.OBJECT_TYPE_DEFINITION:
      case Kind.INTERFACE_TYPE_DEFINITION: {
        const oldFields = new Map((old as typeof d).fields?.map((f) => [f.name.value, f]));
        const fields = (d.fields ?? []).map((f) => ({ ...f, arguments: withMissing(f.arguments, oldFields.get(f.name.value)?.arguments) }));
        return { ...d, fields: withMissing(fields, (old as typeof d).fields) };
      }
      case Kind.INPUT_OBJECT_TYPE_DEFINITION:
        return { ...d, fields: withMissing(d.fields, (old as typeof d).fields) };
      case Kind.ENUM_TYPE_DEFINITION:
        return { ...d, values: withMissing(d.values, (old as typeof d).values) };
      case Kind.UNION_TYPE_DEFINITION:
        return { ...d, types: withMissing(d.types, (old as typeof d).types) };
      default:
        return d;
    }
  });
  return buildASTSchema({ kind: Kind.DOCUMENT, definitions: [...merged, ...before.values()] }, { assumeValid: true, assumeValidSDL: true });
}
