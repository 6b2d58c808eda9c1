import { z } from 'zod';
import os from 'node:os';
import path from 'node:path';
import { schemaDir, subgraphNames, supergraphPath, type SubgraphName } from '@linepack/schema/subgraphs';
import type { RateLimitWindows } from './rate-limit';
import {
  booleanSchema,
  ConfigError,
  ecPrivateKeySchema,
  httpUrlSchema,
  logLevelSchema,
  maxAccessTokenAgeSchema,
  metricsEnvSchema,
  parseConfig,
  portSchema,
  shutdownDrainEnvSchema,
} from '@linepack/lib/config';
import { redisEnvSchema, redisTargetOf, type RedisTarget } from '@linepack/lib/redis';

/**
 * Set by the gateway's cluster primary on each worker it forks (gateway/src/cluster.ts) to the worker's slot, 1…N;
 * never by hand. A process with it is a worker: it serves and leaves /metrics and its siblings to the primary.
 */
export const GATEWAY_WORKER_ENV = 'LINEPACK_GATEWAY_WORKER';

/** More than this is a typo, not a machine: every worker is a whole Node process (~200 MB resident). */
export const MAX_GATEWAY_WORKERS = 1024;

/** The console map's basemap: raster tiles from the operator's tile server (unset: none). */
export interface ConsoleMapTiles {
  /** A tile URL template with {z}, {x} and {y} ({-y} for TMS rows, {r} for "@2x" on high-density screens). */
  url: string;
  /** The tile provider's required credit, plain text (null: none shown). */
  attribution: string | null;
}

/**
 * CONSOLE_MAP_TILE_URL. The console's pages may load images from this URL's origin and no other (the CSP is derived
 * from it), so the host is literal: no {s} subdomains, no user or password (every visitor's browser would send them).
 */
export const mapTileUrlSchema = z
  .string()
  .trim()
  .superRefine((value, ctx) => {
    let url: URL;
    try {
      url = new URL(value);
    } catch {
      return ctx.addIssue({ code: 'custom', message: 'must be an http(s) URL such as https://tiles.example.com/{z}/{x}/{y}.png' });
    }
    const problems: string[] = [];
    if (url.protocol !== 'https:' && url.protocol !== 'http:') problems.push('must be an http(s) URL');
    if (url.username || url.password) problems.push('must not carry a user name or password');
    const placeholders = [...value.matchAll(/\{([^}]*)\}/g)].map((m) => m[1]!);
    for (const needed of ['z', 'x']) if (!placeholders.includes(needed)) problems.push(`needs the {${needed}} placeholder`);
    if (!placeholders.includes('y') && !placeholders.includes('-y')) problems.push('needs the {y} (or {-y}) placeholder');
    const unknown = placeholders.filter((p) => !['z', 'x', 'y', '-y', 'r'].includes(p));
    if (unknown.length) problems.push(`has placeholders the map cannot fill: ${unknown.map((p) => `{${p}}`).join(', ')} (one literal host, no {s})`);
    for (const message of problems) ctx.addIssue({ code: 'custom', message });
  });

/** console/dist in the repository; /app/console/dist in the gateway image (LINEPACK_SCHEMA_DIR=/app/schema). */
export const defaultConsoleDir = path.join(schemaDir, '..', 'console', 'dist');

/** How long an introspection may take before the key counts as unverifiable (CREDENTIAL_VERIFY_TIMEOUT_MS). */
export const DEFAULT_CREDENTIAL_VERIFY_TIMEOUT_MS = 5_000;

