/**
 * The expensive-operation lane (gateway/src/expensive-lane.ts, issue 31): an operation the gateway prices as expensive
 * is executed by a second @apollo/gateway on a thread of its own, and its answer is what the gateway's own loop would
 * have answered — the same data, the same errors with their paths and codes, the same metrics, the same 504 at the
 * deadline. Compared here with cheap operations asking for the same rows (a tenant with few assets and readings, so a
 * page of 5 holds everything a page of 500 does), which the gateway executes on its loop.
 */
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { metricsRegistry } from '@linepack/lib/metrics';
import { EXPENSIVE_LANE, EXPENSIVE_LANE_HEADER } from '@linepack/lib/subgraph-lane';
import { until } from '@linepack/lib/testing/until';
import { createLogger } from '@linepack/lib/logger';
import type { ApolloGateway } from '@apollo/gateway';
import { COMPRESSION_THRESHOLD_BYTES } from '@linepack/gateway/compression';
import { expensiveOperationLimits } from '@linepack/gateway/expensive-operations';
import { ExpensiveLane, type GatewayGraphQLRequestContext } from '@linepack/gateway/expensive-lane';
import { mkdtemp, rm } from 'node:fs/promises';
import { request, type IncomingHttpHeaders } from 'node:http';
import { brotliDecompressSync } from 'node:zlib';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '@linepack/lib/infra/free-port';
import { terminate } from '@linepack/lib/infra/child-process';
import { repoRoot } from '@linepack/lib/repo-root';
import { bundle, linkNodeModules } from '../../bench/contenders/bundle';
import { startGatewayProcess } from '../support/gateway-process';
import { createAsset, graphql, metricValue, startTestStack, type TestStack } from '../support/stack';
import { stopProcessGroup } from '../support/wait';

jest.setTimeout(120_000);

const RECORD = 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount duplicateCount ids } }';
const rows = (first: number, per: number, after = '') =>
  `{ assets(first: ${first}) { totalCount edges { cursor node { id name type status measurements(first: ${per}${after}) {
     totalCount pageInfo { hasNextPage endCursor } edges { cursor node { id value unit observedAt } } } } } } }`;
/** Everything of the tenant, priced far above the expensive threshold. */
const EXPENSIVE = rows(500, 240);
/** The same rows for a tenant with at most 5 assets of at most 5 readings each, priced far below it. */
const CHEAP = rows(5, 5);

let stack: TestStack;
let apiKey: string;

async function metric(name: string, labels: Record<string, string>): Promise<number> {
  const values = (await metricsRegistry.getSingleMetric(name)?.get())?.values ?? [];
  return values.filter((v) => Object.entries(labels).every(([k, l]) => v.labels[k] === l)).reduce((sum, v) => sum + v.value, 0);
}
const laneRuns = () => metric('linepack_gateway_expensive_operations_executed_total', { on: 'lane' });
/** Requests of the gateway's lane that the measurements subgraph executed on its own expensive-request lane (lib/subgraph-lane.ts). */
const measurementsLaneRuns = () => metric('linepack_subgraph_expensive_requests_executed_total', { subgraph: 'measurements', on: 'lane' });

beforeAll(async () => {
  // A 10,000-item batch on a busy machine may take a while: the longest deadline the gateway allows.
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'], requestTimeoutMs: 55_000 });
  ({ apiKey } = await stack.tenantWithKey({ name: 'lane tenant' }));
  const line = await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Lane line' });
  const segment = await createAsset(stack.gatewayUrl, apiKey, { type: 'SEGMENT', name: 'Lane segment Ø 610 — Süd', parentId: line.id });
  for (const { id } of [line, segment]) await stack.knownToMeasurements(id);
  const readings = [line.id, segment.id].flatMap((assetId, a) =>
    Array.from({ length: 3 }, (_, i) => ({
      idempotencyKey: `lane-${a}-${i}`,
      assetId,
      type: 'PRESSURE',
      value: 5_000 + i,
      unit: 'KPA',
      observedAt: `2026-02-0${i + 1}T00:00:00Z`,
      source: 'SCADA',
    })),
  );
  expect((await graphql(stack.gatewayUrl, RECORD, { apiKey, variables: { i: readings } })).body.errors).toBeUndefined();
});

afterAll(async () => {
  await stack?.stop();
});

