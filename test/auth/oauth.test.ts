import { createHash, randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { generateInternalKeyPair } from '@linepack/lib/identity';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { runEntry } from '../support/linepack-process';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * The OAuth 2.1 authorization server of the auth service, over HTTP through the gateway as a client meets it:
 * RFC 8414 metadata, RFC 7591 registration and client ID metadata documents, the authorization-code flow with PKCE
 * (S256 only), RFC 8707 audience binding, refresh-token rotation with reuse detection, RFC 8693 token exchange.
 * The console's consent page is driven here by its two API calls; test/auth/oauth-mcp.test.ts drives it in Chromium.
 */
let stack: TestStack;
let tenantA: string;
let tenantB: string;
const password = 'correct horse battery staple';
const mcpResource = 'http://127.0.0.1:9/mcp';
const exchangeSecret = 'mcp-exchange-secret-for-tests-0123456789';
let metadataServer: http.Server;
let metadataUrl: string;
const redirectUri = 'http://127.0.0.1:33418/callback';

beforeAll(async () => {
  stack = await startTestStack({ auth: { refreshReuseGraceSeconds: 1 } });
  process.env['OAUTH_ISSUER'] = stack.gatewayOrigin;
  process.env['OAUTH_PROTECTED_RESOURCES'] = JSON.stringify([{ resource: mcpResource, exchangeSecret }]);
  process.env['OAUTH_ALLOW_HTTP_CLIENT_METADATA'] = '1';
  ({ tenantId: tenantA } = await stack.tenantWithKey({ tier: 'PRO', name: `oauth A ${stack.dbPrefix}` }));
  ({ tenantId: tenantB } = await stack.tenantWithKey({ tier: 'FREE', name: `oauth B ${stack.dbPrefix}` }));
  await stack.authStore.createUser({ tenantId: tenantA, email: 'engineer@oauth.test', password, role: 'ENGINEER' });
  // The same person, a viewer in a second tenant.
  await stack.authStore.createUser({ tenantId: tenantB, email: 'engineer@oauth.test', password, role: 'VIEWER' });
  // A client that identifies itself by URL: its metadata document, served from loopback.
  metadataServer = http.createServer((req, res) => {
    res.setHeader('content-type', 'application/json');
    res.end(JSON.stringify({ client_id: metadataUrl, client_name: 'Metadata Client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }));
  });
  await new Promise<void>((resolve) => metadataServer.listen(0, '127.0.0.1', resolve));
  metadataUrl = `http://127.0.0.1:${(metadataServer.address() as AddressInfo).port}/client.json`;
}, 90_000);
afterAll(async () => {
  metadataServer?.close();
  await stack?.stop();
  delete process.env['OAUTH_ISSUER'];
  delete process.env['OAUTH_PROTECTED_RESOURCES'];
  delete process.env['OAUTH_ALLOW_HTTP_CLIENT_METADATA'];
});

const verifierAndChallenge = () => {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
};

async function json(res: Response): Promise<Record<string, unknown>> {
  return (await res.json()) as Record<string, unknown>;
}

const tokenRequest = (params: Record<string, string>, headers: Record<string, string> = {}) =>
  fetch(`${stack.gatewayOrigin}/auth/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params).toString(),
  });

async function consoleToken(email: string): Promise<string> {
  const res = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email, password }),
  });
  expect(res.status).toBe(200);
  return (await json(res))['access_token'] as string;
}

/** The consent page's part: check the request, then approve it as the signed-in user in `tenantId`. */
async function authorize(
  clientId: string,
  options: { email?: string; tenantId?: string; scope?: string; resource?: string; challenge: string; state?: string },
): Promise<URL> {
  const request = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: options.challenge,
    code_challenge_method: 'S256',
    state: options.state ?? 'st-1',
    ...(options.scope ? { scope: options.scope } : {}),
    resource: options.resource ?? mcpResource,
  };
  const check = await fetch(`${stack.gatewayOrigin}/auth/oauth/authorize/request?${new URLSearchParams(request).toString()}`);
  expect(check.status).toBe(200);
  const decision = await fetch(`${stack.gatewayOrigin}/auth/oauth/authorize/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${await consoleToken(options.email ?? 'engineer@oauth.test')}` },
    body: JSON.stringify({ ...request, tenant_id: options.tenantId ?? tenantA, approve: true }),
  });
  expect(decision.status).toBe(200);
  return new URL((await json(decision))['redirect_to'] as string);
}

async function register(): Promise<string> {
  const res = await fetch(`${stack.gatewayOrigin}/auth/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Test MCP client', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' }),
  });
  expect(res.status).toBe(201);
  return (await json(res))['client_id'] as string;
}

