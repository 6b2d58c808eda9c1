import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * A user's account from sign-in to removal: changing a password ends the other sessions, an admin's one-time
 * reset token works once, signing out everywhere and removing a member take effect at the gateway at once
 * (revocations through Redis), and the password policy follows NIST SP 800-63B.
 */
let redisServer: RedisServerProcess;
let stack: TestStack;
let tenantId: string;
let adminKey: string;
const password = 'the original pass phrase';

interface Tokens {
  access_token: string;
  refresh_token: string;
}
async function login(email: string, pw = password): Promise<{ status: number; tokens: Tokens }> {
  const res = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: pw }),
  });
  return { status: res.status, tokens: (await res.json()) as Tokens };
}
const works = async (token: string) => (await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: token })).status === 200;
const as = (token: string, query: string, variables: Record<string, unknown> = {}) =>
  graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey: token, variables });
async function newUser(email: string, role: 'VIEWER' | 'ENGINEER' | 'ADMIN' = 'ENGINEER'): Promise<string> {
  return (await stack.authStore.createUser({ tenantId, email, password, role }))._id;
}

beforeAll(async () => {
  redisServer = await startRedisServer();
  stack = await startTestStack({ redisUrl: redisServer.url });
  ({ tenantId, apiKey: adminKey } = await stack.tenantWithKey({ scopes: ['admin:*'], tier: 'PRO' }));
});
afterAll(async () => {
  await stack?.stop();
  await redisServer?.stop();
});

describe('changing a password', () => {
  it('needs the current password, keeps this session and ends every other one at once', async () => {
    await newUser('changes@example.com');
    const here = (await login('changes@example.com')).tokens;
    const elsewhere = (await login('changes@example.com')).tokens;

    const wrong = await as(here.access_token, 'mutation { changePassword(currentPassword: "not it at all", newPassword: "a fresh pass phrase") }');
    expect(wrong.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'currentPassword' });

    const changed = await as(here.access_token, 'mutation($c: String!) { changePassword(currentPassword: $c, newPassword: "a fresh pass phrase") }', {
      c: password,
    });
    expect(changed.body.data?.['changePassword']).toBe(true);
    expect(await works(here.access_token)).toBe(true);
    expect(await works(elsewhere.access_token)).toBe(false);
    expect((await login('changes@example.com')).status).toBe(401);
    expect((await login('changes@example.com', 'a fresh pass phrase')).status).toBe(200);
  });

  // NIST SP 800-63B §5.1.1.2 (Memorized Secret Verifiers): at least 8 characters (12 here), a maximum of at least
  // 64 (256), all printing characters and spaces allowed, no composition rules, and candidates compared against
  // "passwords obtained from previous breach corpora", "dictionary words" and "context-specific words, such as the
  // name of the service, the username".
  it.each([
    ['too short', 'short one', 'password must be 12–256 characters'],
    ['a breached password', 'qwerty123456', 'too common'],
    ['a breached password with digits added', 'password2024!!', 'too common'],
    ['the service name', 'my linepack password', 'service name or your email'],
    ['the email address', 'policy-check is my name', 'service name or your email'],
  ])('refuses %s, naming the rule (no composition rules)', async (_label, next, rule) => {
    const email = `policy-check-${Math.random().toString(36).slice(2, 8)}@example.com`;
    await newUser(email);
    const { tokens } = await login(email);
    const attempt = next.includes('policy-check') ? next.replace('policy-check', email.split('@')[0]!) : next;
    const res = await as(tokens.access_token, 'mutation($c: String!, $n: String!) { changePassword(currentPassword: $c, newPassword: $n) }', {
      c: password,
      n: attempt,
    });
    expect(res.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', field: 'newPassword' });
    expect(res.body.errors?.[0]?.message).toContain(rule);
    expect(JSON.stringify(res.body)).not.toContain(attempt);
  });

  it('accepts a long pass phrase of any characters without composition rules', async () => {
    await newUser('unicode-user@example.com');
    const { tokens } = await login('unicode-user@example.com');
    const res = await as(tokens.access_token, 'mutation($c: String!) { changePassword(currentPassword: $c, newPassword: "ünïcödé phrase with spaces") }', {
      c: password,
    });
    expect(res.body.data?.['changePassword']).toBe(true);
  });

  it('is for users: an API key has no password', async () => {
    const res = await as(adminKey, 'mutation { changePassword(currentPassword: "x", newPassword: "y") }');
    expect(res.body.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
  });
});

it('signing out everywhere ends every session of the user at once, this one included', async () => {
  await newUser('everywhere@example.com');
  const one = (await login('everywhere@example.com')).tokens;
  const two = (await login('everywhere@example.com')).tokens;
  expect((await as(one.access_token, 'mutation { signOutEverywhere }')).body.data?.['signOutEverywhere']).toBe(true);
  expect(await works(one.access_token)).toBe(false);
  expect(await works(two.access_token)).toBe(false);
  const refreshed = await fetch(`${stack.gatewayOrigin}/auth/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: two.refresh_token }),
  });
  expect(refreshed.status).toBe(401);
});

describe('an admin-issued password reset', () => {
  const spend = (token: string, next: string) =>
    fetch(`${stack.gatewayOrigin}/auth/password/reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reset_token: token, new_password: next }),
    });

  it('gives a one-time token that sets a new password once and ends every session', async () => {
    const userId = await newUser('forgot@example.com');
    const session = (await login('forgot@example.com')).tokens;
    const issued = await as(adminKey, 'mutation($u: ID!) { issuePasswordReset(userId: $u) { token expiresAt userId } }', { u: userId });
    const { token, expiresAt } = issued.body.data!['issuePasswordReset'];
    expect(token).toMatch(/^lpr_[\w-]{32}$/);
    expect(Date.parse(expiresAt) - Date.now()).toBeGreaterThan(29 * 60_000);
    expect(Date.parse(expiresAt) - Date.now()).toBeLessThanOrEqual(30 * 60_000);

    // A refused password leaves the token usable.
    expect((await spend(token, 'short')).status).toBe(400);
    expect((await spend(token, 'remembered at last')).status).toBe(204);
    expect((await spend(token, 'and once more please')).status).toBe(401);
    expect(await works(session.access_token)).toBe(false);
    expect((await login('forgot@example.com', 'remembered at last')).status).toBe(200);
    // Only its hash is stored.
    expect(JSON.stringify(await stack.authStore.passwordResets.find({ userId }).toArray())).not.toContain(token);
  });

  it('expires after 30 minutes, and a newer token voids the older one', async () => {
    const userId = await newUser('slow@example.com');
    const issue = async () =>
      (await as(adminKey, 'mutation($u: ID!) { issuePasswordReset(userId: $u) { token } }', { u: userId })).body.data!['issuePasswordReset'].token as string;
    const first = await issue();
    const second = await issue();
    expect((await spend(first, 'the first token phrase')).status).toBe(401);
    await stack.authStore.passwordResets.updateMany({ userId }, { $set: { expiresAt: new Date(Date.now() - 1_000) } });
    expect((await spend(second, 'the second token phrase')).status).toBe(401);
  });

  it('is only for members of the admin’s tenant', async () => {
    const other = await stack.tenantWithKey({ scopes: ['admin:*'] });
    const outsider = (await stack.authStore.createUser({ tenantId: other.tenantId, email: 'outsider@example.com', password, role: 'VIEWER' }))._id;
    const res = await as(adminKey, 'mutation($u: ID!) { issuePasswordReset(userId: $u) { token } }', { u: outsider });
    expect(res.body.errors?.[0]?.extensions?.['code']).toBe('NOT_FOUND');
  });
});