test('an expensive query is answered by the lane with the data the gateway answers a cheap one with', async () => {
  const [before, subgraphBefore] = [await laneRuns(), await measurementsLaneRuns()];
  const cheap = await graphql(stack.gatewayUrl, CHEAP, { apiKey });
  expect(await laneRuns()).toBe(before);
  expect(await measurementsLaneRuns()).toBe(subgraphBefore);
  const expensive = await graphql(stack.gatewayUrl, EXPENSIVE, { apiKey });
  expect(await laneRuns()).toBe(before + 1);
  // Its readings were fetched from the measurements subgraph on that subgraph's lane, too: one `_entities` request.
  expect(await measurementsLaneRuns()).toBe(subgraphBefore + 1);

  const cost = (res: typeof cheap) => (res.body.extensions?.['cost'] as { requested: number }).requested;
  expect(cost(cheap)).toBeLessThan(expensiveOperationLimits.minCost);
  expect(cost(expensive)).toBeGreaterThanOrEqual(expensiveOperationLimits.minCost);
  expect(expensive.status).toBe(200);
  expect(expensive.body.errors).toBeUndefined();
  expect(expensive.body.data).toEqual(cheap.body.data);
  // The lane's data arrives as UTF-8 bytes spliced into the body: characters beyond ASCII and the type are kept.
  expect(JSON.stringify(expensive.body.data)).toContain('Lane segment Ø 610 — Süd');
  expect(expensive.headers.get('content-type')).toBe(cheap.headers.get('content-type'));
  expect((expensive.body.data as { assets: { totalCount: number } }).assets.totalCount).toBe(2);
  // The answer is one JSON document with the data in its place: errors (none), data, then the cost the gateway reports.
  expect(Object.keys(expensive.body)).toEqual(['data', 'extensions']);
  // Neither may be cached by anyone between the gateway and the client.
  expect(cheap.headers.get('cache-control')).toBe('no-store');
  expect(expensive.headers.get('cache-control')).toBe('no-store');
});

test("the lane's answer goes out whole: uncompressed its Content-Length counts every byte, compressed it decodes to the same document", async () => {
  /** The raw answer over HTTP: fetch would decode it and hide what went over the wire. */
  const raw = (acceptEncoding: string) =>
    new Promise<{ headers: IncomingHttpHeaders; bytes: Buffer }>((resolve, reject) => {
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'accept-encoding': acceptEncoding };
      const req = request(stack.gatewayUrl, { method: 'POST', headers }, (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (chunk: Buffer) => chunks.push(chunk));
        res.on('end', () => resolve({ headers: res.headers, bytes: Buffer.concat(chunks) }));
        res.on('error', reject);
      });
      req.on('error', reject);
      req.end(JSON.stringify({ query: EXPENSIVE }));
    });
  const before = await laneRuns();
  const plain = await raw('identity');
  const brotli = await raw('br');
  expect(await laneRuns()).toBe(before + 2);
  const cheap = await graphql(stack.gatewayUrl, CHEAP, { apiKey });

  expect(plain.headers['content-encoding']).toBeUndefined();
  expect(Number(plain.headers['content-length'])).toBe(plain.bytes.length);
  const document = JSON.parse(plain.bytes.toString('utf8')) as { data: unknown };
  expect(document.data).toEqual(cheap.body.data);
  // Large enough to be compressed, so the compressed answer below went through the compressor.
  expect(plain.bytes.length).toBeGreaterThan(COMPRESSION_THRESHOLD_BYTES);
  expect(brotli.headers['content-encoding']).toBe('br');
  expect(JSON.parse(brotliDecompressSync(brotli.bytes).toString('utf8'))).toEqual(document);
});

test("a client cannot put its cheap operation on a subgraph's lane: the gateway never passes the lane's mark on", async () => {
  const [before, subgraphBefore] = [await laneRuns(), await measurementsLaneRuns()];
  const cheap = await graphql(stack.gatewayUrl, CHEAP, { apiKey, headers: { [EXPENSIVE_LANE_HEADER]: EXPENSIVE_LANE } });
  expect(cheap.status).toBe(200);
  expect(cheap.body.errors).toBeUndefined();
  expect(await laneRuns()).toBe(before);
  expect(await measurementsLaneRuns()).toBe(subgraphBefore);
});