async function signInWithOAuth(clientId: string, options: { tenantId?: string; scope?: string; resource?: string; email?: string } = {}) {
  const { verifier, challenge } = verifierAndChallenge();
  const back = await authorize(clientId, { ...options, challenge });
  const res = await tokenRequest({
    grant_type: 'authorization_code',
    code: back.searchParams.get('code')!,
    redirect_uri: redirectUri,
    client_id: clientId,
    code_verifier: verifier,
    resource: options.resource ?? mcpResource,
  });
  expect(res.status).toBe(200);
  return (await json(res)) as { access_token: string; refresh_token: string; scope: string; expires_in: number };
}

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8')) as Record<string, unknown>;

it('publishes RFC 8414 metadata at the gateway origin’s /.well-known/oauth-authorization-server, issuer = that origin', async () => {
  const res = await fetch(`${stack.gatewayOrigin}/.well-known/oauth-authorization-server`);
  expect(res.status).toBe(200);
  const metadata = await json(res);
  // RFC 8414 §3.3: "The "issuer" value returned MUST be identical to the authorization server's issuer identifier
  // value into which the well-known URI string was inserted to create the URL used to retrieve the metadata."
  expect(metadata['issuer']).toBe(stack.gatewayOrigin);
  expect(metadata).toMatchObject({
    authorization_endpoint: `${stack.gatewayOrigin}/oauth/authorize`,
    token_endpoint: `${stack.gatewayOrigin}/auth/oauth/token`,
    registration_endpoint: `${stack.gatewayOrigin}/auth/oauth/register`,
    code_challenge_methods_supported: ['S256'],
    response_types_supported: ['code'],
    client_id_metadata_document_supported: true,
  });
  expect(metadata['grant_types_supported']).toEqual(
    expect.arrayContaining(['authorization_code', 'refresh_token', 'urn:ietf:params:oauth:grant-type:token-exchange']),
  );
  expect(metadata['scopes_supported']).toContain('assets:read');
});

