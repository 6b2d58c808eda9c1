import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * An admin adds users and lists them a page at a time (the console's users page): someone new gets a one-time
 * reset token to set their first password, someone with an account joins with their own password, and the list
 * pages by email with a total that counts every match.
 */
let stack: TestStack;
let tenantId: string;
let adminKey: string;
const password = 'the original pass phrase';

const as = (token: string, query: string, variables: Record<string, unknown> = {}) =>
  graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey: token, variables });
const ADD_USER = 'mutation($input: AddUserInput!) { addUser(input: $input) { user { id email role } passwordReset { token expiresAt userId } } }';
const TENANT_USERS = `query($q: String, $role: Role, $first: Int, $after: String) {
  tenantUsers(emailContains: $q, role: $role, first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { email role } } }
}`;

async function login(email: string, pw: string): Promise<number> {
  const res = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password: pw }),
  });
  return res.status;
}

beforeAll(async () => {
  stack = await startTestStack();
  ({ tenantId, apiKey: adminKey } = await stack.tenantWithKey({ scopes: ['admin:*'], tier: 'PRO' }));
});
afterAll(async () => {
  await stack?.stop();
});

describe('addUser', () => {
  it('gives someone new a reset token that sets their first password, and records USER_ADDED', async () => {
    const added = await as(adminKey, ADD_USER, { input: { email: ' New.Viewer@Example.com ', role: 'VIEWER' } });
    expect(added.body.errors).toBeUndefined();
    const { user, passwordReset } = added.body.data!['addUser'];
    expect(user).toMatchObject({ email: 'new.viewer@example.com', role: 'VIEWER' });
    expect(passwordReset.userId).toBe(user.id);
    expect(passwordReset.token).toMatch(/^lpr_/);

    const reset = await fetch(`${stack.gatewayOrigin}/auth/password/reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reset_token: passwordReset.token, new_password: 'a first pass phrase of mine' }),
    });
    expect(reset.status).toBe(204);
    expect(await login('new.viewer@example.com', 'a first pass phrase of mine')).toBe(200);

    const audit = await as(adminKey, 'query($t: String) { auditEvents(filter: { targetId: $t }) { edges { node { type summary } } } }', { t: user.id });
    const types = audit.body.data!['auditEvents'].edges.map((e: { node: { type: string } }) => e.node.type);
    expect(types).toEqual(expect.arrayContaining(['USER_ADDED', 'PASSWORD_RESET_ISSUED', 'PASSWORD_RESET_COMPLETED']));
  });

  it('lets someone with an account join with their own password (no token), and refuses a member twice', async () => {
    const other = await stack.tenantWithKey({ scopes: ['admin:*'] });
    await stack.authStore.createUser({ tenantId: other.tenantId, email: 'elsewhere@example.com', password, role: 'ADMIN' });
    const joined = await as(adminKey, ADD_USER, { input: { email: 'elsewhere@example.com', role: 'ENGINEER' } });
    expect(joined.body.data!['addUser']).toMatchObject({ user: { email: 'elsewhere@example.com', role: 'ENGINEER' }, passwordReset: null });
    expect(await login('elsewhere@example.com', password)).toBe(200);

    const again = await as(adminKey, ADD_USER, { input: { email: 'elsewhere@example.com', role: 'VIEWER' } });
    expect(again.body.errors?.[0]?.extensions).toMatchObject({ code: 'CONFLICT' });
  });

  it('is for admins only', async () => {
    const readerKey = await stack.keyFor(tenantId, ['assets:read'], 'PRO');
    const refused = await as(readerKey, ADD_USER, { input: { email: 'sneaky@example.com', role: 'ADMIN' } });
    expect(refused.body.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
  });
});

describe('tenantUsers', () => {
  it('pages by email with a total over every page, and filters by email and role', async () => {
    const { tenantId: own, apiKey } = await stack.tenantWithKey({ scopes: ['admin:*'] });
    for (const [name, role] of [
      ['carol', 'VIEWER'],
      ['alice', 'ADMIN'],
      ['erin', 'VIEWER'],
      ['bob', 'ENGINEER'],
      ['dave', 'VIEWER'],
    ] as const) {
      await stack.authStore.createUser({ tenantId: own, email: `${name}@paging.example.com`, password, role });
    }
    const first = (await as(apiKey, TENANT_USERS, { first: 2 })).body.data!['tenantUsers'];
    expect(first.totalCount).toBe(5);
    expect(first.edges.map((e: { node: { email: string } }) => e.node.email)).toEqual(['alice@paging.example.com', 'bob@paging.example.com']);
    expect(first.pageInfo.hasNextPage).toBe(true);
    const rest = (await as(apiKey, TENANT_USERS, { first: 10, after: first.pageInfo.endCursor })).body.data!['tenantUsers'];
    expect(rest.edges.map((e: { node: { email: string } }) => e.node.email)).toEqual([
      'carol@paging.example.com',
      'dave@paging.example.com',
      'erin@paging.example.com',
    ]);
    expect(rest.pageInfo.hasNextPage).toBe(false);

    const viewers = (await as(apiKey, TENANT_USERS, { role: 'VIEWER', q: 'R' })).body.data!['tenantUsers'];
    // "r" in carol and erin (dave is a viewer without one; a regex character in the text is taken literally).
    expect(viewers.edges.map((e: { node: { email: string } }) => e.node.email)).toEqual(['carol@paging.example.com', 'erin@paging.example.com']);
    expect(viewers.totalCount).toBe(2);
    expect((await as(apiKey, TENANT_USERS, { q: '.*' })).body.data!['tenantUsers'].totalCount).toBe(0);
  });
});
