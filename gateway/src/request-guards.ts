import { createHash } from 'node:crypto';
import type { NextFunction, Request, Response } from 'express';
import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError, Kind, parse, type ASTVisitor, type DocumentNode, type OperationDefinitionNode, type ValidationContext } from 'graphql';
import { graphqlErrorBody, requestError } from '@linepack/lib/errors';
import { MAX_BASE64_CHARACTERS } from '@linepack/lib/scalars';

/**
 * Bounds on the shape of a GraphQL request that hold before graphql-js ever sees it. Parsing, validation and
 * variable coercion recurse, so a query or a JSON value nested thousands deep would overflow the stack (a 500
 * and a wasted core); strings of megabytes would be stored and echoed back in errors. These are refused with a
 * 400 naming the rule, and every limit is in the README (Errors and limits).
 */
export const requestShapeLimits = {
  /** Braces, brackets and parentheses open at once in the query text. */
  maxQueryNesting: 64,
  /** Objects and arrays open at once in the variables (a GeoJSON polygon needs 4). */
  maxVariableNesting: 32,
  /** Characters in any one string, in the variables or as a literal in the query. */
  maxStringLength: 10_000,
} as const;

/** The deepest nesting of `{ ( [` in a GraphQL document, skipping strings, block strings and comments. */
export function queryNesting(query: string): number {
  let depth = 0;
  let deepest = 0;
  for (let i = 0; i < query.length; i++) {
    const c = query[i];
    if (c === '#') {
      while (i < query.length && query[i] !== '\n' && query[i] !== '\r') i++;
    } else if (c === '"') {
      if (query.startsWith('"""', i)) {
        const end = query.indexOf('"""', i + 3);
        // An escaped \""" inside a block string does not end it.
        let close = end;
        while (close !== -1 && query[close - 1] === '\\') close = query.indexOf('"""', close + 3);
        i = close === -1 ? query.length : close + 2;
      } else {
        i++;
        while (i < query.length && query[i] !== '"' && query[i] !== '\n') i += query[i] === '\\' ? 2 : 1;
      }
    } else if (c === '{' || c === '(' || c === '[') {
      depth++;
      if (depth > deepest) deepest = depth;
    } else if (c === '}' || c === ')' || c === ']') {
      depth--;
    }
  }
  return deepest;
}

type VariableProblem = { path: string; rule: string };

interface Visit {
  value: unknown;
  depth: number;
  parent: Visit | null;
  key: string | number | null;
}

function pathOf(visit: Visit): string {
  const keys: Array<string | number> = [];
  for (let v: Visit | null = visit; v && v.key !== null; v = v.parent) keys.push(v.key);
  return (
    'variables' +
    keys
      .reverse()
      .map((k) => (typeof k === 'number' ? `[${k}]` : `.${k}`))
      .join('')
  );
}

/** The rule a string or number breaks, or null. */
function scalarRule(value: unknown): string | null {
  if (typeof value === 'string' && value.length > requestShapeLimits.maxStringLength) {
    return `is ${value.length} characters long; at most ${requestShapeLimits.maxStringLength} are accepted`;
  }
  // JSON.parse turns 1e309 into Infinity.
  if (typeof value === 'number' && !Number.isFinite(value)) return 'is not a finite number';
  return null;
}

/**
 * Top-level variables the operation that runs declares as `Base64` or `Base64!` (bytes of an upload part): exempt from
 * the string limit, since their scalar bounds them (4 MiB) and the subgraph checks them; any other use of a long string
 * is refused. Read from the parsed document — the operation selected by `operationName`, or the only one — so a
 * `$data: Base64` in a comment, a string or another operation of the document exempts nothing. A query that does not
 * parse exempts nothing (graphql-js refuses it anyway).
 */