test("the lane's errors keep their message, path, code and subgraph, and its data its nulls", async () => {
  const garbage = ', after: "not a cursor"';
  const cheap = await graphql(stack.gatewayUrl, rows(5, 5, garbage), { apiKey });
  const subgraphBefore = await measurementsLaneRuns();
  const expensive = await graphql(stack.gatewayUrl, rows(500, 240, garbage), { apiKey });
  expect(await measurementsLaneRuns()).toBe(subgraphBefore + 1);
  expect(cheap.body.errors?.length).toBeGreaterThan(0);
  expect(expensive.status).toBe(cheap.status);
  expect(expensive.body.errors).toEqual(cheap.body.errors);
  expect(expensive.body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT', serviceName: 'measurements' });
  expect(expensive.body.data).toEqual(cheap.body.data);
});

test("the lane's subgraph calls are counted in the gateway's metrics", async () => {
  const fetches = () => metric('linepack_subgraph_fetch_duration_seconds', { subgraph: 'measurements', outcome: 'ok' });
  // A histogram's series: its count is the value labelled le="+Inf".
  const count = async () => {
    const values = (await metricsRegistry.getSingleMetric('linepack_subgraph_fetch_duration_seconds')!.get()).values;
    return values.filter((v) => v.labels['subgraph'] === 'measurements' && v.labels['le'] === '+Inf').reduce((sum, v) => sum + v.value, 0);
  };
  const [sumBefore, countBefore, runsBefore] = [await fetches(), await count(), await laneRuns()];
  expect((await graphql(stack.gatewayUrl, EXPENSIVE, { apiKey })).status).toBe(200);
  expect(await laneRuns()).toBe(runsBefore + 1);
  expect(await count()).toBe(countBefore + 1);
  expect(await fetches()).toBeGreaterThan(sumBefore);
});

test('an expensive mutation runs in the lane and stores its items', async () => {
  const line = (await graphql<{ assets: { edges: { node: { id: string } }[] } }>(stack.gatewayUrl, CHEAP, { apiKey })).body.data!.assets.edges[0]!.node.id;
  const batch = Array.from({ length: expensiveOperationLimits.minCost }, (_, i) => ({
    idempotencyKey: `lane-batch-${i}`,
    assetId: line,
    type: 'PRESSURE',
    value: 4_000,
    unit: 'KPA',
    observedAt: '2026-03-01T00:00:00Z',
    source: 'SCADA',
  }));
  const [before, subgraphBefore] = [await laneRuns(), await measurementsLaneRuns()];
  const recorded = await graphql<{ recordMeasurements: { insertedCount: number; duplicateCount: number; ids: string[] } }>(stack.gatewayUrl, RECORD, {
    apiKey,
    variables: { i: batch },
  });
  expect(recorded.body.errors).toBeUndefined();
  expect(recorded.body.data!.recordMeasurements).toMatchObject({ insertedCount: batch.length, duplicateCount: 0 });
  expect(new Set(recorded.body.data!.recordMeasurements.ids).size).toBe(batch.length);
  expect(await laneRuns()).toBe(before + 1);
  // Stored by the measurements subgraph's lane (its `recordMeasurements` and the asset check's `_entities`, if any).
  expect(await measurementsLaneRuns()).toBeGreaterThan(subgraphBefore);
  const stored = stack.mongo.db(`${stack.dbPrefix}_measurements`).collection('measurements');
  expect(await stored.countDocuments({ idempotencyKey: { $in: batch.map((item) => item.idempotencyKey) } })).toBe(batch.length);
});

test('the gateway as its image ships it, one bundle, runs its lane from that bundle', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'linepack-lane-bundle-'));
  let gateway: Awaited<ReturnType<typeof startGatewayProcess>> | null = null;
  try {
    // As scripts/build-package.mjs builds dist/main.js: the @linepack packages inlined, the rest required at run time.
    await linkNodeModules(dir);
    await bundle('gateway/src/main.ts', path.join(dir, 'main.js'));
    const metricsPort = await freePort();
    gateway = await startGatewayProcess(
      stack,
      process.env['REDIS_URL'] ?? null,
      { NODE_ENV: 'production', LINEPACK_SCHEMA_DIR: path.join(repoRoot, 'schema'), METRICS_PORT: String(metricsPort) },
      [path.join(dir, 'main.js')],
    );
    const bundled = await graphql(gateway.url, EXPENSIVE, { apiKey });
    expect(bundled.status).toBe(200);
    expect(bundled.body.errors).toBeUndefined();
    expect(bundled.body.data).toEqual((await graphql(stack.gatewayUrl, EXPENSIVE, { apiKey })).body.data);
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metricValue(metrics, 'linepack_gateway_expensive_operations_executed_total', { on: 'lane' })).toBe(1);
    expect(metricValue(metrics, 'linepack_gateway_expensive_operations_executed_total', { on: 'event_loop' })).toBe(0);
  } finally {
    if (gateway) await terminate(gateway.process, 10_000);
    await rm(dir, { recursive: true, force: true });
  }
});

