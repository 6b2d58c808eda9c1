import { INTERNAL_IDENTITY_HEADER, mintInternalToken } from '@linepack/lib/identity';
import type { GatewayConfig } from './config';
import type { GatewayContext } from './context';

/**
 * A request refused for a missing scope goes into the tenant's audit log, which the auth service keeps: the
 * gateway tells it on an internal route (not under /auth, so clients cannot reach it through the gateway),
 * vouching for the caller with an identity token as it does to every subgraph. Never delays the answer.
 */
export async function recordAccessDenied(
  config: Pick<GatewayConfig, 'authUrl' | 'internalTokenPrivateKey'>,
  context: GatewayContext,
  denial: { operationName: string | null; missingScopes: string[]; deniedFields: string[] },
): Promise<void> {
  const { credential, requestId, clientAddress } = context;
  try {
    const token = mintInternalToken(
      { subject: credential.subject, kind: credential.kind, tenantId: credential.tenantId, scopes: credential.scopes, requestId, clientAddress },
      'auth',
      config.internalTokenPrivateKey,
    );
    const res = await fetch(`${config.authUrl}/internal/audit/access-denied`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [INTERNAL_IDENTITY_HEADER]: token, 'x-request-id': requestId },
      body: JSON.stringify(denial),
      signal: AbortSignal.timeout(5_000),
    });
    if (!res.ok) context.logger.warn({ status: res.status }, 'access denial not recorded in the audit log');
  } catch (err) {
    context.logger.warn({ err: (err as Error).message }, 'access denial not recorded in the audit log');
  }
}
