import { randomBytes } from 'node:crypto';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import { streamRegistry, tenantStream } from '@linepack/lib/events/outbox';
import { exited } from '@linepack/lib/infra/child-process';
import { freePort } from '@linepack/lib/infra/free-port';
import { startMetricsServer, watchConsumerGroup, type MetricsServer } from '@linepack/lib/metrics';
import { trustedDocuments } from '@linepack/lib/generated/trusted-documents';
import { startGatewayProcess } from '../support/gateway-process';
import { scrapeAsPrometheus, type ParsedExposition } from '../support/prometheus-parse';
import { createAsset, graphql, metricValue, startTestStack, type TestStack } from '../support/stack';
import { eventually, waitFor } from '../support/wait';

/**
 * What an operator scrapes: the stack's metrics on their own port, moving with the traffic that caused them,
 * with bounded labels and nothing that identifies a tenant or a credential.
 */
let stack: TestStack;
let metrics: MetricsServer;
beforeAll(async () => {
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'], credentialCacheTtlSeconds: 30 });
  metrics = await startMetricsServer({ port: 0, host: '127.0.0.1', service: 'test' });
});
afterAll(async () => {
  await metrics?.stop();
  await stack?.stop();
});

const scrape = async () => {
  const res = await fetch(metrics.url);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toMatch(/^text\/plain; version=0\.0\.4/);
  return res.text();
};

/** The text of a trusted document of the project's own clients, by its operation's name. */
const trusted = (name: string) => {
  const found = Object.values(trustedDocuments).find((d) => d.name === name);
  if (!found) throw new Error(`no trusted document named ${name}`);
  return found.document;
};

/** The operation labels of the gateway's request series in a scrape. */
const gatewayOperations = (text: string) =>
  new Set(
    text
      .split('\n')
      .filter((line) => line.startsWith('linepack_graphql_request_duration_seconds_count{') && line.includes('linepack_service="gateway"'))
      .map((line) => /operation="([^"]*)"/.exec(line)?.[1]),
  );

