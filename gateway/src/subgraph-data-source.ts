import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { GraphQLError } from 'graphql';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken } from '@linepack/lib/identity';
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
    super({ url, fetcher: fetchWithDeadline as never });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): void {
    // Health checks and schema loading have no request context; those never reach resolvers.
    if (!('credential' in context) || !context.credential) return;
    const { credential, requestId, deadline } = context;
    request.http?.headers.set(
      INTERNAL_IDENTITY_HEADER,
      mintInternalToken(
        { subject: credential.subject, kind: credential.kind, tenantId: credential.tenantId, scopes: credential.scopes, requestId, deadline: deadline.at },
        this.name,
        this.privateKeyPem,
      ),
    );
    request.http?.headers.set('x-request-id', requestId);
    request.http?.headers.set(REQUEST_KEY_HEADER, deadline.key);
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
      // The client's request was refused whole (e.g. a DateTime literal only the subgraph can parse): the
      // client's answer keeps the subgraph's 4xx status, not 200.
      return new GraphQLError(first.message, {
        extensions: { code, ...(first.extensions?.field ? { field: first.extensions.field } : {}), http: { status: response.status } },
      });
    }
    return error;
  }
}

type FetcherResponse = Parameters<RemoteGraphQLDataSource['errorFromResponse']>[0];

const relayedCodes = new Set(['BAD_USER_INPUT', 'GRAPHQL_VALIDATION_FAILED', 'FORBIDDEN', 'UNAUTHENTICATED']);
