import { requestFrom } from '../support/from-address';
import { startTestStack, type TestStack } from '../support/stack';

/**
 * `Authorization` is read strictly and the same way everywhere it is read (lib/http.ts parseAuthorization): the
 * gateway's /graphql, its /auth proxy, and the auth service's /auth/introspect. "Bearer", exactly one space, a
 * b64token (RFC 6750 §2.1), nothing else — `Bearer \tlpk_…` used to be accepted by introspection.
 */
let stack: TestStack;
let apiKey: string;
beforeAll(async () => {
  stack = await startTestStack();
  apiKey = (await stack.tenantWithKey()).apiKey;
});
afterAll(async () => {
  await stack?.stop();
});

/** Each case from an address of its own, so the failures it causes never add up to an address's budget. */
let nextAddress = 20;
const from = () => `127.0.0.${nextAddress++}`;
const graphqlWith = (authorization: string) => requestFrom(from(), stack.gatewayUrl, { body: { query: '{ __typename }' }, headers: { authorization } });
const introspectWith = (url: string, authorization: string) => requestFrom(from(), `${url}/auth/introspect`, { headers: { authorization } });

it.each([
  ['Bearer <key> (control)', (k: string) => `Bearer ${k}`],
  ['bearer <key>: the scheme is case-insensitive (RFC 9110)', (k: string) => `bearer ${k}`],
])('accepts %s at the gateway and at introspection', async (_name, header) => {
  expect((await graphqlWith(header(apiKey))).status).toBe(200);
  for (const url of [stack.gatewayOrigin, stack.authUrl]) {
    const res = await introspectWith(url, header(apiKey));
    expect({ url, status: res.status, active: res.body['active'] }).toEqual({ url, status: 200, active: true });
  }
});

it.each([
  ['a tab before the key', (k: string) => `Bearer \t${k}`],
  ['a tab instead of the space', (k: string) => `Bearer\t${k}`],
  ['two spaces', (k: string) => `Bearer  ${k}`],
  ['something after the key', (k: string) => `Bearer ${k} extra`],
  ['a tab after the key', (k: string) => `Bearer ${k}\tx`],
  ['two credentials', (k: string) => `Bearer ${k}, Bearer ${k}`],
  ['a character no token has', (k: string) => `Bearer ${k}"`],
  ['no scheme', (k: string) => k],
  ['another scheme', (k: string) => `Basic ${k}`],
  ['the scheme alone', () => 'Bearer'],
])('refuses %s the same way at the gateway and at introspection', async (_name, header) => {
  const gateway = await graphqlWith(header(apiKey));
  expect(gateway.status).toBe(401);
  const error = (gateway.body['errors'] as { message: string; extensions: { code: string } }[])[0]!;
  expect(error.extensions.code).toBe('UNAUTHENTICATED');
  for (const url of [stack.gatewayOrigin, stack.authUrl]) {
    const res = await introspectWith(url, header(apiKey));
    expect({ url, status: res.status, code: res.body['code'] }).toEqual({ url, status: 401, code: 'UNAUTHENTICATED' });
  }
});

it('names the problem: a malformed header is not "missing"', async () => {
  const res = await graphqlWith(`Bearer \t${apiKey}`);
  expect((res.body['errors'] as { message: string }[])[0]!.message).toMatch(/malformed Authorization header/);
  const introspected = await introspectWith(stack.authUrl, `Bearer \t${apiKey}`);
  expect(introspected.body['title']).toBe('Malformed Authorization header');
});