it('changing a member’s role ends their sessions (tokens carry the role) and is audited', async () => {
  const userId = await newUser('promoted@example.com', 'VIEWER');
  const session = (await login('promoted@example.com')).tokens;
  const set = await as(adminKey, 'mutation($u: ID!) { changeUserRole(userId: $u, role: ENGINEER) { id role } }', { u: userId });
  expect(set.body.data?.['changeUserRole']).toEqual({ id: userId, role: 'ENGINEER' });
  expect(await works(session.access_token)).toBe(false);
  const fresh = (await login('promoted@example.com')).tokens;
  const me = await as(fresh.access_token, '{ me { scopes } }');
  expect(me.body.data!['me'].scopes).toContain('assets:write');
  const audit = await as(adminKey, '{ auditEvents(filter: { types: [ROLE_CHANGED] }) { edges { node { summary } } } }');
  expect(audit.body.data!['auditEvents'].edges[0].node.summary).toContain('VIEWER → ENGINEER');
});

it('removing a member ends their sessions, revokes the keys they made in the tenant, and lists them no more', async () => {
  const userId = await newUser('leaver@example.com', 'ADMIN');
  const session = (await login('leaver@example.com')).tokens;
  const made = await as(session.access_token, 'mutation { createApiKey(input: { name: "leaver key", scopes: ["assets:read"] }) { secret } }');
  const leaverKey = made.body.data!['createApiKey'].secret as string;
  expect(await works(leaverKey)).toBe(true);

  const users = await as(adminKey, '{ users { id email role } }');
  expect(users.body.data!['users']).toContainEqual({ id: userId, email: 'leaver@example.com', role: 'ADMIN' });

  expect((await as(adminKey, 'mutation($u: ID!) { removeUser(userId: $u) }', { u: userId })).body.data?.['removeUser']).toBe(true);
  expect(await works(session.access_token)).toBe(false);
  expect(await works(leaverKey)).toBe(false);
  expect((await login('leaver@example.com')).status).toBe(401);
  expect((await as(adminKey, '{ users { id } }')).body.data!['users'].map((u: { id: string }) => u.id)).not.toContain(userId);

  const audit = await as(
    adminKey,
    '{ auditEvents(filter: { types: [MEMBER_REMOVED, API_KEY_REVOKED, PASSWORD_CHANGED] }) { edges { node { type summary } } } }',
  );
  expect(audit.body.data!['auditEvents'].edges.map((e: { node: { type: string } }) => e.node.type)).toEqual(
    expect.arrayContaining(['MEMBER_REMOVED', 'API_KEY_REVOKED', 'PASSWORD_CHANGED']),
  );
});
