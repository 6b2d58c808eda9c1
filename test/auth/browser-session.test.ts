import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { gatewayConfigFromEnv } from '@linepack/gateway/config';
import { generateInternalKeyPair } from '@linepack/lib/identity';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * The web console's session over HTTP, as a browser holds it: the refresh token only in an HttpOnly,
 * SameSite=Strict cookie scoped to /auth, refresh and logout only with the CSRF token bound to it; CORS only for
 * configured origins, answered before authentication; the console and its explorer served from the gateway.
 */
const consoleDir = mkdtempSync(path.join(os.tmpdir(), 'linepack-console-'));
const allowedOrigin = 'http://tools.example.test:8080';
let stack: TestStack;
let tenantId: string;
const password = 'correct horse battery staple';

beforeAll(async () => {
  mkdirSync(path.join(consoleDir, 'assets'));
  writeFileSync(path.join(consoleDir, 'index.html'), '<!doctype html><title>Linepack console</title><div id="root"></div>');
  writeFileSync(path.join(consoleDir, 'assets', 'index-Ab12Cd34.js'), 'console.log("console")');
  stack = await startTestStack({ consoleDir, corsOrigins: [allowedOrigin], auth: { refreshReuseGraceSeconds: 1 } });
  ({ tenantId } = await stack.tenantWithKey({ tier: 'PRO' }));
  await stack.authStore.createUser({ tenantId, email: 'admin@browser.test', password, role: 'ADMIN' });
});
afterAll(async () => {
  await stack?.stop();
  rmSync(consoleDir, { recursive: true, force: true });
});

interface Jar {
  [name: string]: string;
}

/** The cookies of a response, as a browser would store them, with their attributes. */
function setCookies(res: Response): Record<string, { value: string; attributes: string[] }> {
  return Object.fromEntries(
    res.headers.getSetCookie().map((line) => {
      const [pair, ...attributes] = line.split(';').map((p) => p.trim());
      const at = pair!.indexOf('=');
      return [pair!.slice(0, at), { value: pair!.slice(at + 1), attributes }];
    }),
  );
}

const cookieHeader = (jar: Jar) =>
  Object.entries(jar)
    .map(([k, v]) => `${k}=${v}`)
    .join('; ');

async function signIn(): Promise<{ jar: Jar; body: Record<string, unknown>; res: Response }> {
  const res = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'admin@browser.test', password, session: 'cookie' }),
  });
  expect(res.status).toBe(200);
  const cookies = setCookies(res);
  return {
    jar: { lp_refresh: cookies['lp_refresh']!.value, '__Host-lp_csrf': cookies['__Host-lp_csrf']!.value },
    body: (await res.json()) as Record<string, unknown>,
    res,
  };
}

