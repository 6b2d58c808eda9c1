import http from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import { commandPerKey, type RedisClient } from './redis';
import type { MongoClient } from 'mongodb';
import {
  AggregatorRegistry,
  collectDefaultMetrics,
  Counter,
  Gauge,
  Histogram,
  Registry,
  type Metric,
  type MetricObjectWithValues,
  type MetricValue,
  type RegistryContentType,
} from 'prom-client';
import { closeServer, listen } from './http';
import { consumerGroupInfo } from './events/consumer';
import { producerStreams } from './events/outbox';
import type { DocumentNode, GraphQLFormattedError } from 'graphql';
import { trustedDocuments } from './generated/trusted-documents';
import { sampledTraceId } from './tracing';

/**
 * Prometheus metrics of one process. Every service records into this registry; the process entry
 * (a container's main, or `npm start` for the whole stack) serves it on its own port (METRICS_PORT,
 * default 9464), never on the public one. Labels are bounded: service and subgraph names, tiers,
 * fixed reasons, HTTP statuses, error codes, and the names of trusted operations (lib/generated/trusted-documents.ts)
 * — never tenant ids, credentials or query text.
 *
 * No label is named service, job, instance, namespace or pod: Prometheus and the Prometheus Operator set those on
 * every scraped series, and a clash renames ours to exported_service, so queries on it match nothing. The service
 * that recorded a series is `linepack_service`.
 */
export const metricsRegistry = new Registry();

export const DEFAULT_METRICS_PORT = 9464;

const latencyBuckets = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30];

/**
 * How a request ended, for the error ratio: `server_error` when any error was the server's (unavailable, internal,
 * timed out) or the status was 5xx, `client_error` when every error was the client's (input, credential, limits).
 */
export type RequestOutcome = 'ok' | 'client_error' | 'server_error';

/**
 * With exemplars: each bucket keeps the trace id (`trace_id`) of the last sampled request it counted, shown when the
 * scraper asks for OpenMetrics (the Prometheus text format has no exemplars). prom-client refuses an exemplar metric in
 * a registry whose own rendering is Prometheus text, because that rendering would drop them; /metrics renders either
 * format from the registry's values (renderMetrics), so the histogram is registered here by hand.
 */
export const graphqlRequestDuration = new Histogram({
  name: 'linepack_graphql_request_duration_seconds',
  help: 'GraphQL requests by service, operation name, HTTP status and outcome (ok, client_error, server_error); the _count is the request rate',
  labelNames: ['linepack_service', 'operation', 'status', 'outcome'] as const,
  buckets: latencyBuckets,
  enableExemplars: true,
  registers: [],
});
metricsRegistry.registerMetric(graphqlRequestDuration);

/**
 * The error ratio's source: requests by outcome only, every outcome's series created at 0 when a service starts
 * serving (graphqlMetricsMiddleware). rate() needs two samples of a series, so a series that first appears during an
 * outage — a `status="503"` one of the histogram above, for an operation that never failed before — reads nothing at
 * its first scrape and misses what it counted before it; these three are scraped from the start, so the ratio reads an
 * outage from the first scrape after it began, and reads 0 (not "no data") while nothing fails.
 */
export const graphqlRequests = new Counter({
  name: 'linepack_graphql_requests_total',
  help: 'GraphQL requests by service and outcome (ok, client_error, server_error), each from 0 at start: the error ratio is server_error over all',
  labelNames: ['linepack_service', 'outcome'] as const,
  registers: [metricsRegistry],
});
const requestOutcomes: readonly RequestOutcome[] = ['ok', 'client_error', 'server_error'];

export const graphqlRequestsInFlight = new Gauge({
  name: 'linepack_graphql_requests_in_flight',
  help: 'GraphQL requests being served right now, by service',
  labelNames: ['linepack_service'] as const,
  registers: [metricsRegistry],
});

export const subgraphFetchDuration = new Histogram({
  name: 'linepack_subgraph_fetch_duration_seconds',
  help: "The gateway's requests to each subgraph; outcome=error when the fetch failed or answered 5xx",
  labelNames: ['subgraph', 'outcome'] as const,
  buckets: latencyBuckets,
  registers: [metricsRegistry],
});