describe('a deadline that passes while the lane runs', () => {
  let database: EmbeddedMongo;
  let slow: TestStack;
  let key: string;

  beforeAll(async () => {
    database = await startEmbeddedMongo();
    // Keys stay cached while the database is stopped: authentication needs no lookup then.
    slow = await startTestStack({ mongoUri: database.uri, credentialCacheTtlSeconds: 300, requestTimeoutMs: 3_000 });
    key = (await slow.tenantWithKey({ name: 'slow tenant' })).apiKey;
    await createAsset(slow.gatewayUrl, key, { type: 'PIPELINE', name: 'Slow line' });
    // The lane started before the database stops (its start is not what this measures): on a busy machine its first
    // start may outlast this stack's 3 s deadline, and it goes on starting for the next request.
    expect(
      (
        await until(
          () => graphql(slow.gatewayUrl, EXPENSIVE, { apiKey: key }),
          (res) => res.status === 200,
          60_000,
          500,
        )
      ).status,
    ).toBe(200);
  });

  afterAll(async () => {
    if (database) process.kill(-database.pid, 'SIGCONT');
    await slow?.stop();
    await database?.stop();
  });

  test('answers 504 TIMEOUT as a cheap operation does, and the lane serves the next one', async () => {
    await stopProcessGroup(database.pid);
    let expensive: Awaited<ReturnType<typeof graphql>>;
    let cheap: Awaited<ReturnType<typeof graphql>>;
    try {
      [expensive, cheap] = await Promise.all([graphql(slow.gatewayUrl, EXPENSIVE, { apiKey: key }), graphql(slow.gatewayUrl, CHEAP, { apiKey: key })]);
    } finally {
      process.kill(-database.pid, 'SIGCONT');
    }
    expect(cheap.status).toBe(504);
    expect(expensive.status).toBe(504);
    expect(expensive.body).toEqual(cheap.body);
    expect(expensive.body.errors?.[0]?.extensions?.['code']).toBe('TIMEOUT');
    const next = await graphql(slow.gatewayUrl, EXPENSIVE, { apiKey: key });
    expect(next.status).toBe(200);
    expect((next.body.data as { assets: { totalCount: number } }).assets.totalCount).toBe(1);
  });
});

test('a lane that cannot start leaves expensive operations to the gateway loop, and says so once', async () => {
  const logged: string[] = [];
  const logger = createLogger('gateway', 'error', { write: (line: string) => void logged.push(line) });
  // A supergraph the lane's gateway cannot load: the thread fails before it is ready.
  const lane = new ExpensiveLane(
    {
      supergraphSdl: 'not a schema',
      subgraphUrls: {},
      internalTokenPrivateKey: '',
      deduplicateInflightQueries: false,
      logLevel: 'silent',
      tracingServiceName: null,
    },
    logger,
  );
  const local = {
    onSchemaLoadOrUpdate: () => () => undefined,
    stop: async () => undefined,
    load: async () => ({ executor: async () => ({ data: { on: 'loop' } }) }),
  };
  const { executor } = await lane.gateway(local as unknown as ApolloGateway, () => true).load({ apollo: {} });
  const request = { context: { deadline: { signal: new AbortController().signal } } } as unknown as GatewayGraphQLRequestContext;
  const before = await metric('linepack_gateway_expensive_operations_executed_total', { on: 'event_loop' });
  expect(await executor!(request)).toEqual({ data: { on: 'loop' } });
  expect(await executor!(request)).toEqual({ data: { on: 'loop' } });
  expect(await metric('linepack_gateway_expensive_operations_executed_total', { on: 'event_loop' })).toBe(before + 2);
  expect(logged.filter((line) => line.includes('the expensive-operation lane could not start'))).toHaveLength(1);
  await lane.stop();
});