export function base64Variables(query: unknown, operationName?: unknown): Set<string> {
  const names = new Set<string>();
  if (typeof query !== 'string') return names;
  let document: DocumentNode;
  try {
    document = parse(query, { noLocation: true });
  } catch {
    return names;
  }
  const operations = document.definitions.filter((d): d is OperationDefinitionNode => d.kind === Kind.OPERATION_DEFINITION);
  const selected =
    typeof operationName === 'string' && operationName !== ''
      ? operations.find((o) => o.name?.value === operationName)
      : operations.length === 1
        ? operations[0]
        : undefined;
  for (const definition of selected?.variableDefinitions ?? []) {
    const type = definition.type.kind === Kind.NON_NULL_TYPE ? definition.type.type : definition.type;
    if (type.kind === Kind.NAMED_TYPE && type.name.value === 'Base64') names.add(definition.variable.name.value);
  }
  return names;
}

/**
 * The first variable value that breaks a limit, found without recursion (it is the input being bounded) and
 * without building a path for every value (a 10,000-item batch has 80,000 of them): only the offender's.
 */
export function variableProblem(variables: unknown, base64Names: ReadonlySet<string> = new Set()): VariableProblem | null {
  const root: Visit = { value: variables, depth: 0, parent: null, key: null };
  const rootRule = scalarRule(variables);
  if (rootRule) return { path: pathOf(root), rule: rootRule };
  if (base64Names.size > 0 && variables !== null && typeof variables === 'object' && !Array.isArray(variables)) {
    const rest: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(variables)) {
      if (!base64Names.has(name) || typeof value !== 'string') rest[name] = value;
      else if (value.length > MAX_BASE64_CHARACTERS)
        return { path: `variables.${name}`, rule: `is ${value.length} characters long; a Base64 value is at most ${MAX_BASE64_CHARACTERS}` };
    }
    return variableProblem(rest);
  }
  const stack: Visit[] = [root];
  while (stack.length > 0) {
    const visit = stack.pop()!;
    const { value, depth } = visit;
    if (value === null || typeof value !== 'object') continue;
    if (depth >= requestShapeLimits.maxVariableNesting)
      return { path: pathOf(visit), rule: `nests deeper than ${requestShapeLimits.maxVariableNesting} levels` };
    // Indexed and for-in loops: no per-value allocation unless something is pushed or wrong.
    const isArray = Array.isArray(value);
    const keys: Array<string | number> | null = isArray ? null : Object.keys(value);
    const count = isArray ? value.length : keys!.length;
    for (let i = 0; i < count; i++) {
      const key = isArray ? i : keys![i]!;
      const child: unknown = (value as Record<string | number, unknown>)[key];
      if (child !== null && typeof child === 'object') {
        stack.push({ value: child, depth: depth + 1, parent: visit, key });
      } else if (typeof child === 'string' ? child.length > requestShapeLimits.maxStringLength : typeof child === 'number' && !Number.isFinite(child)) {
        // Scalars get no stack entry unless they break a rule.
        return { path: pathOf({ value: child, depth: depth + 1, parent: visit, key }), rule: scalarRule(child)! };
      }
    }
  }
  return null;
}

const INVALID_JSON = Symbol('invalid JSON');

/** A request parameter as sent: GET requests carry variables and extensions as JSON text. */
function jsonParameter(value: unknown): unknown {
  if (typeof value !== 'string') return value;
  try {
    return JSON.parse(value) as unknown;
  } catch {
    return INVALID_JSON;
  }
}

/**
 * Express middleware for /graphql, after the JSON body parser: refuses what graphql-js should never be handed,
 * and a persisted-query hash that does not match its query.
 */
