import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { UnauthorizedError, type OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { Browser, Page } from 'playwright-core';
import { freePort } from '@linepack/lib/infra/free-port';
import { repoRoot } from '@linepack/lib/repo-root';
import { checkLayout, expectNoAxeViolations, inBrowser, launchBrowser, shot, visible } from '../console/support/browser';
import { newPassword, requireBuiltConsole } from '../console/support/console';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * Issue 28's "done when", end to end: an MCP client that knows only the MCP server's URL — the TypeScript MCP SDK's
 * own OAuth client (`OAuthClientProvider` with StreamableHTTPClientTransport) — signs a user in on Linepack's console
 * (scripted Chromium: the sign-in page, then the consent page choosing the tenant), gets a token bound to the MCP
 * server (RFC 8707), calls tools as that user in that tenant, and refreshes; a second user of another tenant does the
 * same at the same time. The MCP server is the real Python companion (mcp-server/.venv, `linepack-mcp serve
 * --transport streamable-http` with LINEPACK_MCP_PUBLIC_URL), which exchanges each user's token for a gateway token
 * (RFC 8693): the gateway refuses the MCP token, and the MCP server refuses the gateway's.
 */
const exchangeSecret = 'mcp-e2e-exchange-secret-0123456789';
const sizes = { desktop: { width: 1280, height: 800 }, phone: { width: 390, height: 844 } } as const;

let stack: TestStack;
let browser: Browser;
let mcp: { child: ChildProcess; output: () => string; url: string; origin: string };
let callbacks: { server: http.Server; url: string; waiters: Map<string, (params: URLSearchParams) => void> };

interface Person {
  email: string;
  password: string;
  /** The tenant chosen at consent, and the one asset only that tenant has. */
  tenantId: string;
  tenantName: string;
  assetName: string;
}
let alice: Person;
let bob: Person;
/** A tenant Bob also belongs to, which he does not choose: nothing of it may reach his MCP client. */
let bobsOtherTenant: { tenantId: string; assetName: string };

/** Starts `linepack-mcp serve --transport streamable-http` as an operator would host it, with sign-in on. */
async function startMcpServer(gatewayUrl: string, port: number): Promise<typeof mcp> {
  const exe = path.join(repoRoot, 'mcp-server', '.venv', 'bin', 'linepack-mcp');
  if (!existsSync(exe)) throw new Error(`${exe} is missing: scripts/setup.sh installs the MCP companion in mcp-server/.venv`);
  const origin = `http://127.0.0.1:${port}`;
  const env = {
    PATH: process.env['PATH'] ?? '',
    HOME: process.env['HOME'] ?? '',
    LINEPACK_API_URL: gatewayUrl,
    LINEPACK_MCP_PUBLIC_URL: `${origin}/mcp`,
    LINEPACK_MCP_OAUTH_EXCHANGE_SECRET: exchangeSecret,
    LINEPACK_LOG_LEVEL: 'INFO',
  };
  const child = spawn(exe, ['serve', '--transport', 'streamable-http', '--port', String(port)], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      if ((await fetch(`${origin}/healthz`)).ok) break;
    } catch {
      // not listening yet
    }
    if (child.exitCode !== null || Date.now() > deadline) throw new Error(`the MCP server did not start:\n${output}`);
    await new Promise((r) => setTimeout(r, 200));
  }
  return { child, output: () => output, url: `${origin}/mcp`, origin };
}

