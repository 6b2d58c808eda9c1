/**
 * Distributed tracing (OpenTelemetry), off unless OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set. When on, one trace follows a request from the gateway
 * through its subgraph calls (W3C `traceparent`) to MongoDB and Redis, and spans go to an OTLP/HTTP
 * collector (JSON body, POST <endpoint>/v1/traces).
 *
 * Instrumentation works by patching modules as they are first required (require-in-the-middle), so a
 * process entry calls startTracing FIRST, before anything that loads express, http servers, mongodb,
 * ioredis or @apollo/*, and only then requires the rest of the service:
 *
 *     import { startTracing } from '@linepack/lib/tracing';
 *     startTracing('gateway');
 *     // eslint-disable-next-line @typescript-eslint/no-require-imports
 *     const { startGateway } = require('./server') as typeof import('./server');
 *
 * (Static `import`s all run before the module body, so the service must be reached with require().)
 * On shutdown, `await activeTracing()?.shutdown()` before exiting sends the last spans (at most 1 s).
 * This module loads no OpenTelemetry code of its own until tracing is switched on: with tracing off
 * startTracing returns null and the process pays nothing.
 *
 * What never reaches a span: headers (none are captured, so no Authorization, API key, identity token
 * or cookie), request and response bodies, query-string values, MongoDB values (db.query.text keeps
 * the command's shape with every value replaced by "?") and Redis arguments (the command name only).
 */
import type { Attributes, Context, Span, Tracer } from '@opentelemetry/api';
import type { InMemorySpanExporter, ReadableSpan, Sampler, SpanExporter } from '@opentelemetry/sdk-trace';
import type { ServerResponse } from 'node:http';

export type { ReadableSpan, SpanExporter };

export interface TracingOptions {
  /** Export here instead of OTLP (tests); switches tracing on whatever the environment says. */
  exporter?: SpanExporter;
  /**
   * Where the switch, service name, endpoint, sampler and resource attributes are read from (default
   * process.env); the exporter's headers, timeout, compression and TLS files always come from process.env.
   */
  env?: NodeJS.ProcessEnv;
}

export interface TracingHandle {
  serviceName: string;
  /** Exports what has ended so far (bounded by `timeoutMs`). */
  forceFlush(timeoutMs?: number): Promise<void>;
  /** Flushes and stops; resolves within SHUTDOWN_FLUSH_MS even when the collector does not answer. */
  shutdown(): Promise<void>;
}

/** How long shutdown waits for the last spans to be exported: graceful shutdown stays fast. */
export const SHUTDOWN_FLUSH_MS = 1_000;

/** The request id (X-Request-ID) of the request a server span serves. */
export const REQUEST_ID_ATTRIBUTE = 'linepack.request_id';

/** Probes and scrapes: never traced, nor anything they cause (a readiness check's database ping). */
const untracedPaths = /^\/(?:healthz|readyz|metrics)(?:[/?]|$)/;

/** Whether startTracing would switch tracing on for this environment (an exporter given aside). */
export function tracingEnabled(env: NodeJS.ProcessEnv = process.env): boolean {
  return Boolean(env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim() || env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim()) && env['OTEL_SDK_DISABLED'] !== 'true';
}

let started: TracingHandle | null = null;
/**
 * Set by startTracing: the ids of the span active in the caller's context, and whether its trace is sampled (the
 * OpenTelemetry API is loaded only then).
 */
let currentSpan: (() => (SpanIds & { sampled: boolean }) | null) | null = null;

/** The ids log lines carry to join their trace (W3C trace-context hex, as the OpenTelemetry log data model names them). */
export interface SpanIds {
  trace_id: string;
  span_id: string;
}

/**
 * The trace and span of the code running now — a request's server span or one beneath it — or null when tracing is
 * off or nothing is traced here. lib/logger.ts adds them to every log line.
 */
export function activeSpanIds(): SpanIds | null {
  const span = currentSpan?.();
  return span ? { trace_id: span.trace_id, span_id: span.span_id } : null;
}

/**
 * The trace id of the code running now when its trace is sampled (exported to the collector), else null: what a
 * metric's exemplar may point to (lib/metrics.ts) — a trace that was not sampled cannot be opened.
 */
export function sampledTraceId(): string | null {
  const span = currentSpan?.();
  return span?.sampled ? span.trace_id : null;
}

