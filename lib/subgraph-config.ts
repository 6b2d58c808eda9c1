import { z } from 'zod';
import { ConfigError, ecPublicKeySetSchema, logLevelSchema, metricsEnvSchema, parseConfig, portSchema, shutdownDrainEnvSchema } from './config';
import { redisEnvSchema, redisTargetOf } from './redis';
import { startMetricsServerOrWarn } from './metrics';
import { logProcessFailures, stopOnSignals } from './shutdown';
import { createLogger, type Logger } from './logger';
import type { RunningService, SubgraphDescriptor, SubgraphStartOptions } from './subgraph-types';

/** What every subgraph process needs, from its environment. */
export function subgraphConfigSchema({ defaultPort, ownsDatabase }: Pick<SubgraphDescriptor, 'defaultPort' | 'ownsDatabase'>) {
  const mongoUri = z.string().regex(/^mongodb(\+srv)?:\/\//, 'must be a mongodb:// or mongodb+srv:// URI');
  return z.object({
    PORT: portSchema.default(defaultPort),
    HOST: z.string().default('127.0.0.1'),
    MONGODB_URI: ownsDatabase ? mongoUri : mongoUri.optional(),
    LINEPACK_DB_PREFIX: z
      .string()
      .regex(/^[a-z0-9_]{1,32}$/, 'lower-case letters, digits and _ only')
      .default('linepack'),
    INTERNAL_TOKEN_PUBLIC_KEY: ecPublicKeySetSchema,
    ...redisEnvSchema,
    LOG_LEVEL: logLevelSchema,
    ...metricsEnvSchema,
    ...shutdownDrainEnvSchema,
  });
}

export type SubgraphEnvConfig = z.output<ReturnType<typeof subgraphConfigSchema>>;

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

export function startOptionsFromEnv(name: string, config: SubgraphEnvConfig, logger: Logger): SubgraphStartOptions {
  return {
    port: config.PORT,
    host: config.HOST,
    mongoUri: config.MONGODB_URI,
    dbPrefix: config.LINEPACK_DB_PREFIX,
    internalTokenPublicKey: config.INTERNAL_TOKEN_PUBLIC_KEY,
    redisUrl: redisTargetOf(`${name} subgraph`, config),
    logger,
  };
}
