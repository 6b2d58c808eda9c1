import type { MessagePort } from 'node:worker_threads';
import { getOperationAST, parse, type GraphQLError, type GraphQLFormattedError } from 'graphql';
import { createLogger } from '@linepack/lib/logger';
import type { RequestMetrics } from '@linepack/lib/metrics';
import { recordMetricCalls } from '@linepack/lib/thread-metrics';
import { activeTracing, withTraceCarrier } from '@linepack/lib/tracing';
import type { GatewayContext } from './context';
import { ClientWentAway, DeadlineExceeded, startDeadline } from './deadline';
import type { GatewayGraphQLRequestContext, LaneConfig, LaneJob, LaneMessageFromLane, LaneMessageToLane, LaneResult } from './expensive-lane';
import { IdentityTokenCache } from './identity-tokens';
import { createSupergraphGateway } from './supergraph-gateway';
import { unavailableFetchesOf } from './subgraph-unavailable';

/**
 * The lane's side of expensive-lane.ts: its own @apollo/gateway over the same supergraph and subgraphs, executing the
 * operations the gateway's loop sends it, one message each, as many at once as the gateway admits (its limits on
 * expensive operations hold here because they are taken there).
 */
export async function runLane(config: LaneConfig, port: MessagePort): Promise<void> {
  const logger = createLogger('gateway', config.logLevel).child({ lane: 'expensive' });
  const post = (message: LaneMessageFromLane) => port.postMessage(message);
  // Every metric this thread touches is recorded by the gateway's thread instead (its registry is the one scraped).
  const takeMetricCalls = recordMetricCalls();

  const gateway = createSupergraphGateway({
    supergraphSdl: config.supergraphSdl,
    subgraphUrls: config.subgraphUrls,
    identityTokens: new IdentityTokenCache(config.internalTokenPrivateKey),
    deduplicateInflightQueries: config.deduplicateInflightQueries,
    expensiveLane: true,
  });
  const { executor, schema } = await gateway.load();
  if (!executor || !schema) throw new Error('the lane gateway loaded no executor');

  const running = new Map<number, (reason: Error) => void>();
  port.on('message', (message: LaneMessageToLane) => {
    if (message.type === 'execute') void execute(message);
    else if (message.type === 'abort') running.get(message.id)?.(new ClientWentAway('the gateway abandoned the request'));
    else void stop();
  });

  async function execute(job: LaneJob): Promise<void> {
    const { deadline, abort, end } = startDeadline(job.context.timeoutMs, job.context.deadlineAt);
    running.set(job.id, abort);
    const { credential, requestId, clientAddress, writeEpoch } = job.context;
    const context: GatewayContext = {
      credential,
      requestId,
      clientAddress,
      deadline,
      logger: logger.child({ requestId, subject: credential.subject }),
      metrics: {} satisfies RequestMetrics,
      ...(writeEpoch !== undefined ? { writeEpoch: async () => writeEpoch } : {}),
    };
    const cacheHints: LaneResult['cacheHints'] = [];
    let result: LaneResult;
    try {
      const document = parse(job.source);
      const operation = getOperationAST(document, job.operationName);
      if (!operation) throw new Error(`no operation ${job.operationName ?? '(anonymous)'} in the document the gateway sent`);
      const requestContext = {
        request: { query: job.source, variables: job.variables, ...(job.operationName ? { operationName: job.operationName } : {}) },
        logger: context.logger,
        schema,
        schemaHash: 'lane',
        context,
        cache: undefined,
        queryHash: job.queryHash,
        document,
        source: job.source,
        operationName: job.operationName,
        operation,
        metrics: {},
        overallCachePolicy: { restrict: (hint: LaneResult['cacheHints'][number]) => void cacheHints.push(hint), replace: () => undefined },
      } as unknown as GatewayGraphQLRequestContext;
      const executed = await withTraceCarrier(job.traceCarrier, () => executor(requestContext));
      // Cut by its deadline (or abandoned by the gateway): what it answered is nobody's concern, and not an error to log.
      const ended = deadline.signal.aborted;
      result = {
        type: 'result',
        id: job.id,
        data: ended || executed.data === undefined ? undefined : executed.data === null ? null : utf8.encode(JSON.stringify(executed.data)),
        errors: ended ? undefined : executed.errors?.map((e) => formatted(e, context.logger)),
        extensions: executed.extensions,
        ...sideEffects(context),
        cacheHints,
        metrics: takeMetricCalls(),
        deadlinePassed: deadline.signal.reason instanceof DeadlineExceeded,
      };
    } catch (err) {
      if (!deadline.signal.aborted) context.logger.error({ err }, 'the expensive-operation lane failed to execute an operation');
      result = {
        type: 'result',
        id: job.id,
        data: undefined,
        errors: [{ message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' } }],
        extensions: undefined,
        ...sideEffects(context),
        cacheHints,
        metrics: takeMetricCalls(),
        deadlinePassed: deadline.signal.reason instanceof DeadlineExceeded,
      };
    } finally {
      running.delete(job.id);
      end();
    }
    // The data's bytes move to the gateway's thread (transferred, not copied): a 120,000-node answer copied as a string
    // was allocated again on the loop that serves every request, and its garbage collections held that loop.
    port.postMessage(result, result.data instanceof Uint8Array ? [result.data.buffer as ArrayBuffer] : []);
  }

  async function stop(): Promise<void> {
    for (const abort of running.values()) abort(new ClientWentAway('the gateway is stopping'));
    await gateway.stop().catch(() => undefined);
    const leftover = takeMetricCalls();
    if (leftover.length > 0) post({ type: 'metrics', metrics: leftover });
    await activeTracing()?.shutdown();
    process.exit(0);
  }

  post({ type: 'ready' });
}

/** Each encode gives a Uint8Array over an ArrayBuffer of its own (never a pooled one), so it can be transferred. */
const utf8 = new TextEncoder();

/** What the request's plugins on the gateway's loop read from its context after execution. */
function sideEffects(context: GatewayContext) {
  return {
    subgraphFetches: context.subgraphFetches ?? 0,
    subgraphRefusalStatus: context.subgraphRefusalStatus,
    subgraphRefusals: context.subgraphRefusals ?? 0,
    unavailableFetches: unavailableFetchesOf(context),
  };
}

/**
 * An error as the client will read it; the gateway's formatError (lib/errors.ts) then treats it as its own. An error
 * without a code is logged here with its stack (which does not cross threads) before the gateway masks it.
 */
function formatted(error: GraphQLError | GraphQLFormattedError, logger: ReturnType<typeof createLogger>): GraphQLFormattedError {
  const json = 'toJSON' in error && typeof error.toJSON === 'function' ? error.toJSON() : (error as GraphQLFormattedError);
  const code = json.extensions?.['code'];
  if (code === undefined || code === 'INTERNAL_SERVER_ERROR') logger.error({ err: error }, 'unexpected error while executing an expensive operation');
  return JSON.parse(JSON.stringify(json)) as GraphQLFormattedError;
}
