import type { ApolloServerPlugin } from '@apollo/server';
import { rateLimitDecisions } from '@linepack/lib/metrics';
import {
  getNamedType,
  getNullableType,
  isCompositeType,
  isListType,
  isObjectType,
  isInterfaceType,
  isAbstractType,
  Kind,
  type DocumentNode,
  type FragmentDefinitionNode,
  type GraphQLField,
  type GraphQLNamedType,
  type GraphQLSchema,
  type OperationDefinitionNode,
  type SelectionSetNode,
  type FieldNode,
  type ValidationContext,
  type ASTVisitor,
  GraphQLError,
} from 'graphql';
import { getArgumentValues, getVariableValues } from 'graphql/execution/values';
import { requestError } from '@linepack/lib/errors';
import { MAX_PAGE_SIZE } from '@linepack/lib/pagination';
import type { GatewayContext } from './context';
import type { TieredRateLimiter } from './rate-limit';
import type { ExpensiveOperations } from './expensive-operations';

/**
 * What one operation may cost, computed after its variables are known (graphql-armor's cost limit counts a
 * `first` only when it is a literal, so `first: $n` with n = 500 passed as 1). README: Rate limits › Cost.
 *
 * - Every object the response can hold costs 1 (an entity another subgraph resolves included); scalars cost 0.
 * - A connection with a `first` argument holds up to `first` edges (its default when omitted or null); any
 *   other list counts as `listSizes` says or `defaultListSize` items.
 * - A mutation field costs `mutationBaseCost` plus one per element of its list arguments plus its result (a
 *   10,000-item recordMeasurements costs 10,011), and a request may call each mutation once, fragments
 *   included (30 aliased batches in one request would multiply the work its single rate-limit point paid for).
 */
export const costLimits = {
  /** Refused beyond this, whatever the budget (400). */
  maxOperationCost: 250_000,
  defaultListSize: 10,
  mutationBaseCost: 10,
  /** Fields the pricing walk visits at most (a 20,000-token document can fan out much further through fragments). */
  maxFieldsPriced: 50_000,
} as const;

/** Lists without `first` whose length is known to exceed `defaultListSize`. */
const listSizes: Readonly<Record<string, number>> = {
  // Active keys are capped at 100; revoked ones are listed too.
  'Query.apiKeys': 200,
};

function tooComplex(): GraphQLError {
  return requestError(
    'GRAPHQL_VALIDATION_FAILED',
    `the operation fans out to more than ${costLimits.maxFieldsPriced} fields through its fragments; ask for less in one request`,
  );
}

/**
 * A connection's page size: `first` as sent, or its default when omitted or null (the subgraphs serve their
 * default page for `first: null`, so it must be priced as that, not as nothing).
 */
function pageSizeArgument(field: GraphQLField<unknown, unknown>, args: Record<string, unknown>): number | undefined {
  const definition = field.args.find((arg) => arg.name === 'first');
  if (!definition) return undefined;
  const value = args['first'] ?? definition.defaultValue ?? MAX_PAGE_SIZE;
  return typeof value === 'number' ? Math.max(0, value) : MAX_PAGE_SIZE;
}

export interface OperationCost {
  cost: number;
}

/**
 * The fields a selection set asks for, fragments expanded the way graphql-js collects them: inline fragments
 * inlined, each named fragment once per selection set (spreading it twice runs it once, so it is priced once).
 */
function collectFields(
  selectionSet: SelectionSetNode,
  fragmentOf: (name: string) => FragmentDefinitionNode | undefined,
  visited = new Set<string>(),
  out: FieldNode[] = [],
): FieldNode[] {
  for (const selection of selectionSet.selections) {
    if (selection.kind === Kind.FIELD) out.push(selection);
    else if (selection.kind === Kind.INLINE_FRAGMENT) collectFields(selection.selectionSet, fragmentOf, visited, out);
    else {
      const name = selection.name.value;
      const fragment = fragmentOf(name);
      if (!fragment || visited.has(name)) continue;
      visited.add(name);
      collectFields(fragment.selectionSet, fragmentOf, visited, out);
    }
  }
  return out;
}

/**
 * Validation rule: each mutation field at most once per operation, fragments included. A validation rule, so 30
 * aliases of a 10,000-item batch are refused before their variables are even coerced.
 */
export function oneCallPerMutationRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(node) {
      if (node.operation !== 'mutation') return;
      const seen = new Set<string>();
      for (const field of collectFields(node.selectionSet, (name) => context.getFragment(name) ?? undefined)) {
        const name = field.name.value;
        if (seen.has(name)) {
          context.reportError(
            new GraphQLError(`a request may call each mutation once; ${name} appears more than once (send a batch input instead)`, { nodes: [field] }),
          );
          return;
        }
        seen.add(name);
      }
    },
  };
}

/** A field by name on `type`, or, for an interface or union (fields selected in `... on Member`), on a member. */
function fieldDefinition(schema: GraphQLSchema, type: GraphQLNamedType, name: string): GraphQLField<unknown, unknown> | undefined {
  if (isObjectType(type) || isInterfaceType(type)) {
    const own = type.getFields()[name];
    if (own) return own;
  }
  if (isAbstractType(type)) {
    for (const member of schema.getPossibleTypes(type)) {
      const field = member.getFields()[name];
      if (field) return field;
    }
  }
  return undefined;
}

