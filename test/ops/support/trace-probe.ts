/**
 * Child process of test/ops/tracing.test.ts: tracing must be switched on before express, http, mongodb
 * and ioredis are first required, which jest's module system cannot show. Prints one JSON line per
 * finished span, prefixed `SPAN `, and what the test needs to check them (`PROBE {...}`).
 *
 *   stack: the whole stack in this process (dev/stack.ts), one federated query with a known X-Request-ID,
 *          spans kept in memory; every service's log lines printed too (`LOG {...}`), and /metrics as it answers
 *          right after the query, asked as Prometheus asks and as curl does (`METRICS {...}`).
 *   otlp:  tracing from OTEL_EXPORTER_OTLP_ENDPOINT alone; one traced request and one /healthz, then shutdown
 *          (which must flush to the collector within a second).
 */
import { randomBytes } from 'node:crypto';
import { createInMemorySpanExporter, REQUEST_ID_ATTRIBUTE, startTracing, type ReadableSpan } from '@linepack/lib/tracing';

const mode = process.argv[2] ?? 'stack';

function printSpan(span: ReadableSpan): void {
  const context = span.spanContext();
  const line = {
    name: span.name,
    kind: span.kind,
    traceId: context.traceId,
    spanId: context.spanId,
    parentSpanId: span.parentSpanContext?.spanId ?? null,
    service: span.resource.attributes['service.name'],
    scope: span.instrumentationScope.name,
    attributes: span.attributes,
  };
  process.stdout.write(`SPAN ${JSON.stringify(line)}\n`);
}

async function stackProbe(): Promise<void> {
  const exporter = createInMemorySpanExporter();
  const tracing = startTracing('stack', { exporter });
  if (!tracing) throw new Error('startTracing returned null with an exporter');
  // Only now may the services (express, @apollo/*, mongodb, ioredis) be loaded.
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startTestStack, createAsset, graphql } = require('../../support/stack') as typeof import('../../support/stack');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { startMetricsServer } = require('@linepack/lib/metrics') as typeof import('@linepack/lib/metrics');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { PROMETHEUS_ACCEPT } = require('../../support/prometheus-parse') as typeof import('../../support/prometheus-parse');

  // Every service's log lines, to check that those of the traced request carry its trace (printed `LOG {...}`).
  const logLines: string[] = [];
  const stack = await startTestStack({
    redisUrl: process.env['REDIS_URL'],
    dbPrefix: `trace${randomBytes(4).toString('hex')}`,
    logLevel: 'info',
    logDestination: { write: (line: string) => void logLines.push(line.trimEnd()) },
  });
  const metrics = await startMetricsServer({ port: 0, host: '127.0.0.1', service: 'stack' });
  try {
    const { apiKey } = await stack.tenantWithKey();
    await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Traced line' });
    await tracing.forceFlush();
    exporter.reset();

    const requestId = `trace-probe-${randomBytes(6).toString('hex')}`;
    const res = await graphql(stack.gatewayUrl, '{ assets(first: 5) { edges { node { id name latestMeasurement { type } } } } }', {
      apiKey,
      headers: { 'x-request-id': requestId },
    });
    // Server spans end when their response has closed, a moment after the client has the body: wait for the gateway's.
    const gatewaySpanEnded = () => exporter.getFinishedSpans().some((span) => !span.parentSpanContext && span.attributes[REQUEST_ID_ATTRIBUTE] === requestId);
    for (let waited = 0; waited < 10_000 && !gatewaySpanEnded(); waited += 50) {
      await tracing.forceFlush();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
    await tracing.forceFlush();
    for (const span of exporter.getFinishedSpans()) printSpan(span);
    for (const line of logLines) process.stdout.write(`LOG ${line}\n`);
    const scrape = async (accept: string | undefined) => {
      const answer = await fetch(metrics.url, accept ? { headers: { accept } } : {});
      return { contentType: answer.headers.get('content-type'), body: await answer.text() };
    };
    process.stdout.write(`METRICS ${JSON.stringify({ prometheus: await scrape(PROMETHEUS_ACCEPT), curl: await scrape(undefined) })}\n`);
    process.stdout.write(`PROBE ${JSON.stringify({ status: res.status, errors: res.body.errors ?? null, data: res.body.data, requestId, apiKey })}\n`);
  } finally {
    await metrics.stop();
    await stack.stop();
    await tracing.shutdown();
  }
}

async function otlpProbe(): Promise<void> {
  const tracing = startTracing('probe');
  if (!tracing) throw new Error('startTracing returned null with OTEL_EXPORTER_OTLP_ENDPOINT set');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const http = require('node:http') as typeof import('node:http');
  const server = http.createServer((req, res) => void res.setHeader('X-Request-ID', 'otlp-probe-request').end('ok'));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as import('node:net').AddressInfo;
  await (await fetch(`http://127.0.0.1:${port}/traced?token=s3cret`)).text();
  await (await fetch(`http://127.0.0.1:${port}/healthz`)).text();
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
  await new Promise((resolve) => setTimeout(resolve, 100));
  const started = Date.now();
  await tracing.shutdown();
  process.stdout.write(`PROBE ${JSON.stringify({ shutdownMs: Date.now() - started })}\n`);
}

(mode === 'otlp' ? otlpProbe() : stackProbe()).then(
  () => process.exit(0),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
