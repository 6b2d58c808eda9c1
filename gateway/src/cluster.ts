/**
 * GATEWAY_WORKERS > 1: the gateway as a node:cluster, so one container uses every CPU it has.
 *
 *   primary (this process: no gateway, no tracing)      workers 1…N (each gateway/src/main.ts again, forked)
 *   ├─ holds the public port; hands each new connection  ├─ startTracing, then startGateway(config): the whole gateway,
 *   │  to the next worker (round-robin, Linux default)   │  its rate limits counted in the shared Redis (exact across
 *   ├─ serves METRICS_PORT: every worker's registry      │  workers as across replicas)
 *   │  summed with its own (one /metrics per gateway)    ├─ answers the primary's metrics requests (its registry as JSON)
 *   ├─ replaces a worker that dies (back-off, logged)    └─ SIGTERM (from the primary): drains, stops its gateway (requests
 *   └─ SIGTERM/SIGINT: SIGTERM to every worker, waits       in flight finish), flushes its spans, exits 0; SIGINT
 *      for them (within the shutdown grace), exits; a       (Ctrl-C reaches the whole group) is the primary's to act on
 *      second signal is passed on (drain period ends)
 *
 * A worker that cannot start while the gateway is starting stops the whole gateway (exit 1, or 2 for a configuration
 * error), as the single process would: a restart loop would hide the error. Once serving, a worker that dies is
 * replaced after 1 s, doubling to 30 s while replacements keep dying; a worker that served for a minute resets that.
 */
import cluster, { type Worker } from 'node:cluster';
import { Counter, Gauge } from 'prom-client';
import { SHUTDOWN_GRACE_MS } from '@linepack/lib/http';
import { createLogger, errorSummary } from '@linepack/lib/logger';
import {
  aggregateMetrics,
  collectProcessMetrics,
  metricsRegistry,
  startMetricsServerOrWarn,
  type MetricsServer,
  type MetricsSnapshot,
} from '@linepack/lib/metrics';
import { logProcessFailures, stopOnSignals } from '@linepack/lib/shutdown';
import { GATEWAY_WORKER_ENV, type GatewayProcessConfig } from './config';

/** The first replacement of a dead worker waits this long; each further death of that worker's slot doubles it… */
export const RESTART_BACKOFF_BASE_MS = 1_000;
/** …up to this. */
export const RESTART_BACKOFF_MAX_MS = 30_000;
/** A worker that served this long before dying was healthy: its replacement starts after the base delay again. */
const HEALTHY_AFTER_MS = 60_000;
/** A worker's own scrape bounds each slow source at 1.5 s (lib/metrics.ts): one that says nothing for longer is stuck. */
const WORKER_METRICS_TIMEOUT_MS = 3_000;
/**
 * On shutdown a worker drains for SHUTDOWN_DRAIN_SECONDS, answers its requests in flight for up to SHUTDOWN_GRACE_MS,
 * then closes Redis and flushes spans (≤ 1 s); one still alive after this much more is killed, so the primary always
 * exits within the pod's termination grace.
 */
const WORKER_EXIT_MARGIN_MS = 2_000;

type WorkerMetrics = MetricsSnapshot;

/** What the primary and its workers say to each other over the cluster's IPC channel. */
type PrimaryMessage = { type: 'linepack:metrics-request'; requestId: number };
type WorkerMessage =
  | { type: 'linepack:gateway-ready'; port: number }
  | { type: 'linepack:metrics'; requestId: number; metrics: WorkerMetrics }
  | { type: 'linepack:metrics'; requestId: number; error: string };

/** The type of an IPC message, if it is one of ours (the channel also carries whatever else a process sends). */
function messageType(message: unknown): string | undefined {
  const type = typeof message === 'object' && message !== null ? (message as { type?: unknown }).type : undefined;
  return typeof type === 'string' && type.startsWith('linepack:') ? type : undefined;
}

// ───────────────────────────── worker ─────────────────────────────

/**
 * One gateway worker: what main.ts does as a single process, except that /metrics is the primary's (this worker answers
 * its requests instead of binding METRICS_PORT) and that it tells the primary when it serves. main.ts has started
 * tracing before calling this, so the gateway is loaded here, not imported.
 */
