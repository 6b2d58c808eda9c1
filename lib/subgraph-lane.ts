import type { MessagePort } from 'node:worker_threads';
import { HeaderMap, type ApolloServer } from '@apollo/server';
import { Counter } from 'prom-client';
import { graphqlErrorBody } from './errors';
import type { Identity } from './identity';
import type { Logger } from './logger';
import { metricsRegistry, type RequestMetrics } from './metrics';
import type { BaseSubgraphContext } from './subgraph-server';
import { recordMetricCalls, replayMetricCalls, type MetricCall } from './thread-metrics';
import { OnDemandThread, type ThreadEntry } from './threads';
import { activeTracing, withTraceCarrier } from './tracing';

/**
 * A subgraph's expensive-request lane (issue 31), the subgraph's half of the gateway's expensive-operation lane
 * (gateway/src/expensive-lane.ts): the subgraph requests the gateway's lane makes — for operations the gateway priced
 * as expensive, a 10,000-item batch or 500 assets' pages of readings — are executed and serialised on a worker
 * thread of the subgraph with its own schema, context and MongoDB client, not on the event loop that answers every
 * other tenant's requests. Answering 500 `_entities` with 120,000 readings held the measurements subgraph's loop up to
 * 639 ms at a time.
 *
 * The gateway's lane marks its fetches with EXPENSIVE_LANE_HEADER. The mark is scheduling only: it never changes what
 * a request may do or see — authentication (the identity token), scopes, the deadline and every resolver are the
 * same — and only requests that carry a valid identity token reach it, so a caller could at most move its own request
 * to the other thread. Authentication, the body's parsing and the request metrics stay on the loop; the thread runs
 * Apollo Server's whole HTTP request pipeline (validation, scopes, execution, error formatting, serialisation) and the
 * loop writes its status, headers and body as they are. The thread starts with the first marked request; if it cannot
 * start, marked requests run on the loop (logged, tried again a minute later).
 */
export const EXPENSIVE_LANE_HEADER = 'x-linepack-lane';
export const EXPENSIVE_LANE = 'expensive';

/** Whether a request asks for the expensive-request lane: the header's exact value, anything else is ignored. */
export function wantsExpensiveLane(header: string | undefined): boolean {
  return header === EXPENSIVE_LANE;
}

export interface LaneRequest {
  type: 'execute';
  id: number;
  /** The parsed JSON body ({ query, variables, operationName }). */
  body: unknown;
  /** The headers Apollo Server reads (content type, accept). */
  headers: [string, string][];
  identity: Identity;
  traceCarrier: Record<string, string>;
}

export interface LaneAnswer {
  type: 'answer';
  id: number;
  status: number;
  headers: [string, string][];
  /** The serialised answer as UTF-8, written as it is (its memory moves from the thread, it is not copied). */
  body: Uint8Array;
  /** What the request's metrics on the loop read (its operation, its errors' codes). */
  requestMetrics: RequestMetrics;
  /** The metric calls its execution made, replayed on the loop's registry. */
  metrics: MetricCall[];
}

export type LaneMessageToThread = LaneRequest | { type: 'stop' };
export type LaneMessageFromThread = LaneAnswer | { type: 'ready' } | { type: 'post'; message: unknown };

/** The loop's side: starts the thread on first use and hands it marked requests. */
export class SubgraphLane {
  private readonly pending = new Map<number, (answer: LaneAnswer) => void>();
  private nextId = 0;
  private readonly thread: OnDemandThread<LaneMessageFromThread>;

  /**
   * `workerData` is what the thread's entry builds its subgraph from; `onMessage` receives what the thread's
   * resolvers send the loop (e.g. "a job was queued").
   */
  constructor(
    private readonly name: string,
    entry: ThreadEntry,
    workerData: unknown,
    logger: Logger,
    onMessage: (message: unknown) => void = () => undefined,
  ) {
    this.thread = new OnDemandThread<LaneMessageFromThread>({
      what: 'the expensive-request lane',
      instead: 'marked requests run on the event loop',
      next: 'the next marked request starts a new one',
      entry: () => entry,
      workerData,
      logger,
      message: (message) => {
        if (message.type === 'post') return onMessage(message.message);
        if (message.type !== 'answer') return;
        this.pending.get(message.id)?.(message);
        this.pending.delete(message.id);
      },
      exited: () => this.abandonAll(),
    });
  }

  /** The thread's answer, or null when the lane cannot run it now (the caller executes it on the loop). */
  async execute(request: Omit<LaneRequest, 'type' | 'id'>): Promise<LaneAnswer | null> {
    const worker = await this.thread.ready();
    if (!worker) {
      laneRequests.inc({ subgraph: this.name, on: 'event_loop' });
      return null;
    }
    laneRequests.inc({ subgraph: this.name, on: 'lane' });
    const id = ++this.nextId;
    const answered = new Promise<LaneAnswer>((resolve) => this.pending.set(id, resolve));
    worker.postMessage({ type: 'execute', id, ...request } satisfies LaneMessageToThread);
    const answer = await answered;
    replayMetricCalls(answer.metrics);
    return answer;
  }