export function requestShapeGuard(req: Request, res: Response, next: NextFunction): void {
  // GET: the parameters as Apollo Server reads them (URLSearchParams, every parameter; Express's req.query
  // stops at 1,000 and could be made to miss the query).
  const body = (req.method === 'GET' ? Object.fromEntries(new URL(req.originalUrl, 'http://gateway').searchParams) : req.body) as
    { query?: unknown; variables?: unknown; extensions?: unknown; operationName?: unknown } | undefined;
  const refuse = (code: 'GRAPHQL_PARSE_FAILED' | 'BAD_USER_INPUT', message: string) => void res.status(400).json(graphqlErrorBody(code, message));
  if (!body || typeof body !== 'object') return next();
  const { query } = body;
  if (typeof query === 'string') {
    const nesting = queryNesting(query);
    if (nesting > requestShapeLimits.maxQueryNesting) {
      return refuse('GRAPHQL_PARSE_FAILED', `the query nests ${nesting} levels deep; at most ${requestShapeLimits.maxQueryNesting} are accepted`);
    }
  }
  const variables = jsonParameter(body.variables);
  if (variables === INVALID_JSON) return refuse('BAD_USER_INPUT', 'variables is not valid JSON');
  let problem = variableProblem(variables);
  // Only a request with a long string pays for parsing its query here: an upload part declared Base64 is exempt.
  if (problem && /^variables\.[_A-Za-z][_0-9A-Za-z]*$/.test(problem.path)) {
    const base64Names = base64Variables(query, body.operationName);
    if (base64Names.size > 0) problem = variableProblem(variables, base64Names);
  }
  if (problem) return refuse('BAD_USER_INPUT', `${problem.path} ${problem.rule}`);

  const extensions = jsonParameter(body.extensions);
  if (extensions === INVALID_JSON) return refuse('BAD_USER_INPUT', 'extensions is not valid JSON');
  const hash = (extensions as { persistedQuery?: { sha256Hash?: unknown } } | undefined)?.persistedQuery?.sha256Hash;
  if (typeof query === 'string' && typeof hash === 'string' && createHash('sha256').update(query).digest('hex') !== hash.toLowerCase()) {
    return refuse('BAD_USER_INPUT', 'the persisted-query sha256Hash does not match the query');
  }
  next();
}

/**
 * Validation rule: literals a client wrote in the query are bounded like variables — no string longer than the
 * limit, and no number graphql-js would turn into Infinity (its Float scalar accepts `1e309` as a literal).
 */
export function literalLimitsRule(context: ValidationContext): ASTVisitor {
  return {
    StringValue(node) {
      if (node.value.length > requestShapeLimits.maxStringLength) {
        context.reportError(
          new GraphQLError(`a string literal is ${node.value.length} characters long; at most ${requestShapeLimits.maxStringLength} are accepted`, {
            nodes: [node],
          }),
        );
      }
    },
    FloatValue(node) {
      if (!Number.isFinite(Number(node.value))) {
        context.reportError(new GraphQLError(`Float cannot represent ${node.value.slice(0, 40)}: out of range`, { nodes: [node] }));
      }
    },
  };
}

/**
 * Validation rule: an operation whose root type the schema lacks (`subscription { … }`: Linepack has no
 * subscriptions) is the client's mistake, refused at validation as graphql-js 17's KnownOperationTypesRule does. It
 * used to reach the query planner, whose INVALID_GRAPHQL answered 500.
 */
export function knownRootTypeRule(context: ValidationContext): ASTVisitor {
  return {
    OperationDefinition(node) {
      if (!context.getSchema().getRootType(node.operation)) {
        context.reportError(new GraphQLError(`the schema has no ${node.operation} root type: send a query or a mutation`, { nodes: [node] }));
      }
    },
  };
}

/**
 * Operation selection is the client's to get right: a document with several operations and no operationName, or an
 * operationName it does not contain, is a 400 OPERATION_RESOLUTION_FAILURE (Apollo Server's code for it) before
 * anything runs. @apollo/gateway would otherwise throw INVALID_GRAPHQL from its executor: a 500.
 */
export function operationSelectionPlugin<C extends object>(): ApolloServerPlugin<C> {
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({ operation, request }) {
          if (operation) return;
          const named = request.operationName;
          throw requestError(
            'OPERATION_RESOLUTION_FAILURE',
            named
              ? `Unknown operation named "${named}".`
              : 'Must provide operation name if query contains multiple operations: send operationName with the request.',
          );
        },
      };
    },
  };
}
