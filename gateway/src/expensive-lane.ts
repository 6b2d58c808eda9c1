import type { ApolloGateway } from '@apollo/gateway';
import type { ApolloServerOptionsWithGateway } from '@apollo/server';
import type { Response } from 'express';
import { GraphQLError, Source, type GraphQLFormattedError } from 'graphql';
import type { Logger } from '@linepack/lib/logger';
import { Counter } from 'prom-client';
import { metricsRegistry } from '@linepack/lib/metrics';
import { replayMetricCalls, type MetricCall } from '@linepack/lib/thread-metrics';
import { OnDemandThread, threadEntry } from '@linepack/lib/threads';
import { traceCarrier } from '@linepack/lib/tracing';
import type { SubgraphName } from '@linepack/schema/subgraphs';
import type { GatewayContext } from './context';
import type { VerifiedCredential } from './credentials';
import { countUnavailable } from './subgraph-unavailable';

/**
 * The expensive-operation lane (issue 31). An operation the gateway prices as expensive (expensive-operations.ts) is
 * planned, fetched, merged and serialised on a thread of its own — a second @apollo/gateway over the same supergraph
 * and subgraphs — instead of on the event loop that serves every other request.
 * Merging a 120,000-node federated answer held that loop for about a second, during which no other tenant's request
 * (not even one answered from memory) moved; no concurrency limit removes that, only another thread. The thread keeps
 * the OS's default priority: the operating system already gives the loop's short bursts of work the CPU first when it
 * wakes, and at a lower priority (nice 10) the lane answered a fifth as many expensive queries on a busy machine without
 * making the other tenant's reads any faster (bench:fairness).
 *
 * Everything before execution stays on the gateway's loop, unchanged: authentication, rate limits, parsing,
 * validation, scopes, cost and the per-tenant admission of expensive operations. The lane gets what execution needs —
 * the operation, its variables, the caller's identity, the request's deadline and write counter, the trace context —
 * and answers with the result: its data already serialised (spliced into the HTTP answer as it is, so the gateway's
 * loop never parses or serialises it), its errors (formatted on this side, as every other error is), and what the
 * request's plugins read from the context (subgraph calls, refusals, unavailability), the cache hints of the subgraphs'
 * answers and the metrics it observed (recorded here, so /metrics counts every subgraph call once).
 *
 * The lane starts with the first expensive operation. If it cannot start, expensive operations run on the gateway's
 * loop as before (logged, tried again a minute later). If it dies while running operations, each is answered with an
 * error (a mutation may have been applied) and the next expensive operation starts a new lane.
 */

/** What Apollo Server asks of a gateway, and what its executor is given and answers. */
export type GatewayInterface = ApolloServerOptionsWithGateway<GatewayContext>['gateway'];
export type GatewayExecutor = NonNullable<Awaited<ReturnType<GatewayInterface['load']>>['executor']>;
export type GatewayGraphQLRequestContext = Parameters<GatewayExecutor>[0];
type GatewayExecutionResult = Awaited<ReturnType<GatewayExecutor>>;

/** What the lane needs to build its own gateway (structured-cloned into the thread). */
export interface LaneConfig {
  supergraphSdl: string;
  subgraphUrls: Partial<Record<SubgraphName, string>>;
  internalTokenPrivateKey: string;
  deduplicateInflightQueries: boolean;
  logLevel: string;
  /** The gateway's tracing service name (lib/tracing.ts), so the lane's spans are told as the gateway's; null: not traced. */
  tracingServiceName: string | null;
}

export interface LaneJob {
  type: 'execute';
  id: number;
  source: string;
  operationName: string | null;
  queryHash: string;
  variables: Record<string, unknown>;
  context: {
    credential: VerifiedCredential;
    requestId: string;
    clientAddress: string;
    deadlineAt: number;
    timeoutMs: number;
    /** The tenant's write counter as the request read it (undefined: the lane's queries are not de-duplicated). */
    writeEpoch: string | undefined;
  };
  /** The W3C trace context of the request's span, so the lane's spans (and the subgraphs') join its trace. */
  traceCarrier: Record<string, string>;
}

