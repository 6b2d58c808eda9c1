import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import { DEADLINE_HEADER, INTERNAL_IDENTITY_HEADER } from '@linepack/lib/identity';
import { EXPENSIVE_LANE, EXPENSIVE_LANE_HEADER } from '@linepack/lib/subgraph-lane';
import { Counter } from 'prom-client';
import { errorCodeLabel, metricsRegistry, subgraphFetchDuration, subgraphGraphqlErrors } from '@linepack/lib/metrics';
import type { GatewayContext } from './context';
import { fetchWithDeadline, REQUEST_KEY_HEADER } from './deadline';
import type { IdentityTokenCache } from './identity-tokens';
import { unavailabilityOf, unavailableAnswer, withDatabaseUnavailability } from './subgraph-unavailable';

/** A subgraph response as the data source hands it on. */
type SubgraphResponse = Awaited<ReturnType<RemoteGraphQLDataSource<GatewayContext>['process']>>;

interface InFlightFetch {
  response: Promise<SubgraphResponse>;
  /** Requests that joined this one; while there are none the first request keeps the answer to itself. */
  joined: number;
}

/**
 * Calls one subgraph. The client's credential never leaves the gateway: each request carries an identity token
 * minted for this subgraph alone (aud = subgraph name), reused per credential for part of its life
 * (identity-tokens.ts), with the request id and deadline beside it.
 *
 * Identical subgraph queries in flight at once for one identity are sent once (`deduplicate`): the later requests
 * wait for the first one's answer. Only when it cannot change what a client sees:
 *   - the incoming operation is a query (a query fetch inside a mutation runs after that mutation's writes);
 *   - same subgraph, same identity token claims (credential, tenant, scopes, session, address), same body;
 *   - the same tenant write counter, read at or after each request's arrival (rate-limit.ts admit/writeEpoch,
 *     recordWrite): a request that arrives after a mutation of its tenant finished never joins a read that began
 *     before it;
 *   - never the auth subgraph (sessions and keys change outside GraphQL mutations).
 * A joiner whose first request failed (its client went away, a refusal) sends its own request instead.
 */
export class AuthenticatedSubgraphDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  private readonly inFlight = new Map<string, InFlightFetch>();
  private readonly deduplicate: boolean;

  constructor(
    readonly name: string,
    url: string,
    private readonly identityTokens: IdentityTokenCache,
    deduplicate: boolean,
    /** This data source is the expensive-operation lane's: its requests are marked for the subgraph's lane. */
    private readonly expensiveLane = false,
  ) {
    // Aborted with the request they serve (deadline.ts); undici's request API (subgraph-fetch.ts).
    super({ url, fetcher: timedFetcher(name) });
    this.deduplicate = deduplicate && name !== 'auth';
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): void {
    // Health checks and schema loading have no request context; those never reach resolvers.
    if (!('credential' in context) || !context.credential) return;
    const gatewayContext = context as GatewayContext;
    const { requestId, deadline } = gatewayContext;
    gatewayContext.subgraphFetches = (gatewayContext.subgraphFetches ?? 0) + 1;
    request.http?.headers.set(INTERNAL_IDENTITY_HEADER, this.identityTokenFor(gatewayContext));
    request.http?.headers.set(DEADLINE_HEADER, String(deadline.at));
    request.http?.headers.set('x-request-id', requestId);
    request.http?.headers.set(REQUEST_KEY_HEADER, deadline.key);
    if (this.expensiveLane) request.http?.headers.set(EXPENSIVE_LANE_HEADER, EXPENSIVE_LANE);
  }

  /** A subgraph that cannot answer fails only the paths it would have filled (subgraph-unavailable.ts). */
  override async process(options: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<SubgraphResponse> {
    try {
      return await this.processShared(options);
    } catch (err) {
      const signal = 'context' in options && options.context?.deadline ? options.context.deadline.signal : undefined;
      const how = unavailabilityOf(err, signal);
      if (!how) throw err;
      return unavailableAnswer(this.name, options, how);
    }
  }

  private async processShared(options: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<SubgraphResponse> {
    const key = await this.sharingKey(options);
    if (!key) return super.process(options);
    const running = this.inFlight.get(key);
    if (running) {
      running.joined++;
      subgraphDeduplicatedFetches.inc({ subgraph: this.name });
      try {
        return answerFor(running, await running.response);
      } catch {
        // The first request's failure may be its own (its client left, its deadline passed): ask for ourselves.
        return super.process(options);
      }
    }
    const fetch: InFlightFetch = {
      joined: 0,
      response: super.process(options).finally(() => {
        // Removed before anyone reads the answer, so the number of joiners is final when answerFor runs.
        if (this.inFlight.get(key) === fetch) this.inFlight.delete(key);
      }),
    };
    this.inFlight.set(key, fetch);
    return answerFor(fetch, await fetch.response);
  }

  private identityTokenFor({ credential, clientAddress }: GatewayContext): string {
    return this.identityTokens.tokenFor(
      {
        subject: credential.subject,
        kind: credential.kind,
        tenantId: credential.tenantId,
        scopes: credential.scopes,
        clientAddress,
        ...(credential.sessionId ? { sessionId: credential.sessionId } : {}),
      },
      this.name,
    );
  }

  /** What makes two subgraph requests interchangeable, or null when this one must be sent on its own. */
  private async sharingKey(options: GraphQLDataSourceProcessOptions<GatewayContext>): Promise<string | null> {
    if (!this.deduplicate || !('incomingRequestContext' in options)) return null;
    const { context, request, incomingRequestContext } = options;
    if (incomingRequestContext.operation?.operation !== 'query' || !context.credential || !context.writeEpoch) return null;
    const writeEpoch = await context.writeEpoch();
    if (writeEpoch === undefined) return null;
    // The identity token names everything the subgraph is told about the caller.
    const { query, variables, operationName } = request;
    return [this.identityTokenFor(context), writeEpoch, JSON.stringify({ query, variables, operationName })].join('\u001f');
  }

  /**
   * Errors inside a subgraph's 200 answer (a resolver's NOT_FOUND, an internal error) are counted by code; its
   * database being unreachable is told as the subgraph being unavailable.
   */
  override didReceiveResponse({ response, context }: { response: GatewayGraphQLResponse; context: GatewayContext }): GatewayGraphQLResponse {
    for (const error of response.errors ?? []) subgraphGraphqlErrors.inc({ subgraph: this.name, code: errorCodeLabel(error.extensions?.['code']) });
    return withDatabaseUnavailability(this.name, response, 'credential' in context ? context : undefined);
  }

  /**
   * A subgraph refuses a whole request with a 4xx when it rejects the input itself (e.g. a custom
   * scalar such as GeoJSON that only the subgraph can parse). The gateway relays that error with its
   * message and code instead of turning it into an opaque internal error.
   */
  override async errorFromResponse(response: FetcherResponse): Promise<GraphQLError> {
    const error = await super.errorFromResponse(response);
    const body = (error.extensions['response'] as { body?: unknown } | undefined)?.body as
      { errors?: { message?: unknown; extensions?: { code?: unknown; field?: unknown } }[] } | undefined;
    const first = body?.errors?.[0];
    const code = first?.extensions?.code;
    if (response.status >= 400 && response.status < 500 && typeof first?.message === 'string' && typeof code === 'string' && relayedCodes.has(code)) {
      return new GraphQLError(first.message, { extensions: { code, ...(first.extensions?.field ? { field: first.extensions.field } : {}) } });
    }
    return error;
  }

  /** Remembers a whole-request refusal, so the client's answer can carry its 4xx status (subgraphRefusalPlugin). */
  override didEncounterError(error: Error, fetchRequest: never, fetchResponse?: FetcherResponse, context?: GatewayContext, request?: never): void {
    const code = error instanceof GraphQLError ? error.extensions['code'] : undefined;
    if (context && fetchResponse && fetchResponse.status >= 400 && fetchResponse.status < 500 && typeof code === 'string' && relayedCodes.has(code)) {
      context.subgraphRefusalStatus ??= fetchResponse.status;
      context.subgraphRefusals = (context.subgraphRefusals ?? 0) + 1;
    }
    super.didEncounterError(error, fetchRequest, fetchResponse, context, request);
  }
}

/**
 * A request a subgraph refused whole (e.g. a DateTime literal only the subgraph can parse) answers with that
 * subgraph's 4xx, not 200 — but only when nothing else was done: a response with data (another root field ran,
 * a mutation was applied) stays 200 so a client does not retry what succeeded.
 */
export function subgraphRefusalPlugin(): ApolloServerPlugin<GatewayContext> {
  return {
    async requestDidStart() {
      return {
        async willSendResponse({ contextValue, response }) {
          const { subgraphRefusalStatus, subgraphFetches = 0, subgraphRefusals = 0 } = contextValue;
          // Any fetch that was not refused may have done something (a non-null root field's error nulls `data`
          // even when another root mutation was applied).
          if (!subgraphRefusalStatus || subgraphRefusals < subgraphFetches) return;
          if (response.body.kind !== 'single' || response.body.singleResult.data != null) return;
          if (response.http.status === undefined || response.http.status === 200) response.http.status = subgraphRefusalStatus;
        },
      };
    },
  };
}

/** fetchWithDeadline, timed until the subgraph's whole answer is read; a failed fetch or a 5xx is an error. */
function timedFetcher(subgraph: string): typeof fetchWithDeadline {
  return async (url, init) => {
    const end = subgraphFetchDuration.startTimer({ subgraph });
    try {
      const response = await fetchWithDeadline(url, init);
      end({ outcome: response.status >= 500 ? 'error' : 'ok' });
      return response;
    } catch (err) {
      end({ outcome: 'error' });
      throw err;
    }
  };
}

const subgraphDeduplicatedFetches = new Counter({
  name: 'linepack_subgraph_deduplicated_fetches_total',
  help: 'Subgraph requests not sent because an identical one of the same identity and tenant was in flight (answered from it)',
  labelNames: ['subgraph'] as const,
  registers: [metricsRegistry],
});

/**
 * The gateway merges a subgraph's answer into the client's result in place, so requests never share one object:
 * when anyone joined, each gets its own copy (the HTTP response itself is only read for headers).
 */
function answerFor(fetch: InFlightFetch, response: SubgraphResponse): SubgraphResponse {
  if (fetch.joined === 0) return response;
  const { http, ...body } = response;
  return { ...structuredClone(body), ...(http ? { http } : {}) } as SubgraphResponse;
}

type FetcherResponse = Parameters<RemoteGraphQLDataSource['errorFromResponse']>[0];
type GatewayGraphQLResponse = Awaited<ReturnType<NonNullable<RemoteGraphQLDataSource['didReceiveResponse']>>>;

const relayedCodes = new Set(['BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED', 'FORBIDDEN', 'UNAUTHENTICATED']);
