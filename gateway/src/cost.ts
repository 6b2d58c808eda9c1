import type { ApolloServerPlugin } from '@apollo/server';
import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type ValidationContext,
  type ASTVisitor,
  GraphQLError,
} from 'graphql';
import { getArgumentValues, getVariableValues } from 'graphql/execution/values';
import { requestError } from '@linepack/lib/errors';
import type { GatewayContext } from './context';
import type { TieredRateLimiter } from './rate-limit';

/**
 * What one operation may cost, computed after its variables are known (graphql-armor's cost limit counts a
 * `first` only when it is a literal, so `first: $n` with n = 500 passed as 1). README: Rate limits › Cost.
 *
 * - Every object the response can hold costs 1 (an entity another subgraph resolves included); scalars cost 0.
 * - A connection with a `first` argument holds up to `first` edges (its default when omitted); any other list
 *   counts as `defaultListSize` items.
 * - A mutation field costs `mutationBaseCost` plus one per element of its list arguments (a 10,000-item
 *   recordMeasurements costs 10,010), and a request may call each mutation once (30 aliased batches in one
 *   request would multiply the work its single rate-limit point paid for).
 */
export const costLimits = {
  /** Refused beyond this, whatever the budget (400). */
  maxOperationCost: 250_000,
  defaultListSize: 10,
  mutationBaseCost: 10,
} as const;

export interface OperationCost {
  cost: number;
}

/**
 * Validation rule: each mutation field at most once per operation. A validation rule, so 30 aliases of a
 * 10,000-item batch are refused before their variables are even coerced.
 */
export function oneCallPerMutationRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(node) {
      if (node.operation !== 'mutation') return;
      const seen = new Set<string>();
      for (const selection of node.selectionSet.selections) {
        if (selection.kind !== Kind.FIELD) continue;
        const name = selection.name.value;
        if (seen.has(name)) {
          context.reportError(
            new GraphQLError(`a request may call each mutation once; ${name} appears more than once (send a batch input instead)`, { nodes: [selection] }),
          );
          return;
        }
        seen.add(name);
      }
    },
  };
}

function fieldDefinition(type: GraphQLNamedType, name: string): GraphQLField<unknown, unknown> | undefined {
  return isObjectType(type) || 'getFields' in type ? (type as { getFields(): Record<string, GraphQLField<unknown, unknown>> }).getFields()[name] : undefined;
}

function listElements(value: unknown): number {
  if (Array.isArray(value))
    return value.length + value.reduce<number>((n, v) => n + (Array.isArray(v) || (v && typeof v === 'object') ? listElements(v) : 0), 0);
  if (value && typeof value === 'object') return Object.values(value).reduce<number>((n, v) => n + listElements(v), 0);
  return 0;
}