export type LaneMessageToLane = LaneJob | { type: 'abort'; id: number } | { type: 'stop' };

export interface LaneResult {
  type: 'result';
  id: number;
  /** The result's data as UTF-8 JSON (transferred to the gateway's thread), or null when it is null; undefined when the result has none. */
  data: Uint8Array | null | undefined;
  errors: GraphQLFormattedError[] | undefined;
  extensions: Record<string, unknown> | undefined;
  subgraphFetches: number;
  subgraphRefusalStatus: number | undefined;
  subgraphRefusals: number;
  unavailableFetches: number;
  /** Cache hints of the subgraphs' answers (RemoteGraphQLDataSource restricts the request's cache policy with them). */
  cacheHints: { maxAge?: number; scope?: unknown }[];
  metrics: MetricCall[];
  /** The request's deadline passed while the lane ran it (its fetches were cut): the result means nothing. */
  deadlinePassed: boolean;
}

export type LaneMessageFromLane = LaneResult | { type: 'ready' } | { type: 'metrics'; metrics: MetricCall[] };

/**
 * The HTTP response of a request, kept on its context (Apollo Server hands plugins and the executor a shallow copy of
 * the context, so the response is reached through it, not by the context's identity).
 */
export interface LaneResponse {
  res: Response;
}

/**
 * Wraps the gateway's context factory: each context keeps its request's response, so an answer the lane serialised is
 * written into it without being parsed and serialised again on the gateway's loop.
 */
export function withLaneAnswers<A extends { res: Response }, C extends object>(
  factory: (args: A) => Promise<C>,
): (args: A) => Promise<C & { laneResponse: LaneResponse }> {
  return async (args) => Object.assign(await factory(args), { laneResponse: { res: args.res } });
}

/**
 * Apollo Server serialises the lane's result with a placeholder string where the data goes; the placeholder (a quoted
 * JSON string, unique per answer) is replaced by the lane's JSON bytes as the body is sent: the body goes out as the
 * bytes around the placeholder and the lane's bytes, which never become a string on this thread nor are copied.
 * Without a response to write to (a context made elsewhere), the data is parsed here after all.
 */
function laneData(laneResponse: LaneResponse | undefined, json: Uint8Array): unknown {
  const bytes = Buffer.from(json.buffer, json.byteOffset, json.byteLength);
  if (!laneResponse) return JSON.parse(bytes.toString('utf8'));
  const placeholder = `linepack-lane-data-${process.pid}-${++placeholders}-${Math.random().toString(36).slice(2)}`;
  const { res } = laneResponse;
  const send = res.send.bind(res);
  res.send = (body?: unknown) => {
    res.send = send;
    if (typeof body === 'string') {
      const quoted = `"${placeholder}"`;
      const at = body.indexOf(quoted);
      // Absent when a plugin replaced the result (a deadline's 504): the body is sent as it is.
      if (at !== -1) {
        // Written as three pieces rather than one concatenated copy: a copy of a 10 MB answer held this loop for up to
        // 60 ms (allocation and the collection it triggered; bench:fairness --cpu-prof), every other tenant's request
        // waiting behind it. Express's send adds nothing this needs: Apollo Server set the Content-Type, ETags are off
        // (server.ts), and the compression middleware wraps write and end alike.
        const head = Buffer.from(body.slice(0, at));
        const tail = Buffer.from(body.slice(at + quoted.length));
        res.setHeader('Content-Length', head.length + bytes.length + tail.length);
        res.write(head);
        res.write(bytes);
        res.end(tail);
        return res;
      }
    }
    return send(body);
  };
  return placeholder;
}
let placeholders = 0;