export const gatewayConfigSchema = z.object({
  PORT: portSchema.default(4000),
  HOST: z.string().default('0.0.0.0'),
  /** Base URL of the auth service (REST routes and key introspection), e.g. http://auth:4005. */
  AUTH_URL: httpUrlSchema,
  INTERNAL_TOKEN_PRIVATE_KEY: ecPrivateKeySchema,
  SUPERGRAPH_PATH: z.string().default(supergraphPath),
  /** Seconds a verified API key is trusted before it is introspected again (revocation delay). */
  CREDENTIAL_CACHE_TTL_SECONDS: z.coerce.number().int().min(0).max(300).default(30),
  /**
   * How long the gateway waits for the auth service to verify an API key it has not cached before it answers 503
   * (a hung auth service must not hold every new client for the request's whole deadline).
   */
  CREDENTIAL_VERIFY_TIMEOUT_MS: z.coerce.number().int().min(100).max(55_000).default(DEFAULT_CREDENTIAL_VERIFY_TIMEOUT_MS),
  ...redisEnvSchema,
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
  MAX_ACCESS_TOKEN_AGE_SECONDS: maxAccessTokenAgeSchema,
  /**
   * How many gateway replicas (pods, containers, hosts) serve this deployment. Rate limits are shared through Redis;
   * when Redis is away each gateway process counts in its own memory and gives at most its share of every limit:
   * limit ÷ (GATEWAY_REPLICAS × its workers), so the replicas together never give more than the limit. Set it to the
   * most replicas that run at once (an autoscaler's maximum): fewer would let an outage multiply limits again.
   */
  GATEWAY_REPLICAS: z
    .string()
    .trim()
    .regex(/^[1-9]\d{0,3}$/, 'must be a whole number from 1 to 9999 (the gateway replicas serving this deployment)')
    .transform(Number)
    .default(1),
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
  /** Raster tiles under the console's map; unset: a plain background, and the map asks nothing of another origin. */
  CONSOLE_MAP_TILE_URL: mapTileUrlSchema.optional(),
  /** The tile provider's credit shown on the map (plain text; OpenStreetMap-based tiles require one). */
  CONSOLE_MAP_TILE_ATTRIBUTION: z.string().trim().max(300, 'must be at most 300 characters').optional(),
  /** Production changes one default (GATEWAY_WORKERS); nothing else reads it here. */
  NODE_ENV: z.string().optional(),
  /**
   * Gateway processes sharing the port (node:cluster): a positive integer, or "auto" (os.availableParallelism(), which
   * on Linux honours a container's CPU quota). Unset: "auto" in production when REDIS_URL is set, otherwise 1 — see
   * resolveGatewayWorkers.
   */
  GATEWAY_WORKERS: z
    .string()
    .trim()
    .refine(
      (v) => v === 'auto' || (/^[1-9]\d*$/.test(v) && Number(v) <= MAX_GATEWAY_WORKERS),
      `must be a positive integer (at most ${MAX_GATEWAY_WORKERS}) or "auto" (the available CPUs)`,
    )
    .optional(),
  /** De-duplicate identical in-flight subgraph queries of one identity and tenant (never mutations). */
  GATEWAY_DEDUPLICATE_QUERIES: booleanSchema.default(true),
  /** Run only the trusted documents of lib/generated/trusted-documents.ts (persisted-document safelisting); off by default. */
  TRUSTED_DOCUMENTS_ONLY: booleanSchema.default(false),
  ...metricsEnvSchema,
  ...shutdownDrainEnvSchema,
  ...Object.fromEntries(subgraphNames.map((name) => [`SUBGRAPH_URL_${name.toUpperCase()}`, httpUrlSchema.optional()])),
});

export type GatewayEnvConfig = z.output<typeof gatewayConfigSchema>;

export interface GatewayConfig {
  port: number;
  host: string;
  authUrl: string;
  internalTokenPrivateKey: string;
  supergraphPath: string;
  credentialCacheTtlSeconds: number;
  /** CREDENTIAL_VERIFY_TIMEOUT_MS; undefined means DEFAULT_CREDENTIAL_VERIFY_TIMEOUT_MS. */
  credentialVerifyTimeoutMs?: number;
  /** REDIS_URL, or the cluster or Sentinel settings (lib/redis.ts redisEnvSchema). */
  redisUrl: RedisTarget | undefined;
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
  /** Raster tiles for the console's map (CONSOLE_MAP_TILE_URL); absent or null: none, nothing loaded from elsewhere. */
  consoleMapTiles?: ConsoleMapTiles | null;
  /**
   * Gateway processes that count rate limits in their own memory while Redis is away (GATEWAY_REPLICAS × workers):
   * each then gives at most limit ÷ this. Optional (callers building a config by hand); undefined means 1.
   */
  inProcessLimitShares?: number;
  /**
   * Identical in-flight subgraph queries of one identity and tenant share one fetch (never mutations). Optional so
   * that callers building a config by hand (dev/stack.ts) need not name it; undefined means on, the default.
   */
  deduplicateInflightQueries?: boolean;
  /** TRUSTED_DOCUMENTS_ONLY; undefined means off. */
  trustedDocumentsOnly?: boolean;
}

