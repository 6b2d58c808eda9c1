import { activeTracing, startTracing } from '@linepack/lib/tracing';

// First: the instrumentations patch express, @apollo/*, ioredis and http as the rest loads them.
startTracing('gateway');
/* eslint-disable @typescript-eslint/no-require-imports */
const { ConfigError } = require('@linepack/lib/config') as typeof import('@linepack/lib/config');
const { startMetricsServerOrWarn } = require('@linepack/lib/metrics') as typeof import('@linepack/lib/metrics');
const { gatewayConfigFromEnv } = require('./config') as typeof import('./config');
const { startGateway } = require('./server') as typeof import('./server');
/* eslint-enable @typescript-eslint/no-require-imports */
type GatewayProcessConfig = import('./config').GatewayProcessConfig;

let config: GatewayProcessConfig;
try {
  config = gatewayConfigFromEnv(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}

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