it('counts GraphQL requests by service, operation (trusted documents by name), status and outcome, and times subgraph fetches', async () => {
  const { apiKey, tenantId } = await stack.tenantWithKey({ tier: 'PRO' });
  await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Metered line' });
  const before = await scrape();
  const query = 'query AtAGlance { pipelineSummary { totalAssets } assets(first: 2) { edges { node { id latestMeasurement { type } } } } }';
  for (let i = 0; i < 3; i++) expect((await graphql(stack.gatewayUrl, query, { apiKey })).body.errors).toBeUndefined();
  expect((await graphql(stack.gatewayUrl, '{ pipelineSummary { totalAssets } }', { apiKey })).status).toBe(200);
  expect((await graphql(stack.gatewayUrl, trusted('ConsoleDigPipelines'), { apiKey })).status).toBe(200);
  expect((await graphql(stack.gatewayUrl, '{ __typename }', {})).status).toBe(401);
  const after = await scrape();

  const delta = (name: string, labels: Record<string, string>) => metricValue(after, name, labels) - metricValue(before, name, labels);
  const requests = 'linepack_graphql_request_duration_seconds_count';
  // AtAGlance is no client's document: its name is not a label.
  expect(delta(requests, { linepack_service: 'gateway', operation: 'unregistered', status: '200', outcome: 'ok' })).toBe(3);
  // The console's example (anonymous) and its dig list's pipelines query are trusted documents.
  expect(delta(requests, { linepack_service: 'gateway', operation: 'anonymous', status: '200', outcome: 'ok' })).toBe(1);
  expect(delta(requests, { linepack_service: 'gateway', operation: 'ConsoleDigPipelines', status: '200', outcome: 'ok' })).toBe(1);
  // Refused before its document was read: the operation is not known.
  expect(delta(requests, { linepack_service: 'gateway', operation: 'unknown', status: '401', outcome: 'client_error' })).toBe(1);
  expect(delta('linepack_graphql_request_errors_total', { linepack_service: 'gateway', code: 'UNAUTHENTICATED', subgraph: 'none' })).toBe(1);
  // The subgraphs count the operations the gateway planned for them, under the client's trusted name.
  expect(delta(requests, { linepack_service: 'assets', status: '200' })).toBeGreaterThanOrEqual(5);
  expect(delta(requests, { linepack_service: 'assets', operation: 'ConsoleDigPipelines' })).toBe(1);
  expect(delta(requests, { linepack_service: 'measurements', status: '200' })).toBe(3);
  expect(delta('linepack_subgraph_fetch_duration_seconds_count', { subgraph: 'assets', outcome: 'ok' })).toBeGreaterThanOrEqual(5);
  expect(delta('linepack_subgraph_fetch_duration_seconds_count', { subgraph: 'measurements', outcome: 'ok' })).toBe(3);
  expect(
    metricValue(after, 'linepack_graphql_request_duration_seconds_bucket', {
      linepack_service: 'gateway',
      operation: 'ConsoleDigPipelines',
      status: '200',
      le: '+Inf',
    }),
  ).toBe(metricValue(after, requests, { linepack_service: 'gateway', operation: 'ConsoleDigPipelines', status: '200' }));
  expect(delta('linepack_rate_limit_decisions_total', { tier: 'pro', decision: 'allowed' })).toBe(5);

  expect(delta('linepack_authentication_failures_total', { reason: 'missing_credential' })).toBe(1);
  // The key was verified once and then served from the cache.
  expect(delta('linepack_credential_cache_lookups_total', { result: 'hit' })).toBeGreaterThanOrEqual(5);

  // Nothing that identifies a tenant or a credential is a label.
  expect(after).not.toContain(tenantId);
  expect(after).not.toContain(apiKey.slice(0, 12));
  // No label that Prometheus or the Prometheus Operator sets on every scraped series (it would become exported_*).
  expect(after).not.toMatch(/[{,](service|job|instance|namespace|pod)="/);
}, 30_000);

it("counts errors inside a subgraph's answer by code", async () => {
  const { apiKey } = await stack.tenantWithKey();
  const asset = await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Contested line' });
  const before = await scrape();
  const stale = await graphql(stack.gatewayUrl, `mutation { updateAsset(id: "${asset.id}", version: ${asset.version + 5}, input: { name: "x" }) { id } }`, {
    apiKey,
  });
  expect(stale.body.errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
  const after = await scrape();
  const labels = { subgraph: 'assets', code: 'CONFLICT' };
  expect(metricValue(after, 'linepack_subgraph_graphql_errors_total', labels) - metricValue(before, 'linepack_subgraph_graphql_errors_total', labels)).toBe(1);
});

it('counts rate-limit refusals by tier and authentication failures by reason', async () => {
  const { apiKey } = await stack.tenantWithKey({ tier: 'FREE' });
  const before = await scrape();
  let limited = 0;
  for (let i = 0; i < 62; i++) if ((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey })).status === 429) limited++;
  expect(limited).toBe(2); // the free tier's 60 a minute
  expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: 'lpk_' + 'x'.repeat(40) })).status).toBe(401);
  expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: 'not.a.jwt' })).status).toBe(401);
  const after = await scrape();
  const delta = (name: string, labels: Record<string, string>) => metricValue(after, name, labels) - metricValue(before, name, labels);
  expect(delta('linepack_rate_limit_decisions_total', { tier: 'free', decision: 'allowed' })).toBe(60);
  expect(delta('linepack_rate_limit_decisions_total', { tier: 'free', decision: 'limited' })).toBe(2);
  expect(delta('linepack_authentication_failures_total', { reason: 'invalid_api_key' })).toBe(1);
  expect(delta('linepack_authentication_failures_total', { reason: 'invalid_access_token' })).toBe(1);
  expect(
    delta('linepack_graphql_request_duration_seconds_count', { linepack_service: 'gateway', operation: 'unknown', status: '429', outcome: 'client_error' }),
  ).toBe(2);
  // The refusals' codes, read from the bodies the gateway wrote before any GraphQL ran.
  expect(delta('linepack_graphql_request_errors_total', { linepack_service: 'gateway', code: 'RATE_LIMITED', subgraph: 'none' })).toBe(2);
  expect(delta('linepack_graphql_request_errors_total', { linepack_service: 'gateway', code: 'UNAUTHENTICATED', subgraph: 'none' })).toBe(2);
}, 30_000);