export const subgraphGraphqlErrors = new Counter({
  name: 'linepack_subgraph_graphql_errors_total',
  help: 'Errors in the GraphQL answers of subgraphs (HTTP 200 with errors), by subgraph and error code',
  labelNames: ['subgraph', 'code'] as const,
  registers: [metricsRegistry],
});

/**
 * The errors in the answers to GraphQL requests, one per error, by the code the client saw and the subgraph it came
 * from ("none": the service's own, e.g. a refused credential or an invalid document).
 */
export const graphqlRequestErrors = new Counter({
  name: 'linepack_graphql_request_errors_total',
  help: 'Errors in the answers to GraphQL requests, by service, error code and the subgraph the error came from (none: the service itself)',
  labelNames: ['linepack_service', 'code', 'subgraph'] as const,
  registers: [metricsRegistry],
});

/** Codes that say the server failed, not the request: any of them makes a request's outcome server_error. */
const serverErrorCodes = new Set(['INTERNAL_SERVER_ERROR', 'SUBGRAPH_UNAVAILABLE', 'DATABASE_UNAVAILABLE', 'TIMEOUT']);

/** Error codes are labels only from this set (a subgraph could answer anything): the rest count as "OTHER". */
const knownErrorCodes = new Set([
  ...serverErrorCodes,
  'OPERATION_RESOLUTION_FAILURE',
  'BAD_REQUEST',
  'PERSISTED_QUERY_NOT_FOUND',
  'PERSISTED_QUERY_NOT_IN_LIST',
  'BAD_USER_INPUT',
  'NOT_FOUND',
  'CONFLICT',
  'FORBIDDEN',
  'UNAUTHENTICATED',
  'GRAPHQL_VALIDATION_FAILED',
  'GRAPHQL_PARSE_FAILED',
  'RATE_LIMITED',
]);

export function errorCodeLabel(code: unknown): string {
  return typeof code === 'string' && knownErrorCodes.has(code) ? code : 'OTHER';
}

export const rateLimitDecisions = new Counter({
  name: 'linepack_rate_limit_decisions_total',
  help: 'Rate-limit decisions by tier: allowed, limited (request windows) or cost_limited (cost budget)',
  labelNames: ['tier', 'decision'] as const,
  registers: [metricsRegistry],
});

export type AuthenticationFailureReason =
  | 'missing_credential'
  | 'malformed_credential'
  | 'invalid_api_key'
  | 'invalid_access_token'
  | 'session_revoked'
  | 'tenant_not_allowed'
  | 'credential_blocked'
  | 'address_blocked'
  | 'verification_unavailable';

export const authenticationFailures = new Counter({
  name: 'linepack_authentication_failures_total',
  help: 'Requests the gateway refused before execution because of their credential, by reason',
  labelNames: ['reason'] as const,
  registers: [metricsRegistry],
});

export const credentialCacheLookups = new Counter({
  name: 'linepack_credential_cache_lookups_total',
  help: "API key verifications answered from the gateway's cache (hit) or by the auth service (miss)",
  labelNames: ['result'] as const,
  registers: [metricsRegistry],
});

/** Values read at scrape time (Redis and MongoDB state), from whatever the running services registered. */
type Collector = (set: (labels: Record<string, string>, value: number) => void) => Promise<void> | void;

/** A source slower than this is left out of the scrape (Prometheus gives up on the whole target at its timeout). */
const COLLECT_TIMEOUT_MS = 1_500;

/**
 * `aggregator`: how values of the same labels are combined (default sum): those of two sources in one process (the
 * measurements subgraph relays two collections to one stream, each with its own Redis client), and, by prom-client,
 * those of a node:cluster primary's workers.
 */