/** The client's redirect URI: a loopback listener, as a desktop MCP client has (OAuth 2.1 §8.4.2). */
async function startCallbackServer(): Promise<typeof callbacks> {
  const waiters = new Map<string, (params: URLSearchParams) => void>();
  const server = http.createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://127.0.0.1');
    res.setHeader('content-type', 'text/html; charset=utf-8');
    res.end('<!doctype html><html lang="en"><title>Signed in</title><p>You can close this window.</p></html>');
    const state = url.searchParams.get('state') ?? '';
    waiters.get(state)?.(url.searchParams);
    waiters.delete(state);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/callback`, waiters };
}

/**
 * What an MCP client application keeps for one user: its registration, tokens and PKCE verifier, in memory. The
 * authorization URL the SDK asks it to open is handed to the test's browser.
 */
class RecordingProvider implements OAuthClientProvider {
  client: OAuthClientInformationMixed | undefined;
  saved: OAuthTokens | undefined;
  verifier = '';
  authorizationUrl: URL | undefined;
  refreshTokensSeen: string[] = [];
  readonly stateValue: string;

  constructor(
    readonly redirect: string,
    label: string,
  ) {
    this.stateValue = `state-${label}-${Math.random().toString(36).slice(2)}`;
  }
  get redirectUrl(): string {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Linepack e2e MCP client',
      redirect_uris: [this.redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  state(): string {
    return this.stateValue;
  }
  clientInformation(): OAuthClientInformationMixed | undefined {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed): void {
    this.client = info;
  }
  tokens(): OAuthTokens | undefined {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens): void {
    this.saved = tokens;
    if (tokens.refresh_token) this.refreshTokensSeen.push(tokens.refresh_token);
  }
  redirectToAuthorization(url: URL): void {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string): void {
    this.verifier = verifier;
  }
  codeVerifier(): string {
    return this.verifier;
  }
}

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

/** Screenshot (desktop and phone), layout and axe-core: what the sign-in and consent pages must pass. */
async function checkPage(page: Page, name: string): Promise<void> {
  await shot(page, name);
  await checkLayout(page, name);
  await expectNoAxeViolations(page, name);
}

/** The person's part in the browser: the console's sign-in page, then the consent page, choosing `person`'s tenant. */
async function signInAndConsent(page: Page, authorizationUrl: URL, person: Person, size: keyof typeof sizes): Promise<void> {
  await page.setViewportSize(sizes[size]);
  await page.goto(authorizationUrl.href);
  await visible(page.getByRole('heading', { name: 'Sign in to Linepack' }), 'the console sign-in page');
  await checkPage(page, `issue28-oauth-sign-in-${size}`);
  await page.getByLabel('Email').fill(person.email);
  await page.getByLabel('Password', { exact: true }).fill(person.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  // Signing in returns to the authorization request: the consent page names the client and what it asks for.
  await visible(page.getByRole('heading', { name: 'Allow Linepack e2e MCP client to use Linepack as you?' }), 'the consent page');
  const scopes = await visible(page.getByRole('list', { name: 'It asks to' }), 'the scopes asked');
  expect(await scopes.getByRole('listitem').allInnerTexts()).toContainEqual(expect.stringMatching(/^Read the asset register.* assets:read$/));
  // Where the access is used, and that a registered client's name is its own claim.
  await visible(page.getByText(mcp.url, { exact: true }), 'the MCP server the access is for');
  await visible(page.getByText('Linepack has not verified this name'), 'the unverified-name warning');
  await checkPage(page, `issue28-oauth-consent-${size}`);
  await page.getByLabel('Tenant').selectOption(person.tenantId);
  await page.getByRole('button', { name: 'Allow' }).click();
  await page.waitForURL((url) => url.href.startsWith(callbacks.url), { timeout: 15_000 });
}

/**
 * One user's whole sign-in through the SDK: connect (401 → protected-resource metadata → authorization server
 * metadata → registration → authorization URL), the browser part, the callback's code to finishAuth (token request),
 * and a connected client.
 */
async function signedInClient(person: Person, size: keyof typeof sizes): Promise<{ client: Client; provider: RecordingProvider }> {
  const provider = new RecordingProvider(callbacks.url, size);
  const first = new Client({ name: 'linepack-e2e', version: '1.0.0' });
  await expect(first.connect(new StreamableHTTPClientTransport(new URL(mcp.url), { authProvider: provider }))).rejects.toBeInstanceOf(UnauthorizedError);
  expect(provider.client?.client_id).toMatch(/^lpc_/); // registered dynamically (RFC 7591)
  const authorizationUrl = provider.authorizationUrl!;
  expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${stack.gatewayOrigin}/oauth/authorize`);
  expect(authorizationUrl.searchParams.get('resource')).toBe(mcp.url);
  expect(authorizationUrl.searchParams.get('code_challenge_method')).toBe('S256');

  const returned = new Promise<URLSearchParams>((resolve) => callbacks.waiters.set(provider.stateValue, resolve));
  await inBrowser(browser, stack.gatewayOrigin, `issue28-oauth-${size}`, ({ page }) => signInAndConsent(page, authorizationUrl, person, size));
  const params = await returned;
  // RFC 9207: the authorization response names the issuer the client discovered.
  expect(params.get('iss')).toBe(stack.gatewayOrigin);
  const transport = new StreamableHTTPClientTransport(new URL(mcp.url), { authProvider: provider });
  await transport.finishAuth(params.get('code')!);
  const client = new Client({ name: 'linepack-e2e', version: '1.0.0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(mcp.url), { authProvider: provider }));
  return { client, provider };
}

async function toolJson(client: Client, name: string, args: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const result = await client.callTool({ name, arguments: args });
  const text = (result.content as { type: string; text: string }[])[0]!.text;
  if (result.isError) throw new Error(`${name} failed: ${text}`);
  return JSON.parse(text) as Record<string, unknown>;
}

const assetNames = async (client: Client) => ((await toolJson(client, 'list_assets', { first: 100 }))['items'] as { name: string }[]).map((a) => a.name);

beforeAll(async () => {
  requireBuiltConsole();
  stack = await startTestStack();
  callbacks = await startCallbackServer();
  // The MCP server's URL is where tokens for it are bound: it must be known to the auth service before it starts.
  const port = await freePort();
  const mcpResource = `http://127.0.0.1:${port}/mcp`;
  process.env['OAUTH_ISSUER'] = stack.gatewayOrigin;
  process.env['OAUTH_PROTECTED_RESOURCES'] = JSON.stringify([{ resource: mcpResource, exchangeSecret }]);

  const a = await stack.tenantWithKey({ tier: 'PRO', name: `Acme Midstream ${stack.dbPrefix}` });
  const b = await stack.tenantWithKey({ tier: 'PRO', name: `Borealis Gas ${stack.dbPrefix}` });
  const other = await stack.tenantWithKey({ tier: 'PRO', name: `Other ${stack.dbPrefix}` });
  const tag = stack.dbPrefix;
  for (const [key, name] of [
    [a.apiKey, `${tag} Acme Line`],
    [b.apiKey, `${tag} Borealis Line`],
    [other.apiKey, `${tag} Other Line`],
  ] as const) {
    await createAsset(stack.gatewayUrl, key, { type: 'PIPELINE', name, status: 'ACTIVE' });
  }
  alice = {
    email: `alice-${tag}@example.com`,
    password: newPassword(),
    tenantId: a.tenantId,
    tenantName: `Acme Midstream ${tag}`,
    assetName: `${tag} Acme Line`,
  };
  bob = {
    email: `bob-${tag}@example.com`,
    password: newPassword(),
    tenantId: b.tenantId,
    tenantName: `Borealis Gas ${tag}`,
    assetName: `${tag} Borealis Line`,
  };
  bobsOtherTenant = { tenantId: other.tenantId, assetName: `${tag} Other Line` };
  await stack.authStore.createUser({ tenantId: a.tenantId, email: alice.email, password: alice.password, role: 'ENGINEER' });
  // Bob belongs to two tenants; at consent he picks Borealis, and his MCP client must see nothing of the other.
  await stack.authStore.createUser({ tenantId: other.tenantId, email: bob.email, password: bob.password, role: 'ADMIN' });
  await stack.authStore.createUser({ tenantId: b.tenantId, email: bob.email, password: bob.password, role: 'VIEWER' });

  mcp = await startMcpServer(stack.gatewayUrl, port);
  expect(mcp.url).toBe(mcpResource);
  browser = await launchBrowser();
}, 180_000);

afterAll(async () => {
  await browser?.close();
  if (mcp?.child.exitCode === null) {
    mcp.child.kill('SIGTERM');
    await new Promise((r) => mcp.child.once('exit', r));
  }
  callbacks?.server.close();
  await stack?.stop();
  delete process.env['OAUTH_ISSUER'];
  delete process.env['OAUTH_PROTECTED_RESOURCES'];
});

it('answers an unauthenticated client 401 naming its protected-resource metadata, which names Linepack', async () => {
  const res = await fetch(mcp.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: '{}',
  });
  expect(res.status).toBe(401);
  const challenge = res.headers.get('www-authenticate') ?? '';
  const metadataUrl = `${mcp.origin}/.well-known/oauth-protected-resource/mcp`;
  expect(challenge).toContain(`resource_metadata="${metadataUrl}"`);
  // No credential sent: no error code (RFC 6750 §3.1), and the scopes to ask for (MCP scope selection strategy).
  expect(challenge).not.toContain('error=');
  expect(challenge).toMatch(/scope="[^"]*assets:read[^"]*"/);
  expect(challenge).not.toMatch(/scope="[^"]*(write|admin)/);
  // Readiness covers sign-in: the authorization server's metadata names the configured issuer, and its keys are readable.
  const ready = (await (await fetch(`${mcp.origin}/readyz`)).json()) as { signIn: { status: string; issuer: string } };
  expect(ready.signIn).toMatchObject({ status: 'ready', issuer: stack.gatewayOrigin });
  for (const url of [metadataUrl, `${mcp.origin}/.well-known/oauth-protected-resource`]) {
    const metadata = (await (await fetch(url)).json()) as Record<string, unknown>;
    expect(metadata).toMatchObject({ resource: mcp.url, authorization_servers: [stack.gatewayOrigin], bearer_methods_supported: ['header'] });
  }
});

