import { z } from 'zod';
import { ecPublicKeySetSchema, jobLeaseEnvSchema, logLevelSchema, metricsEnvSchema, portSchema, shutdownDrainEnvSchema } from './config';
import { redisEnvSchema, redisTargetOf } from './redis';
import type { Logger } from './logger';
import type { SubgraphDescriptor, SubgraphStartOptions } from './subgraph-types';

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
    ...jobLeaseEnvSchema,
  });
}

export type SubgraphEnvConfig = z.output<ReturnType<typeof subgraphConfigSchema>>;

export function startOptionsFromEnv(name: string, config: SubgraphEnvConfig, logger: Logger): SubgraphStartOptions {
  return {
    port: config.PORT,
    host: config.HOST,
    mongoUri: config.MONGODB_URI,
    dbPrefix: config.LINEPACK_DB_PREFIX,
    internalTokenPublicKey: config.INTERNAL_TOKEN_PUBLIC_KEY,
    redisUrl: redisTargetOf(`${name} subgraph`, config),
    jobLeaseMs: config.JOB_LEASE_SECONDS * 1000,
    logger,
  };
}