/** Throws a GraphQLError (BAD_USER_INPUT) when the variables do not coerce; execution would refuse them anyway. */
export function operationCost(
  schema: GraphQLSchema,
  document: DocumentNode,
  operation: OperationDefinitionNode,
  rawVariables: Record<string, unknown>,
): OperationCost {
  const coerced = getVariableValues(schema, operation.variableDefinitions ?? [], rawVariables, { maxErrors: 1 });
  if (coerced.errors) throw requestError('BAD_USER_INPUT', coerced.errors[0]!.message);
  const variables = coerced.coerced;
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);

  /** `pageSize`: the `first` of the connection whose selection this is; its list fields (edges) hold that many. */
  const costOf = (selectionSet: SelectionSetNode, parentType: GraphQLNamedType, seen: ReadonlySet<string>, pageSize?: number): number => {
    let total = 0;
    for (const selection of selectionSet.selections) {
      if (selection.kind === Kind.INLINE_FRAGMENT) {
        const type = selection.typeCondition ? (schema.getType(selection.typeCondition.name.value) ?? parentType) : parentType;
        total += costOf(selection.selectionSet, type, seen, pageSize);
        continue;
      }
      if (selection.kind === Kind.FRAGMENT_SPREAD) {
        const name = selection.name.value;
        const fragment = fragments.get(name);
        // Validation refuses fragment cycles; `seen` keeps this walk finite regardless.
        if (!fragment || seen.has(name)) continue;
        total += costOf(fragment.selectionSet, schema.getType(fragment.typeCondition.name.value) ?? parentType, new Set([...seen, name]), pageSize);
        continue;
      }
      const field = fieldDefinition(parentType, selection.name.value);
      if (!field || !selection.selectionSet) continue;
      const returned = getNamedType(field.type);
      if (!isCompositeType(returned)) continue;
      const args = getArgumentValues(field, selection, variables);
      const first = typeof args['first'] === 'number' ? Math.max(0, args['first']) : undefined;
      if (isListType(getNullableType(field.type))) {
        const items = first ?? pageSize ?? costLimits.defaultListSize;
        total += items * (1 + costOf(selection.selectionSet, returned, seen));
      } else {
        total += 1 + costOf(selection.selectionSet, returned, seen, first);
      }
    }
    return total;
  };

  const root =
    operation.operation === 'mutation'
      ? schema.getMutationType()
      : operation.operation === 'subscription'
        ? schema.getSubscriptionType()
        : schema.getQueryType();
  if (!root) return { cost: 0 };
  let cost = costOf(operation.selectionSet, root, new Set());
  if (operation.operation === 'mutation') {
    for (const selection of operation.selectionSet.selections) {
      if (selection.kind !== Kind.FIELD || selection.name.value.startsWith('__')) continue;
      cost += costLimits.mutationBaseCost;
      // List elements of the arguments as sent (a variable's coerced value, or a literal list).
      for (const argument of selection.arguments ?? []) {
        const value = argument.value;
        if (value.kind === Kind.VARIABLE) cost += listElements(variables[value.name.value]);
        else if (value.kind === Kind.LIST) cost += value.values.length;
      }
    }
  }
  return { cost };
}

/**
 * Prices each operation before it runs: refuses one over the per-request maximum or calling a mutation twice
 * (400), spends the credential's per-minute cost budget (429 when spent), and reports both in `extensions.cost`.
 */
export function costPlugin(rateLimiter: TieredRateLimiter): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      let report: { requested: number; maximum: number; budgetRemaining?: number } | null = null;
      return {
        async didResolveOperation({ schema, document, operation, request, contextValue }) {
          if (!operation) return;
          const { cost } = operationCost(schema, document, operation, request.variables ?? {});
          if (cost > costLimits.maxOperationCost) {
            throw requestError(
              'GRAPHQL_VALIDATION_FAILED',
              `operation cost ${cost} exceeds the maximum of ${costLimits.maxOperationCost}: ask for smaller pages (first) or fewer nested lists`,
              { cost: { requested: cost, maximum: costLimits.maxOperationCost } },
            );
          }
          const { credential } = contextValue;
          const budget = await rateLimiter.consumeCost(credential.rateLimitKey, credential.tier, cost);
          if (!budget.allowed) {
            throw requestError(
              'RATE_LIMITED',
              `cost budget of the ${credential.tier} tier spent (${budget.limit} per minute, this operation costs ${cost}); retry in ${budget.retryAfterSeconds} s`,
              { retryAfterSeconds: budget.retryAfterSeconds, cost: { requested: cost, budgetRemaining: budget.remaining } },
              { 'Retry-After': String(budget.retryAfterSeconds) },
            );
          }
          report = { requested: cost, maximum: costLimits.maxOperationCost, ...(budget.remaining !== null ? { budgetRemaining: budget.remaining } : {}) };
        },
        async willSendResponse({ response }) {
          if (report && response.body.kind === 'single') {
            response.body.singleResult.extensions = { ...response.body.singleResult.extensions, cost: report };
          }
        },
      };
    },
  };
}