function scrapedGauge(name: string, help: string, labelNames: readonly string[], aggregator?: 'min') {
  const collectors = new Set<Collector>();
  new Gauge({
    name,
    help,
    labelNames,
    registers: [metricsRegistry],
    ...(aggregator ? { aggregator } : {}),
    async collect() {
      // Gathered first and replaced in one synchronous step, so two scrapes at once never see each other's reset.
      const values: [Record<string, string>, number][] = [];
      // One failing or hanging source (a Redis that is away) must not cost the whole scrape its other values.
      await Promise.all(
        [...collectors].map((collect) => {
          const gathered: [Record<string, string>, number][] = [];
          const done = Promise.resolve(collect((labels, value) => void gathered.push([labels, value]))).then(() => values.push(...gathered));
          let timer: NodeJS.Timeout | undefined;
          const timeout = new Promise<void>((resolve) => (timer = setTimeout(resolve, COLLECT_TIMEOUT_MS)));
          return Promise.race([done, timeout])
            .catch(() => undefined)
            .finally(() => clearTimeout(timer));
        }),
      );
      const combined = new Map<string, [Record<string, string>, number]>();
      for (const [labels, value] of values) {
        const key = JSON.stringify(labelNames.map((label) => labels[label] ?? ''));
        const earlier = combined.get(key)?.[1];
        combined.set(key, [labels, earlier === undefined ? value : aggregator === 'min' ? Math.min(earlier, value) : earlier + value]);
      }
      this.reset();
      for (const [labels, value] of combined.values()) this.set(labels, value);
    },
  });
  return (collector: Collector): (() => void) => {
    collectors.add(collector);
    return () => void collectors.delete(collector);
  };
}

const onEventConsumerLag = scrapedGauge('linepack_event_consumer_lag', 'Domain events in a stream not yet delivered to a consumer group (XINFO GROUPS lag)', [
  'stream',
  'group',
]);
const onEventConsumerPending = scrapedGauge('linepack_event_consumer_pending', 'Domain events delivered to a consumer group but not yet acknowledged', [
  'stream',
  'group',
]);
const onOutboxPending = scrapedGauge(
  'linepack_outbox_pending_events',
  'Documents whose domain events wait in their outbox for the relay, by the stream they go to',
  ['stream'],
);
// Across the gateway's workers (gateway/src/cluster.ts) a client is up only when every worker's is: a sum would read 2.
const onRedisUp = scrapedGauge('linepack_redis_up', '1 when this Redis client is connected and ready, else 0', ['client'], 'min');

/**
 * Consumer-group lag and pending entries of the streams a consumer reads. `streams` are producers' base streams
 * (lib/events/outbox.ts): each is reported under its own name, summed over it and its tenant streams.
 */
export function watchConsumerGroup(redis: RedisClient, streams: readonly string[], group: string): () => void {
  const read = async () => {
    const out: { stream: string; lag: number | null; pending: number }[] = [];
    for (const stream of streams) {
      // One pipelined XINFO per tenant stream: one round trip however many tenants there are.
      const members = await producerStreams(redis, stream).catch(() => [stream]);
      const replies = await commandPerKey(redis, members, (p, member) => p.xinfo('GROUPS', member)).catch(() => []);
      let lag: number | null = null;
      let pending = 0;
      let found = false;
      /** Tenant streams the group is not on yet: a tenant's first events, before the consumers found its stream. */
      const notJoined: string[] = [];
      for (const [i, [err, groups]] of replies.entries()) {
        const info = err ? null : consumerGroupInfo(groups, group);
        if (!info) {
          if (!err) notJoined.push(members[i]!);
          continue;
        }
        found = true;
        // The sum is of the streams whose lag Redis can tell.
        if (info.lag !== null) lag = (lag ?? 0) + info.lag;
        pending += info.pending;
      }
      // The group will read those from their start (consumer.ts): all they hold is behind it.
      if (found && notJoined.length > 0) {
        const lengths = await commandPerKey(redis, notJoined, (p, member) => p.xlen(member)).catch(() => []);
        for (const [err, length] of lengths) if (!err) lag = (lag ?? 0) + (length as number);
      }
      if (found) out.push({ stream, lag, pending });
    }
    return out;
  };
  // Both gauges are collected by the same scrape: they share one round of XINFO calls.
  let reading: ReturnType<typeof read> | null = null;
  const readOnce = () =>
    (reading ??= read().finally(() => {
      reading = null;
    }));
  const stopLag = onEventConsumerLag(async (set) => {
    for (const { stream, lag } of await readOnce()) if (lag !== null) set({ stream, group }, lag);
  });
  const stopPending = onEventConsumerPending(async (set) => {
    for (const { stream, pending } of await readOnce()) set({ stream, group }, pending);
  });
  return () => {
    stopLag();
    stopPending();
  };
}