it('keeps the operation label bounded whatever names clients invent, and a trusted operation sent after them still has its own', async () => {
  const { apiKey } = await stack.tenantWithKey();
  const before = await scrape();
  const seriesBefore = before.split('\n').filter((line) => line.startsWith('linepack_graphql_request_duration_seconds_bucket{')).length;
  for (let i = 0; i < 1_000; i++) {
    const name = `Invented${randomBytes(6).toString('hex')}`;
    expect((await graphql(stack.gatewayUrl, `query ${name} { __typename }`, { apiKey })).status).toBe(200);
  }
  const afterInvented = await scrape();
  // 1,000 new names added at most the one `unregistered` label's series (its status, outcome and buckets).
  expect([...gatewayOperations(afterInvented)].filter((op) => !gatewayOperations(before).has(op))).toEqual(
    gatewayOperations(before).has('unregistered') ? [] : ['unregistered'],
  );
  const seriesAfter = afterInvented.split('\n').filter((line) => line.startsWith('linepack_graphql_request_duration_seconds_bucket{')).length;
  expect(seriesAfter - seriesBefore).toBeLessThanOrEqual(13); // one histogram's buckets and +Inf
  expect(afterInvented).not.toMatch(/operation="Invented/);

  // A trusted operation this process has not seen yet is still labelled by its name.
  expect(gatewayOperations(afterInvented).has('LinepackSummaryCore')).toBe(false);
  expect((await graphql(stack.gatewayUrl, trusted('LinepackSummaryCore'), { apiKey })).status).toBe(200);
  const last = await scrape();
  expect(
    metricValue(last, 'linepack_graphql_request_duration_seconds_count', { linepack_service: 'gateway', operation: 'LinepackSummaryCore', status: '200' }),
  ).toBe(1);
}, 120_000);

it('shows event-stream lag, the outbox, the MongoDB pools and Redis health', async () => {
  const { apiKey } = await stack.tenantWithKey();
  await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Followed line' });
  const stream = `${stack.dbPrefix}:events:assets`;
  // The consumers catch up: no lag, nothing pending, the outbox drained. An event is delivered (lag 0) before it is
  // handled and acknowledged (pending 0): wait for both. The bound is for a stuck machine.
  expect(
    await eventually(async () => {
      const text = await scrape();
      return (
        text.includes(`linepack_event_consumer_lag{stream="${stream}",group="compliance"} 0`) &&
        text.includes(`linepack_event_consumer_lag{stream="${stream}",group="analytics"} 0`) &&
        metricValue(text, 'linepack_event_consumer_pending', { stream, group: 'compliance' }) === 0 &&
        text.includes(`linepack_outbox_pending_events{stream="${stream}"} 0`) &&
        // The measurements subgraph relays from a thread of its own (lib/events/relay-thread.ts), which reports its Redis client.
        metricValue(text, 'linepack_redis_up', { client: `outbox-relay:${stack.dbPrefix}:events:measurements` }) === 1 &&
        // Every connection given back once the work is done (the relay's polls take one for a moment: not at every scrape).
        metricValue(text, 'linepack_mongodb_pool_connections', { linepack_service: 'assets', state: 'in_use' }) === 0
      );
    }, 30_000),
  ).toBe(true);
  const text = await scrape();
  expect(metricValue(text, 'linepack_event_consumer_pending', { stream, group: 'compliance' })).toBe(0);
  expect(metricValue(text, 'linepack_redis_up', { client: 'gateway' })).toBe(1);
  expect(metricValue(text, 'linepack_redis_up', { client: 'event-consumer:compliance' })).toBe(1);
  expect(metricValue(text, 'linepack_mongodb_pool_connections', { linepack_service: 'assets', state: 'available' })).toBeGreaterThan(0);
  // One series, a whole number (the wait above saw it at 0; by now a relay poll may hold a connection for a moment).
  const inUse = text
    .split('\n')
    .filter((l) => l.startsWith('linepack_mongodb_pool_connections{') && l.includes('linepack_service="assets"') && l.includes('state="in_use"'));
  expect(inUse).toEqual([expect.stringMatching(/ \d+$/)]);
  // A group that has read nothing lags by the whole of the producer's streams: the tenants' streams summed.
  const redis = new Redis(process.env['REDIS_URL']!);
  try {
    const streams = [stream, ...(await redis.smembers(streamRegistry(stream)))];
    expect(streams.length).toBeGreaterThan(1);
    let total = 0;
    for (const s of streams) {
      await redis.xgroup('CREATE', s, 'behind', '0');
      total += await redis.xlen(s);
    }
    expect(total).toBeGreaterThan(0);
    const unwatch = watchConsumerGroup(redis, [stream], 'behind');
    expect(metricValue(await scrape(), 'linepack_event_consumer_lag', { stream, group: 'behind' })).toBe(total);
    unwatch();
    // A new tenant's stream the group has not joined yet (its consumers have not found it): all it holds is behind.
    // A producer of its own, so this stack's consumers never see these streams.
    const producer = `${stack.dbPrefix}:events:metrics-test`;
    const [joined, notJoined] = [tenantStream(producer, 'joined'), tenantStream(producer, 'not-joined')];
    await redis.sadd(streamRegistry(producer), joined, notJoined);
    for (let i = 0; i < 2; i++) await redis.xadd(joined, '*', 'id', `j${i}`);
    await redis.xgroup('CREATE', joined, 'behind', '0');
    for (let i = 0; i < 3; i++) await redis.xadd(notJoined, '*', 'id', `n${i}`);
    const unwatchNew = watchConsumerGroup(redis, [producer], 'behind');
    expect(metricValue(await scrape(), 'linepack_event_consumer_lag', { stream: producer, group: 'behind' })).toBe(2 + 3);
    unwatchNew();
  } finally {
    redis.disconnect();
  }
  // The process's own health, labelled with the service that serves the endpoint.
  expect(metricValue(text, 'process_cpu_seconds_total', { linepack_service: 'test' })).toBeGreaterThan(0);
  expect(text).toMatch(/^nodejs_eventloop_lag_p99_seconds\{linepack_service="test"\} /m);
}, 30_000);

it("answers Prometheus in OpenMetrics and anyone else in the Prometheus text format: the same series, each read by Prometheus's own parser", async () => {
  const { apiKey } = await stack.tenantWithKey();
  expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey })).status).toBe(200);
  expect((await graphql(stack.gatewayUrl, '{ __typename }', {})).status).toBe(401);

  const openMetrics = await scrapeAsPrometheus(metrics.url);
  expect(openMetrics.contentType).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
  expect(openMetrics.parser).toBe('openmetrics');
  // Prometheus 2.x's Accept header (before scrape_protocols) asks for it too.
  const older = await scrapeAsPrometheus(metrics.url, 'application/openmetrics-text; version=0.0.1,text/plain;version=0.0.4;q=0.5,*/*;q=0.1');
  expect(older.parser).toBe('openmetrics');
  // curl (*/*), a browser, and a scraper that asks for the text format.
  const curl = await scrapeAsPrometheus(metrics.url, null);
  expect(curl.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
  expect(curl.parser).toBe('prometheus');
  expect((await scrapeAsPrometheus(metrics.url, 'text/plain;version=0.0.4;q=0.9,application/openmetrics-text;q=0.5')).parser).toBe('prometheus');
  expect((await scrapeAsPrometheus(metrics.url, 'text/html,application/xhtml+xml,*/*;q=0.8')).parser).toBe('prometheus');

  // The same sample names in both (a counter is `…_total` in either, so one query serves both), and the same
  // request counts.
  const names = (exposition: ParsedExposition) => [...new Set(exposition.samples.map((sample) => sample.name))].sort();
  expect(names(openMetrics)).toEqual(names(curl));
  expect(names(curl)).toContain('linepack_graphql_request_errors_total');
  expect(openMetrics.types['linepack_graphql_request_errors']).toBe('counter');
  expect(curl.types['linepack_graphql_request_errors_total']).toBe('counter');
  const count = (exposition: ParsedExposition, status: string) =>
    exposition.samples
      .filter(
        (s) => s.name === 'linepack_graphql_request_duration_seconds_count' && s.labels['linepack_service'] === 'gateway' && s.labels['status'] === status,
      )
      .reduce((sum, s) => sum + s.value, 0);
  expect(count(openMetrics, '401')).toBeGreaterThan(0);
  expect(count(openMetrics, '401')).toBe(count(curl, '401'));
  // Nothing is traced in this process (no OTEL_EXPORTER_OTLP_ENDPOINT): no exemplar points to a trace no one has.
  expect(openMetrics.samples.filter((sample) => sample.exemplars)).toEqual([]);
});