it('registers a public client (RFC 7591) and refuses redirect URIs that are neither https nor loopback', async () => {
  expect(await register()).toMatch(/^lpc_/);
  const bad = await fetch(`${stack.gatewayOrigin}/auth/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ redirect_uris: ['http://attacker.example/cb'] }),
  });
  expect(bad.status).toBe(400);
  // RFC 7591 §3.2.2: "invalid_redirect_uri  The value of one or more redirection URIs is invalid."
  expect((await json(bad))['error']).toBe('invalid_redirect_uri');
});

it('signs in with PKCE S256, the tenant chosen at consent and the scopes asked, audience-bound to the MCP resource', async () => {
  const clientId = await register();
  const tokens = await signInWithOAuth(clientId, { tenantId: tenantB, scope: 'assets:read assets:write' });
  const claims = claimsOf(tokens.access_token);
  expect(claims['aud']).toBe(mcpResource);
  expect(claims['iss']).toBe(stack.gatewayOrigin);
  // A viewer in tenant B: only the read scope of the two asked, and only that tenant.
  expect(claims['tenants']).toEqual([{ id: tenantB, role: 'VIEWER', tier: 'free' }]);
  expect(tokens.scope).toBe('assets:read');
  expect(claims['client_id']).toBe(clientId);
  // The gateway refuses a token whose audience is the MCP server.
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: tokens.access_token })).status).toBe(401);
});

it('refuses a code without the right verifier, and a code used twice revokes what it was exchanged for', async () => {
  const clientId = await register();
  const { verifier, challenge } = verifierAndChallenge();
  const code = (await authorize(clientId, { challenge })).searchParams.get('code')!;
  const wrong = await tokenRequest({
    grant_type: 'authorization_code',
    code,
    redirect_uri: redirectUri,
    client_id: clientId,
    code_verifier: verifierAndChallenge().verifier,
  });
  expect(wrong.status).toBe(400);
  expect((await json(wrong))['error']).toBe('invalid_grant');

  const { verifier: v2, challenge: c2 } = verifierAndChallenge();
  const code2 = (await authorize(clientId, { challenge: c2 })).searchParams.get('code')!;
  const first = await tokenRequest({ grant_type: 'authorization_code', code: code2, redirect_uri: redirectUri, client_id: clientId, code_verifier: v2 });
  expect(first.status).toBe(200);
  const issued = (await json(first)) as { refresh_token: string };
  const again = await tokenRequest({ grant_type: 'authorization_code', code: code2, redirect_uri: redirectUri, client_id: clientId, code_verifier: v2 });
  expect(again.status).toBe(400);
  const refresh = await tokenRequest({ grant_type: 'refresh_token', refresh_token: issued.refresh_token, client_id: clientId });
  expect(refresh.status).toBe(400);
  expect(verifier).not.toBe(v2);
});

it('refuses plain PKCE and a missing challenge at the consent step, with the error sent to the client’s redirect', async () => {
  const clientId = await register();
  const params = new URLSearchParams({
    response_type: 'code',
    client_id: clientId,
    redirect_uri: redirectUri,
    code_challenge: 'x'.repeat(43),
    code_challenge_method: 'plain',
    state: 's',
  });
  const res = await fetch(`${stack.gatewayOrigin}/auth/oauth/authorize/request?${params.toString()}`);
  expect(res.status).toBe(400);
  const answer = await json(res);
  expect(answer['error']).toBe('invalid_request');
  const back = new URL(answer['redirect_to'] as string);
  expect(back.origin + back.pathname).toBe(redirectUri);
  expect(back.searchParams.get('state')).toBe('s');
  // An unregistered redirect URI is never redirected to.
  params.set('redirect_uri', 'http://127.0.0.1:1/elsewhere');
  const elsewhere = await json(await fetch(`${stack.gatewayOrigin}/auth/oauth/authorize/request?${params.toString()}`));
  expect(elsewhere['error']).toBe('invalid_redirect_uri');
  expect(elsewhere['redirect_to']).toBeUndefined();
});

it('accepts a client identified by its metadata document URL, and refuses one whose document names another client_id', async () => {
  const tokens = await signInWithOAuth(metadataUrl);
  expect(claimsOf(tokens.access_token)['client_id']).toBe(metadataUrl);
  const check = await fetch(
    `${stack.gatewayOrigin}/auth/oauth/authorize/request?${new URLSearchParams({ response_type: 'code', client_id: metadataUrl.replace('client.json', 'other.json'), redirect_uri: redirectUri }).toString()}`,
  );
  expect(check.status).toBe(400);
  expect((await json(check))['error']).toBe('invalid_client');
});

it('rotates refresh tokens, and a spent one presented again revokes the whole grant (reuse detection)', async () => {
  const clientId = await register();
  const first = await signInWithOAuth(clientId);
  const second = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: clientId });
  expect(second.status).toBe(200);
  const rotated = (await json(second)) as { access_token: string; refresh_token: string };
  expect(rotated.refresh_token).not.toBe(first.refresh_token);
  expect(claimsOf(rotated.access_token)['aud']).toBe(mcpResource);
  // Past the 1 s grace, the spent token is a copy: the family is revoked, the rotated token with it.
  await new Promise((r) => setTimeout(r, 1_200));
  const reused = await tokenRequest({ grant_type: 'refresh_token', refresh_token: first.refresh_token, client_id: clientId });
  expect((await json(reused))['error']).toBe('invalid_grant');
  const after = await tokenRequest({ grant_type: 'refresh_token', refresh_token: rotated.refresh_token, client_id: clientId });
  expect(after.status).toBe(400);
});

it('does not let an OAuth refresh token be refreshed at /auth/refresh (it would widen to every tenant), nor by another client', async () => {
  const clientId = await register();
  const tokens = await signInWithOAuth(clientId);
  const other = await tokenRequest({ grant_type: 'refresh_token', refresh_token: tokens.refresh_token, client_id: await register() });
  expect((await json(other))['error']).toBe('invalid_grant');
  const tokens2 = await signInWithOAuth(clientId);
  const firstParty = await fetch(`${stack.gatewayOrigin}/auth/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: tokens2.refresh_token }),
  });
  expect(firstParty.status).toBe(401);
});