/** The lane's formatted errors as GraphQLErrors again, with their locations in the request's document. */
function rehydrated(errors: readonly GraphQLFormattedError[], source: string): GraphQLError[] {
  const lines = source.split('\n');
  const positionOf = ({ line, column }: { line: number; column: number }) => {
    let offset = 0;
    for (let i = 0; i < line - 1 && i < lines.length; i++) offset += lines[i]!.length + 1;
    return offset + column - 1;
  };
  return errors.map(
    (e) =>
      new GraphQLError(e.message, {
        ...(e.path ? { path: e.path } : {}),
        ...(e.extensions ? { extensions: e.extensions } : {}),
        ...(e.locations?.length ? { source: new Source(source), positions: e.locations.map(positionOf) } : {}),
      }),
  );
}

interface PendingJob {
  /** With the result, or 'deadline' when the lane stopped the operation at its deadline. */
  resolve: (result: GatewayExecutionResult | 'deadline') => void;
  requestContext: GatewayGraphQLRequestContext;
  mutation: boolean;
}

export class ExpensiveLane {
  private readonly pending = new Map<number, PendingJob>();
  private nextId = 0;
  private readonly thread: OnDemandThread<LaneMessageFromLane>;

  constructor(config: LaneConfig, logger: Logger) {
    this.thread = new OnDemandThread<LaneMessageFromLane>({
      what: 'the expensive-operation lane',
      instead: 'expensive operations run on the main event loop',
      next: 'the next expensive operation starts a new one',
      // The gateway's bundle itself when bundled (main.ts dispatches), its own file from source.
      entry: () => threadEntry(__filename, 'expensive-lane-worker.ts'),
      workerData: { config },
      logger,
      message: (message) => {
        if (message.type === 'metrics') replayMetricCalls(message.metrics);
        else if (message.type === 'result') this.settle(message);
      },
      exited: () => this.abandonAll(),
    });
  }

  /**
   * A gateway whose executor runs the operations `runsInLane` picks on this lane and every other one as before. Apollo
   * Server sees one gateway; the lane's own @apollo/gateway plans and executes over the same supergraph.
   */
  gateway(gateway: ApolloGateway, runsInLane: (context: GatewayContext) => boolean): GatewayInterface {
    return {
      onSchemaLoadOrUpdate: (callback) => gateway.onSchemaLoadOrUpdate(callback),
      stop: async () => {
        await this.stop();
        await gateway.stop();
      },
      load: async (options) => {
        const loaded = await gateway.load(options);
        const local = loaded.executor;
        if (!local) return loaded;
        const executor: GatewayExecutor = (requestContext) =>
          runsInLane(requestContext.context as GatewayContext) ? this.execute(requestContext, local) : local(requestContext);
        return { ...loaded, executor };
      },
    };
  }

