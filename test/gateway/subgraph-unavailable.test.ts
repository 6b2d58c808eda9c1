/**
 * A subgraph process killed (issue 29, item 1): the gateway answers as Apollo Router and Hive Gateway do for a failed
 * subgraph — the rest of the request is served, each path the dead subgraph would have filled is null with an error
 * coded SUBGRAPH_UNAVAILABLE naming it (extensions.serviceName) and nothing internal, and a request of which nothing
 * could be served is HTTP 503 with a Retry-After. The gateway's request metrics count those errors by code and
 * subgraph and mark the requests server_error, so the error ratio of docs/runbook.md reads the outage.
 *
 * The measurements subgraph and the gateway run as processes of their own (the rest of the stack in this one), so
 * the subgraph can be killed with SIGKILL as an orchestrator or the OOM killer would.
 */
import type { ChildProcess } from 'node:child_process';
import net, { type AddressInfo } from 'node:net';
import type { GatewayContext } from '@linepack/gateway/context';
import { IdentityTokenCache } from '@linepack/gateway/identity-tokens';
import { AuthenticatedSubgraphDataSource } from '@linepack/gateway/subgraph-data-source';
import { freePort } from '@linepack/lib/infra/free-port';
import { metricsRegistry } from '@linepack/lib/metrics';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '@linepack/gateway/subgraph-unavailable';
import { killProcess, measurementsInOwnProcess } from '../support/measurements-process';
import { createAsset, graphql, metricValue, startTestStack, type TestStack } from '../support/stack';

jest.setTimeout(120_000);

let stack: TestStack;
let measurements: ChildProcess;
let apiKey: string;

const MIXED = '{ assets(first: 5) { edges { node { id name latestMeasurement { id } } } } }';
const ONLY_MEASUREMENTS = '{ measurement(id: "m-none") { id } }';
/** A non-null root field: its null takes `data` with it. */
const NON_NULL_ROOT = '{ iliMappingProfiles { id } }';

beforeAll(async () => {
  stack = await startTestStack({ credentialCacheTtlSeconds: 300 });
  measurements = await measurementsInOwnProcess(stack);
  ({ apiKey } = await stack.tenantWithKey());
  await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Line 1' });
  await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Line 2' });
});

afterAll(async () => {
  await killProcess(measurements);
  await stack?.stop();
});

const scrape = () => metricsRegistry.metrics();

test('with every subgraph up the mixed query is whole', async () => {
  const res = await graphql<{ assets: { edges: { node: { name: string; latestMeasurement: null } }[] } }>(stack.gatewayUrl, MIXED, { apiKey });
  expect(res.status).toBe(200);
  expect(res.body.errors).toBeUndefined();
  expect(res.body.data?.assets.edges).toHaveLength(2);
});

