import { ConfigError } from '@linepack/lib/config';
import { gatewayConfigFromEnv, type GatewayConfig } from './config';
import { startGateway } from './server';

let config: GatewayConfig;
try {
  config = gatewayConfigFromEnv(process.env);
} catch (err) {
  if (!(err instanceof ConfigError)) throw err;
  console.error(err.message);
  process.exit(2);
}

startGateway(config).then(
  (gateway) => {
    const shutdown = () => void gateway.stop().then(() => process.exit(0));
    process.once('SIGINT', shutdown);
    process.once('SIGTERM', shutdown);
  },
  (err: unknown) => {
    console.error('gateway failed to start:', (err as Error).message);
    process.exit(1);
  },
);