  private async execute(requestContext: GatewayGraphQLRequestContext, local: GatewayExecutor): Promise<GatewayExecutionResult> {
    const context = requestContext.context as GatewayContext;
    const { signal, at, timeoutMs } = context.deadline;
    // The request's deadline passed or its client left (also while the lane was starting): it is answered now (deadline.ts
    // answers 504; a client that left hears nothing), and the lane stops the fetches it made for it.
    const ended = new Promise<'ended'>((resolve) => {
      if (signal.aborted) resolve('ended');
      else signal.addEventListener('abort', () => resolve('ended'), { once: true });
    });
    // Replaced by the deadline's 504 (deadline.ts), or read by nobody (the client left).
    const abandoned = (): GatewayExecutionResult => ({
      errors: [new GraphQLError('the request ended before its expensive operation finished', { extensions: { code: 'TIMEOUT' } })],
    });
    const worker = await Promise.race([this.thread.ready(), ended]);
    if (worker === 'ended') return abandoned();
    if (!worker) {
      laneRuns.inc({ on: 'event_loop' });
      return local(requestContext);
    }
    laneRuns.inc({ on: 'lane' });
    const mutation = requestContext.operation.operation !== 'query';
    // Read here, where the request's admission left it: the lane asks no Redis (a mutation is never de-duplicated).
    const writeEpoch = mutation ? undefined : await context.writeEpoch?.();
    const id = ++this.nextId;
    const job: LaneJob = {
      type: 'execute',
      id,
      source: requestContext.source,
      operationName: requestContext.operationName,
      queryHash: requestContext.queryHash,
      variables: requestContext.request.variables ?? {},
      context: {
        credential: context.credential,
        requestId: context.requestId,
        clientAddress: context.clientAddress,
        deadlineAt: at,
        timeoutMs,
        writeEpoch,
      },
      traceCarrier: traceCarrier(),
    };
    const answered = new Promise<GatewayExecutionResult | 'deadline'>((resolve) => this.pending.set(id, { resolve, requestContext, mutation }));
    worker.postMessage(job satisfies LaneMessageToLane);
    const result = await Promise.race([answered, ended]);
    // The lane stopped at the request's deadline, which this thread's timer is about to see too: wait for it, so the
    // request is answered as every request cut by its deadline is.
    if (result === 'deadline') {
      await ended;
      return abandoned();
    }
    if (result !== 'ended') return result;
    if (this.pending.delete(id)) this.thread.running?.postMessage({ type: 'abort', id } satisfies LaneMessageToLane);
    return abandoned();
  }

  /** The lane's thread stopped: what it was running is answered with an error (a mutation may have been applied). */
  private abandonAll(): void {
    for (const [id, job] of this.pending) {
      this.pending.delete(id);
      job.resolve({
        errors: [
          new GraphQLError(
            job.mutation
              ? 'the gateway stopped running this expensive mutation before it answered; it may have been applied, and retrying it with the same idempotency key or version is safe'
              : 'the gateway stopped running this expensive operation before it answered; retry it',
            { extensions: { code: 'INTERNAL_SERVER_ERROR' } },
          ),
        ],
      });
    }
  }

  private settle(result: LaneResult): void {
    replayMetricCalls(result.metrics);
    const job = this.pending.get(result.id);
    if (!job) return; // its request ended (deadline, client gone) before the lane answered
    this.pending.delete(result.id);
    if (result.deadlinePassed) return job.resolve('deadline');
    const { requestContext } = job;
    const context = requestContext.context as GatewayContext;
    context.subgraphFetches = (context.subgraphFetches ?? 0) + result.subgraphFetches;
    context.subgraphRefusals = (context.subgraphRefusals ?? 0) + result.subgraphRefusals;
    if (result.subgraphRefusalStatus !== undefined) context.subgraphRefusalStatus ??= result.subgraphRefusalStatus;
    if (result.unavailableFetches > 0) countUnavailable(context, result.unavailableFetches);
    const policy = requestContext.overallCachePolicy as { restrict?: (hint: unknown) => void } | undefined;
    for (const hint of result.cacheHints) policy?.restrict?.(hint);
    const output: GatewayExecutionResult = {};
    if (result.errors) output.errors = rehydrated(result.errors, requestContext.source);
    if (result.data === null) output.data = null;
    else if (result.data !== undefined) output.data = laneData(context.laneResponse, result.data) as Record<string, unknown>;
    if (result.extensions) output.extensions = result.extensions;
    job.resolve(output);
  }

  /** Stops the lane (the gateway is stopping): operations still running are answered as if it had died. */
  async stop(): Promise<void> {
    // The lane flushes its spans (at most 1 s) and exits; one that does not is terminated.
    await this.thread.stop({ type: 'stop' } satisfies LaneMessageToLane, 3_000);
  }
}

const laneRuns = new Counter({
  name: 'linepack_gateway_expensive_operations_executed_total',
  help: "Expensive operations executed, by where: on the expensive-operation lane's thread, or on the gateway's event loop (the lane could not start)",
  labelNames: ['on'] as const,
  registers: [metricsRegistry],
});
