import { ConfigError } from '@linepack/lib/config';
import { startMetricsServer } from '@linepack/lib/metrics';
import { activeTracing, startTracing } from '@linepack/lib/tracing';
import { gatewayConfigFromEnv, type GatewayProcessConfig } from './config';

// First: the instrumentations patch express, @apollo/*, ioredis and http as ./server loads them.
startTracing('gateway');
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { startGateway } = require('./server') as typeof import('./server');

let config: GatewayProcessConfig;
try {
  config = gatewayConfigFromEnv(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}

Promise.all([startGateway(config), startMetricsServer({ ...config.metrics, service: 'gateway' })]).then(
  ([gateway, metrics]) => {
    const shutdown = () =>
      void Promise.all([gateway.stop(), metrics.stop()])
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