it('exchanges an MCP-audience token for a gateway token of the same user, tenant and scopes (RFC 8693), for the MCP server only', async () => {
  const clientId = await register();
  const tokens = await signInWithOAuth(clientId, { tenantId: tenantB, scope: 'assets:read' });
  const exchange = (auth?: string) =>
    tokenRequest(
      {
        grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
        subject_token: tokens.access_token,
        subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
        resource: stack.gatewayOrigin,
      },
      auth ? { authorization: `Basic ${Buffer.from(auth).toString('base64')}` } : {},
    );
  // The client itself holds the token but not the MCP server's credentials.
  expect((await exchange()).status).toBe(401);
  expect((await exchange(`${encodeURIComponent(mcpResource)}:wrong-secret-0123456789`)).status).toBe(401);
  const res = await exchange(`${encodeURIComponent(mcpResource)}:${exchangeSecret}`);
  expect(res.status).toBe(200);
  const exchanged = (await json(res)) as { access_token: string; issued_token_type: string; refresh_token?: string };
  expect(exchanged.issued_token_type).toBe('urn:ietf:params:oauth:token-type:access_token');
  expect(exchanged.refresh_token).toBeUndefined();
  const claims = claimsOf(exchanged.access_token);
  expect(claims).toMatchObject({ sub: claimsOf(tokens.access_token)['sub'], scope: 'assets:read', act: { sub: mcpResource } });
  const me = await graphql<{ me: { tenantId: string; email: string } }>(stack.gatewayUrl, '{ me { tenantId email } }', { apiKey: exchanged.access_token });
  expect(me.status).toBe(200);
  expect(me.body.data?.me).toEqual({ tenantId: tenantB, email: 'engineer@oauth.test' });
  // Only the chosen tenant: naming the other is refused.
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: exchanged.access_token, headers: { 'x-tenant-id': tenantA } })).status).toBe(403);
  // A gateway-audience token cannot be exchanged again.
  const again = await tokenRequest(
    {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: exchanged.access_token,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    },
    { authorization: `Basic ${Buffer.from(`${encodeURIComponent(mcpResource)}:${exchangeSecret}`).toString('base64')}` },
  );
  expect((await json(again))['error']).toBe('invalid_grant');
});

