/**
 * Tracing (lib/tracing.ts): one trace per request from the gateway through the subgraphs to MongoDB and
 * Redis, joined by W3C traceparent, with the request id on the server spans and no credential anywhere.
 * Instrumentation patches modules as Node's require loads them, which jest's own module system bypasses,
 * so the traced code runs in a child process (support/trace-probe.ts) that prints its finished spans.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { repoRoot } from '@linepack/lib/repo-root';
import { startLinepack, type LinepackProcess } from '../support/linepack-process';
import { REQUEST_ID_ATTRIBUTE, startTracing } from '@linepack/lib/tracing';
import { until } from '@linepack/lib/testing/until';
import { parseExposition, type ParsedExposition } from '../support/prometheus-parse';

interface ProbeSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId: string | null;
  service: string;
  scope: string;
  attributes: Record<string, unknown>;
}

const SERVER = 1;
const CLIENT = 2;

/** /metrics as the probe read it: asked as Prometheus asks, and as curl asks. */
type ProbeScrapes = Record<'prometheus' | 'curl', { contentType: string; body: string }>;

/** Runs the probe in `mode`; its SPAN lines and its PROBE summary. */
async function runProbe(
  mode: 'stack' | 'otlp',
  env: Record<string, string> = {},
): Promise<{ spans: ProbeSpan[]; logs: Record<string, unknown>[]; metrics: ProbeScrapes | null; summary: Record<string, unknown> }> {
  const childEnv: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('OTEL_')) childEnv[name] = value;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'test/ops/support/trace-probe.ts'), mode], {
    cwd: repoRoot,
    env: { ...childEnv, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`trace probe (${mode}) exited ${code}:\n${stderr.slice(-4000)}`);
  const lines = stdout.split('\n');
  const spans = lines.filter((l) => l.startsWith('SPAN ')).map((l) => JSON.parse(l.slice(5)) as ProbeSpan);
  const summaryLine = lines.find((l) => l.startsWith('PROBE '));
  if (!summaryLine) throw new Error(`trace probe (${mode}) printed no summary:\n${stderr.slice(-4000)}`);
  const logs = lines.filter((l) => l.startsWith('LOG ')).map((l) => JSON.parse(l.slice(4)) as Record<string, unknown>);
  const metricsLine = lines.find((l) => l.startsWith('METRICS '));
  const metrics = metricsLine ? (JSON.parse(metricsLine.slice(8)) as ProbeScrapes) : null;
  return { spans, logs, metrics, summary: JSON.parse(summaryLine.slice(6)) as Record<string, unknown> };
}