/** `countPending` should bound its own time (e.g. maxTimeMS); the scrape leaves it out after 1.5 s anyway. */
export function watchOutbox(stream: string, countPending: () => Promise<number>): () => void {
  return onOutboxPending(async (set) => set({ stream }, await countPending()));
}

export function watchRedis(redis: RedisClient, client: string): () => void {
  return watchRedisReady(client, () => redis.status === 'ready');
}

/** A Redis client's health as its owner tells it (a client on a worker thread, which reports to the loop). */
export function watchRedisReady(client: string, ready: () => boolean): () => void {
  return onRedisUp((set) => set({ client }, ready() ? 1 : 0));
}

const mongoPoolConnections = new Gauge({
  name: 'linepack_mongodb_pool_connections',
  help: "Connections in the MongoDB driver's pools, in use by an operation or available",
  labelNames: ['linepack_service', 'state'] as const,
  registers: [metricsRegistry],
});

/** Follows the driver's connection-pool events (CMAP), so the gauge is exact without reaching into the driver. */
export function watchMongoPool(client: MongoClient, service: string): () => void {
  const checkedOut = new Set<string>();
  const key = (e: { address: string; connectionId: number | '<monitor>' }) => `${e.address}#${e.connectionId}`;
  const created = () => mongoPoolConnections.inc({ linepack_service: service, state: 'available' });
  const out = (e: { address: string; connectionId: number | '<monitor>' }) => {
    checkedOut.add(key(e));
    mongoPoolConnections.inc({ linepack_service: service, state: 'in_use' });
    mongoPoolConnections.dec({ linepack_service: service, state: 'available' });
  };
  const back = (e: { address: string; connectionId: number | '<monitor>' }) => {
    if (!checkedOut.delete(key(e))) return;
    mongoPoolConnections.dec({ linepack_service: service, state: 'in_use' });
    mongoPoolConnections.inc({ linepack_service: service, state: 'available' });
  };
  // A pool being cleared closes connections that may still be checked out.
  const closed = (e: { address: string; connectionId: number | '<monitor>' }) =>
    checkedOut.delete(key(e))
      ? mongoPoolConnections.dec({ linepack_service: service, state: 'in_use' })
      : mongoPoolConnections.dec({ linepack_service: service, state: 'available' });
  mongoPoolConnections.inc({ linepack_service: service, state: 'in_use' }, 0);
  mongoPoolConnections.inc({ linepack_service: service, state: 'available' }, 0);
  client.on('connectionCreated', created).on('connectionCheckedOut', out).on('connectionCheckedIn', back).on('connectionClosed', closed);
  return () => {
    client.off('connectionCreated', created).off('connectionCheckedOut', out).off('connectionCheckedIn', back).off('connectionClosed', closed);
  };
}

/**
 * Operation names are chosen by clients, so only trusted operations (the project's own clients' documents,
 * lib/generated/trusted-documents.ts) are labels; everything else shares one: a client inventing names cannot add
 * series, nor hide a trusted operation behind them.
 */
export const UNREGISTERED_OPERATION = 'unregistered';
const trustedOperationNames = new Set(Object.values(trustedDocuments).flatMap(({ name }) => (name ? [name] : [])));

/**
 * The label of an operation a subgraph runs. The gateway names the operations it plans after the client's,
 * `<operation>__<subgraph>__<n>` (@apollo/gateway's query planner): the client's part is the label when it names a
 * trusted operation. (A subgraph never sees the client's document, so it trusts the name; the gateway, which does,
 * labels by the document itself.)
 */
export function subgraphOperationLabel(name: string | null | undefined): string {
  if (name === null || name === undefined || name === '') return UNREGISTERED_OPERATION;
  const clientName = name.replace(/__[A-Za-z0-9_]+__\d+$/, '');
  return trustedOperationNames.has(clientName) ? clientName : UNREGISTERED_OPERATION;
}

/** What the metrics middleware needs of a request's GraphQL answer: the operation's label and the errors it carried. */
export interface RequestMetrics {
  operation?: string;
  /** Set when the answer was a GraphQL result (not a refusal written before parsing): its errors, possibly none. */
  errors?: { code: string; subgraph: string }[];
}