test('a killed subgraph fails only its paths, each with SUBGRAPH_UNAVAILABLE; nothing served at all is 503 + Retry-After; the metrics count both', async () => {
  const before = await scrape();
  await killProcess(measurements);

  const partial = await graphql<{ assets: { edges: { node: { name: string; latestMeasurement: unknown } }[] } }>(stack.gatewayUrl, MIXED, { apiKey });
  expect(partial.status).toBe(200);
  expect(partial.headers.get('retry-after')).toBeNull();
  // The assets subgraph's part is served…
  expect(partial.body.data?.assets.edges.map((e) => e.node.name).sort()).toEqual(['Line 1', 'Line 2']);
  expect(partial.body.data?.assets.edges.map((e) => e.node.latestMeasurement)).toEqual([null, null]);
  // …and each path the measurements subgraph would have filled has its own typed error, naming it and nothing else.
  expect(partial.body.errors).toHaveLength(2);
  expect(partial.body.errors!.map((e) => e.path).sort()).toEqual([
    ['assets', 'edges', 0, 'node', 'latestMeasurement'],
    ['assets', 'edges', 1, 'node', 'latestMeasurement'],
  ]);
  for (const error of partial.body.errors!) {
    expect(error.extensions).toEqual({ code: 'SUBGRAPH_UNAVAILABLE', serviceName: 'measurements' });
    expect(error.message).toBe('the measurements service is unavailable; retry shortly');
  }

  const nothing = await graphql(stack.gatewayUrl, ONLY_MEASUREMENTS, { apiKey });
  expect(nothing.status).toBe(503);
  expect(nothing.headers.get('retry-after')).toBe(String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  expect(nothing.body.data?.['measurement'] ?? null).toBeNull();
  expect(nothing.body.errors).toEqual([
    {
      message: 'the measurements service is unavailable; retry shortly',
      path: ['measurement'],
      extensions: { code: 'SUBGRAPH_UNAVAILABLE', serviceName: 'measurements' },
    },
  ]);

  const after = await scrape();
  const delta = (name: string, labels: Record<string, string>) => metricValue(after, name, labels) - metricValue(before, name, labels);
  expect(delta('linepack_graphql_request_errors_total', { linepack_service: 'gateway', code: 'SUBGRAPH_UNAVAILABLE', subgraph: 'measurements' })).toBe(3);
  const requests = 'linepack_graphql_request_duration_seconds_count';
  expect(delta(requests, { linepack_service: 'gateway', status: '200', outcome: 'server_error' })).toBe(1);
  expect(delta(requests, { linepack_service: 'gateway', status: '503', outcome: 'server_error' })).toBe(1);
  expect(delta(requests, { linepack_service: 'gateway', outcome: 'ok' })).toBe(0);
  // The error ratio's counter (docs/runbook.md) counts both requests as server errors.
  expect(delta('linepack_graphql_requests_total', { linepack_service: 'gateway', outcome: 'server_error' })).toBe(2);
  expect(delta('linepack_graphql_requests_total', { linepack_service: 'gateway', outcome: 'ok' })).toBe(0);
  // No label Prometheus or its operator sets on scraped series.
  expect(after).not.toMatch(/[{,](service|job|instance|namespace|pod)="/);
});

test('a non-null root field of a dead subgraph nulls data, with one error at its path and a 503', async () => {
  const res = await graphql(stack.gatewayUrl, NON_NULL_ROOT, { apiKey });
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe(String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  expect(res.body.data).toBeNull();
  expect(res.body.errors).toEqual([
    {
      message: 'the measurements service is unavailable; retry shortly',
      path: ['iliMappingProfiles'],
      extensions: { code: 'SUBGRAPH_UNAVAILABLE', serviceName: 'measurements' },
    },
  ]);
});

describe('a mutation', () => {
  const context = () =>
    ({
      credential: { subject: 'key-1', kind: 'api_key', tenantId: 't-1', scopes: ['measurements:write'], tier: 'enterprise', rateLimitKey: 'key:key-1' },
      requestId: 'r-1',
      clientAddress: '127.0.0.1',
      deadline: { at: Date.now() + 30_000, timeoutMs: 30_000, signal: new AbortController().signal, key: 'none' },
    }) as unknown as GatewayContext;
  const mutation = 'mutation M__measurements__0 { recordMeasurements(input: []) { insertedCount } }';
  const send = (url: string) =>
    new AuthenticatedSubgraphDataSource('measurements', url, new IdentityTokenCache(stack.internalKeys.privateKeyPem), false).process({
      kind: 'incoming operation',
      request: { query: mutation, variables: {} },
      context: context(),
      incomingRequestContext: { operation: { operation: 'mutation' } },
    } as never);

  test('whose connection was lost after it was sent is told it may have been applied', async () => {
    // A subgraph that dies once it has read the request: the connection is reset under the gateway.
    const dying = net.createServer((socket) => socket.once('data', () => socket.resetAndDestroy()));
    await new Promise<void>((resolve) => dying.listen(0, '127.0.0.1', resolve));
    try {
      const answer = await send(`http://127.0.0.1:${(dying.address() as AddressInfo).port}/graphql`);
      expect(answer).toEqual({
        data: null,
        errors: [
          {
            message:
              'the measurements service became unavailable while it ran this mutation, which may have been applied; retrying it with the same idempotency key or version is safe',
            path: ['recordMeasurements'],
            extensions: { code: 'SUBGRAPH_UNAVAILABLE' },
          },
        ],
      });
    } finally {
      await new Promise((resolve) => dying.close(resolve));
    }
  });

  test('that never reached its subgraph (connection refused) is told only to retry', async () => {
    const answer = await send(`http://127.0.0.1:${await freePort()}/graphql`);
    expect(answer.errors).toEqual([
      { message: 'the measurements service is unavailable; retry shortly', path: ['recordMeasurements'], extensions: { code: 'SUBGRAPH_UNAVAILABLE' } },
    ]);
  });
});
