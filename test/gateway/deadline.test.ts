import { until } from '@linepack/lib/testing/until';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * Every request has a server-side deadline (REQUEST_TIMEOUT_MS, 30 s by default; 400 ms here): past it the
 * gateway aborts the request's subgraph calls and answers 504 TIMEOUT, and a write is never left half-done.
 */
let stack: TestStack;
let apiKey: string;
let tenantId: string;
beforeAll(async () => {
  stack = await startTestStack({ requestTimeoutMs: 400 });
  ({ apiKey, tenantId } = await stack.tenantWithKey());
});
afterAll(async () => {
  await stack?.stop();
});

it('answers 504 TIMEOUT when the deadline passes, promptly, and stores a cut batch whole or not at all', async () => {
  const assetId = (await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Slow line' })).id;
  const batch = Array.from({ length: 10_000 }, (_, i) => ({
    idempotencyKey: `slow-${i}`,
    assetId,
    type: 'PRESSURE',
    value: 5_000,
    unit: 'KPA',
    observedAt: '2026-03-01T00:00:00Z',
    source: 'SCADA',
  }));
  const started = Date.now();
  const res = await graphql(stack.gatewayUrl, 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount } }', {
    apiKey,
    variables: { i: batch },
  });
  const elapsed = Date.now() - started;
  expect(res.status).toBe(504);
  expect(res.body.errors?.[0]?.extensions?.['code']).toBe('TIMEOUT');
  expect(res.body.errors?.[0]?.message).toMatch(/did not finish within 0.4 s/);
  expect(res.body.data).toBeUndefined();
  // Answered at the deadline, not when the subgraph finished (10,000 validated items take longer).
  expect(elapsed).toBeLessThan(2_500);

  const measurements = stack.mongo.db(`${stack.dbPrefix}_measurements`).collection('measurements');
  const settled = await until(
    async () => {
      const first = await measurements.countDocuments({ tenantId });
      await new Promise((r) => setTimeout(r, 300));
      return first === (await measurements.countDocuments({ tenantId })) ? first : -1;
    },
    (n) => n >= 0,
    20_000,
  );
  expect([0, 10_000]).toContain(settled);
});

it('serves requests that fit in the deadline as usual', async () => {
  const res = await graphql(stack.gatewayUrl, '{ assets(first: 5) { totalCount } }', { apiKey });
  expect(res.status).toBe(200);
  expect(res.body.errors).toBeUndefined();
});