export function requestMetricsOf(res: Response): RequestMetrics {
  return ((res.locals['metrics'] as RequestMetrics | undefined) ??= {});
}

/** The error codes of a GraphQL-shaped body (lib/errors.ts graphqlErrorBody), as labels. */
function errorsOfBody(body: unknown): { code: string; subgraph: string }[] | undefined {
  const errors = (body as { errors?: unknown } | null)?.errors;
  if (!Array.isArray(errors)) return undefined;
  return errors.map((error) => ({ code: errorCodeLabel((error as { extensions?: { code?: unknown } } | null)?.extensions?.code), subgraph: 'none' }));
}

function outcomeOf(status: number, errors: readonly { code: string }[]): RequestOutcome {
  if (status >= 500 || errors.some(({ code }) => serverErrorCodes.has(code))) return 'server_error';
  return errors.length > 0 || status >= 400 ? 'client_error' : 'ok';
}

/**
 * Times every request to /graphql, refused ones (401, 429) included, and counts the errors of its answer; the
 * operation is "unknown" until the document was parsed and its operation chosen.
 */
export function graphqlMetricsMiddleware(service: string) {
  for (const outcome of requestOutcomes) graphqlRequests.inc({ linepack_service: service, outcome }, 0);
  return (req: Request, res: Response, next: NextFunction): void => {
    // A CORS preflight or a browser opening /graphql is not a GraphQL request.
    if (req.method === 'OPTIONS') return next();
    // Read now, in the request's own context (its server span is active here; not necessarily when 'close' comes).
    const traceId = sampledTraceId();
    // (prom-client types an exemplar's labels as the metric's own; they are any labels.)
    const exemplar: Record<string, string> = traceId ? { trace_id: traceId } : {};
    const end = graphqlRequestDuration.startTimer({ linepack_service: service }, exemplar);
    graphqlRequestsInFlight.inc({ linepack_service: service });
    const metrics = requestMetricsOf(res);
    // A refusal written before the GraphQL server (authentication, rate limits, a malformed body) is a JSON body of
    // its own: its errors are read as it is sent. The GraphQL server's answers are read by operationNamePlugin.
    const json = res.json.bind(res);
    res.json = (body: unknown) => {
      metrics.errors ??= errorsOfBody(body);
      return json(body);
    };
    // 'close' comes for every request; one whose client went away before the answer counts as 499 (nginx's name).
    res.once('close', () => {
      graphqlRequestsInFlight.dec({ linepack_service: service });
      const status = res.writableFinished ? res.statusCode : 499;
      const errors = metrics.errors ?? [];
      for (const { code, subgraph } of errors) graphqlRequestErrors.inc({ linepack_service: service, code, subgraph });
      const outcome = outcomeOf(status, errors);
      graphqlRequests.inc({ linepack_service: service, outcome });
      end({ operation: metrics.operation ?? 'unknown', status: String(status), outcome });
    });
    next();
  };
}

/** The subgraph an error came from, as @apollo/gateway marks it (extensions.serviceName), when it is one of ours. */
function subgraphOfError(extensions: Record<string, unknown> | undefined, subgraphs: ReadonlySet<string>): string {
  const name = extensions?.['serviceName'];
  return typeof name === 'string' && subgraphs.has(name) ? name : 'none';
}

/**
 * An Apollo Server plugin that names the operation of each request and lists the errors of its answer for
 * graphqlMetricsMiddleware. `label` names the operation (subgraphOperationLabel unless given); `subgraphs` are the
 * names an error's subgraph label may take (the gateway's subgraphs; none in a subgraph).
 */
