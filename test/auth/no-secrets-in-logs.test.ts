import { Writable } from 'node:stream';
import { waitFor } from '@linepack/lib/testing/until';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/** Every service logs at debug into one buffer; a login and keyed requests must leave no secret in it. */
let stack: TestStack;
let output = '';
const sink = new Writable({
  write(chunk: Buffer, _encoding, done) {
    output += chunk.toString('utf8');
    done();
  },
});

beforeAll(async () => {
  stack = await startTestStack({ logLevel: 'debug', logDestination: sink });
});
afterAll(async () => {
  await stack?.stop();
});

it('logs requests but never a password, API key or token', async () => {
  const password = 'Very-Secret-Password-123';
  const { tenantId, apiKey } = await stack.tenantWithKey();
  await stack.authStore.createUser({ tenantId, email: 'logged@example.com', password, role: 'VIEWER' });
  const login = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'logged@example.com', password }),
  });
  const tokens = (await login.json()) as { access_token: string; refresh_token: string };
  await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'logged@example.com', password: `${password}-wrong` }),
  });
  await graphql(stack.gatewayUrl, '{ me { id } pipelineSummary { totalAssets } }', { apiKey });
  await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: tokens.access_token });
  await graphql(stack.gatewayUrl, '{ apiKeys { id } }', { apiKey }); // refused: logged as a denial
  await fetch(`${stack.gatewayOrigin}/auth/refresh`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: tokens.refresh_token }),
  });
  // Access lines are written once a response has finished, a moment after the client has it: wait for the last one's.
  await waitFor(async () => output.includes('"path":"/auth/refresh"'), 30_000, "the refresh's log line");

  expect(output.length).toBeGreaterThan(1_000); // the services did log these requests at debug level
  expect(output).toContain('"path":"/auth/login"');
  for (const secret of [password, apiKey, tokens.access_token, tokens.refresh_token, apiKey.slice(4)]) {
    expect(output).not.toContain(secret);
  }
  expect(output).not.toMatch(/lpk_[0-9A-Za-z]{40}/);
  // The gateway's access log says who (credential id, kind, tenant) and from where, instead.
  const access = output
    .split('\n')
    .filter((line) => line.includes('"msg":"request"') && line.includes('"path":"/graphql"'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);
  expect(access.some((l) => l['credentialKind'] === 'api_key' && l['tenantId'] === tenantId && typeof l['credentialId'] === 'string')).toBe(true);
  expect(access.some((l) => l['credentialKind'] === 'user')).toBe(true);
  expect(access.every((l) => typeof l['clientAddress'] === 'string')).toBe(true);
  expect(output).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/);
});