  /** The thread stopped: what it was running may have been applied (a batch), and is said so, as the gateway's lane does. */
  private abandonAll(): void {
    for (const [id, answer] of this.pending) {
      this.pending.delete(id);
      answer({
        type: 'answer',
        id,
        status: 500,
        headers: [['content-type', 'application/json; charset=utf-8']],
        body: jsonBytes(
          graphqlErrorBody(
            'INTERNAL_SERVER_ERROR',
            'the subgraph stopped running this request before it answered; a mutation may have been applied, and retrying it with the same idempotency keys is safe',
          ),
        ),
        requestMetrics: { errors: [{ code: 'INTERNAL_SERVER_ERROR', subgraph: 'none' }] },
        metrics: [],
      });
    }
  }

  /** Stops the thread (the subgraph stops, after answering every request in flight). */
  async stop(): Promise<void> {
    await this.thread.stop({ type: 'stop' } satisfies LaneMessageToThread, 3_000);
  }
}

function jsonBytes(value: unknown): Uint8Array {
  return Buffer.from(JSON.stringify(value));
}

const laneRequests = new Counter({
  name: 'linepack_subgraph_expensive_requests_executed_total',
  help: "Subgraph requests the gateway's expensive-operation lane marked, by where they were executed: on the subgraph's expensive-request lane (a thread of its own), or on its event loop (the lane could not start)",
  labelNames: ['subgraph', 'on'] as const,
  registers: [metricsRegistry],
});

/**
 * The thread's side: executes the requests the loop sends with `apollo` (built as the loop's is) and contexts from
 * `buildContext`. `post` sends a message to the loop's `onMessage`, for the resolvers (passed to the caller's setup).
 */
export async function runSubgraphLane<C extends BaseSubgraphContext>(
  port: MessagePort,
  setup: (post: (message: unknown) => void) => Promise<{
    apollo: ApolloServer<BaseSubgraphContext>;
    buildContext: (base: BaseSubgraphContext) => C | Promise<C>;
    logger: Logger;
    close(): Promise<void>;
  }>,
): Promise<void> {
  // Every metric this thread touches is recorded by the loop's thread instead (its registry is the one scraped).
  const takeMetricCalls = recordMetricCalls();
  const post = (message: LaneMessageFromThread) => port.postMessage(message);
  const { apollo, buildContext, logger, close } = await setup((message) => post({ type: 'post', message }));
  await apollo.start();

  port.on('message', (message: LaneMessageToThread) => {
    if (message.type === 'execute') void execute(message);
    else void stop();
  });

  async function execute(request: LaneRequest): Promise<void> {
    const requestMetrics: RequestMetrics = {};
    const { identity } = request;
    let answer: Omit<LaneAnswer, 'metrics'>;
    try {
      const response = await withTraceCarrier(request.traceCarrier, () =>
        apollo.executeHTTPGraphQLRequest({
          httpGraphQLRequest: { method: 'POST', headers: new HeaderMap(request.headers), search: '', body: request.body },
          context: async () =>
            buildContext({ identity, requestId: identity.requestId, logger: logger.child({ requestId: identity.requestId }), metrics: requestMetrics }),
        }),
      );
      let body: string;
      if (response.body.kind === 'complete') body = response.body.string;
      else {
        body = '';
        for await (const chunk of response.body.asyncIterator) body += chunk;
      }
      answer = { type: 'answer', id: request.id, status: response.status ?? 200, headers: [...response.headers], body: Buffer.from(body), requestMetrics };
    } catch (err) {
      logger.error({ err, requestId: identity.requestId }, 'the expensive-request lane failed to execute a request');
      answer = {
        type: 'answer',
        id: request.id,
        status: 500,
        headers: [['content-type', 'application/json; charset=utf-8']],
        body: jsonBytes(graphqlErrorBody('INTERNAL_SERVER_ERROR', 'Internal server error')),
        requestMetrics: { errors: [{ code: 'INTERNAL_SERVER_ERROR', subgraph: 'none' }] },
      };
    }
    // Encoded here and handed over, not cloned: the loop neither copies nor encodes a 10 MB answer.
    const message: LaneAnswer = { ...answer, metrics: takeMetricCalls() };
    const { buffer } = message.body;
    port.postMessage(message, buffer instanceof ArrayBuffer && buffer.byteLength === message.body.byteLength ? [buffer] : []);
  }

  async function stop(): Promise<void> {
    await apollo.stop().catch(() => undefined);
    await close().catch(() => undefined);
    await activeTracing()?.shutdown();
    process.exit(0);
  }

  post({ type: 'ready' });
}