export function operationNamePlugin<C>(
  metricsOf: (context: C) => RequestMetrics,
  options: {
    label?: (request: { operationName: string | null; document: DocumentNode; source: string }) => string;
    subgraphs?: ReadonlySet<string>;
  } = {},
) {
  const label = options.label ?? (({ operationName }) => subgraphOperationLabel(operationName));
  const subgraphs = options.subgraphs ?? new Set<string>();
  return {
    async requestDidStart() {
      return {
        async didResolveOperation({
          contextValue,
          operationName,
          document,
          source,
        }: {
          contextValue: C;
          operationName?: string | null;
          document: DocumentNode;
          source: string;
        }) {
          metricsOf(contextValue).operation = label({ operationName: operationName ?? null, document, source });
        },
        async willSendResponse({
          contextValue,
          response,
        }: {
          contextValue: C;
          response: { body: { kind: string; singleResult?: { errors?: readonly GraphQLFormattedError[] } } };
        }) {
          const errors = response.body.kind === 'single' ? (response.body.singleResult?.errors ?? []) : [];
          metricsOf(contextValue).errors = errors.map(({ extensions }) => ({
            code: errorCodeLabel(extensions?.['code']),
            subgraph: subgraphOfError(extensions, subgraphs),
          }));
        },
      };
    },
  };
}

/**
 * startMetricsServer for a process entry: a metrics port that cannot be opened (taken by another process on the
 * host) is logged and the service runs on without /metrics — serving requests matters more than being watched.
 */
export async function startMetricsServerOrWarn(
  options: Parameters<typeof startMetricsServer>[0],
  warn: (message: string) => void,
): Promise<MetricsServer | null> {
  try {
    return await startMetricsServer(options);
  } catch (err) {
    warn(`metrics not served: cannot listen on ${options.host}:${options.port} (${(err as Error).message}); set METRICS_PORT`);
    return null;
  }
}

let defaultMetricsFor: string | null = null;

/**
 * Records the process's own metrics (CPU, memory, event loop), labelled with `linepack_service`, once per process. The metrics
 * server does it; a gateway worker (gateway/src/cluster.ts), which serves none, does it itself.
 */
export function collectProcessMetrics(service: string): void {
  if (defaultMetricsFor !== null) return;
  collectDefaultMetrics({ register: metricsRegistry, labels: { linepack_service: service } });
  defaultMetricsFor = service;
}

export interface MetricsServer {
  port: number;
  url: string;
  stop(): Promise<void>;
}

/** The values of one or more registries, as registry.getMetricsAsJSON() gives them: what /metrics renders. */
export type MetricsSnapshot = MetricObjectWithValues<MetricValue<string>>[];

/** The two text formats Prometheus scrapes: its own (no exemplars) and OpenMetrics 1.0.0 (with them). */
export type MetricsFormat = 'prometheus' | 'openmetrics';

export const metricsContentTypes: Record<MetricsFormat, RegistryContentType> = {
  prometheus: Registry.PROMETHEUS_CONTENT_TYPE,
  openmetrics: Registry.OPENMETRICS_CONTENT_TYPE,
};

/**
 * The format a scraper's Accept header asks for, decided as the Prometheus Go client decides it
 * (expfmt.NegotiateIncludingOpenMetrics): the media ranges by q-value, the first that is OpenMetrics (version 1.0.0,
 * 0.0.1 or unversioned) or Prometheus text (0.0.4 or unversioned) wins, and Prometheus text when none is. Prometheus
 * offers OpenMetrics first by default (scrape_protocols); curl, and anything that sends no Accept header, gets text.
 * (negotiator, Express's, cannot do this: it matches a range's parameters exactly, and Prometheus adds `escaping`.)
 */
export function negotiateMetricsFormat(accept: string | undefined): MetricsFormat {
  const ranges = (accept ?? '')
    .split(',')
    .map((range, index) => {
      const [type = '', ...parameters] = range.split(';').map((part) => part.trim().toLowerCase());
      const params = new Map(parameters.map((p) => [p.split('=')[0]!.trim(), (p.split('=')[1] ?? '').trim().replace(/^"(.*)"$/, '$1')]));
      const q = params.has('q') ? Number(params.get('q')) : 1;
      return { type, version: params.get('version') ?? '', q: Number.isFinite(q) ? q : 0, index };
    })
    .filter(({ q }) => q > 0)
    .sort((a, b) => b.q - a.q || a.index - b.index);
  for (const { type, version } of ranges) {
    if (type === 'text/plain' && (version === '0.0.4' || version === '')) return 'prometheus';
    if (type === 'application/openmetrics-text' && ['1.0.0', '0.0.1', ''].includes(version)) return 'openmetrics';
  }
  return 'prometheus';
}

