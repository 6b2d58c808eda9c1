import type { GatewayConfig } from './config';
import type { GatewayContext } from './context';
import { identityHeaderForAuth, postToAuthInternal } from './auth-internal';

/**
 * A request refused for a missing scope goes into the tenant's audit log, which the auth service keeps: the
 * gateway tells it on an internal route, vouching for the caller as it does to every subgraph. Never delays the answer.
 */
export async function recordAccessDenied(
  config: Pick<GatewayConfig, 'authUrl' | 'internalTokenPrivateKey'>,
  context: GatewayContext,
  denial: { operationName: string | null; missingScopes: string[]; deniedFields: string[] },
): Promise<void> {
  const { credential, requestId, clientAddress } = context;
  try {
    const headers = identityHeaderForAuth(config.internalTokenPrivateKey, {
      subject: credential.subject,
      kind: credential.kind,
      tenantId: credential.tenantId,
      scopes: credential.scopes,
      requestId,
      clientAddress,
    });
    await postToAuthInternal(config.authUrl, '/internal/audit/access-denied', { ...headers, 'x-request-id': requestId }, denial);
  } catch (err) {
    context.logger.warn({ err: (err as Error).message }, 'access denial not recorded in the audit log');
  }
}
