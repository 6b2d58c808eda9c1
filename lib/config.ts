import { createPrivateKey, createPublicKey, type KeyObject } from 'node:crypto';
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

/**
 * SHUTDOWN_DRAIN_SECONDS: after SIGTERM a service keeps serving this long with /readyz at 503 and `Connection: close`
 * on every answer, before it stops accepting (lib/shutdown.ts). The default is the chart's preStop pause, so a service
 * behind a load balancer outside Kubernetes (compose, nginx, systemd) gets the same time to be taken out of rotation.
 */
export const DEFAULT_SHUTDOWN_DRAIN_SECONDS = 5;
export const shutdownDrainEnvSchema = {
  SHUTDOWN_DRAIN_SECONDS: z.coerce.number().min(0).max(120).default(DEFAULT_SHUTDOWN_DRAIN_SECONDS),
};

/**
 * JOB_LEASE_SECONDS: how long a job runner's claim on a job (an ILI import) lasts without a commit or heartbeat (it
 * heartbeats every third of it). A runner that died (kill -9, a lost node) holds its jobs this long before another
 * takes them over from their last checkpoint; one stopped cleanly hands them back at once. Shorter recovers sooner; it
 * must stay well above the longest pause a runner can take (a chunk's write on a loaded database).
 */
export const DEFAULT_JOB_LEASE_SECONDS = 30;
export const jobLeaseEnvSchema = {
  JOB_LEASE_SECONDS: z.coerce.number().int().min(3).max(3600).default(DEFAULT_JOB_LEASE_SECONDS),
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

/** A URL a service calls or names (AUTH_URL, SUBGRAPH_URL_*, OAUTH_ISSUER): one message whatever is wrong with it. */
export const httpUrlSchema = z.string().refine((value) => {
  try {
    return /^https?:$/.test(new URL(value).protocol);
  } catch {
    return false;
  }
}, 'must be an http(s) URL');

export const redisUrlSchema = z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL');

function isP256(key: KeyObject): boolean {
  return key.asymmetricKeyType === 'ec' && key.asymmetricKeyDetails?.namedCurve === 'prime256v1';
}

function isP256PrivateKey(pem: string): boolean {
  try {
    return isP256(createPrivateKey(pem));
  } catch {
    return false;
  }
}

const PUBLIC_KEY_BLOCK = /-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g;

/**
 * The PEM blocks of one or more public keys given as one value (concatenated, in any order, with literal "\n"
 * escapes or real newlines). Throws, naming the problem, when anything but whitespace lies outside the blocks or a
 * block is not an EC P-256 public key: a key that silently failed to load would refuse every request it signed.
 */
export function publicKeyBlocks(value: string): string[] {
  const text = value.replace(/\\n/g, '\n');
  const blocks = text.match(PUBLIC_KEY_BLOCK) ?? [];
  if (blocks.length === 0) throw new Error('must hold one or more EC P-256 public keys in PEM (-----BEGIN PUBLIC KEY-----)');
  if (text.replace(PUBLIC_KEY_BLOCK, '').trim() !== '') throw new Error('must hold only PEM public key blocks (found other text beside them)');
  blocks.forEach((pem, i) => {
    let key: KeyObject;
    try {
      key = createPublicKey(pem);
    } catch {
      throw new Error(`key ${i + 1} of ${blocks.length} is not a valid PEM public key`);
    }
    if (!isP256(key)) throw new Error(`key ${i + 1} of ${blocks.length} is not an EC P-256 public key`);
  });
  return blocks;
}

/** At most this many keys in a public key set: during a rotation there are two. */
export const MAX_PUBLIC_KEYS = 8;

/** ES256 keys: checked at start-up, so a wrong key fails here and not on the first request. */
export const ecPrivateKeySchema = pemSchema.refine(isP256PrivateKey, 'must be an EC P-256 private key in PEM (see `linepack service-keys`)');
/**
 * One or more EC P-256 public keys (PEM blocks, concatenated): the identity-token keys a subgraph trusts. Every block
 * must parse; during a rotation there are two (README, Rotating keys).
 */
export const ecPublicKeySetSchema = pemSchema.superRefine((value, ctx) => {
  try {
    const blocks = publicKeyBlocks(value);
    if (blocks.length > MAX_PUBLIC_KEYS) ctx.addIssue({ code: 'custom', message: `holds ${blocks.length} keys; at most ${MAX_PUBLIC_KEYS}` });
  } catch (err) {
    ctx.addIssue({ code: 'custom', message: `${(err as Error).message} (see \`linepack service-keys\`)` });
  }
});

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