/** List elements (at any depth) above which a variable is priced as sent rather than coerced first (operationCost). */
const PRICED_AS_SENT_ABOVE_ELEMENTS = 1_000;

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
  // A list variable holding a long list (a 10,000-item batch) is priced as sent, not coerced: coercing it here held the event
  // loop that serves every tenant ~80 ms per batch (issue 31). Its price only counts list elements, which coercion
  // never adds to (an unknown field or a wrong type is an error), and execution — on the expensive-operation lane for
  // such an operation — coerces it and refuses it if it is invalid. Every other variable (page sizes) is coerced here.
  const definitions = operation.variableDefinitions ?? [];
  const counted = definitions.filter(
    (d) =>
      (d.type.kind === Kind.NON_NULL_TYPE ? d.type.type : d.type).kind === Kind.LIST_TYPE &&
      listElements(rawVariables[d.variable.name.value]) > PRICED_AS_SENT_ABOVE_ELEMENTS,
  );
  const coerced = getVariableValues(
    schema,
    definitions.filter((d) => !counted.includes(d)),
    rawVariables,
    { maxErrors: 1 },
  );
  if (coerced.errors) throw requestError('BAD_USER_INPUT', coerced.errors[0]!.message);
  const variables = { ...coerced.coerced, ...Object.fromEntries(counted.map((d) => [d.variable.name.value, rawVariables[d.variable.name.value]])) };
  const fragments = new Map<string, FragmentDefinitionNode>();
  for (const definition of document.definitions) if (definition.kind === Kind.FRAGMENT_DEFINITION) fragments.set(definition.name.value, definition);

  const fragmentOf = (name: string) => fragments.get(name);
  // Fields priced; a document that fans out further than this (fragments within fragments within aliases) is
  // refused rather than walked (the walk would itself be the expensive part).
  let budget = costLimits.maxFieldsPriced;

  /** `pageSize`: the `first` of the connection whose selection this is; its list fields (edges) hold that many. */
  const costOf = (selectionSet: SelectionSetNode, parentType: GraphQLNamedType, pageSize?: number): number => {
    let total = 0;
    for (const selection of collectFields(selectionSet, fragmentOf)) {
      if (--budget < 0) throw tooComplex();
      const field = fieldDefinition(schema, parentType, selection.name.value);
      if (!field || !selection.selectionSet) continue;
      const returned = getNamedType(field.type);
      if (!isCompositeType(returned)) continue;
      const first = pageSizeArgument(field, getArgumentValues(field, selection, variables));
      if (isListType(getNullableType(field.type))) {
        const items = first ?? pageSize ?? listSizes[`${parentType.name}.${field.name}`] ?? costLimits.defaultListSize;
        total += items * (1 + costOf(selection.selectionSet, returned));
      } else {
        total += 1 + costOf(selection.selectionSet, returned, first);
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
  let cost = costOf(operation.selectionSet, root);
  if (operation.operation === 'mutation') {
    for (const selection of collectFields(operation.selectionSet, fragmentOf)) {
      const field = root.getFields()[selection.name.value];
      if (!field) continue;
      // Plus every list element of its arguments, wherever it sits in them.
      cost += costLimits.mutationBaseCost + listElements(getArgumentValues(field, selection, variables));
    }
  }
  return { cost };
}

/**
 * Prices each operation before it runs: refuses one over the per-request maximum or calling a mutation twice
 * (400), spends the credential's per-minute cost budget (429 when spent), and reports both in `extensions.cost`.
 * An expensive one (expensive-operations.ts) then waits for its tenant's turn, and holds its slot until its response
 * is sent; a tenant whose queue is full is refused before its budget is spent.
 */
export function costPlugin(rateLimiter: TieredRateLimiter, expensiveOperations?: ExpensiveOperations): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      let report: { requested: number; maximum: number; budgetRemaining?: number } | null = null;
      let releaseSlot: (() => void) | null = null;
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
          const expensive = expensiveOperations?.isExpensive(cost) ? expensiveOperations : null;
          if (expensive && !expensive.hasRoomFor(credential.tenantId, contextValue.deadline.at - Date.now())) {
            rateLimitDecisions.inc({ tier: credential.tier, decision: 'concurrency_limited' });
            throw expensive.refusal(credential.tenantId);
          }
          const budget = await rateLimiter.consumeCost(credential.rateLimitKey, credential.tier, cost);
          if (!budget.allowed) {
            rateLimitDecisions.inc({ tier: credential.tier, decision: 'cost_limited' });
            throw requestError(
              'RATE_LIMITED',
              `cost budget of the ${credential.tier} tier spent (${budget.limit} per minute, this operation costs ${cost}); retry in ${budget.retryAfterSeconds} s`,
              { retryAfterSeconds: budget.retryAfterSeconds, cost: { requested: cost, budgetRemaining: budget.remaining } },
              { 'Retry-After': String(budget.retryAfterSeconds) },
            );
          }
          report = { requested: cost, maximum: costLimits.maxOperationCost, ...(budget.remaining !== null ? { budgetRemaining: budget.remaining } : {}) };
          if (expensive) {
            try {
              releaseSlot = await expensive.admit(credential.tenantId, {
                signal: contextValue.deadline.signal,
                context: contextValue,
                rests: operation.operation === 'query',
              });
            } catch (err) {
              if (err instanceof GraphQLError) {
                rateLimitDecisions.inc({ tier: credential.tier, decision: 'concurrency_limited' });
                throw err;
              }
              // The request ended (deadline or client gone) while it waited: deadline.ts answers a passed deadline with 504.
              throw requestError('RATE_LIMITED', 'the request ended while it waited for its turn to run an expensive operation');
            }
          }
        },
        async willSendResponse({ response }) {
          // A second willSendResponse would release nothing twice: admit's release function ignores later calls.
          releaseSlot?.();
          if (report && response.body.kind === 'single') {
            response.body.singleResult.extensions = { ...response.body.singleResult.extensions, cost: report };
          }
        },
      };
    },
  };
}
