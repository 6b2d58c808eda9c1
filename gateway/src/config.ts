import { z } from 'zod';
import path from 'node:path';
import { schemaDir, subgraphNames, supergraphPath, type SubgraphName } from '@linepack/schema/subgraphs';
import type { RateLimitWindows } from './rate-limit';
import { ecPrivateKeySchema, logLevelSchema, metricsEnvSchema, parseConfig, portSchema, redisUrlSchema } from '@linepack/lib/config';

const urlSchema = z
  .string()
  .url('must be an http(s) URL')
  .refine((u) => /^https?:\/\//.test(u), 'must be an http(s) URL');

/** console/dist in the repository; /app/console/dist in the gateway image (LINEPACK_SCHEMA_DIR=/app/schema). */
export const defaultConsoleDir = path.join(schemaDir, '..', 'console', 'dist');

export const gatewayConfigSchema = z.object({
  PORT: portSchema.default(4000),
  HOST: z.string().default('0.0.0.0'),
  /** Base URL of the auth service (REST routes and key introspection), e.g. http://auth:4005. */
  AUTH_URL: urlSchema,
  INTERNAL_TOKEN_PRIVATE_KEY: ecPrivateKeySchema,
  SUPERGRAPH_PATH: z.string().default(supergraphPath),
  /** Seconds a verified API key is trusted before it is introspected again (revocation delay). */
  CREDENTIAL_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  REDIS_URL: redisUrlSchema.optional(),
  /**
   * Which proxies in front of the gateway may set X-Forwarded-For: false (none, the default), a hop
   * count, or a comma-separated list of addresses/CIDRs (Express "trust proxy").
   */
  TRUST_PROXY: z
    .string()
    .default('false')
    .transform((v): boolean | number | string => (v === 'false' ? false : v === 'true' ? true : /^\d+$/.test(v) ? Number(v) : v)),
  /** Window lengths are configurable so tests can run a "day" in seconds. */
  RATE_LIMIT_MINUTE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  RATE_LIMIT_DAY_WINDOW_SECONDS: z.coerce.number().int().min(1).default(86_400),
  /** Each GraphQL request is stopped after this long (504 TIMEOUT); identity tokens live at most 60 s, so < 55 s. */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(100).max(55_000).default(30_000),
  /**
   * The longest-lived user access token the gateway accepts (exp − iat, and age since iat), whatever its
   * signature: a leaked signing key or a mis-set issuer cannot mint tokens that live for years. At least the auth
   * service's ACCESS_TOKEN_TTL_SECONDS (default 900).
   */
  MAX_ACCESS_TOKEN_AGE_SECONDS: z.coerce.number().int().min(30).max(86_400).default(3_600),
  LOG_LEVEL: logLevelSchema,
  /**
   * Origins (scheme://host[:port]) whose pages may call the API from a browser, comma-separated; none by default
   * (the console is served from the gateway's own origin and needs no CORS).
   */
  CORS_ORIGINS: z
    .string()
    .default('')
    .transform((v) =>
      v
        .split(',')
        .map((o) => o.trim())
        .filter(Boolean),
    )
    .pipe(z.array(z.string().regex(/^https?:\/\/[^/\s*]+$/, 'each origin is scheme://host[:port], without a path or "*"'))),
  /** The built console (console/dist); the image puts it next to the schema. */
  CONSOLE_DIR: z.string().default(defaultConsoleDir),
  ...metricsEnvSchema,
  ...Object.fromEntries(subgraphNames.map((name) => [`SUBGRAPH_URL_${name.toUpperCase()}`, urlSchema.optional()])),
});

export type GatewayEnvConfig = z.output<typeof gatewayConfigSchema>;

export interface GatewayConfig {
  port: number;
  host: string;
  authUrl: string;
  internalTokenPrivateKey: string;
  supergraphPath: string;
  credentialCacheTtlSeconds: number;
  redisUrl: string | undefined;
  rateLimitWindows: RateLimitWindows;
  trustProxy: boolean | number | string;
  logLevel: string;
  requestTimeoutMs: number;
  maxAccessTokenAgeSeconds: number;
  /** Overrides of the routing URLs baked into the supergraph (development and tests use free ports). */
  subgraphUrls: Partial<Record<SubgraphName, string>>;
  /** Browser origins allowed to call the API (CORS). */
  corsOrigins: string[];
  /** The built web console, served at /; null: none. */
  consoleDir: string | null;
}

/** The gateway process: the gateway, and where it serves /metrics (the development stack serves one for everything). */
export interface GatewayProcessConfig extends GatewayConfig {
  metrics: { port: number; host: string };
}

export function gatewayConfigFromEnv(env: Record<string, string | undefined>): GatewayProcessConfig {
  const parsed = parseConfig('gateway', gatewayConfigSchema, env) as GatewayEnvConfig & Record<string, unknown>;
  const subgraphUrls: Partial<Record<SubgraphName, string>> = {};
  for (const name of subgraphNames) {
    const url = parsed[`SUBGRAPH_URL_${name.toUpperCase()}`];
    if (typeof url === 'string') subgraphUrls[name] = url;
  }
  return {
    port: parsed.PORT,
    host: parsed.HOST,
    authUrl: parsed.AUTH_URL.replace(/\/$/, ''),
    internalTokenPrivateKey: parsed.INTERNAL_TOKEN_PRIVATE_KEY,
    supergraphPath: parsed.SUPERGRAPH_PATH,
    credentialCacheTtlSeconds: parsed.CREDENTIAL_CACHE_TTL_SECONDS,
    redisUrl: parsed.REDIS_URL,
    trustProxy: parsed.TRUST_PROXY,
    rateLimitWindows: { minuteSeconds: parsed.RATE_LIMIT_MINUTE_WINDOW_SECONDS, daySeconds: parsed.RATE_LIMIT_DAY_WINDOW_SECONDS },
    logLevel: parsed.LOG_LEVEL,
    requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
    maxAccessTokenAgeSeconds: parsed.MAX_ACCESS_TOKEN_AGE_SECONDS,
    subgraphUrls,
    corsOrigins: parsed.CORS_ORIGINS,
    consoleDir: parsed.CONSOLE_DIR,
    metrics: { port: parsed.METRICS_PORT, host: parsed.METRICS_HOST },
  };
}