export function runGatewayWorker(config: GatewayProcessConfig, workerIndex: number): void {
  // The primary decides when workers stop, and says so with SIGTERM. Ctrl-C in a terminal signals the whole process
  // group: the primary's SIGINT becomes that SIGTERM, so a worker leaves its own SIGINT alone — acting on it too would
  // race the primary, which could see a worker gone before it knew the gateway was stopping (and replace it, or call
  // the start failed).
  process.on('SIGINT', () => undefined);
  // Before anything slow: the primary asks only workers that said they serve, but answering early costs nothing.
  collectProcessMetrics('gateway');
  process.on('message', (message: unknown) => {
    if (messageType(message) !== 'linepack:metrics-request') return;
    const { requestId } = message as PrimaryMessage;
    // With a callback, a channel closed meanwhile (the primary gone) is that callback's error, not an 'error' event.
    const reply = (answer: WorkerMessage) => process.send?.(answer, undefined, {}, () => undefined);
    metricsRegistry.getMetricsAsJSON().then(
      (metrics) => reply({ type: 'linepack:metrics', requestId, metrics }),
      (err: Error) => reply({ type: 'linepack:metrics', requestId, error: err.message }),
    );
  });

  /* eslint-disable @typescript-eslint/no-require-imports -- after startTracing (main.ts), and never in the primary */
  const { startGateway } = require('./server') as typeof import('./server');
  /* eslint-enable @typescript-eslint/no-require-imports */
  // Which process of the pod said it: the worker's slot (stable across replacements) and its pid.
  const logger = createLogger('gateway', config.logLevel).child({ worker: workerIndex, pid: process.pid });
  logProcessFailures(logger);
  startGateway(config, logger).then(
    (gateway) => {
      // SIGTERM from the primary: drain, then stop (lib/shutdown.ts); a second one ends the drain period at once.
      stopOnSignals(gateway, { drainMs: config.shutdownDrainMs, logger, signals: ['SIGTERM'] });
      process.send?.({ type: 'linepack:gateway-ready', port: gateway.port } satisfies WorkerMessage, undefined, {}, () => undefined);
    },
    (err: unknown) => {
      logger.fatal({ error: errorSummary(err) }, 'gateway failed to start');
      process.exit(1);
    },
  );
}

// ───────────────────────────── primary ─────────────────────────────

/** One of the N places a worker runs in; a replacement takes its dead predecessor's slot (and index). */
interface WorkerSlot {
  index: number;
  worker: Worker | null;
  /** When the current worker said it serves; null while it starts. */
  servingSince: number | null;
  /** Deaths in a row of this slot's workers (reset by one that served HEALTHY_AFTER_MS). */
  deathsInARow: number;
  replacement: NodeJS.Timeout | null;
}

/** A scrape waiting for the workers it asked. */
interface PendingScrape {
  waitingFor: Set<number>;
  answers: WorkerMetrics[];
  resolve(answers: WorkerMetrics[]): void;
  reject(err: Error): void;
}