/** The handle startTracing returned in this process, if tracing is on: shutdown paths flush through it. */
export function activeTracing(): TracingHandle | null {
  return started;
}

/**
 * The active trace context as W3C headers (`traceparent`, `tracestate`), to carry work of a request to another thread
 * of this process (the gateway's expensive-operation lane); empty when tracing is off.
 */
export function traceCarrier(): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (!started) return carrier;
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when tracing is on
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  api.propagation.inject(api.context.active(), carrier);
  return carrier;
}

/** Runs `work` in the trace context `carrier` holds (traceCarrier on another thread), so its spans join that trace. */
export function withTraceCarrier<T>(carrier: Record<string, string>, work: () => T): T {
  if (!started) return work();
  // eslint-disable-next-line @typescript-eslint/no-require-imports -- loaded only when tracing is on
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  return api.context.with(api.propagation.extract(api.ROOT_CONTEXT, carrier), work);
}

/**
 * Switches tracing on for this process (once; a second call returns the first handle), or returns
 * null when OTEL_EXPORTER_OTLP_ENDPOINT is not set and no exporter is given.
 * `service` names the resource `linepack-<service>` unless OTEL_SERVICE_NAME is set.
 */
export function startTracing(service: string, options: TracingOptions = {}): TracingHandle | null {
  const env = options.env ?? process.env;
  if (!options.exporter && !tracingEnabled(env)) return null;
  if (started) return started;

  /* eslint-disable @typescript-eslint/no-require-imports -- loaded only when tracing is on */
  const api = require('@opentelemetry/api') as typeof import('@opentelemetry/api');
  const { AsyncLocalStorageContextManager } = require('@opentelemetry/context-async-hooks') as typeof import('@opentelemetry/context-async-hooks');
  const { W3CTraceContextPropagator } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const sdk = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  const { defaultResource, resourceFromAttributes } = require('@opentelemetry/resources') as typeof import('@opentelemetry/resources');
  const { registerInstrumentations } = require('@opentelemetry/instrumentation') as typeof import('@opentelemetry/instrumentation');
  const { HttpInstrumentation } = require('@opentelemetry/instrumentation-http') as typeof import('@opentelemetry/instrumentation-http');
  const { ExpressInstrumentation } = require('@opentelemetry/instrumentation-express') as typeof import('@opentelemetry/instrumentation-express');
  const { MongoDBInstrumentation } = require('@opentelemetry/instrumentation-mongodb') as typeof import('@opentelemetry/instrumentation-mongodb');
  const { IORedisInstrumentation } = require('@opentelemetry/instrumentation-ioredis') as typeof import('@opentelemetry/instrumentation-ioredis');
  /* eslint-enable @typescript-eslint/no-require-imports */

  if (env['OTEL_LOG_LEVEL']) {
    const level = env['OTEL_LOG_LEVEL'].toUpperCase() as keyof typeof api.DiagLogLevel;
    api.diag.setLogger(new api.DiagConsoleLogger(), api.DiagLogLevel[level] ?? api.DiagLogLevel.WARN);
  }

  const serviceName = env['OTEL_SERVICE_NAME']?.trim() || `linepack-${service}`;
  const exporter = options.exporter ?? otlpExporter(env);
  const provider = new sdk.TracerProvider({
    resource: defaultResource()
      .merge(resourceFromAttributes(resourceAttributesFrom(env['OTEL_RESOURCE_ATTRIBUTES'])))
      .merge(resourceFromAttributes({ 'service.name': serviceName })),
    sampler: samplerFrom(sdk, env),
    spanProcessors: [new sdk.BatchSpanProcessor({ exporter })],
  });

  // The API is process-global (one registration serves every copy of @opentelemetry/api 1.x of the same
  // or an older minor version, so @apollo/gateway's own spans join the request's trace).
  api.context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  api.propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  api.trace.setGlobalTracerProvider(provider);

  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: instrumentations(() => [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => untracedPaths.test(request.url ?? '/'),
        // Only calls made on behalf of a request; background timers and exports stay untraced.
        requireParentforOutgoingSpans: true,
        // Query values may carry anything a client put there (GraphQL variables over GET).
        startIncomingSpanHook: (request) => redactedQuery(request.url),
        applyCustomAttributesOnSpan: (span, _request, response) => {
          if (!('getHeader' in response)) return;
          const requestId = (response as ServerResponse).getHeader('x-request-id');
          if (typeof requestId === 'string') span.setAttribute(REQUEST_ID_ATTRIBUTE, requestId);
        },
      }),
      // Named middleware (authenticate, rateLimit, …) get a span each; anonymous wrappers would only add noise.
      new ExpressInstrumentation({ ignoreLayers: [/^middleware - <anonymous>$/] }),
      // Values become "?" in db.query.text (enhancedDatabaseReporting stays off: no documents, no filters' values).
      new MongoDBInstrumentation({ enhancedDatabaseReporting: false, requireParentSpan: true }),
      // Keys can name a credential's fingerprint and values carry data: the command name only.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ]),
  });
  currentSpan = () => {
    const context = api.trace.getSpan(api.context.active())?.spanContext();
    if (!context || !api.isSpanContextValid(context)) return null;
    return { trace_id: context.traceId, span_id: context.spanId, sampled: (context.traceFlags & api.TraceFlags.SAMPLED) !== 0 };
  };
  // Node's fetch (undici) is not node:http: the gateway's subgraph calls and the auth introspection go through it.
  const stopFetchTracing = traceFetch(api, provider.getTracer('@linepack/lib/tracing'));

  const bounded = (work: Promise<void>, ms: number) =>
    new Promise<void>((resolve) => {
      // Not unref'd: a caller that exits with a status after shutdown must get to do so.
      const timer = setTimeout(resolve, ms);
      work.then(
        () => {
          clearTimeout(timer);
          resolve();
        },
        () => {
          clearTimeout(timer);
          resolve();
        },
      );
    });
  let stopping: Promise<void> | null = null;
  started = {
    serviceName,
    forceFlush: (timeoutMs = 5_000) => bounded(provider.forceFlush({ timeoutMillis: timeoutMs }), timeoutMs),
    shutdown() {
      stopping ??= (async () => {
        stopFetchTracing();
        await bounded(provider.shutdown(), SHUTDOWN_FLUSH_MS);
      })();
      return stopping;
    },
  };
  return started;
}