/** The gateway process: the gateway, and where it serves /metrics (the development stack serves one for everything). */
export interface GatewayProcessConfig extends GatewayConfig {
  /** GATEWAY_DEDUPLICATE_QUERIES (default true). */
  deduplicateInflightQueries: boolean;
  metrics: { port: number; host: string };
  /** Gateway processes sharing the port; 1: this process serves, as it always has (gateway/src/cluster.ts otherwise). */
  workers: number;
  /** SHUTDOWN_DRAIN_SECONDS: after SIGTERM, how long /readyz says 503 while requests are still served (lib/shutdown.ts). */
  shutdownDrainMs: number;
}

/**
 * How many gateway processes to run, or why that setting cannot work.
 *
 * Rate limits are exact across processes only because they are counted in Redis: without REDIS_URL every worker
 * would count in its own memory and let each credential through `workers` times its tier's limits. So more than
 * one worker needs REDIS_URL — refused when asked for, and not the default: production without Redis keeps one
 * process (as before) instead of refusing to start.
 */
export function resolveGatewayWorkers(
  setting: string | undefined,
  context: { production: boolean; redisUrl: RedisTarget | undefined; availableParallelism: number },
): { workers: number } | { error: string } {
  if (setting === undefined) return { workers: context.production && context.redisUrl ? Math.max(1, context.availableParallelism) : 1 };
  const workers = setting === 'auto' ? Math.max(1, context.availableParallelism) : Number(setting);
  if (workers > 1 && !context.redisUrl)
    return {
      error:
        `${setting === 'auto' ? `"auto" is ${workers} workers, which` : `${workers} workers`} need REDIS_URL: rate limits are counted in Redis so ` +
        `that every worker shares them; without it each worker would count in its own memory and let every credential through ` +
        `${workers}× its tier's limits (set REDIS_URL, or GATEWAY_WORKERS=1)`,
    };
  return { workers };
}

/** `availableParallelism` is the machine's (os.availableParallelism()) unless a test says otherwise. */
export function gatewayConfigFromEnv(env: Record<string, string | undefined>, availableParallelism: number = os.availableParallelism()): GatewayProcessConfig {
  const parsed = parseConfig('gateway', gatewayConfigSchema, env) as GatewayEnvConfig & Record<string, unknown>;
  const redisTarget = redisTargetOf('gateway', parsed);
  const resolved = resolveGatewayWorkers(parsed.GATEWAY_WORKERS, {
    production: parsed.NODE_ENV === 'production',
    redisUrl: redisTarget,
    availableParallelism,
  });
  // Reported as parseConfig reports a bad variable, so every configuration error reads alike.
  if ('error' in resolved) throw new ConfigError(`gateway: invalid configuration\n  GATEWAY_WORKERS: ${resolved.error}`);
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
    credentialVerifyTimeoutMs: parsed.CREDENTIAL_VERIFY_TIMEOUT_MS,
    redisUrl: redisTarget,
    trustProxy: parsed.TRUST_PROXY,
    rateLimitWindows: { minuteSeconds: parsed.RATE_LIMIT_MINUTE_WINDOW_SECONDS, daySeconds: parsed.RATE_LIMIT_DAY_WINDOW_SECONDS },
    logLevel: parsed.LOG_LEVEL,
    requestTimeoutMs: parsed.REQUEST_TIMEOUT_MS,
    maxAccessTokenAgeSeconds: parsed.MAX_ACCESS_TOKEN_AGE_SECONDS,
    subgraphUrls,
    corsOrigins: parsed.CORS_ORIGINS,
    consoleDir: parsed.CONSOLE_DIR,
    consoleMapTiles: parsed.CONSOLE_MAP_TILE_URL ? { url: parsed.CONSOLE_MAP_TILE_URL, attribution: parsed.CONSOLE_MAP_TILE_ATTRIBUTION || null } : null,
    deduplicateInflightQueries: parsed.GATEWAY_DEDUPLICATE_QUERIES,
    trustedDocumentsOnly: parsed.TRUSTED_DOCUMENTS_ONLY,
    inProcessLimitShares: parsed.GATEWAY_REPLICAS * resolved.workers,
    metrics: { port: parsed.METRICS_PORT, host: parsed.METRICS_HOST },
    workers: resolved.workers,
    shutdownDrainMs: parsed.SHUTDOWN_DRAIN_SECONDS * 1000,
  };
}
