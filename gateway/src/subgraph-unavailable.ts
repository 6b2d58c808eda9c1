import type { ApolloServerPlugin } from '@apollo/server';
import type { GraphQLDataSourceProcessOptions, RemoteGraphQLDataSource } from '@apollo/gateway';
import { Kind, parse, type DocumentNode, type GraphQLFormattedError, type SelectionSetNode } from 'graphql';
import type { GatewayContext } from './context';

/**
 * A subgraph that cannot answer — its process gone (connection refused or reset), a proxy in front of it answering
 * 502/503/504, or its database unreachable (the subgraph's DATABASE_UNAVAILABLE, lib/errors.ts) — is answered as
 * Apollo Router and Hive Gateway answer a failed subgraph: the rest of the request is served, and each path the
 * subgraph would have filled is null with an error coded SUBGRAPH_UNAVAILABLE naming the subgraph
 * (extensions.serviceName) and nothing else. When every subgraph request of a request was unavailable, nothing was
 * served: the whole answer is HTTP 503 with a Retry-After, so clients, load balancers and the error-ratio alert
 * see an outage, not a success.
 */
export const SUBGRAPH_UNAVAILABLE = 'SUBGRAPH_UNAVAILABLE';

/** What a subgraph answers when its database does not (lib/errors.ts). */
const DATABASE_UNAVAILABLE = 'DATABASE_UNAVAILABLE';

/**
 * Retry-After of a 503: long enough for a restarted subgraph process or a MongoDB failover (a few seconds), short
 * enough that a client does not wait long after it is back.
 */
export const UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/** Errors of a connection that could not be made: the subgraph received nothing (Node's and undici's codes). */
const connectFailures = new Set(['ECONNREFUSED', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);
/** Errors of a connection lost after the request was sent: the subgraph may have run it. */
const lostConnections = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED']);
const unavailableStatuses = new Set([502, 503, 504]);

/** How a subgraph was unavailable: `unreached` when it certainly received nothing, `lost` when it may have run the request. */
export type Unavailability = 'unreached' | 'lost';

type SubgraphResponse = Awaited<ReturnType<RemoteGraphQLDataSource<GatewayContext>['process']>>;

/** Subgraph requests of a request that found their subgraph unavailable (GatewayContext.subgraphFetches counts all). */
const unavailableFetches = new WeakMap<object, number>();

/** `fetches` more of the request's subgraph requests found their subgraph unavailable (the expensive-operation lane reports its own). */
export function countUnavailable(context: object, fetches = 1): void {
  unavailableFetches.set(context, (unavailableFetches.get(context) ?? 0) + fetches);
}

/** How many of the request's subgraph requests found their subgraph unavailable. */
export function unavailableFetchesOf(context: object): number {
  return unavailableFetches.get(context) ?? 0;
}

/**
 * Whether a failed subgraph fetch means the subgraph is unavailable, and how; null when it does not. A fetch aborted
 * by the request's own deadline or by its client leaving is not (deadline.ts answers the first with 504).
 */
export function unavailabilityOf(err: unknown, signal: AbortSignal | undefined): Unavailability | null {
  if (signal?.aborted) return null;
  for (let e: unknown = err; e; e = (e as { cause?: unknown }).cause) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && connectFailures.has(code)) return 'unreached';
    if (typeof code === 'string' && lostConnections.has(code)) return 'lost';
    // A proxy's 502/503/504: whether the subgraph behind it ran the request is unknown.
    const status = (e as { extensions?: { response?: { status?: unknown } } }).extensions?.response?.status;
    if (typeof status === 'number' && unavailableStatuses.has(status)) return 'lost';
  }
  return null;
}

/** The response keys of an operation's top-level fields (through inline fragments). */
function rootKeys(selectionSet: SelectionSetNode): string[] {
  return selectionSet.selections.flatMap((selection) =>
    selection.kind === Kind.FIELD
      ? selection.name.value === '__typename'
        ? []
        : [selection.alias?.value ?? selection.name.value]
      : selection.kind === Kind.INLINE_FRAGMENT
        ? rootKeys(selection.selectionSet)
        : [],
  );
}

