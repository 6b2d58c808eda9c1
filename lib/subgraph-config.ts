import { z } from 'zod';
import { ConfigError, ecPublicKeySchema, logLevelSchema, metricsEnvSchema, parseConfig, portSchema } from './config';
import { redisEnvSchema, redisTargetOf } from './redis';
import { startMetricsServerOrWarn } from './metrics';
import { activeTracing } from './tracing';
import { createLogger } from './logger';
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
    INTERNAL_TOKEN_PUBLIC_KEY: ecPublicKeySchema,
    ...redisEnvSchema,
    LOG_LEVEL: logLevelSchema,
    ...metricsEnvSchema,
  });
}

export type SubgraphEnvConfig = z.output<ReturnType<typeof subgraphConfigSchema>>;

/** Process entry for one subgraph: parse config once, start, stop cleanly on SIGINT/SIGTERM. */
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
  Promise.resolve()
    .then(async () => {
      const service = await start(startOptionsFromEnv(name, config));
      const metrics = await startMetricsServerOrWarn({ port: config.METRICS_PORT, host: config.METRICS_HOST, service: name }, (m) => logger.error(m));
      if (metrics) logger.info({ port: metrics.port }, `${name} metrics on /metrics`);
      return { service, metrics };
    })
    .then(
      ({ service, metrics }) => {
        const shutdown = () =>
          void Promise.all([service.stop(), metrics?.stop()])
            .then(() => activeTracing()?.shutdown())
            .then(() => process.exit(0));
        process.once('SIGINT', shutdown);
        process.once('SIGTERM', shutdown);
      },
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

export function startOptionsFromEnv(name: string, config: SubgraphEnvConfig): SubgraphStartOptions {
  return {
    port: config.PORT,
    host: config.HOST,
    mongoUri: config.MONGODB_URI,
    dbPrefix: config.LINEPACK_DB_PREFIX,
    internalTokenPublicKey: config.INTERNAL_TOKEN_PUBLIC_KEY,
    redisUrl: redisTargetOf(`${name} subgraph`, config),
    logger: createLogger(name, config.LOG_LEVEL),
  };
}