/** The instrumentations need @opentelemetry/api 1.10 wherever npm placed them; say so instead of a bare TypeError. */
function instrumentations<T>(create: () => T[]): T[] {
  try {
    return create();
  } catch (err) {
    throw new Error(
      `tracing: the OpenTelemetry instrumentations could not start (${(err as Error).message}); ` +
        'they need @opentelemetry/api >=1.10 <1.11 where they are installed (check `npm ls @opentelemetry/api`)',
      { cause: err },
    );
  }
}

/** For tests: an exporter that keeps finished spans in memory (getFinishedSpans()). */
export function createInMemorySpanExporter(): InMemorySpanExporter {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { InMemorySpanExporter: Exporter } = require('@opentelemetry/sdk-trace') as typeof import('@opentelemetry/sdk-trace');
  return new Exporter();
}

function otlpExporter(env: NodeJS.ProcessEnv): SpanExporter {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { OTLPTraceExporter } = require('@opentelemetry/exporter-trace-otlp-http') as typeof import('@opentelemetry/exporter-trace-otlp-http');
  // Headers, timeout, compression and TLS files come from the standard OTEL_EXPORTER_OTLP_* variables.
  const tracesEndpoint = env['OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']?.trim();
  const endpoint = env['OTEL_EXPORTER_OTLP_ENDPOINT']?.trim();
  const url = tracesEndpoint || (endpoint ? `${endpoint.replace(/\/+$/, '')}/v1/traces` : undefined);
  return new OTLPTraceExporter(url ? { url } : {});
}

/** OTEL_TRACES_SAMPLER / OTEL_TRACES_SAMPLER_ARG as the specification defines them; parent-based always-on by default. */
function samplerFrom(sdk: typeof import('@opentelemetry/sdk-trace'), env: NodeJS.ProcessEnv): Sampler {
  const ratio = Number(env['OTEL_TRACES_SAMPLER_ARG'] ?? 1);
  const traceIdRatio = () => new sdk.TraceIdRatioBasedSampler(Number.isFinite(ratio) ? Math.min(Math.max(ratio, 0), 1) : 1);
  switch (env['OTEL_TRACES_SAMPLER']?.trim()) {
    case 'always_on':
      return new sdk.AlwaysOnSampler();
    case 'always_off':
      return new sdk.AlwaysOffSampler();
    case 'traceidratio':
      return traceIdRatio();
    case 'parentbased_always_off':
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new sdk.ParentBasedSampler({ root: traceIdRatio() });
    default:
      return new sdk.ParentBasedSampler({ root: new sdk.AlwaysOnSampler() });
  }
}

