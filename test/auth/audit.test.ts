import { graphql, startTestStack, type TestStack } from '../support/stack';
import { eventually } from '../support/wait';

/**
 * The tenant's audit trail: a tenant admin reads who created and revoked which key, who signed in or failed
 * to, and which operations were refused for a missing scope — with address and request id, never a secret,
 * and never another tenant's events.
 */
let stack: TestStack;
let tenantId: string;
let adminKey: string;
let adminKeyId: string;

interface AuditEventView {
  type: string;
  actor: { kind: string; id: string | null; label: string | null };
  target: { kind: string; id: string; label: string | null } | null;
  clientAddress: string | null;
  requestId: string | null;
  summary: string;
  at: string;
}
const AUDIT_QUERY = `query Audit($filter: AuditEventFilter, $first: Int, $after: String) {
  auditEvents(filter: $filter, first: $first, after: $after) {
    edges { cursor node { type actor { kind id label } target { kind id label } clientAddress requestId summary at } }
    pageInfo { hasNextPage endCursor } totalCount
  }
}`;
async function audit(key: string, filter: Record<string, unknown> = {}, first = 100) {
  const res = await graphql<{
    auditEvents: { edges: { node: AuditEventView }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null }; totalCount: number };
  }>(stack.gatewayUrl, AUDIT_QUERY, { apiKey: key, variables: { filter, first } });
  expect(res.body.errors).toBeUndefined();
  return res.body.data!.auditEvents;
}

beforeAll(async () => {
  stack = await startTestStack();
  ({ tenantId, apiKey: adminKey, keyId: adminKeyId } = await stack.tenantWithKey({ scopes: ['admin:*'], tier: 'PRO' }));
});
afterAll(async () => {
  await stack?.stop();
});

it('records who created and who revoked which key, from where, in which request — and never the secret', async () => {
  const created = await graphql<{ createApiKey: { secret: string; apiKey: { id: string; prefix: string } } }>(
    stack.gatewayUrl,
    'mutation { createApiKey(input: { name: "audited key", scopes: ["assets:read"] }) { secret apiKey { id prefix } } }',
    { apiKey: adminKey },
  );
  const { secret, apiKey } = created.body.data!.createApiKey;
  const createRequestId = created.headers.get('x-request-id');
  await graphql(stack.gatewayUrl, `mutation { revokeApiKey(id: "${apiKey.id}") { id } }`, { apiKey: adminKey });

  const events = (await audit(adminKey, { targetId: apiKey.id })).edges.map((e) => e.node);
  expect(events.map((e) => e.type)).toEqual(['API_KEY_REVOKED', 'API_KEY_CREATED']); // newest first
  for (const event of events) {
    expect(event.actor).toEqual({ kind: 'API_KEY', id: adminKeyId, label: expect.stringMatching(/^lpk_\w{8}…$/) });
    expect(event.target).toEqual({ kind: 'API_KEY', id: apiKey.id, label: `${apiKey.prefix}…` });
    expect(event.clientAddress).toMatch(/127\.0\.0\.1/);
  }
  expect(events[1]!.requestId).toBe(createRequestId);
  expect(events[1]!.summary).toContain('audited key');
  expect(JSON.stringify(await audit(adminKey))).not.toContain(secret);
});

