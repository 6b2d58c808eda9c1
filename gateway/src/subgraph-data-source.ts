import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import type { ApolloServerPlugin } from '@apollo/server';
import { GraphQLError } from 'graphql';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken } from '@linepack/lib/identity';
import { errorCodeLabel, subgraphFetchDuration, subgraphGraphqlErrors } from '@linepack/lib/metrics';
import type { GatewayContext } from './context';
import { fetchWithDeadline, REQUEST_KEY_HEADER } from './deadline';

/**
 * Calls one subgraph. The client's credential never leaves the gateway: each request carries
 * a fresh short-lived identity token minted for this subgraph alone (aud = subgraph name).
 */
export class AuthenticatedSubgraphDataSource extends RemoteGraphQLDataSource<GatewayContext> {
  constructor(
    readonly name: string,
    url: string,
    private readonly privateKeyPem: string,
  ) {
    // Node's fetch, so a request's subgraph calls are aborted with it (deadline.ts).
    super({ url, fetcher: timedFetcher(name) as never });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): void {
    // Health checks and schema loading have no request context; those never reach resolvers.
    if (!('credential' in context) || !context.credential) return;
    const { credential, requestId, deadline, clientAddress } = context;
    context.subgraphFetches = (context.subgraphFetches ?? 0) + 1;
    request.http?.headers.set(
      INTERNAL_IDENTITY_HEADER,
      mintInternalToken(
        {
          subject: credential.subject,
          kind: credential.kind,
          tenantId: credential.tenantId,
          scopes: credential.scopes,
          requestId,
          deadline: deadline.at,
          clientAddress,
          ...(credential.sessionId ? { sessionId: credential.sessionId } : {}),
        },
        this.name,
        this.privateKeyPem,
      ),
    );
    request.http?.headers.set('x-request-id', requestId);
    request.http?.headers.set(REQUEST_KEY_HEADER, deadline.key);
  }

  /** Errors inside a subgraph's 200 answer (a resolver's NOT_FOUND, an internal error) are counted by code. */
  override didReceiveResponse({ response }: { response: GatewayGraphQLResponse }): GatewayGraphQLResponse {
    for (const error of response.errors ?? []) subgraphGraphqlErrors.inc({ subgraph: this.name, code: errorCodeLabel(error.extensions?.['code']) });
    return response;
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

/** fetchWithDeadline, timed until the subgraph's response headers arrive; a failed fetch or a 5xx is an error. */
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

type FetcherResponse = Parameters<RemoteGraphQLDataSource['errorFromResponse']>[0];
type GatewayGraphQLResponse = Awaited<ReturnType<NonNullable<RemoteGraphQLDataSource['didReceiveResponse']>>>;

const relayedCodes = new Set(['BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED', 'FORBIDDEN', 'UNAUTHENTICATED']);