/** OTEL_RESOURCE_ATTRIBUTES: `key=value,key=value`, values percent-encoded. */
function resourceAttributesFrom(raw: string | undefined): Attributes {
  const attributes: Attributes = {};
  for (const pair of raw?.split(',') ?? []) {
    const at = pair.indexOf('=');
    if (at <= 0) continue;
    try {
      attributes[pair.slice(0, at).trim()] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // A malformed value is skipped, as the specification asks.
    }
  }
  return attributes;
}

/** `url.query` with every value replaced: which parameters were sent, never what they said. */
function redactedQuery(url: string | undefined): Attributes {
  const at = url?.indexOf('?') ?? -1;
  if (!url || at < 0) return {};
  const names = [...new URLSearchParams(url.slice(at + 1)).keys()];
  return { 'url.query': names.map((name) => `${encodeURIComponent(name)}=REDACTED`).join('&') };
}

interface UndiciRequest {
  origin?: string | URL;
  method?: string;
  path?: string;
  addHeader?(name: string, value: string): unknown;
  headers?: string | string[];
}

/**
 * Client spans for Node's fetch, from undici's diagnostics channels (the same ones
 * @opentelemetry/instrumentation-undici uses): a span per request made while a span is active, and
 * `traceparent` added to the request so the server's span joins the trace. No header, query string or
 * body is recorded.
 */
function traceFetch(api: typeof import('@opentelemetry/api'), tracer: Tracer): () => void {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const channels = require('node:diagnostics_channel') as typeof import('node:diagnostics_channel');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { isTracingSuppressed } = require('@opentelemetry/core') as typeof import('@opentelemetry/core');
  const spans = new WeakMap<object, Span>();

  const onCreate = (message: unknown) => {
    const { request } = message as { request: UndiciRequest };
    const parent: Context = api.context.active();
    if (isTracingSuppressed(parent) || !api.trace.getSpan(parent)) return;
    let url: URL;
    try {
      url = new URL(request.path ?? '/', request.origin);
    } catch {
      return;
    }
    const method = (request.method ?? 'GET').toUpperCase();
    const span = tracer.startSpan(
      method,
      {
        kind: api.SpanKind.CLIENT,
        attributes: {
          'http.request.method': method,
          // Without the query string or credentials: `${origin}${path}`.
          'url.full': `${url.origin}${url.pathname}`,
          'server.address': url.hostname,
          'server.port': Number(url.port || (url.protocol === 'https:' ? 443 : 80)),
        },
      },
      parent,
    );
    spans.set(request, span);
    const carrier: Record<string, string> = {};
    api.propagation.inject(api.trace.setSpan(parent, span), carrier);
    for (const [name, value] of Object.entries(carrier)) {
      if (typeof request.addHeader === 'function') request.addHeader(name, value);
      else if (Array.isArray(request.headers)) request.headers.push(name, value);
      else if (typeof request.headers === 'string') request.headers += `${name}: ${value}\r\n`;
    }
  };
  const onHeaders = (message: unknown) => {
    const { request, response } = message as { request: object; response: { statusCode: number } };
    const span = spans.get(request);
    if (!span) return;
    span.setAttribute('http.response.status_code', response.statusCode);
    if (response.statusCode >= 400) {
      span.setAttribute('error.type', String(response.statusCode));
      span.setStatus({ code: api.SpanStatusCode.ERROR });
    }
  };
  const onDone = (message: unknown) => {
    const { request } = message as { request: object };
    spans.get(request)?.end();
    spans.delete(request);
  };
  const onError = (message: unknown) => {
    const { request, error } = message as { request: object; error: Error };
    const span = spans.get(request);
    if (!span) return;
    span.setAttribute('error.type', error.name || 'Error');
    span.setStatus({ code: api.SpanStatusCode.ERROR, message: error.message });
    span.end();
    spans.delete(request);
  };
  const subscriptions: [string, (message: unknown) => void][] = [
    ['undici:request:create', onCreate],
    ['undici:request:headers', onHeaders],
    ['undici:request:trailers', onDone],
    ['undici:request:error', onError],
  ];
  for (const [name, listener] of subscriptions) channels.subscribe(name, listener);
  return () => {
    for (const [name, listener] of subscriptions) channels.unsubscribe(name, listener);
  };
}