it('records sign-ins and failed sign-ins of the tenant’s users, not attempts on unknown emails', async () => {
  const password = 'a long enough password';
  await stack.authStore.createUser({ tenantId, email: 'audited-user@example.com', password, role: 'VIEWER' });
  const login = (email: string, pw: string) =>
    fetch(`${stack.gatewayOrigin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email, password: pw }),
    });
  expect((await login('audited-user@example.com', 'not the password')).status).toBe(401);
  expect((await login('audited-user@example.com', password)).status).toBe(200);
  expect((await login('nobody-here@example.com', password)).status).toBe(401);

  const events = (await audit(adminKey, { types: ['LOGIN_SUCCEEDED', 'LOGIN_FAILED', 'USER_ADDED'] })).edges.map((e) => e.node);
  expect(events.map((e) => e.type)).toEqual(['LOGIN_SUCCEEDED', 'LOGIN_FAILED', 'USER_ADDED']);
  expect(events[0]!.actor).toMatchObject({ kind: 'USER', label: 'audited-user@example.com' });
  expect(events[1]!.actor.kind).toBe('ANONYMOUS');
  expect(events[1]!.target?.label).toBe('audited-user@example.com');
  expect(events[2]!.actor.kind).toBe('CLI');
  expect(JSON.stringify(events)).not.toContain(password);
  expect(JSON.stringify(await audit(adminKey))).not.toContain('nobody-here@example.com');
});

it('records an operation refused for a missing scope, with the key that tried', async () => {
  const made = await stack.authStore.createApiKey({ tenantId, name: 'narrow', scopes: ['assets:read'], tier: 'PRO' });
  const [narrow, narrowId] = [made.secret, made.apiKey._id];
  const refused = await graphql(stack.gatewayUrl, 'query PeekAtKeys { apiKeys { id } }', { apiKey: narrow });
  expect(refused.status).toBe(403);
  let denied: AuditEventView | undefined;
  expect(
    await eventually(async () => {
      denied = (await audit(adminKey, { types: ['ACCESS_DENIED'], actorId: narrowId })).edges[0]?.node;
      return denied !== undefined;
    }, 5_000),
  ).toBe(true);
  expect(denied!.target).toEqual({ kind: 'OPERATION', id: 'PeekAtKeys', label: 'needs admin:*' });
  expect(denied!.requestId).toBe(refused.headers.get('x-request-id'));
});

it('shows a tenant admin only their own tenant, pages newest first, and is for admins only', async () => {
  const other = await stack.tenantWithKey({ scopes: ['admin:*'] });
  // Its only event is its own key being made; none of this tenant's.
  expect((await audit(other.apiKey)).edges.map((e) => [e.node.type, e.node.target?.id])).toEqual([['API_KEY_CREATED', other.keyId]]);

  for (let i = 0; i < 3; i++)
    await graphql(stack.gatewayUrl, `mutation { createApiKey(input: { name: "page ${i}", scopes: ["assets:read"] }) { secret } }`, { apiKey: adminKey });
  const all = await audit(adminKey);
  const firstPage = await audit(adminKey, {}, 2);
  expect(firstPage.pageInfo.hasNextPage).toBe(true);
  const next = await graphql<{ auditEvents: { edges: { node: AuditEventView }[] } }>(stack.gatewayUrl, AUDIT_QUERY, {
    apiKey: adminKey,
    variables: { first: 2, after: firstPage.pageInfo.endCursor },
  });
  const paged = [...firstPage.edges, ...next.body.data!.auditEvents.edges].map((e) => e.node);
  expect(paged).toEqual(all.edges.slice(0, 4).map((e) => e.node));
  const times = all.edges.map((e) => Date.parse(e.node.at));
  expect([...times].sort((a, b) => b - a)).toEqual(times);

  const viewer = await stack.keyFor(tenantId, ['assets:read', 'measurements:read', 'analytics:read', 'compliance:read'], 'PRO');
  expect((await graphql(stack.gatewayUrl, '{ auditEvents { totalCount } }', { apiKey: viewer })).status).toBe(403);
});

it('keeps events for the retention period only', async () => {
  const old = new Date(Date.now() - 500 * 86_400_000);
  await stack.authStore.audit.events.insertOne({
    _id: 'old-event',
    tenantId,
    at: old,
    type: 'LOGIN_SUCCEEDED',
    actor: { kind: 'ANONYMOUS', id: null, label: null },
    clientAddress: null,
    requestId: null,
    target: null,
    summary: 'from long ago',
  });
  const before = (await audit(adminKey)).totalCount;
  expect(await stack.authStore.audit.prune(400)).toBe(1);
  expect((await audit(adminKey)).totalCount).toBe(before - 1);
});