it("a gateway with GATEWAY_WORKERS=2 shows its workers' exemplars on the primary's /metrics: sampled traces only, the newest per bucket", async () => {
  // Tracing on in the workers (OTEL_EXPORTER_OTLP_ENDPOINT), exporting to a collector that takes everything.
  const collector = http.createServer((req, res) => req.resume().once('end', () => res.writeHead(200, { 'content-type': 'application/json' }).end('{}')));
  await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
  const metricsPort = await freePort();
  const gateway = await startGatewayProcess(stack, null, {
    GATEWAY_WORKERS: '2',
    METRICS_PORT: String(metricsPort),
    OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${(collector.address() as AddressInfo).port}`,
  });
  const primaryMetrics = `http://127.0.0.1:${metricsPort}/metrics`;
  try {
    // Both workers serve before anything is counted (the primary asks only workers that said they serve).
    await waitFor(
      async () => (await scrapeAsPrometheus(primaryMetrics, null)).samples.some((s) => s.name === 'linepack_gateway_workers' && s.value === 2),
      60_000,
      'both gateway workers',
    );
    const { apiKey } = await stack.tenantWithKey();
    // Each request on a connection of its own, so the primary hands them to both workers in turn; each continues the
    // trace its traceparent names (the gateway's default sampler follows the caller's decision).
    const traced = async (sampled: boolean) => {
      const traceId = randomBytes(16).toString('hex');
      const res = await fetch(gateway.url, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${apiKey}`,
          'content-type': 'application/json',
          connection: 'close',
          traceparent: `00-${traceId}-${randomBytes(8).toString('hex')}-${sampled ? '01' : '00'}`,
        },
        body: JSON.stringify({ query: '{ __typename }' }),
      });
      expect(res.status).toBe(200);
      await res.text();
      return traceId;
    };
    const sampled: string[] = [];
    for (let i = 0; i < 6; i++) sampled.push(await traced(true));
    const unsampled = await traced(false);

    const exemplarsOf = (exposition: ParsedExposition) =>
      exposition.samples.flatMap((s) =>
        s.name === 'linepack_graphql_request_duration_seconds_bucket' && s.labels['linepack_service'] === 'gateway'
          ? (s.exemplars ?? []).map((e) => e.labels['trace_id'])
          : [],
      );
    // The worker that served it has just counted it: the scrape that shows it may need a moment on a busy machine.
    let scraped!: ParsedExposition;
    await waitFor(async () => exemplarsOf((scraped = await scrapeAsPrometheus(primaryMetrics))).includes(sampled.at(-1)!), 10_000, 'the last exemplar');
    expect(scraped.parser).toBe('openmetrics');
    const shown = exemplarsOf(scraped);
    // Every exemplar is one of the sampled requests'; the unsampled one's trace was never recorded, so never shown.
    for (const traceId of shown) expect(sampled).toContain(traceId);
    expect(shown).not.toContain(unsampled);
    // The plain text exposition of the same primary still parses, without exemplars.
    const text = await scrapeAsPrometheus(primaryMetrics, null);
    expect(text.parser).toBe('prometheus');
    expect(text.samples.filter((s) => s.exemplars)).toEqual([]);
    expect(
      metricValue(await (await fetch(primaryMetrics)).text(), 'linepack_graphql_request_duration_seconds_count', {
        linepack_service: 'gateway',
        status: '200',
      }),
    ).toBe(7);
  } finally {
    gateway.process.kill('SIGTERM');
    await exited(gateway.process);
    collector.closeAllConnections();
    await new Promise((resolve) => collector.close(resolve));
  }
}, 120_000);

it('serves only /metrics on its port, and the public port does not serve metrics', async () => {
  expect((await fetch(new URL('/', metrics.url))).status).toBe(404);
  expect((await fetch(`${stack.gatewayOrigin}/metrics`)).status).toBe(404);
});
