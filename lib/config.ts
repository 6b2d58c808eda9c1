import { createPrivateKey, createPublicKey } from 'node:crypto';
import { z } from 'zod';

export class ConfigError extends Error {}

/**
 * Parses configuration once at start-up. Every problem is reported at once, each naming
 * the environment variable and the rule, so a mis-configured service fails fast and clearly.
 */
export function parseConfig<S extends z.ZodType>(service: string, schema: S, source: Record<string, unknown>): z.output<S> {
  const result = schema.safeParse(source);
  if (result.success) return result.data;
  const lines = result.error.issues.map(
    (issue) => `  ${issue.path.join('.') || '(root)'}: ${/received undefined$/.test(issue.message) ? 'is required' : issue.message}`,
  );
  throw new ConfigError(`${service}: invalid configuration\n${lines.join('\n')}`);
}

/** An on/off setting: true/false (also 1/0, on/off, yes/no, any case); anything else is refused, never read as off. */
export const booleanSchema = z
  .string()
  .trim()
  .toLowerCase()
  .refine((v) => /^(true|false|1|0|on|off|yes|no)$/.test(v), 'must be true or false (also 1/0, on/off, yes/no)')
  .transform((v) => /^(true|1|on|yes)$/.test(v));

/** A port from the environment; 0 asks the OS for a free one (tests, ephemeral stacks). */
export const portSchema = z.coerce.number().int().min(0).max(65535);

/**
 * Where a process serves its Prometheus metrics: a port of its own (default 9464), never the public one; 0 picks a
 * free one. Loopback unless METRICS_HOST says otherwise (the images, compose file and chart set 0.0.0.0 so
 * Prometheus can reach it inside their network), so a service started by hand does not publish its metrics.
 */
export const metricsEnvSchema = {
  METRICS_PORT: portSchema.default(9464),
  METRICS_HOST: z.string().min(1).default('127.0.0.1'),
};

export const logLevelSchema = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info');

/** PEM text given either inline or with literal "\n" escapes (as env files often carry it). */
export const pemSchema = z
  .string()
  .min(1)
  .transform((s) => s.replace(/\\n/g, '\n'))
  .refine((s) => s.includes('-----BEGIN'), 'must be a PEM-encoded key');

/** The longest-lived access token accepted unless MAX_ACCESS_TOKEN_AGE_SECONDS says otherwise. */
export const DEFAULT_MAX_ACCESS_TOKEN_AGE_SECONDS = 3_600;

/**
 * MAX_ACCESS_TOKEN_AGE_SECONDS, read by the gateway and the auth service alike (lib/access-tokens.ts): the longest an
 * access token may live (exp − iat, and age since iat), whatever its signature says. Set it to the same value on both.
 */
export const maxAccessTokenAgeSchema = z.coerce.number().int().min(30).max(86_400).default(DEFAULT_MAX_ACCESS_TOKEN_AGE_SECONDS);

export const redisUrlSchema = z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL');

function isP256(pem: string, kind: 'private' | 'public'): boolean {
  try {
    if (kind === 'public' && !/-----BEGIN PUBLIC KEY-----/.test(pem)) return false;
    const key = kind === 'private' ? createPrivateKey(pem) : createPublicKey(pem);
    return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
  } catch {
    return false;
  }
}

/** ES256 keys: checked at start-up, so a wrong key fails here and not on the first request. */
export const ecPrivateKeySchema = pemSchema.refine((pem) => isP256(pem, 'private'), 'must be an EC P-256 private key in PEM (see `linepack service-keys`)');
export const ecPublicKeySchema = pemSchema.refine((pem) => isP256(pem, 'public'), 'must be an EC P-256 public key in PEM (see `linepack service-keys`)');

/**
 * How long a service waits for MongoDB before it answers that the database is unavailable (lib/errors.ts
 * DATABASE_UNAVAILABLE, SUBGRAPH_UNAVAILABLE at the gateway) instead of hanging: choosing a server to send an
 * operation to (the driver's default is 30 s, Linepack's was 10 s) and opening a connection. A replica-set election
 * takes a few seconds, so the defaults leave room for one while a client whose database is gone hears so in 3 s.
 */
export const mongoTimeoutsEnvSchema = z.object({
  MONGODB_SERVER_SELECTION_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(3_000),
  MONGODB_CONNECT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(5_000),
});

/** The MongoDB driver's timeouts from the environment (mongoTimeoutsEnvSchema); a bad value is a ConfigError. */
export function mongoTimeoutsFromEnv(env: Record<string, string | undefined>): { serverSelectionTimeoutMS: number; connectTimeoutMS: number } {
  const parsed = parseConfig('mongodb', mongoTimeoutsEnvSchema, env);
  return { serverSelectionTimeoutMS: parsed.MONGODB_SERVER_SELECTION_TIMEOUT_MS, connectTimeoutMS: parsed.MONGODB_CONNECT_TIMEOUT_MS };
}
