import { createPublicKey } from 'node:crypto';
import { createLogger } from '@linepack/lib/logger';
import type { RunningService } from '@linepack/lib/subgraph-server';
import { defaultTokenLifetimes, startAuthSubgraph } from '@linepack/subgraph-auth';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * Rotating the token signing key without downtime: the auth service is redeployed with a new key
 * (the old one verify-only) while the gateway keeps running; old and new tokens both work.
 */
const oldKeyPem = SigningKeys.generatePem();
const newKeyPem = SigningKeys.generatePem();
const password = 'rotation password 123';
let stack: TestStack;
let replacement: RunningService | null = null;

beforeAll(async () => {
  stack = await startTestStack({ auth: { signingKeyPem: oldKeyPem } });
  const { tenantId } = await stack.tenantWithKey();
  await stack.authStore.createUser({ tenantId, email: 'rotate-key@example.com', password, role: 'VIEWER' });
});
afterAll(async () => {
  await replacement?.stop();
  await stack?.stop();
});

async function login(): Promise<string> {
  const res = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'rotate-key@example.com', password }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

it('keeps old tokens valid and accepts tokens from the new key once the gateway meets its kid', async () => {
  const oldToken = await login();
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: oldToken })).status).toBe(200); // gateway now caches the old JWKS

  // Redeploy auth on the same address: new signing key, the old public key verify-only.
  const port = stack.subgraphs.auth.port;
  await stack.subgraphs.auth.stop();
  const oldPublicPem = createPublicKey(oldKeyPem).export({ type: 'spki', format: 'pem' }).toString();
  replacement = await startAuthSubgraph({
    port,
    host: '127.0.0.1',
    mongoUri: process.env['MONGODB_URI']!,
    dbPrefix: stack.dbPrefix,
    internalTokenPublicKey: stack.internalKeys.publicKeyPem,
    logger: createLogger('auth', 'silent'),
    auth: { ...defaultTokenLifetimes, signingKeyPem: newKeyPem, verifyOnlyPublicKeyPems: [oldPublicPem] },
  });

  const jwks = (await (await fetch(`${stack.gatewayOrigin}/auth/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
  expect(jwks.keys).toHaveLength(2);

  const newToken = await login();
  expect(kidOf(newToken)).not.toBe(kidOf(oldToken));
  expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([kidOf(oldToken), kidOf(newToken)]));
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: oldToken })).status).toBe(200);
  // The gateway refetches the JWKS for an unknown kid (at most every 5 s, against forged-kid floods).
  await new Promise((r) => setTimeout(r, 5_100));
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: newToken })).status).toBe(200);
}, 30_000);
