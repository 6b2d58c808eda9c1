import { setTimeout as sleep } from 'node:timers/promises';
import { startGateway, type RunningGateway } from '@linepack/gateway/server';
import { DEFAULT_CREDENTIAL_VERIFY_TIMEOUT_MS } from '@linepack/gateway/config';
import { gatewayConfigFor, graphql, startTestStack, type TestStack } from '../support/stack';
import { holdingProxy } from '../support/holding-proxy';
import { waitFor } from '../support/wait';

/**
 * A key the gateway has not cached is verified by the auth service's introspection. When that does not answer within
 * CREDENTIAL_VERIFY_TIMEOUT_MS (5 s by default), the gateway answers 503 "credential verification is unavailable"
 * rather than holding the client; an operator whose auth service is slow but working can wait longer. Each gateway
 * here reaches the auth service through a proxy that holds its introspections until the test releases them.
 */
jest.setTimeout(120_000);

let stack: TestStack;
let apiKey: string;
const gateways: RunningGateway[] = [];
const proxies: Awaited<ReturnType<typeof holdingProxy>>[] = [];

beforeAll(async () => {
  stack = await startTestStack();
  ({ apiKey } = await stack.tenantWithKey());
});
afterAll(async () => {
  for (const proxy of proxies) proxy.release();
  for (const gateway of gateways) await gateway.stop();
  for (const proxy of proxies) await proxy.close();
  await stack?.stop();
});

/** A gateway in front of the stack's subgraphs whose auth service answers only when released. */
async function gatewayWithHeldAuth(credentialVerifyTimeoutMs: number) {
  const auth = await holdingProxy(stack.authUrl, ({ path }) => path.startsWith('/auth/introspect'));
  proxies.push(auth);
  const gateway = await startGateway(
    gatewayConfigFor(
      {
        authUrl: new URL(auth.url).origin,
        subgraphUrls: Object.fromEntries(Object.entries(stack.subgraphs).map(([name, s]) => [name, s.url])),
        internalTokenPrivateKey: stack.internalKeys.privateKeyPem,
      },
      { credentialVerifyTimeoutMs },
    ),
  );
  gateways.push(gateway);
  return { auth, gateway };
}

it('answers 503 when the auth service does not verify the key in time, and gives up on the introspection', async () => {
  const { auth, gateway } = await gatewayWithHeldAuth(300);
  const res = await graphql(gateway.url, '{ __typename }', { apiKey });
  expect(res.status).toBe(503);
  expect(res.body.errors?.[0]?.message).toBe('credential verification is unavailable; try again shortly');
  expect(res.body.data).toBeUndefined();
  expect(auth.arrivals()).toBe(1);
  await waitFor(() => Promise.resolve(auth.abandoned() === 1), 30_000, 'the gateway to close the held introspection');
});

it('waits as long as configured: a key verified after more than the default 5 s is answered', async () => {
  const { auth, gateway } = await gatewayWithHeldAuth(55_000);
  const answer = graphql<{ __typename: string }>(gateway.url, '{ __typename }', { apiKey });
  await auth.firstArrival;
  // Past the default timeout: a gateway that kept 5 s has aborted the introspection by now (its timer was set before
  // this one, in this process), and its answer is 503 whatever the auth service does next.
  await sleep(DEFAULT_CREDENTIAL_VERIFY_TIMEOUT_MS + 1_000);
  auth.release();
  const res = await answer;
  expect(res.status).toBe(200);
  expect(res.body.data).toEqual({ __typename: 'Query' });
  expect(auth.abandoned()).toBe(0);
});