/**
 * A snapshot in either format. The same series in both: OpenMetrics names a counter's family without `_total` and
 * its samples with it, so every Linepack counter ends in `_total` and reads the same in a query whichever format
 * Prometheus scraped; exemplars are written in OpenMetrics only.
 */
export function renderMetrics(snapshot: MetricsSnapshot, format: MetricsFormat): Promise<string> {
  const registry = new Registry<RegistryContentType>();
  registry.setContentType(metricsContentTypes[format]);
  for (const metric of snapshot) {
    // (prom-client appends _total to an OpenMetrics counter's samples; the family is named without it.)
    const family = format === 'openmetrics' && String(metric.type) === 'counter' ? { ...metric, name: metric.name.replace(/_total$/, '') } : metric;
    registry.registerMetric({ ...family, get: () => family } as unknown as Metric);
  }
  return registry.metrics();
}

type Exemplar = { labelSet: Record<string, string | number>; value: number; timestamp: number };

/**
 * Several processes' snapshots as one (a node:cluster primary and its workers, gateway/src/cluster.ts): prom-client's
 * aggregation (counters and histograms summed, gauges by each metric's aggregator), and each histogram bucket's
 * exemplar the newest any process had for it — prom-client's aggregation drops exemplars.
 */
export async function aggregateMetrics(snapshots: MetricsSnapshot[]): Promise<MetricsSnapshot> {
  const aggregated = await AggregatorRegistry.aggregate(snapshots).getMetricsAsJSON();
  const sampleKey = (metric: string, value: MetricValue<string> & { metricName?: string }) =>
    JSON.stringify([metric, value.metricName ?? '', Object.entries(value.labels).sort(([a], [b]) => a.localeCompare(b))]);
  const newest = new Map<string, Exemplar>();
  for (const snapshot of snapshots) {
    for (const metric of snapshot) {
      for (const value of metric.values as (MetricValue<string> & { exemplar?: Exemplar | null })[]) {
        if (!value.exemplar) continue;
        const key = sampleKey(metric.name, value);
        if ((newest.get(key)?.timestamp ?? -Infinity) < value.exemplar.timestamp) newest.set(key, value.exemplar);
      }
    }
  }
  if (newest.size === 0) return aggregated;
  return aggregated.map((metric) => ({
    ...metric,
    values: metric.values.map((value) => {
      const exemplar = newest.get(sampleKey(metric.name, value));
      return exemplar ? { ...value, exemplar } : value;
    }),
  }));
}

/**
 * Serves GET /metrics on its own port, for Prometheus inside the cluster; the public port never answers it. The answer
 * is OpenMetrics when the scraper asks for it (Prometheus does; exemplars need it) and Prometheus text otherwise.
 * `service` (as `linepack_service`) labels the process's own metrics (CPU, memory, event loop). `snapshot` is what
 * /metrics shows: this process's registry unless given — a node:cluster primary gives its workers' registries
 * aggregated with its own.
 */
export async function startMetricsServer(options: {
  port: number;
  host: string;
  service: string;
  snapshot?: () => Promise<MetricsSnapshot>;
}): Promise<MetricsServer> {
  collectProcessMetrics(options.service);
  const snapshot = options.snapshot ?? (() => metricsRegistry.getMetricsAsJSON());
  const server = http.createServer((req, res) => {
    if (req.method !== 'GET' || (req.url ?? '').split('?')[0] !== '/metrics') {
      res.writeHead(404, { 'content-type': 'text/plain' }).end('not found: metrics are at /metrics\n');
      return;
    }
    const format = negotiateMetricsFormat(req.headers.accept);
    snapshot()
      .then((values) => renderMetrics(values, format))
      .then(
        (body) => res.writeHead(200, { 'content-type': metricsContentTypes[format], vary: 'Accept' }).end(body),
        (err: Error) => res.writeHead(500, { 'content-type': 'text/plain' }).end(`metrics collection failed: ${err.message}\n`),
      );
  });
  const port = await listen(server, options.port, options.host);
  const host = options.host === '0.0.0.0' ? '127.0.0.1' : options.host;
  return { port, url: `http://${host}:${port}/metrics`, stop: () => closeServer(server) };
}