/**
 * `mayHaveWritten`: the request was a mutation the subgraph may have run before the connection was lost, which the
 * client is told, as a deadline's 504 tells it (deadline.ts).
 */
function unavailableError(subgraph: string, path: (string | number)[], mayHaveWritten = false): GraphQLFormattedError {
  const message = mayHaveWritten
    ? `the ${subgraph} service became unavailable while it ran this mutation, which may have been applied; retrying it with the same idempotency key or version is safe`
    : `the ${subgraph} service is unavailable; retry shortly`;
  return { message, path, extensions: { code: SUBGRAPH_UNAVAILABLE } };
}

/**
 * The answer to a subgraph request whose subgraph is unavailable: no data, and an error at each path it would have
 * filled — each field of each entity of an entity fetch (@apollo/gateway maps `_entities.<i>` to the client's path
 * of that entity), or each root field.
 */
export function unavailableAnswer(subgraph: string, options: GraphQLDataSourceProcessOptions<GatewayContext>, how: Unavailability): SubgraphResponse {
  if ('context' in options && options.context) countUnavailable(options.context);
  const { request } = options;
  const document: DocumentNode | undefined = ('document' in options ? options.document : undefined) ?? (request.query ? parse(request.query) : undefined);
  const operation = document?.definitions.find((d) => d.kind === Kind.OPERATION_DEFINITION);
  const keys = operation ? rootKeys(operation.selectionSet) : [];
  const representations = request.variables?.['representations'];
  let paths: (string | number)[][];
  if (Array.isArray(representations)) {
    // An entity fetch selects `_entities(representations: …) { … on T { fields } }`: the fields of each entity.
    const entities = operation?.selectionSet.selections.find((s) => s.kind === Kind.FIELD && s.name.value === '_entities');
    const fields = entities?.kind === Kind.FIELD && entities.selectionSet ? rootKeys(entities.selectionSet) : [];
    paths = representations.flatMap((_, i) => (fields.length > 0 ? fields.map((field) => ['_entities', i, field]) : [['_entities', i]]));
  } else {
    paths = keys.map((key) => [key]);
  }
  const mayHaveWritten = how === 'lost' && operation?.kind === Kind.OPERATION_DEFINITION && operation.operation === 'mutation';
  return { data: null, errors: (paths.length > 0 ? paths : [[]]).map((path) => unavailableError(subgraph, path, mayHaveWritten)) };
}

/** Nothing in a subgraph's data but nulls (or lists of them): the subgraph served nothing. */
function servedNothing(data: Record<string, unknown> | null | undefined): boolean {
  return !data || Object.values(data).every((value) => value == null || (Array.isArray(value) && value.every((v) => v == null)));
}

/**
 * A subgraph's own answer when its database was unreachable: its DATABASE_UNAVAILABLE errors become
 * SUBGRAPH_UNAVAILABLE (the client is not told which part of a service failed), and the request counts as unavailable
 * when the subgraph served nothing else.
 */
export function withDatabaseUnavailability(subgraph: string, response: SubgraphResponse, context: object | undefined): SubgraphResponse {
  if (!response.errors?.some((e) => e.extensions?.['code'] === DATABASE_UNAVAILABLE)) return response;
  if (context && servedNothing(response.data)) countUnavailable(context);
  return {
    ...response,
    errors: response.errors.map((e) => (e.extensions?.['code'] === DATABASE_UNAVAILABLE ? unavailableError(subgraph, [...(e.path ?? [])]) : e)),
  };
}

/**
 * 503 with a Retry-After when the request's every subgraph request found its subgraph unavailable: nothing was
 * served. A request that got anything (another subgraph answered) stays 200 with its partial data and errors.
 */
export function subgraphUnavailablePlugin(retryAfterSeconds = UNAVAILABLE_RETRY_AFTER_SECONDS): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          const unavailable = unavailableFetchesOf(contextValue);
          const fetches = contextValue.subgraphFetches ?? 0;
          if (unavailable === 0 || unavailable < fetches || response.body.kind !== 'single') return;
          if (response.http.status !== undefined && response.http.status !== 200) return;
          response.http.status = 503;
          response.http.headers.set('retry-after', String(retryAfterSeconds));
        },
      };
    },
  };
}
