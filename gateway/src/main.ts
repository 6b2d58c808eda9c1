/**
 * The gateway's process entry (the image's `node dist/main.js`). With GATEWAY_WORKERS=1 — the default outside
 * production — this process is the gateway, as it always was. With more, it is the primary of a node:cluster
 * (gateway/src/cluster.ts) that forks the workers, each of which runs this file again with GATEWAY_WORKER_ENV set.
 *
 * The configuration is read first, before tracing starts: it loads no module the instrumentations patch (express,
 * http, ioredis, mongodb, @apollo/*), and the primary, which serves no request, never starts tracing.
 */
import cluster from 'node:cluster';
import { ConfigError } from '@linepack/lib/config';
import { activeTracing, startTracing } from '@linepack/lib/tracing';
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
if (Number.isInteger(workerIndex) && workerIndex > 0) {
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
  const { startGateway } = require('./server') as typeof import('./server');
  Promise.all([startGateway(config), startMetricsServerOrWarn({ ...config.metrics, service: 'gateway' }, (m) => console.error(`gateway: ${m}`))]).then(
    ([gateway, metrics]) => {
      const shutdown = () =>
        void Promise.all([gateway.stop(), metrics?.stop()])
          .then(() => activeTracing()?.shutdown())
          .then(() => process.exit(0));
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    },
    (err: unknown) => {
      console.error('gateway failed to start:', (err as Error).message);
      process.exit(1);
    },
  );
}
/* eslint-enable @typescript-eslint/no-require-imports */