it('holds a token to the scopes consented, not the whole role: the gateway refuses what the user did not allow', async () => {
  // An engineer (every read and write scope) lets an application read assets only.
  const clientId = await register();
  const direct = await signInWithOAuth(clientId, { resource: stack.gatewayOrigin, scope: 'assets:read' });
  expect(direct.scope).toBe('assets:read');
  const asked = (query: string, token: string) => graphql(stack.gatewayUrl, query, { apiKey: token });
  expect((await asked('{ assets(first: 1) { totalCount } }', direct.access_token)).status).toBe(200);
  const write = await asked('mutation { createAsset(input: { type: PIPELINE, name: "not allowed" }) { id } }', direct.access_token);
  expect(write.status).toBe(403);
  expect(write.body.errors?.[0]?.extensions?.['missingScopes']).toEqual(['assets:write']);
  const measurements = await asked('{ pipelineSummary { measurementCount } }', direct.access_token);
  expect(measurements.status).toBe(403);
  // The same through the MCP server's exchange: the exchanged token keeps the consented scopes.
  const viaMcp = await signInWithOAuth(clientId, { scope: 'assets:read' });
  const exchanged = await tokenRequest(
    {
      grant_type: 'urn:ietf:params:oauth:grant-type:token-exchange',
      subject_token: viaMcp.access_token,
      subject_token_type: 'urn:ietf:params:oauth:token-type:access_token',
    },
    { authorization: `Basic ${Buffer.from(`${encodeURIComponent(mcpResource)}:${exchangeSecret}`).toString('base64')}` },
  );
  const gatewayToken = ((await json(exchanged)) as { access_token: string }).access_token;
  expect((await asked('mutation { createAsset(input: { type: PIPELINE, name: "not allowed" }) { id } }', gatewayToken)).status).toBe(403);
  // Introspection says the same as the gateway.
  const introspected = await json(await fetch(`${stack.gatewayOrigin}/auth/introspect`, { headers: { authorization: `Bearer ${gatewayToken}` } }));
  expect(introspected['scopes']).toEqual(['assets:read']);
});

it('refuses consent given with an OAuth-issued token: a client cannot approve its own request', async () => {
  const clientId = await register();
  const { challenge } = verifierAndChallenge();
  const gatewayTokens = await signInWithOAuth(clientId, { resource: stack.gatewayOrigin });
  expect(claimsOf(gatewayTokens.access_token)['aud']).toBe('linepack-api');
  const decision = await fetch(`${stack.gatewayOrigin}/auth/oauth/authorize/decision`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${gatewayTokens.access_token}` },
    body: JSON.stringify({
      response_type: 'code',
      client_id: clientId,
      redirect_uri: redirectUri,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      tenant_id: tenantA,
      approve: true,
    }),
  });
  expect(decision.status).toBe(401);
});

it('reads its settings at start-up: a bad OAUTH_* value stops the auth service (exit 2) naming the variable and the rule', async () => {
  const startAuth = (settings: Record<string, string>) =>
    runEntry('subgraphs/auth/src/main.ts', [], {
      ...process.env,
      PORT: '0',
      METRICS_PORT: '0',
      JWT_SIGNING_KEY: SigningKeys.generatePem(),
      INTERNAL_TOKEN_PUBLIC_KEY: generateInternalKeyPair().publicKeyPem,
      ...settings,
    });
  const run = await startAuth({
    OAUTH_ISSUER: 'linepack.example.com',
    OAUTH_PROTECTED_RESOURCES: JSON.stringify([{ resource: 'https://mcp.example.com/mcp', exchangeSecret: 'short' }]),
    OAUTH_ALLOW_HTTP_CLIENT_METADATA: 'sometimes',
  });
  expect([run.code, run.stderr.trim().split('\n')]).toEqual([
    2,
    [
      'auth subgraph: invalid configuration',
      '  OAUTH_ISSUER: must be an http(s) URL',
      '  OAUTH_PROTECTED_RESOURCES.0.exchangeSecret: Too small: expected string to have >=16 characters',
      '  OAUTH_ALLOW_HTTP_CLIENT_METADATA: must be true or false (also 1/0, on/off, yes/no)',
    ],
  ]);
  const notJson = await startAuth({ OAUTH_ISSUER: 'https://linepack.example.com', OAUTH_PROTECTED_RESOURCES: "[{resource: 'https://mcp.example.com/mcp'}]" });
  expect([notJson.code, notJson.stderr]).toEqual([2, expect.stringContaining('OAUTH_PROTECTED_RESOURCES: must be JSON')]);
}, 60_000);
