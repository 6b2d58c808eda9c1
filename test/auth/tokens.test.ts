import { canonicalScopes } from '@linepack/lib/scopes';
import http from 'node:http';
import { requestFrom } from '../support/from-address';
import { defaultLoginThrottle } from '@linepack/subgraph-auth/login-throttle';
import { databaseName } from '@linepack/lib/mongo';
import { graphql, startTestStack, type TestStack } from '../support/stack';

interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
}

let stack: TestStack;
let tenantId: string;
const password = 'correct horse battery staple';

async function post(path: string, body: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(`${stack.gatewayOrigin}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, text, json: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

async function newUser(email: string, role: 'VIEWER' | 'ENGINEER' | 'ADMIN' = 'ENGINEER'): Promise<string> {
  await stack.authStore.createUser({ tenantId, email, password, role });
  return email;
}

const login = async (email: string, pw = password) => post('/auth/login', { email, password: pw });

/** A rotated refresh token is answered again within this many seconds of its rotation (a lost answer, two tabs). */
const REFRESH_REUSE_GRACE_SECONDS = 600;
const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString()) as { jti: string; exp: number };

/**
 * Ends the grace of a rotated refresh token: its rotation is moved back past it, as the passing of the grace would leave
 * the stored token. The grace is long so that a retry within it cannot miss it on a stalled machine, and a test need
 * not wait for it to end either.
 */
async function endGrace(refreshToken: string): Promise<void> {
  const rotatedAt = new Date(Date.now() - (REFRESH_REUSE_GRACE_SECONDS + 60) * 1000);
  const stored = stack.mongo.db(databaseName(stack.dbPrefix, 'auth')).collection<{ _id: string }>('refreshTokens');
  const { modifiedCount } = await stored.updateOne({ _id: claimsOf(refreshToken).jti, rotatedAt: { $ne: null } }, { $set: { rotatedAt } });
  if (modifiedCount !== 1) throw new Error('endGrace: that refresh token has not been rotated');
}

beforeAll(async () => {
  // Every test logs in from 127.0.0.1: a roomy per-IP budget here; the per-IP limit has its own test below.
  stack = await startTestStack({
    auth: {
      accessTokenTtlSeconds: 60,
      // Longer than its default (30 s): a retry is within it however slow the machine; endGrace ends it.
      refreshReuseGraceSeconds: REFRESH_REUSE_GRACE_SECONDS,
      loginThrottle: {
        perEmailAndIp: { failures: 5, seconds: 900 },
        perIp: { failures: 500, seconds: 900 },
        perEmail: { softAfter: 10, seconds: 900, maxDelaySeconds: 2 },
      },
    },
  });
  tenantId = (await stack.tenantWithKey({ name: 'Token tenant', tier: 'PRO' })).tenantId;
});
afterAll(async () => {
  await stack?.stop();
});

describe('POST /auth/login', () => {
  it('returns an access and a refresh token that the gateway accepts', async () => {
    const email = await newUser('engineer@example.com');
    const res = await login(email);
    expect(res.status).toBe(200);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const tokens = res.json as unknown as Tokens;
    expect(tokens.expires_in).toBe(60);
    expect(tokens.access_token.split('.')).toHaveLength(3);
    expect(tokens.refresh_token.split('.')).toHaveLength(3);
    const me = await graphql<{ me: { kind: string; email: string; tenantId: string; scopes: string[] } }>(
      stack.gatewayUrl,
      '{ me { kind email tenantId scopes } }',
      {
        apiKey: tokens.access_token,
      },
    );
    expect(me.body.data?.me).toEqual({
      kind: 'USER',
      email,
      tenantId,
      // ENGINEER: every :read and :write scope the SDL declares, never admin:*.
      scopes: canonicalScopes.filter((s) => s.endsWith(':read') || s.endsWith(':write')),
    });
  });

  it('answers a wrong password and an unknown email with the same 401 body', async () => {
    const email = await newUser('same-body@example.com');
    const wrongPassword = await login(email, 'not the password at all');
    const unknownEmail = await login('nobody@example.com', password);
    expect(wrongPassword.status).toBe(401);
    expect(unknownEmail.status).toBe(401);
    expect(wrongPassword.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(wrongPassword.text).toBe(unknownEmail.text);
    expect(wrongPassword.json?.['code']).toBe('INVALID_CREDENTIALS');
  });

  it('stops one address guessing one account with 429 and Retry-After, and not the owner at another address', async () => {
    const email = await newUser('throttled@example.com');
    for (let i = 0; i < 5; i++) expect((await login(email, `wrong guess ${i}`)).status).toBe(401);
    const blocked = await login(email, 'wrong guess 6');
    expect(blocked.status).toBe(429);
    expect(Number(blocked.headers.get('retry-after'))).toBeGreaterThan(0);
    // Even the right password waits at the guessing address: the attacker learns nothing from the sixth try.
    expect((await login(email)).status).toBe(429);
    // The owner, from their own address, is not locked out by someone else's guesses.
    const owner = await requestFrom('127.0.0.2', `${stack.gatewayOrigin}/auth/login`, { body: { email, password } });
    expect(owner.status).toBe(200);
  });

  // OWASP Authentication Cheat Sheet, "Account Lockout": lock-outs let an attacker lock real users out; prefer
  // limits tied to the attacker and an exponentially growing delay for the account over a fixed hard lock.
  it('slows guessing spread over many addresses with a growing delay instead of a lock-out', async () => {
    const email = await newUser('spread-guessing@example.com');
    const from = (address: string, pw: string) => requestFrom(address, `${stack.gatewayOrigin}/auth/login`, { body: { email, password: pw } });
    // Ten failures from two addresses (five each, within their own limit): the account starts to back off.
    for (let i = 0; i < 10; i++) expect((await from(i < 5 ? '127.0.0.20' : '127.0.0.21', `spread guess ${i}`)).status).toBe(401);
    const slowed = await from('127.0.0.22', 'another guess');
    expect(slowed.status).toBe(429);
    expect(Number(slowed.headers['retry-after'])).toBeLessThanOrEqual(2);
    // After the short wait the owner logs in, from anywhere; no 15-minute lock.
    await new Promise((r) => setTimeout(r, 1_100));
    expect((await from('127.0.0.23', password)).status).toBe(200);
  });

  it('cannot be raced: of 40 concurrent wrong guesses from one address only 5 are checked', async () => {
    const email = await newUser('raced@example.com');
    const results = await Promise.all(Array.from({ length: 40 }, (_, i) => login(email, `concurrent guess ${i}`)));
    expect(results.filter((r) => r.status === 401)).toHaveLength(5);
    expect(results.filter((r) => r.status === 429)).toHaveLength(35);
  });

  it('believes no X-Forwarded-For sent to the auth service directly: rotating it does not escape the throttle', async () => {
    const email = await newUser('direct-spoof@example.com');
    const direct = (i: number) =>
      fetch(`${stack.authUrl}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-forwarded-for': `10.0.${i}.7`, 'x-linepack-identity': 'forged.identity.token' },
        body: JSON.stringify({ email, password: `direct guess ${i}` }),
      });
    const statuses = [];
    for (let i = 0; i < 7; i++) statuses.push((await direct(i)).status);
    expect(statuses).toEqual([401, 401, 401, 401, 401, 429, 429]);
  });

  it('does not let a spoofed X-Forwarded-For reset the per-IP count', async () => {
    // The gateway trusts no proxy by default, so the address the auth service sees is the real peer.
    const res = await post('/auth/login', { email: 'nobody-xff@example.com', password: 'x' }, { 'x-forwarded-for': '203.0.113.7' });
    expect(res.status).toBe(401);
  });

  it.each([
    ['malformed JSON', '{"email": ', { 'content-type': 'application/json' }, 400, 'MALFORMED_JSON'],
    ['a missing field', { email: 'a@example.com' }, {}, 400, 'BAD_REQUEST'],
    ['an unexpected field', { email: 'a@example.com', password: 'x', admin: true }, {}, 400, 'BAD_REQUEST'],
    ['the wrong content type', 'email=a&password=b', { 'content-type': 'application/x-www-form-urlencoded' }, 415, 'UNSUPPORTED_MEDIA_TYPE'],
    ['an oversized body', { email: 'a@example.com', password: 'x'.repeat(70_000) }, {}, 413, 'PAYLOAD_TOO_LARGE'],
  ])('rejects %s with a problem+json error, never a 500', async (_label, body, headers, status, code) => {
    const res = await post('/auth/login', body, headers as Record<string, string>);
    expect(res.status).toBe(status);
    expect(res.headers.get('content-type')).toMatch(/^application\/problem\+json/);
    expect(res.json?.['code']).toBe(code);
    expect(res.text).not.toMatch(/at .*\.ts:\d+/);
  });

  it('names the missing field', async () => {
    const res = await post('/auth/login', { email: 'a@example.com' });
    expect(String(res.json?.['detail'])).toContain('password');
  });
});