const cookiePost = (route: string, jar: Jar, csrf?: string) =>
  fetch(`${stack.gatewayOrigin}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie: cookieHeader(jar), ...(csrf !== undefined ? { 'x-csrf-token': csrf } : {}) },
    body: '{}',
  });

it('signs a browser in with the refresh token in an HttpOnly, SameSite=Strict cookie scoped to /auth, never in the body', async () => {
  const { res, body } = await signIn();
  expect(Object.keys(body).sort()).toEqual(['access_token', 'csrf_token', 'expires_in', 'token_type']);
  const cookies = setCookies(res);
  expect(cookies['lp_refresh']!.attributes).toEqual(expect.arrayContaining(['Path=/auth', 'HttpOnly', 'Secure', 'SameSite=Strict']));
  // The CSRF token is readable by the page (it must send it back as a header), and bound to the refresh token.
  expect(cookies['__Host-lp_csrf']!.attributes).toEqual(expect.arrayContaining(['Path=/', 'Secure', 'SameSite=Strict']));
  expect(cookies['__Host-lp_csrf']!.attributes).not.toContain('HttpOnly');
  expect(cookies['__Host-lp_csrf']!.value).toBe(body['csrf_token']);
  expect(res.headers.get('cache-control')).toBe('no-store');
  // The access token works at /graphql like any other.
  const me = await graphql<{ me: { email: string; scopes: string[]; tenants: { tier: string }[] } }>(
    stack.gatewayUrl,
    '{ me { email scopes tenants { tier } } }',
    {
      apiKey: body['access_token'] as string,
    },
  );
  expect(me.body.data?.me).toEqual({ email: 'admin@browser.test', scopes: ['admin:*'], tenants: [{ tier: 'PRO' }] });
});

it('refreshes from the cookie only with the CSRF token that belongs to it, rotating both', async () => {
  const { jar } = await signIn();
  const other = await signIn();
  const missing = await cookiePost('/auth/refresh', jar);
  expect(missing.status).toBe(403);
  expect(((await missing.json()) as { code: string }).code).toBe('CSRF_FAILED');
  // A CSRF token of another session (or a cookie a sibling site planted) does not match this refresh token.
  expect((await cookiePost('/auth/refresh', jar, other.jar['__Host-lp_csrf']!)).status).toBe(403);
  expect((await cookiePost('/auth/refresh', jar, 'x'.repeat(43))).status).toBe(403);

  const refreshed = await cookiePost('/auth/refresh', jar, jar['__Host-lp_csrf']!);
  expect(refreshed.status).toBe(200);
  const body = (await refreshed.json()) as Record<string, unknown>;
  expect(body['refresh_token']).toBeUndefined();
  const rotated = setCookies(refreshed);
  expect(rotated['lp_refresh']!.value).not.toBe(jar.lp_refresh);
  expect(rotated['__Host-lp_csrf']!.value).toBe(body['csrf_token']);
  expect(rotated['__Host-lp_csrf']!.value).not.toBe(jar['__Host-lp_csrf']);
  // The spent cookie presented again after the grace (1 s here) is a reuse: refused, and the browser is told to forget
  // the session.
  await new Promise((r) => setTimeout(r, 1_100));
  const reused = await cookiePost('/auth/refresh', jar, jar['__Host-lp_csrf']!);
  expect(reused.status).toBe(401);
  expect(setCookies(reused)['lp_refresh']!.attributes).toEqual(expect.arrayContaining(['Path=/auth', expect.stringMatching(/^Expires=Thu, 01 Jan 1970/)]));
  // Without a cookie there is no session to refresh.
  const none = await fetch(`${stack.gatewayOrigin}/auth/refresh`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
  expect(none.status).toBe(401);
});

it('refuses a second session cookie planted next to the real one (cookie tossing from a sibling domain)', async () => {
  const mine = await signIn();
  const planted = await signIn();
  const res = await fetch(`${stack.gatewayOrigin}/auth/refresh`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      cookie: `lp_refresh=${planted.jar.lp_refresh}; lp_refresh=${mine.jar.lp_refresh}; __Host-lp_csrf=${planted.jar['__Host-lp_csrf']}`,
      'x-csrf-token': planted.jar['__Host-lp_csrf']!,
    },
    body: '{}',
  });
  expect(res.status).toBe(400);
  expect(((await res.json()) as { code: string }).code).toBe('AMBIGUOUS_SESSION');
});

it('refuses cookie-session requests a browser marks as coming from another site or origin', async () => {
  const { jar } = await signIn();
  for (const site of ['cross-site', 'same-site']) {
    const login = await fetch(`${stack.gatewayOrigin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'sec-fetch-site': site },
      body: JSON.stringify({ email: 'admin@browser.test', password, session: 'cookie' }),
    });
    expect({ site, status: login.status }).toEqual({ site, status: 403 });
    expect(login.headers.getSetCookie()).toEqual([]);
    const refresh = await fetch(`${stack.gatewayOrigin}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'sec-fetch-site': site, cookie: cookieHeader(jar), 'x-csrf-token': jar['__Host-lp_csrf']! },
      body: '{}',
    });
    expect({ site, status: refresh.status }).toEqual({ site, status: 403 });
  }
  // The console's own requests (same-origin) work, and the session was not touched by the refused ones.
  const own = await fetch(`${stack.gatewayOrigin}/auth/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'sec-fetch-site': 'same-origin', cookie: cookieHeader(jar), 'x-csrf-token': jar['__Host-lp_csrf']! },
    body: '{}',
  });
  expect(own.status).toBe(200);
  // A token-in-body client (a script, another app's backend) is not a browser session and is not affected.
  const scripted = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'sec-fetch-site': 'cross-site' },
    body: JSON.stringify({ email: 'admin@browser.test', password }),
  });
  expect(scripted.status).toBe(200);
});

