import { startGateway, type RunningGateway } from '@linepack/gateway/server';
import { createAsset, gatewayConfigFor, graphql, startTestStack, type TestStack } from '../support/stack';
import { holdingProxy } from '../support/holding-proxy';
import { waitFor } from '../support/wait';

/**
 * Every request has a server-side deadline (REQUEST_TIMEOUT_MS, 30 s by default; 400 ms at the gateway cut here): past
 * it the gateway aborts the request's subgraph calls and answers 504 TIMEOUT, and a write is never left half-done — a
 * mutation answered 504 may have been applied, and retrying it with the same idempotency keys stores each item once.
 * Nothing here measures time: what shows the answer came at the deadline is a subgraph call still held unanswered.
 */
jest.setTimeout(180_000);

let stack: TestStack;
let apiKey: string;
let tenantId: string;
/** Gateways with a 400 ms deadline in front of the stack's subgraphs: `cut` directly, `held` with measurements held. */
let cut: RunningGateway;
let held: RunningGateway;
let measurements: Awaited<ReturnType<typeof holdingProxy>>;

const recordMeasurements = 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount duplicateCount } }';

beforeAll(async () => {
  // The stack's own gateway has a deadline long enough for any retry on a loaded machine (it only bounds a hang).
  stack = await startTestStack({ requestTimeoutMs: 120_000 });
  ({ apiKey, tenantId } = await stack.tenantWithKey());
  const subgraphUrls = Object.fromEntries(Object.entries(stack.subgraphs).map(([name, s]) => [name, s.url]));
  const withDeadline = (urls: Record<string, string>) =>
    startGateway(
      gatewayConfigFor({ authUrl: stack.authUrl, subgraphUrls: urls, internalTokenPrivateKey: stack.internalKeys.privateKeyPem }, { requestTimeoutMs: 400 }),
    );
  cut = await withDeadline(subgraphUrls);
  measurements = await holdingProxy(stack.subgraphs.measurements.url, 'recordMeasurements');
  held = await withDeadline({ ...subgraphUrls, measurements: measurements.url });
});
afterAll(async () => {
  await held?.stop();
  await cut?.stop();
  await measurements?.close();
  await stack?.stop();
});

const reading = (assetId: string, key: string) => ({
  idempotencyKey: key,
  assetId,
  type: 'PRESSURE',
  value: 5_000,
  unit: 'KPA',
  observedAt: '2026-03-01T00:00:00Z',
  source: 'SCADA',
});

it('answers 504 TIMEOUT at the deadline while the subgraph has not answered, and aborts the subgraph call', async () => {
  const assetId = (await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Held line' })).id;
  const res = await graphql(held.url, recordMeasurements, { apiKey, variables: { i: [reading(assetId, 'held-1')] } });
  expect(res.status).toBe(504);
  expect(res.body.errors?.[0]?.extensions?.['code']).toBe('TIMEOUT');
  expect(res.body.errors?.[0]?.message).toMatch(/did not finish within 0.4 s/);
  expect(res.body.data).toBeUndefined();
  // The subgraph's call arrived and was never answered (the proxy holds it until released, which this test never
  // does): the 504 came from the deadline, not from the subgraph finishing. The gateway then hung up on it.
  expect(measurements.arrivals()).toBe(1);
  await waitFor(() => Promise.resolve(measurements.abandoned() === 1), 30_000, 'the gateway to close the held subgraph call');
});

it('a batch cut by the deadline is stored whole once retried with the same keys: no item lost, none twice', async () => {
  const assetId = (await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Slow line' })).id;
  // 10,000 validated items take the subgraph well past 0.4 s: the deadline passes while it is writing.
  const batch = Array.from({ length: 10_000 }, (_, i) => reading(assetId, `slow-${i}`));
  const res = await graphql(cut.url, recordMeasurements, { apiKey, variables: { i: batch } });
  expect(res.status).toBe(504);
  expect(res.body.errors?.[0]?.extensions?.['code']).toBe('TIMEOUT');
  expect(res.body.data).toBeUndefined();

  // What the 504 tells the client to do: retry with the same keys. The cut request may still be writing (a write is
  // finished, not cut); whatever it stored is reported as duplicates, the rest is inserted, and nothing is stored twice.
  const retried = await graphql<{ recordMeasurements: { insertedCount: number; duplicateCount: number } }>(stack.gatewayUrl, recordMeasurements, {
    apiKey,
    variables: { i: batch },
  });
  expect(retried.body.errors).toBeUndefined();
  const { insertedCount, duplicateCount } = retried.body.data!.recordMeasurements;
  expect(insertedCount + duplicateCount).toBe(10_000);
  const stored = stack.mongo.db(`${stack.dbPrefix}_measurements`).collection('measurements');
  expect(await stored.countDocuments({ tenantId })).toBe(10_000);
  expect((await stored.distinct('idempotencyKey', { tenantId })).length).toBe(10_000);
});

it('serves requests that fit in the deadline as usual', async () => {
  const res = await graphql(stack.gatewayUrl, '{ assets(first: 5) { totalCount } }', { apiKey });
  expect(res.status).toBe(200);
  expect(res.body.errors).toBeUndefined();
});
