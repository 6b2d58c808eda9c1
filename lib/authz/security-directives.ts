import {
  Kind,
  TypeInfo,
  getNamedType,
  visit,
  visitWithTypeInfo,
  type ConstDirectiveNode,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLSchema,
  type OperationDefinitionNode,
} from 'graphql';
import { missingScopes } from '../scopes';

/**
 * What the SDL demands of a field or a type with @requiresScopes (OR of ANDs). @authenticated needs
 * no check here: every request is authenticated before any operation is looked at.
 */
export interface SecurityRequirement {
  scopes: string[][];
}

/**
 * The security directives of an SDL, keyed "Type.field" for fields and "Type" for types.
 * Read straight from the SDL text (a subgraph's file or the composed supergraph), so the
 * gateway and the subgraphs enforce exactly what schema reviewers read.
 */
export type SecurityMap = ReadonlyMap<string, SecurityRequirement>;

function readDirectives(directives: readonly ConstDirectiveNode[] | undefined): SecurityRequirement | null {
  let scopes: string[][] = [];
  for (const d of directives ?? []) {
    if (d.name.value === 'requiresScopes') {
      const arg = d.arguments?.find((a) => a.name.value === 'scopes');
      if (arg?.value.kind === Kind.LIST) {
        scopes = arg.value.values.map((inner) => (inner.kind === Kind.LIST ? inner.values.flatMap((v) => (v.kind === Kind.STRING ? [v.value] : [])) : []));
      }
    }
  }
  return scopes.length > 0 ? { scopes } : null;
}

export function securityMapFromSdl(sdl: DocumentNode): SecurityMap {
  const map = new Map<string, SecurityRequirement>();
  const merge = (key: string, req: SecurityRequirement | null) => {
    if (!req) return;
    const existing = map.get(key);
    map.set(key, existing ? { scopes: [...existing.scopes, ...req.scopes] } : req);
  };
  for (const def of sdl.definitions) {
    switch (def.kind) {
      case Kind.OBJECT_TYPE_DEFINITION:
      case Kind.OBJECT_TYPE_EXTENSION:
      case Kind.INTERFACE_TYPE_DEFINITION:
      case Kind.INTERFACE_TYPE_EXTENSION:
        merge(def.name.value, readDirectives(def.directives));
        for (const field of def.fields ?? []) merge(`${def.name.value}.${field.name.value}`, readDirectives(field.directives));
        break;
      case Kind.SCALAR_TYPE_DEFINITION:
      case Kind.ENUM_TYPE_DEFINITION:
        merge(def.name.value, readDirectives(def.directives));
        break;
      default:
        break;
    }
  }
  return map;
}

export interface OperationAuthorization {
  /** Canonical scopes the operation needs but the credential lacks (empty when allowed). */
  missingScopes: string[];
  /** Fields that were refused, as "Type.field", for the error message and logs. */
  deniedFields: string[];
}

/** The requirements one operation meets on its way: each checked field as "Type.field" with what it (or its type) demands. */
export type OperationRequirements = ReadonlyArray<readonly [field: string, requirement: SecurityRequirement]>;

/**
 * Walks the selected operation with the schema's type information and lists every field (including those inside
 * fragments and `_entities` type conditions) that the security map guards. It depends on the document and the
 * schema only, so callers cache it per parsed document (scope-plugin.ts); the per-request part is
 * authorizeRequirements.
 */
export function operationRequirements(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  security: SecurityMap,
): OperationRequirements {
  const requirements: Array<readonly [string, SecurityRequirement]> = [];
  const add = (key: string, requirement: SecurityRequirement | undefined) => {
    if (requirement && requirement.scopes.length > 0) requirements.push([key, requirement]);
  };
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const d of document.definitions) if (d.kind === Kind.FRAGMENT_DEFINITION) fragments.set(d.name.value, d);
  const walked = new Set<string>();
  // Each definition gets a fresh TypeInfo; fragments are walked once, and only if the operation spreads them.
  const walk = (node: OperationDefinitionNode | FragmentDefinitionNode) => {
    const typeInfo = new TypeInfo(schema);
    const spreads: string[] = [];
    visit(
      node,
      visitWithTypeInfo(typeInfo, {
        Field() {
          const parent = typeInfo.getParentType();
          const field = typeInfo.getFieldDef();
          if (!parent || !field) return;
          const key = `${parent.name}.${field.name}`;
          add(key, security.get(key));
          add(key, security.get(getNamedType(field.type).name));
        },
        FragmentSpread(spread) {
          spreads.push(spread.name.value);
        },
      }),
    );
    for (const name of spreads) {
      const fragment = fragments.get(name);
      if (fragment && !walked.has(name)) {
        walked.add(name);
        walk(fragment);
      }
    }
  };
  walk(operation);
  return requirements;
}

/** Checks a credential's scopes against an operation's requirements. */
export function authorizeRequirements(requirements: OperationRequirements, grantedScopes: readonly string[]): OperationAuthorization {
  const missing = new Set<string>();
  const denied = new Set<string>();
  for (const [key, requirement] of requirements) {
    const lacking = missingScopes(grantedScopes, requirement.scopes);
    if (lacking) {
      lacking.forEach((s) => missing.add(s));
      denied.add(key);
    }
  }
  return { missingScopes: [...missing].sort(), deniedFields: [...denied].sort() };
}

/** Both steps at once, for a one-off check. */
export function authorizeOperation(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  security: SecurityMap,
  grantedScopes: readonly string[],
): OperationAuthorization {
  return authorizeRequirements(operationRequirements(schema, document, operation, security), grantedScopes);
}