it('reads a body as the auth service does: a byte order mark or another charset is refused on both sides, never a session', async () => {
  const json = JSON.stringify({ email: 'admin@browser.test', password, session: 'cookie' });
  const bodies: { name: string; contentType: string; body: Buffer; status: number; code: string }[] = [
    {
      name: 'UTF-8 BOM',
      contentType: 'application/json',
      body: Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(json)]),
      status: 400,
      code: 'MALFORMED_JSON',
    },
    {
      name: 'UTF-16 with its charset',
      contentType: 'application/json; charset=utf-16',
      body: Buffer.from(`\ufeff${json}`, 'utf16le'),
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
    { name: 'UTF-16LE as if UTF-8', contentType: 'application/json', body: Buffer.from(json, 'utf16le'), status: 400, code: 'MALFORMED_JSON' },
    {
      name: 'Latin-1 charset',
      contentType: 'application/json; charset=ISO-8859-1',
      body: Buffer.from(json, 'latin1'),
      status: 415,
      code: 'UNSUPPORTED_MEDIA_TYPE',
    },
  ];
  for (const { name, contentType, body, status, code } of bodies) {
    // Through the gateway, as a cross-site page would send it: refused, and no cookie is set.
    for (const site of ['cross-site', 'same-origin']) {
      const res = await fetch(`${stack.gatewayOrigin}/auth/login`, { method: 'POST', headers: { 'content-type': contentType, 'sec-fetch-site': site }, body });
      expect({ name, site, status: res.status, code: ((await res.json()) as { code: string }).code }).toEqual({ name, site, status, code });
      expect(res.headers.getSetCookie()).toEqual([]);
    }
    // Straight to the auth service: the same answer (one parser, lib/json-body.ts).
    const direct = await fetch(`${stack.authUrl}/auth/login`, { method: 'POST', headers: { 'content-type': contentType }, body });
    expect({ name, status: direct.status, code: ((await direct.json()) as { code: string }).code }).toEqual({ name, status, code });
    expect(direct.headers.getSetCookie()).toEqual([]);
  }
  // Control: the plain body from another site is the 403 it always was; from the console's own origin it signs in.
  const plain = (site: string) =>
    fetch(`${stack.gatewayOrigin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json; charset=UTF-8', 'sec-fetch-site': site },
      body: json,
    });
  expect((await plain('cross-site')).status).toBe(403);
  expect((await plain('same-origin')).status).toBe(200);
});

it('signs out with the cookie and its CSRF token: the session ends and the cookies are cleared', async () => {
  const { jar } = await signIn();
  expect((await cookiePost('/auth/logout', jar)).status).toBe(403);
  const out = await cookiePost('/auth/logout', jar, jar['__Host-lp_csrf']!);
  expect(out.status).toBe(204);
  const cleared = setCookies(out);
  expect(cleared['lp_refresh']!.value).toBe('');
  expect(cleared['__Host-lp_csrf']!.value).toBe('');
  expect((await cookiePost('/auth/refresh', jar, jar['__Host-lp_csrf']!)).status).toBe(401);
});

describe('CORS', () => {
  const preflight = (origin: string) =>
    fetch(stack.gatewayUrl, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, content-type, x-tenant-id' },
    });

  it('answers a listed origin before authentication, with credentials', async () => {
    const res = await preflight(allowedOrigin);
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe(allowedOrigin);
    expect(res.headers.get('access-control-allow-credentials')).toBe('true');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-tenant-id');
    const { apiKey } = await stack.tenantWithKey();
    const call = await fetch(stack.gatewayUrl, {
      method: 'POST',
      headers: { origin: allowedOrigin, authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(call.status).toBe(200);
    expect(call.headers.get('access-control-allow-origin')).toBe(allowedOrigin);
  });

  it('gives an unlisted origin nothing a browser would accept, and no 401 either', async () => {
    for (const origin of ['https://evil.example', 'http://tools.example.test:8081', 'null']) {
      const res = await preflight(origin);
      expect(res.status).toBe(204);
      expect(res.headers.get('access-control-allow-origin')).toBeNull();
      expect(res.headers.get('access-control-allow-credentials')).toBeNull();
    }
    const call = await fetch(stack.gatewayUrl, {
      method: 'POST',
      headers: { origin: 'https://evil.example', 'content-type': 'application/json' },
      body: JSON.stringify({ query: '{ __typename }' }),
    });
    expect(call.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('allows no origin by default, and refuses a wildcard or a path in CORS_ORIGINS', () => {
    const { privateKeyPem } = generateInternalKeyPair();
    const base = { AUTH_URL: 'http://auth:4005', INTERNAL_TOKEN_PRIVATE_KEY: privateKeyPem };
    expect(gatewayConfigFromEnv(base).corsOrigins).toEqual([]);
    expect(gatewayConfigFromEnv({ ...base, CORS_ORIGINS: 'https://a.example, http://localhost:5173' }).corsOrigins).toEqual([
      'https://a.example',
      'http://localhost:5173',
    ]);
    expect(() => gatewayConfigFromEnv({ ...base, CORS_ORIGINS: '*' })).toThrow(/CORS_ORIGINS\.0: each origin is scheme:\/\/host\[:port\]/);
    expect(() => gatewayConfigFromEnv({ ...base, CORS_ORIGINS: 'https://a.example/app' })).toThrow(/CORS_ORIGINS/);
  });
});

describe('the console', () => {
  const page = (route: string) => fetch(`${stack.gatewayOrigin}${route}`, { headers: { accept: 'text/html,application/xhtml+xml,*/*;q=0.8' } });

  it('is served at / and at each of its routes, with a policy that loads nothing from another origin', async () => {
    for (const route of ['/', '/sign-in', '/dashboard', '/assets/6f1c', '/settings/api-keys', '/explorer']) {
      const res = await page(route);
      expect({ route, status: res.status }).toEqual({ route, status: 200 });
      expect(await res.text()).toContain('<title>Linepack console</title>');
      expect(res.headers.get('content-security-policy')).toContain("default-src 'self'");
      expect(res.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    }
    // The page by its file name too: never without the policy (it could be framed otherwise).
    const byName = await page('/index.html');
    expect(byName.status).toBe(200);
    expect(byName.headers.get('content-security-policy')).toContain("frame-ancestors 'none'");
    expect(byName.headers.get('x-frame-options')).toBe('DENY');
    const script = await fetch(`${stack.gatewayOrigin}/assets/index-Ab12Cd34.js`);
    expect(script.status).toBe(200);
    expect(script.headers.get('cache-control')).toContain('immutable');
  });

  it('answers a browser opening /graphql with the explorer, and API clients with the API', async () => {
    const browser = await page('/graphql');
    expect(browser.status).toBe(200);
    expect(await browser.text()).toContain('<title>Linepack console</title>');
    const client = await fetch(stack.gatewayUrl, { headers: { accept: 'application/json' } });
    expect(client.status).toBe(401);
    expect(client.headers.get('content-type')).toMatch(/json/);
  });
});
