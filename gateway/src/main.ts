/**
 * The gateway's process entry (the image's `node dist/main.js`). With GATEWAY_WORKERS=1 — the default outside
 * production — this process is the gateway, as it always was. With more, it is the primary of a node:cluster
 * (gateway/src/cluster.ts) that forks the workers, each of which runs this file again with GATEWAY_WORKER_ENV set.
 *
 * The configuration is read first, before tracing starts: it loads no module the instrumentations patch (express,
 * http, ioredis, mongodb, @apollo/*), and the primary, which serves no request, never starts tracing.
 */
import cluster from 'node:cluster';
import { isMainThread } from 'node:worker_threads';
import { ConfigError } from '@linepack/lib/config';
import { startTracing } from '@linepack/lib/tracing';
import { GATEWAY_WORKER_ENV, gatewayConfigFromEnv, type GatewayProcessConfig } from './config';

let config: GatewayProcessConfig;
try {
  config = gatewayConfigFromEnv(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}

const workerIndex = cluster.isWorker ? Number(process.env[GATEWAY_WORKER_ENV]) : NaN;
/* eslint-disable @typescript-eslint/no-require-imports -- required after startTracing, or (the primary) never traced */
if (!isMainThread) {
  // The bundle is also the entry of the gateway's expensive-operation lane, a thread of its own (expensive-lane.ts).
  require('./expensive-lane-worker');
} else if (Number.isInteger(workerIndex) && workerIndex > 0) {
  // First: the instrumentations patch express, @apollo/*, ioredis and http as the rest loads them.
  startTracing('gateway');
  (require('./cluster') as typeof import('./cluster')).runGatewayWorker(config, workerIndex);
} else if (config.workers > 1) {
  (require('./cluster') as typeof import('./cluster')).runGatewayPrimary(config);
} else {
  runSingleProcess(config);
}

function runSingleProcess(config: GatewayProcessConfig): void {
  // First: the instrumentations patch express, @apollo/*, ioredis and http as the rest loads them.
  startTracing('gateway');
  const { startMetricsServerOrWarn } = require('@linepack/lib/metrics') as typeof import('@linepack/lib/metrics');
  const { createLogger, errorSummary } = require('@linepack/lib/logger') as typeof import('@linepack/lib/logger');
  const { logProcessFailures, stopOnSignals } = require('@linepack/lib/shutdown') as typeof import('@linepack/lib/shutdown');
  const { startGateway } = require('./server') as typeof import('./server');
  const logger = createLogger('gateway', config.logLevel);
  logProcessFailures(logger);
  Promise.all([startGateway(config, logger), startMetricsServerOrWarn({ ...config.metrics, service: 'gateway' }, (m) => logger.error(m))]).then(
    ([gateway, metrics]) =>
      // SIGTERM: /readyz 503 at once, requests served for SHUTDOWN_DRAIN_SECONDS, then the in-flight ones finish (lib/shutdown.ts).
      stopOnSignals(
        { drain: () => gateway.drain(), stop: async () => void (await Promise.all([gateway.stop(), metrics?.stop()])) },
        { drainMs: config.shutdownDrainMs, logger },
      ),
    (err: unknown) => {
      logger.fatal({ error: errorSummary(err) }, 'gateway failed to start');
      process.exit(1);
    },
  );
}
/* eslint-enable @typescript-eslint/no-require-imports */