describe('the /auth proxy', () => {
  // node:http sends the path exactly as written (fetch would normalise the dots away client-side).
  const rawGet = (path: string) =>
    new Promise<number>((resolve, reject) => {
      const { hostname, port } = new URL(stack.gatewayOrigin);
      http
        .get({ hostname, port, path }, (res) => {
          res.resume();
          resolve(res.statusCode ?? 0);
        })
        .on('error', reject);
    });

  it.each(['/auth/../readyz', '/auth/%2e%2e/healthz', '/auth/%2E%2E/graphql', '/auth/..%2Fgraphql', '/auth/%zz'])(
    'does not let %s escape to other routes',
    async (path) => {
      expect(await rawGet(path)).toBe(404);
    },
  );

  it('still serves the auth routes (control case)', async () => {
    expect(await rawGet('/auth/.well-known/jwks.json')).toBe(200);
  });
});

describe('the per-IP login limit', () => {
  let small: TestStack;
  beforeAll(async () => {
    small = await startTestStack({ auth: { loginThrottle: { ...defaultLoginThrottle, perIp: { failures: 3, seconds: 900 } } } });
  });
  afterAll(async () => {
    await small?.stop();
  });

  it('stops one client guessing across many emails', async () => {
    const attempt = (i: number) =>
      fetch(`${small.gatewayOrigin}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: `user${i}@example.com`, password: 'guess' }),
      });
    const statuses = [];
    for (let i = 0; i < 5; i++) statuses.push((await attempt(i)).status);
    expect(statuses).toEqual([401, 401, 401, 429, 429]);
  });
});

describe('POST /auth/refresh', () => {
  it('rotates: a new pair works, the old refresh token stops working', async () => {
    const email = await newUser('rotate@example.com');
    const first = (await login(email)).json as unknown as Tokens;
    const rotated = await post('/auth/refresh', { refresh_token: first.refresh_token });
    expect(rotated.status).toBe(200);
    const second = rotated.json as unknown as Tokens;
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: second.access_token })).status).toBe(200);
    // Past the grace for a lost answer, presenting the rotated token again is a reuse: refused…
    await endGrace(first.refresh_token);
    const reuse = await post('/auth/refresh', { refresh_token: first.refresh_token });
    expect(reuse.status).toBe(401);
    expect(reuse.json?.['code']).toBe('INVALID_REFRESH_TOKEN');
    // …and the whole family is revoked, including the legitimately rotated token.
    expect((await post('/auth/refresh', { refresh_token: second.refresh_token })).status).toBe(401);
  });

  it('answers a just-rotated token again within the grace with the same successor: one chain, a later copy still caught', async () => {
    const email = await newUser('lost-answer@example.com');
    const jti = (token: string) => claimsOf(token).jti;
    const first = (await login(email)).json as unknown as Tokens;
    const answered = (await post('/auth/refresh', { refresh_token: first.refresh_token })).json as unknown as Tokens;
    // The client never saw that answer (a reload, a second tab) and tries again with what it has: the same successor.
    const retried = await post('/auth/refresh', { refresh_token: first.refresh_token });
    expect(retried.status).toBe(200);
    const again = retried.json as unknown as Tokens;
    expect(jti(again.refresh_token)).toBe(jti(answered.refresh_token));
    expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: again.access_token })).status).toBe(200);
    // Not a theft: nothing was revoked or audited as reuse.
    const { rows } = await stack.authStore.audit.list(tenantId, { types: ['REFRESH_TOKEN_REUSED'] }, 50, null);
    expect(rows.filter((event) => event.target?.label === email)).toEqual([]);
    // The chain goes on from that one successor; once the grace is over, its spent copy is a reuse again.
    const next = (await post('/auth/refresh', { refresh_token: answered.refresh_token })).json as unknown as Tokens;
    await endGrace(answered.refresh_token);
    expect((await post('/auth/refresh', { refresh_token: again.refresh_token })).status).toBe(401);
    expect((await post('/auth/refresh', { refresh_token: next.refresh_token })).status).toBe(401);
  });

  it('refuses an access token presented as a refresh token', async () => {
    const email = await newUser('confused@example.com');
    const tokens = (await login(email)).json as unknown as Tokens;
    expect((await post('/auth/refresh', { refresh_token: tokens.access_token })).status).toBe(401);
  });

  it('refuses a refresh token presented as an access token', async () => {
    const email = await newUser('confused2@example.com');
    const tokens = (await login(email)).json as unknown as Tokens;
    expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: tokens.refresh_token })).status).toBe(401);
  });
});

describe('POST /auth/logout', () => {
  it('revokes the refresh token family', async () => {
    const email = await newUser('logout@example.com');
    const tokens = (await login(email)).json as unknown as Tokens;
    expect((await post('/auth/logout', { refresh_token: tokens.refresh_token })).status).toBe(204);
    expect((await post('/auth/refresh', { refresh_token: tokens.refresh_token })).status).toBe(401);
  });
});

describe('GET /auth/introspect', () => {
  const introspect = async (key?: string) => {
    const res = await fetch(`${stack.gatewayOrigin}/auth/introspect`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
    return { status: res.status, body: (await res.json()) as Record<string, unknown>, type: res.headers.get('content-type') };
  };

  it('describes an active key', async () => {
    const { secret, apiKey } = await stack.authStore.createApiKey({
      tenantId,
      name: 'introspected',
      scopes: ['read:assets', 'admin'],
      tier: 'FREE',
      expiresInDays: 30,
    });
    const res = await introspect(secret);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ active: true, scopes: ['admin:*', 'assets:read'], tenant_id: tenantId, expires_at: apiKey.expiresAt!.toISOString() });
    expect(res.body['tenant_id']).toMatch(/^[0-9a-f-]{36}$/);
    const stored = await stack.authStore.apiKeys.findOne({ _id: apiKey._id });
    expect(stored).not.toHaveProperty('secret');
    expect(JSON.stringify(stored)).not.toContain(secret);
  });

  it('answers active: false for revoked and expired keys', async () => {
    const revoked = await stack.authStore.createApiKey({ tenantId, name: 'revoked', scopes: ['assets:read'], tier: 'FREE' });
    await stack.authStore.revokeApiKey(tenantId, revoked.apiKey._id);
    expect((await introspect(revoked.secret)).body).toEqual({ active: false });
    const expiring = await stack.authStore.createApiKey({ tenantId, name: 'expired', scopes: ['assets:read'], tier: 'FREE', expiresInDays: 1 });
    await stack.authStore.apiKeys.updateOne({ _id: expiring.apiKey._id }, { $set: { expiresAt: new Date(Date.now() - 1000) } });
    expect((await introspect(expiring.secret)).body).toEqual({ active: false });
  });

  it('describes a user access token too (RFC 7662: any token the server issued), and nothing else', async () => {
    const email = await newUser('introspected-user@example.com');
    const tokens = (await login(email)).json as unknown as Tokens;
    const res = await introspect(tokens.access_token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      active: true,
      credential_kind: 'access_token',
      tenant_id: tenantId,
      role: 'ENGINEER',
      scopes: canonicalScopes.filter((s) => s.endsWith(':read') || s.endsWith(':write')),
    });
    const expiresAt = Date.parse(res.body['expires_at'] as string);
    expect(expiresAt).toBeGreaterThan(Date.now());
    expect(expiresAt).toBeLessThanOrEqual(Date.now() + 61_000);
    // In a tenant the user does not belong to it describes nothing.
    const elsewhere = await fetch(`${stack.gatewayOrigin}/auth/introspect`, {
      headers: { authorization: `Bearer ${tokens.access_token}`, 'x-tenant-id': '00000000-0000-4000-8000-000000000000' },
    });
    expect(await elsewhere.json()).toEqual({ active: false });
    // A refresh token is not an access token; a tampered one is nobody's.
    expect((await introspect(tokens.refresh_token)).body).toEqual({ active: false });
    const [h, p, sig] = tokens.access_token.split('.') as [string, string, string];
    const forged = Buffer.from(JSON.stringify({ ...JSON.parse(Buffer.from(p, 'base64url').toString()), sub: 'someone-else' })).toString('base64url');
    expect((await introspect(`${h}.${forged}.${sig}`)).body).toEqual({ active: false });
  });

  it('answers 401 problem+json without a credential', async () => {
    const res = await introspect();
    expect(res.status).toBe(401);
    expect(res.type).toMatch(/^application\/problem\+json/);
  });
});

describe('expired access tokens', () => {
  let shortLived: TestStack;
  beforeAll(async () => {
    // exp is whole seconds from a floored iat: a 10 s token is still valid at the first request after a 9 s stall.
    shortLived = await startTestStack({ auth: { accessTokenTtlSeconds: 10 } });
  });
  afterAll(async () => {
    await shortLived?.stop();
  });

  it('are refused with 401 once expired', async () => {
    const { tenantId: t } = await shortLived.tenantWithKey();
    await shortLived.authStore.createUser({ tenantId: t, email: 'brief@example.com', password, role: 'VIEWER' });
    const res = await fetch(`${shortLived.gatewayOrigin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'brief@example.com', password }),
    });
    const tokens = (await res.json()) as Tokens;
    expect((await graphql(shortLived.gatewayUrl, '{ __typename }', { apiKey: tokens.access_token })).status).toBe(200);
    // The gateway refuses a token once its clock's whole second reaches exp: wait until a second past it.
    await new Promise((r) => setTimeout(r, claimsOf(tokens.access_token).exp * 1000 + 1_000 - Date.now()));
    const expired = await graphql(shortLived.gatewayUrl, '{ __typename }', { apiKey: tokens.access_token });
    expect(expired.status).toBe(401);
    expect(expired.body.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
  });
});