/** The primary: forks `config.workers` gateway workers, keeps them running, serves the gateway's /metrics, stops them. */
export function runGatewayPrimary(config: GatewayProcessConfig): void {
  const logger = createLogger('gateway', config.logLevel).child({ role: 'primary', pid: process.pid });
  logProcessFailures(logger);
  const slots: WorkerSlot[] = Array.from({ length: config.workers }, (_, i) => ({
    index: i + 1,
    worker: null,
    servingSince: null,
    deathsInARow: 0,
    replacement: null,
  }));
  let phase: 'starting' | 'serving' | 'stopping' = 'starting';

  // In the primary's registry, which each scrape adds to the workers' (the workers never define these).
  const workerRestarts = new Counter({
    name: 'linepack_gateway_worker_restarts_total',
    help: 'Gateway worker processes that died while serving and were replaced (GATEWAY_WORKERS > 1)',
    registers: [metricsRegistry],
  });
  new Gauge({
    name: 'linepack_gateway_workers',
    help: 'Gateway worker processes serving requests now (GATEWAY_WORKERS > 1)',
    registers: [metricsRegistry],
    collect() {
      this.set(slots.filter((slot) => slot.servingSince !== null).length);
    },
  });

  // ── metrics: ask every serving worker for its registry, sum them with the primary's own ──
  const scrapes = new Map<number, PendingScrape>();
  let nextScrapeId = 0;
  /**
   * The counters and histograms of each live worker as its last scrape saw them, and those of the workers that died,
   * summed. A dead worker's counts stay in the gateway's totals, so they never go down when a worker is replaced —
   * Prometheus would read a drop as a reset and the next scrape as a burst. (What it counted after its last scrape is
   * lost, as a single process's counts are when it dies.) Gauges describe the live processes only.
   */
  const lastCounts = new Map<number, WorkerMetrics>();
  let retiredCounts: Promise<WorkerMetrics> = Promise.resolve([]);
  // (prom-client's typings call `type` an enum; at run time it is the exposition's name: 'counter', 'histogram', …)
  const countsOf = (metrics: WorkerMetrics) => metrics.filter((metric) => ['counter', 'histogram'].includes(String(metric.type)));
  const workerAnswered = (worker: Worker, answer: Extract<WorkerMessage, { type: 'linepack:metrics' }>) => {
    const scrape = scrapes.get(answer.requestId);
    if (!scrape?.waitingFor.delete(worker.id)) return;
    if ('error' in answer) return scrape.reject(new Error(`gateway worker ${worker.process.pid}: ${answer.error}`));
    lastCounts.set(worker.id, countsOf(answer.metrics));
    scrape.answers.push(answer.metrics);
    if (scrape.waitingFor.size === 0) scrape.resolve(scrape.answers);
  };
  // A worker that died mid-scrape: the scrape goes on without it (its counts as last seen) instead of timing out.
  const workerGone = (worker: Worker) => {
    const last = lastCounts.get(worker.id);
    lastCounts.delete(worker.id);
    // Folded into one set as they come, so a crash loop does not pile up one set per dead worker.
    if (last) retiredCounts = retiredCounts.then((retired) => aggregateMetrics([retired, last]));
    for (const scrape of scrapes.values()) if (scrape.waitingFor.delete(worker.id) && scrape.waitingFor.size === 0) scrape.resolve(scrape.answers);
  };
  const gatherWorkerMetrics = (): Promise<WorkerMetrics[]> => {
    // A worker still starting has served nothing yet, and may not listen for the question.
    const asked = slots.flatMap((slot) => (slot.worker && slot.servingSince !== null && slot.worker.isConnected() ? [slot.worker] : []));
    if (asked.length === 0) return Promise.resolve([]);
    const requestId = nextScrapeId++;
    return new Promise<WorkerMetrics[]>((resolve, reject) => {
      // A worker whose event loop is stuck fails the scrape rather than leaving its counters out: counters that drop
      // and come back would read as a reset and a burst.
      const timer = setTimeout(() => {
        const silent = [...(scrapes.get(requestId)?.waitingFor ?? [])].map((id) => cluster.workers?.[id]?.process.pid);
        reject(new Error(`gateway workers (pid ${silent.join(', ')}) did not answer within ${WORKER_METRICS_TIMEOUT_MS / 1000} s`));
      }, WORKER_METRICS_TIMEOUT_MS);
      const settle = () => {
        clearTimeout(timer);
        scrapes.delete(requestId);
      };
      scrapes.set(requestId, {
        waitingFor: new Set(asked.map((worker) => worker.id)),
        answers: [],
        resolve: (answers) => (settle(), resolve(answers)),
        reject: (err) => (settle(), reject(err)),
      });
      const question: PrimaryMessage = { type: 'linepack:metrics-request', requestId };
      for (const worker of asked) worker.send(question, (err) => err && workerGone(worker));
    });
  };
  // Counters and histograms sum; gauges follow each metric's own aggregator (prom-client's, as for its own cluster
  // support); each histogram bucket keeps the newest exemplar (trace id) any worker had for it.
  const snapshot = async () => {
    const workers = await gatherWorkerMetrics();
    return aggregateMetrics([await metricsRegistry.getMetricsAsJSON(), await retiredCounts, ...workers]);
  };
  const metricsServer: Promise<MetricsServer | null> = startMetricsServerOrWarn({ ...config.metrics, service: 'gateway', snapshot }, (m) => logger.error(m));

  // ── workers ──
  const fork = (slot: WorkerSlot) => {
    slot.replacement = null;
    const worker = cluster.fork({ [GATEWAY_WORKER_ENV]: String(slot.index) });
    slot.worker = worker;
    slot.servingSince = null;
    worker.on('message', (message: unknown) => {
      const type = messageType(message);
      if (type === 'linepack:gateway-ready') workerServing(slot, worker, (message as Extract<WorkerMessage, { type: typeof type }>).port);
      else if (type === 'linepack:metrics') workerAnswered(worker, message as Extract<WorkerMessage, { type: typeof type }>);
    });
    worker.on('exit', (code, signal) => workerExited(slot, worker, code, signal));
  };

  const workerServing = (slot: WorkerSlot, worker: Worker, port: number) => {
    if (slot.worker !== worker) return;
    slot.servingSince = Date.now();
    if (phase === 'starting' && slots.every((s) => s.servingSince !== null)) {
      phase = 'serving';
      logger.info({ port, workers: slots.length }, 'gateway workers serving');
    } else if (phase === 'serving') {
      logger.info({ worker: slot.index, workerPid: worker.process.pid }, 'gateway worker replaced');
    }
  };

  const workerExited = (slot: WorkerSlot, worker: Worker, code: number | null, signal: string | null) => {
    workerGone(worker);
    if (slot.worker !== worker) return;
    const servedMs = slot.servingSince === null ? null : Date.now() - slot.servingSince;
    slot.worker = null;
    slot.servingSince = null;
    if (phase === 'stopping') {
      if (slots.every((s) => s.worker === null)) allWorkersExited();
      return;
    }
    if (phase === 'starting') {
      // The worker said why on stderr ("gateway failed to start: …"); a configuration error keeps its exit status 2.
      logger.error({ worker: slot.index, workerPid: worker.process.pid, code, signal }, 'a gateway worker exited before serving: the gateway cannot start');
      return void stop(code === 2 ? 2 : 1);
    }
    if (servedMs !== null && servedMs >= HEALTHY_AFTER_MS) slot.deathsInARow = 0;
    slot.deathsInARow += 1;
    const delayMs = Math.min(RESTART_BACKOFF_MAX_MS, RESTART_BACKOFF_BASE_MS * 2 ** (slot.deathsInARow - 1));
    workerRestarts.inc();
    logger.error(
      { worker: slot.index, workerPid: worker.process.pid, code, signal, servedMs, deathsInARow: slot.deathsInARow, replaceInMs: delayMs },
      'gateway worker died; the others serve until its replacement is up',
    );
    slot.replacement = setTimeout(() => fork(slot), delayMs);
  };

  // ── shutdown ──
  let allWorkersExited: () => void = () => undefined;
  const stop = async (exitCode: number) => {
    if (phase === 'stopping') return;
    phase = 'stopping';
    logger.info(
      { workers: slots.filter((slot) => slot.worker).length, drainSeconds: config.shutdownDrainMs / 1000 },
      'gateway stopping: each worker drains (readiness 503, still serving), answers its requests in flight, then exits',
    );
    const exited = new Promise<void>((resolve) => (allWorkersExited = resolve));
    for (const slot of slots) {
      if (slot.replacement) clearTimeout(slot.replacement);
      slot.replacement = null;
      // Each worker drains for SHUTDOWN_DRAIN_SECONDS, stops accepting, answers what is in flight, then exits.
      slot.worker?.process.kill('SIGTERM');
    }
    if (slots.every((s) => s.worker === null)) allWorkersExited();
    const deadline = setTimeout(
      () => {
        for (const slot of slots) {
          if (!slot.worker) continue;
          logger.warn({ worker: slot.index, workerPid: slot.worker.process.pid }, 'gateway worker still running after the shutdown grace: killed');
          slot.worker.process.kill('SIGKILL');
        }
      },
      config.shutdownDrainMs + SHUTDOWN_GRACE_MS + WORKER_EXIT_MARGIN_MS,
    );
    await exited;
    clearTimeout(deadline);
    await (await metricsServer)?.stop();
    process.exit(exitCode);
  };
  const onSignal = () => {
    if (phase !== 'stopping') return void stop(0);
    // A second signal (Ctrl-C twice): the workers end their drain period now (lib/shutdown.ts).
    for (const slot of slots) slot.worker?.process.kill('SIGTERM');
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);

  for (const slot of slots) fork(slot);
}
