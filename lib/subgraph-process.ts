import { ConfigError, parseConfig } from './config';
import { startMetricsServerOrWarn } from './metrics';
import { logProcessFailures, stopOnSignals } from './shutdown';
import { createLogger } from './logger';
import { startOptionsFromEnv, subgraphConfigSchema, type SubgraphEnvConfig } from './subgraph-config';
import type { RunningService, SubgraphDescriptor, SubgraphStartOptions } from './subgraph-types';

/**
 * Process entry for one subgraph: parse config once, start, and on SIGTERM/SIGINT drain (SHUTDOWN_DRAIN_SECONDS:
 * /readyz 503, still serving), then stop cleanly (lib/shutdown.ts). Everything it logs is JSON (a configuration error
 * aside: printed as text before anything starts, for the operator reading it).
 */
export function runSubgraphProcess(descriptor: SubgraphDescriptor, start: (options: SubgraphStartOptions) => Promise<RunningService>): void {
  const { name } = descriptor;
  let config: SubgraphEnvConfig;
  try {
    config = parseConfig(`${name} subgraph`, subgraphConfigSchema(descriptor), process.env);
  } catch (err) {
    if (err instanceof ConfigError) {
      console.error(err.message);
      process.exit(2);
    }
    throw err;
  }
  const logger = createLogger(name, config.LOG_LEVEL);
  logProcessFailures(logger);
  Promise.resolve()
    .then(async () => {
      const service = await start(startOptionsFromEnv(name, config, logger));
      const metrics = await startMetricsServerOrWarn({ port: config.METRICS_PORT, host: config.METRICS_HOST, service: name }, (m) => logger.error(m));
      if (metrics) logger.info({ port: metrics.port }, `${name} metrics on /metrics`);
      return { service, metrics };
    })
    .then(
      ({ service, metrics }) =>
        stopOnSignals(
          { drain: () => service.drain(), stop: async () => void (await Promise.all([service.stop(), metrics?.stop()])) },
          { drainMs: config.SHUTDOWN_DRAIN_SECONDS * 1000, logger },
        ),
      (err: unknown) => {
        if (err instanceof ConfigError) {
          console.error(err.message);
          process.exit(2);
        }
        logger.fatal({ err }, `${name} subgraph failed to start`);
        process.exit(1);
      },
    );
}
