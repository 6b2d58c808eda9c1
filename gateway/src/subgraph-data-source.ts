import { RemoteGraphQLDataSource, type GraphQLDataSourceProcessOptions } from '@apollo/gateway';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken } from '../../lib/identity';
import type { GatewayContext } from './context';

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
    super({ url });
  }

  override willSendRequest({ request, context }: GraphQLDataSourceProcessOptions<GatewayContext>): void {
    // Health checks and schema loading have no request context; those never reach resolvers.
    if (!('credential' in context) || !context.credential) return;
    const { credential, requestId } = context;
    request.http?.headers.set(
      INTERNAL_IDENTITY_HEADER,
      mintInternalToken(
        { subject: credential.subject, kind: credential.kind, tenantId: credential.tenantId, scopes: credential.scopes, requestId },
        this.name,
        this.privateKeyPem,
      ),
    );
    request.http?.headers.set('x-request-id', requestId);
  }
}