test('tracing is off, and costs nothing, without OTEL_EXPORTER_OTLP_ENDPOINT or an exporter', () => {
  expect(startTracing('gateway', { env: {} })).toBeNull();
  expect(startTracing('gateway', { env: { OTEL_SERVICE_NAME: 'x' } })).toBeNull();
  expect(startTracing('gateway', { env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318', OTEL_SDK_DISABLED: 'true' } })).toBeNull();
});

describe('one federated query through the whole stack', () => {
  let spans: ProbeSpan[];
  let logs: Record<string, unknown>[];
  let metrics: ProbeScrapes;
  let summary: { status: number; errors: unknown; data: { assets: { edges: unknown[] } }; requestId: string; apiKey: string };
  let trace: ProbeSpan[];
  let gatewayServer: ProbeSpan;
  const byId = new Map<string, ProbeSpan>();
  const descendsFrom = (span: ProbeSpan, ancestor: ProbeSpan): boolean => {
    for (let at = span.parentSpanId ? byId.get(span.parentSpanId) : undefined; at; at = at.parentSpanId ? byId.get(at.parentSpanId) : undefined) {
      if (at.spanId === ancestor.spanId) return true;
    }
    return false;
  };

  beforeAll(async () => {
    const result = await runProbe('stack');
    spans = result.spans;
    logs = result.logs;
    metrics = result.metrics!;
    summary = result.summary as typeof summary;
    for (const span of spans) byId.set(span.spanId, span);
    const roots = spans.filter((s) => s.kind === SERVER && s.parentSpanId === null && s.attributes['url.path'] === '/graphql');
    if (roots.length !== 1) throw new Error(`expected one gateway server span, got ${JSON.stringify(roots, null, 2)}`);
    gatewayServer = roots[0]!;
    trace = spans.filter((s) => s.traceId === gatewayServer.traceId);
  }, 120_000);

  test('the query itself succeeds', () => {
    expect(summary.errors).toBeNull();
    expect(summary.status).toBe(200);
    expect(summary.data.assets.edges.length).toBeGreaterThan(0);
  });

  test("the gateway's server span is the root of the trace and carries the client's request id", () => {
    expect(gatewayServer.attributes[REQUEST_ID_ATTRIBUTE]).toBe(summary.requestId);
    expect(gatewayServer.attributes['http.route']).toBe('/graphql');
    // Connected: every other span of the trace has its parent among the exported spans.
    for (const span of trace) if (span !== gatewayServer) expect(byId.get(span.parentSpanId ?? '')?.traceId).toBe(gatewayServer.traceId);
    // @apollo/gateway's own spans (its @opentelemetry/api copy) joined the same trace.
    expect(trace.map((s) => s.name)).toEqual(expect.arrayContaining(['gateway.request', 'gateway.plan', 'gateway.fetch']));
  });

  test('the gateway calls two subgraphs, each call continued by that subgraph (traceparent)', () => {
    const subgraphCalls = trace.filter((s) => s.kind === CLIENT && String(s.attributes['url.full']).endsWith('/graphql') && descendsFrom(s, gatewayServer));
    expect(new Set(subgraphCalls.map((s) => s.attributes['url.full'])).size).toBeGreaterThanOrEqual(2);
    for (const call of subgraphCalls) {
      expect(call.attributes['http.response.status_code']).toBe(200);
      const served = trace.filter((s) => s.kind === SERVER && s.parentSpanId === call.spanId);
      expect(served).toHaveLength(1);
      expect(served[0]!.attributes['url.path']).toBe('/graphql');
      expect(served[0]!.attributes['server.port']).toBe(Number(new URL(String(call.attributes['url.full'])).port));
      // The gateway forwards the request id; the subgraph's server span carries it too.
      expect(served[0]!.attributes[REQUEST_ID_ATTRIBUTE]).toBe(summary.requestId);
    }
  });

  test('MongoDB and Redis commands are spans of the same trace, without values', () => {
    const subgraphServers = trace.filter((s) => s.kind === SERVER && s !== gatewayServer);
    const mongo = trace.filter((s) => s.scope === '@opentelemetry/instrumentation-mongodb');
    expect(mongo.some((m) => subgraphServers.some((server) => descendsFrom(m, server)))).toBe(true);
    // The command's shape only: every value is "?".
    const leaves = (value: unknown): unknown[] => (value && typeof value === 'object' ? Object.values(value).flatMap(leaves) : [value]);
    for (const m of mongo) expect(new Set(leaves(JSON.parse(String(m.attributes['db.query.text']))))).toEqual(new Set(['?']));
    const redis = trace.filter((s) => s.scope === '@opentelemetry/instrumentation-ioredis');
    expect(redis.length).toBeGreaterThan(0);
    for (const r of redis) expect(String(r.attributes['db.query.text'] ?? r.attributes['db.statement'])).toMatch(/^\w+$/);
  });

  test('no span attribute holds the API key, a bearer credential or a token', () => {
    expect(spans.length).toBeGreaterThan(0);
    for (const span of spans) {
      for (const value of Object.values(span.attributes)) {
        const text = JSON.stringify(value);
        expect(text).not.toContain(summary.apiKey);
        expect(text).not.toMatch(/bearer/i);
        expect(text).not.toMatch(/eyJ[\w-]+\.[\w-]+/);
      }
    }
  });

  test('every log line written while serving the request carries its trace_id and the span it was written under', () => {
    const ofRequest = logs.filter((line) => line['requestId'] === summary.requestId);
    // The gateway's access log line, the auth service's (the key's introspection) and each subgraph's.
    expect(new Set(ofRequest.map((line) => line['service']))).toEqual(new Set(['gateway', 'auth', 'assets', 'measurements']));
    const spanIds = new Set(trace.map((s) => s.spanId));
    for (const line of ofRequest) {
      expect([line['service'], line['trace_id']]).toEqual([line['service'], gatewayServer.traceId]);
      expect(spanIds.has(String(line['span_id']))).toBe(true);
    }
    // The gateway's line names the gateway's server span; a subgraph's, a span of that subgraph.
    expect(ofRequest.find((line) => line['service'] === 'gateway')!['span_id']).toBe(gatewayServer.spanId);
    // Levels are names, as in every line (lib/logger.ts).
    for (const line of logs) expect(typeof line['level']).toBe('string');
    // Lines written outside any request (start-up) carry no trace.
    expect(logs.some((line) => line['msg'] === 'gateway listening' && line['trace_id'] === undefined)).toBe(true);
  });

  test("the request-duration histogram's bucket carries the request's trace id as its exemplar, in every service it crossed (OpenMetrics)", async () => {
    // What Prometheus reads: it asked for OpenMetrics, got it, and its own parser reads the exemplars.
    expect(metrics.prometheus.contentType).toBe('application/openmetrics-text; version=1.0.0; charset=utf-8');
    const scraped = await parseExposition(metrics.prometheus.body, metrics.prometheus.contentType);
    expect(scraped.parser).toBe('openmetrics');
    const withTrace = (service: string) =>
      scraped.samples.filter(
        (s) =>
          s.name === 'linepack_graphql_request_duration_seconds_bucket' &&
          s.labels['linepack_service'] === service &&
          s.exemplars?.some((e) => e.labels['trace_id'] === gatewayServer.traceId),
      );
    // The gateway's answer (the query is no client's document: `unregistered`), and the two subgraphs it called.
    const [gateway, ...others] = withTrace('gateway');
    expect(others).toEqual([]);
    expect(gateway!.labels).toMatchObject({ operation: 'unregistered', status: '200', outcome: 'ok' });
    const exemplar = gateway!.exemplars![0]!;
    // Only the trace id: what a trace store opens the trace by (no request id, tenant or credential).
    expect(Object.keys(exemplar.labels)).toEqual(['trace_id']);
    // The request's own duration, in the bucket that counted it, stamped when it was observed.
    expect(exemplar.value).toBeGreaterThan(0);
    expect(exemplar.value).toBeLessThanOrEqual(gateway!.labels['le'] === '+Inf' ? Infinity : Number(gateway!.labels['le']));
    expect(exemplar.timestampMs).toBeGreaterThan(Date.now() - 10 * 60_000);
    expect(withTrace('assets')).toHaveLength(1);
    expect(withTrace('measurements')).toHaveLength(1);
  });

  test('a scraper that does not ask for OpenMetrics gets the Prometheus text format, without exemplars, and it parses', async () => {
    expect(metrics.curl.contentType).toBe('text/plain; version=0.0.4; charset=utf-8');
    expect(metrics.curl.body).not.toContain(gatewayServer.traceId);
    const text: ParsedExposition = await parseExposition(metrics.curl.body, metrics.curl.contentType);
    expect(text.parser).toBe('prometheus');
    expect(text.samples.some((s) => s.name === 'linepack_graphql_request_duration_seconds_count' && s.labels['linepack_service'] === 'gateway')).toBe(true);
  });

  test('probes are not traced', () => {
    expect(spans.filter((s) => /^\/(healthz|readyz|metrics)/.test(String(s.attributes['url.path'] ?? '')))).toEqual([]);
  });
});

describe('OTLP/HTTP export from OTEL_EXPORTER_OTLP_ENDPOINT', () => {
  async function collector(answer: boolean): Promise<{ url: string; received: { path: string; contentType: string; body: string }[]; close(): Promise<void> }> {
    const received: { path: string; contentType: string; body: string }[] = [];
    const server = http.createServer((req, res) => {
      let body = '';
      req.setEncoding('utf8').on('data', (chunk: string) => (body += chunk));
      req.on('end', () => {
        received.push({ path: `${req.method} ${req.url}`, contentType: req.headers['content-type'] ?? '', body });
        if (answer) res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        // Otherwise: a collector that never answers.
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    return {
      url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
      received,
      close: () => {
        server.closeAllConnections();
        return new Promise((resolve) => server.close(() => resolve()));
      },
    };
  }

  test('spans reach the collector as OTLP JSON on POST /v1/traces, flushed at shutdown', async () => {
    const otlp = await collector(true);
    try {
      await runProbe('otlp', { OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url });
      expect(otlp.received.map((r) => r.path)).toContain('POST /v1/traces');
      const exported = otlp.received.filter((r) => r.path === 'POST /v1/traces');
      expect(exported[0]!.contentType).toBe('application/json');
      type OtlpAttribute = { key: string; value: { stringValue?: string; intValue?: number | string } };
      const payloads = exported.map(
        (r) =>
          JSON.parse(r.body) as {
            resourceSpans: { resource: { attributes: OtlpAttribute[] }; scopeSpans: { spans: { name: string; attributes: OtlpAttribute[] }[] }[] }[];
          },
      );
      const resourceSpans = payloads.flatMap((p) => p.resourceSpans);
      expect(resourceSpans[0]!.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'linepack-probe' } });
      const attributesOf = (span: { attributes: OtlpAttribute[] }) =>
        Object.fromEntries(span.attributes.map((a) => [a.key, a.value.stringValue ?? a.value.intValue]));
      const exportedSpans = resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans)).map(attributesOf);
      const traced = exportedSpans.find((a) => a['url.path'] === '/traced');
      expect(traced).toMatchObject({ 'url.query': 'token=REDACTED', [REQUEST_ID_ATTRIBUTE]: 'otlp-probe-request' });
      expect(exportedSpans.find((a) => a['url.path'] === '/healthz')).toBeUndefined();
    } finally {
      await otlp.close();
    }
  });

  test('npm start with OTEL_EXPORTER_OTLP_ENDPOINT traces a request from the gateway into the subgraphs, and flushes on Ctrl-C', async () => {
    const otlp = await collector(true);
    const stateDir = mkdtempSync(path.join(os.tmpdir(), 'linepack-traced-'));
    const env: Record<string, string> = {};
    for (const [name, value] of Object.entries(process.env)) if (value !== undefined && !name.startsWith('OTEL_')) env[name] = value;
    let linepack: LinepackProcess | null = null;
    try {
      linepack = await startLinepack([process.execPath, '--import', 'tsx', 'scripts/start.ts', '--ephemeral', '--state-dir', stateDir], {
        env: { ...env, OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url },
      });
      const { child, exited } = linepack;
      const devJson = path.join(stateDir, 'dev.json');
      const state = JSON.parse(readFileSync(devJson, 'utf8')) as { gatewayUrl: string; apiKey: string };
      type OtlpSpan = { traceId: string; name: string; kind: number; attributes: { key: string; value: { stringValue?: string } }[] };
      type ResourceSpans = { resource: { attributes: { key: string; value: { stringValue?: string } }[] }; scopeSpans: { spans: OtlpSpan[] }[] };
      const collected = () =>
        otlp.received.filter((r) => r.path === 'POST /v1/traces').flatMap((r) => (JSON.parse(r.body) as { resourceSpans: ResourceSpans[] }).resourceSpans);
      const spansOf = (resourceSpans: ResourceSpans[]) => resourceSpans.flatMap((rs) => rs.scopeSpans.flatMap((ss) => ss.spans));
      const attribute = (span: OtlpSpan, key: string) => span.attributes.find((a) => a.key === key)?.value.stringValue;
      const rootOf = (spans: OtlpSpan[], requestId: string) =>
        spans.find((span) => attribute(span, REQUEST_ID_ATTRIBUTE) === requestId && attribute(span, 'http.route') === '/graphql');

      // An expensive operation, which the gateway executes on its lane's thread (gateway/src/expensive-lane.ts): its
      // trace continues through the lane into the subgraphs, exported under the gateway's name by the lane's own
      // exporter (on its schedule: waited for here, so the Ctrl-C below flushes only the next request).
      const expensiveRequest = (requestId: string) =>
        fetch(state.gatewayUrl, {
          method: 'POST',
          headers: { authorization: `Bearer ${state.apiKey}`, 'content-type': 'application/json', 'x-request-id': requestId },
          body: JSON.stringify({ query: '{ assets(first: 500) { edges { node { id measurements(first: 100) { edges { node { id } } } } } } }' }),
        });
      // The lanes' threads start on first use (lib/threads.ts), from source and traced here: under stress-ng that start
      // outlasted the request's 30 s deadline (504) in a run. What is tested is the trace, so a first expensive request
      // starts them, answered (200) or cut by its deadline (504, the thread keeps starting).
      expect([200, 504]).toContain((await expensiveRequest('npm-start-lanes-started')).status);
      const expensive = await expensiveRequest('npm-start-traced-expensive');
      expect(expensive.status).toBe(200);
      const laneFetches = (resourceSpans: ResourceSpans[]) => {
        const root = rootOf(spansOf(resourceSpans), 'npm-start-traced-expensive');
        return root ? spansOf(resourceSpans).filter((span) => span.traceId === root.traceId && span.name === 'gateway.fetch') : [];
      };
      // Each thread's exporter sends on its own schedule: the lane's fetches can arrive before the server span of the
      // measurements subgraph's lane thread they reached, so both are waited for.
      const serverSpans = (resourceSpans: ResourceSpans[]) =>
        spansOf(resourceSpans).filter((span) => span.kind === 2 && attribute(span, REQUEST_ID_ATTRIBUTE) === 'npm-start-traced-expensive');
      await until(
        async () => collected(),
        (resourceSpans) => laneFetches(resourceSpans).length >= 2 && serverSpans(resourceSpans).length >= 3,
        60_000,
        250,
      );
      const expensiveSpans = spansOf(collected());
      const expensiveTraceId = rootOf(expensiveSpans, 'npm-start-traced-expensive')!.traceId;
      // The gateway's server span, and the assets and measurements subgraphs' server spans the lane's calls reached.
      expect(serverSpans(collected()).filter((span) => span.traceId === expensiveTraceId).length).toBeGreaterThanOrEqual(3);
      const services = collected()
        .filter((rs) => rs.scopeSpans.some((ss) => ss.spans.some((span) => span.traceId === expensiveTraceId && span.name === 'gateway.fetch')))
        .map((rs) => rs.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue);
      expect(new Set(services)).toEqual(new Set(['linepack-stack']));

      const res = await fetch(state.gatewayUrl, {
        method: 'POST',
        headers: { authorization: `Bearer ${state.apiKey}`, 'content-type': 'application/json', 'x-request-id': 'npm-start-traced' },
        body: JSON.stringify({ query: '{ assets(first: 3) { edges { node { id latestMeasurement { type } } } } }' }),
      });
      expect(res.status).toBe(200);
      child.kill('SIGINT');
      expect(await exited).toBe(0);

      const resourceSpans = collected();
      expect(resourceSpans[0]!.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'linepack-stack' } });
      const exportedSpans = spansOf(resourceSpans);
      const root = rootOf(exportedSpans, 'npm-start-traced');
      expect(root).toBeDefined();
      const trace = exportedSpans.filter((span) => span.traceId === root!.traceId);
      // The gateway's server span, and the assets and measurements subgraphs' server spans, all carrying the request id.
      expect(trace.filter((span) => span.kind === 2 && attribute(span, REQUEST_ID_ATTRIBUTE) === 'npm-start-traced').length).toBeGreaterThanOrEqual(3);
      expect(trace.map((span) => span.name)).toEqual(expect.arrayContaining(['gateway.fetch']));
    } finally {
      if (linepack && linepack.child.exitCode === null) linepack.child.kill('SIGKILL');
      await otlp.close();
      rmSync(stateDir, { recursive: true, force: true });
    }
  }, 120_000);

  test('shutdown does not wait on a collector that does not answer', async () => {
    const otlp = await collector(false);
    try {
      // The exporter and the batch processor would wait two minutes for the silent collector: a shutdown that waited on
      // it could not finish in 30 s, while SHUTDOWN_FLUSH_MS (1 s) leaves that much room for a loaded machine.
      const { summary } = await runProbe('otlp', {
        OTEL_EXPORTER_OTLP_ENDPOINT: otlp.url,
        OTEL_EXPORTER_OTLP_TIMEOUT: '120000',
        OTEL_BSP_EXPORT_TIMEOUT: '120000',
      });
      expect(otlp.received.map((r) => r.path)).toContain('POST /v1/traces');
      expect(summary['shutdownMs']).toBeGreaterThanOrEqual(900);
      expect(summary['shutdownMs']).toBeLessThan(30_000);
    } finally {
      await otlp.close();
    }
  });
});
