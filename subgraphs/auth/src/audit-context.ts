import type { Identity } from '@linepack/lib/identity';
import type { AuditContext } from './audit';
import type { AuthStore } from './store';

/** Who is acting through the API, as the audit log names them: id and email or key prefix, address, request. */
export async function auditContextOf(identity: Identity, store: AuthStore): Promise<AuditContext> {
  const label =
    identity.kind === 'user'
      ? ((await store.findUser(identity.subject))?.email ?? null)
      : ((await store.apiKeys.findOne({ _id: identity.subject }, { projection: { prefix: 1 } }))?.prefix ?? null);
  return {
    actor: { kind: identity.kind === 'user' ? 'USER' : 'API_KEY', id: identity.subject, label: label && identity.kind === 'api_key' ? `${label}…` : label },
    clientAddress: identity.clientAddress ?? null,
    requestId: identity.requestId,
  };
}
