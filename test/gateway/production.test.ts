import type { ChildProcess } from 'node:child_process';
import { getIntrospectionQuery } from 'graphql';
import { startGatewayProcess } from '../support/gateway-process';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * A gateway process with NODE_ENV=production (as the Dockerfile sets it) still answers introspection to an
 * authenticated caller — the MCP companion and explorers read the schema that way — and to nobody else.
 */
let stack: TestStack;
let gateway: { url: string; process: ChildProcess };
let apiKey: string;

beforeAll(async () => {
  stack = await startTestStack();
  ({ apiKey } = await stack.tenantWithKey());
  gateway = await startGatewayProcess(stack, null, { NODE_ENV: 'production' });
}, 60_000);
afterAll(async () => {
  gateway?.process.kill('SIGTERM');
  await stack?.stop();
});

it('answers introspection to an authenticated caller in production', async () => {
  const res = await graphql<{ __schema: { types: { name: string }[] } }>(gateway.url, getIntrospectionQuery(), { apiKey });
  expect(res.status).toBe(200);
  expect(res.body.data?.__schema.types.map((t) => t.name)).toEqual(expect.arrayContaining(['Asset', 'Query']));
});

it('answers nothing without a credential', async () => {
  const res = await fetch(gateway.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ query: '{ __schema { queryType { name } } }' }),
  });
  expect(res.status).toBe(401);
});