it('signs two users of two tenants in at once through the SDK’s OAuth client; each calls tools as themself, in the tenant they chose', async () => {
  const [a, b] = await Promise.all([signedInClient(alice, 'desktop'), signedInClient(bob, 'phone')]);

  // The tokens are bound to the MCP server and carry only the tenant chosen at consent.
  for (const [signedIn, person] of [
    [a, alice],
    [b, bob],
  ] as const) {
    const claims = claimsOf(signedIn.provider.saved!.access_token);
    expect(claims['aud']).toBe(mcp.url);
    expect(claims['iss']).toBe(stack.gatewayOrigin);
    expect((claims['tenants'] as { id: string }[]).map((t) => t.id)).toEqual([person.tenantId]);
  }

  // At the same time, interleaved: each answers as its own user, in its own tenant.
  const [whoA, whoB, assetsA, assetsB] = await Promise.all([
    toolJson(a.client, 'whoami'),
    toolJson(b.client, 'whoami'),
    assetNames(a.client),
    assetNames(b.client),
  ]);
  expect(whoA['me']).toMatchObject({ email: alice.email, tenantId: alice.tenantId });
  expect(whoB['me']).toMatchObject({ email: bob.email, tenantId: bob.tenantId });
  expect(assetsA).toEqual([alice.assetName]);
  expect(assetsB).toEqual([bob.assetName]);
  expect(assetsB).not.toContain(bobsOtherTenant.assetName);

  // Refresh: the access token is no longer good (here: its signature broken); the SDK refreshes with the rotated
  // refresh token at Linepack's token endpoint and the call goes through.
  const before = a.provider.saved!;
  a.provider.saved = { ...before, access_token: `${before.access_token.slice(0, -6)}AAAAAA` };
  expect(await assetNames(a.client)).toEqual([alice.assetName]);
  expect(a.provider.saved.access_token).not.toBe(before.access_token);
  expect(a.provider.refreshTokensSeen).toHaveLength(2);
  expect(a.provider.saved.refresh_token).not.toBe(before.refresh_token);
  expect(claimsOf(a.provider.saved.access_token)['aud']).toBe(mcp.url);

  // The MCP-audience token is refused by the gateway; the user's own gateway token is refused by the MCP server.
  const mcpToken = b.provider.saved!.access_token;
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: mcpToken })).status).toBe(401);
  const login = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: bob.email, password: bob.password }),
  });
  const gatewayToken = ((await login.json()) as { access_token: string }).access_token;
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: gatewayToken })).status).toBe(200);
  const refused = await fetch(mcp.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream', authorization: `Bearer ${gatewayToken}` },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  expect(refused.status).toBe(401);
  expect(refused.headers.get('www-authenticate')).toMatch(/^Bearer error="invalid_token".*resource_metadata="/);

  await Promise.all([a.client.close(), b.client.close()]);
  // The user's token never left the MCP server: it logged no credential either.
  expect(mcp.output()).not.toContain(mcpToken);
  expect(mcp.output()).not.toContain(exchangeSecret);
}, 180_000);
