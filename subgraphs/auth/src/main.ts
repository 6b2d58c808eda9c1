import { z } from 'zod';
import { ConfigError, ecPrivateKeySchema, maxAccessTokenAgeSchema, parseConfig, publicKeyBlocks } from '@linepack/lib/config';
import { startTracing } from '@linepack/lib/tracing';

// First: the instrumentations patch express, mongodb, ioredis and http as the subgraph loads them.
startTracing('auth');
/* eslint-disable @typescript-eslint/no-require-imports */
const { runSubgraphProcess } = require('@linepack/lib/subgraph-process') as typeof import('@linepack/lib/subgraph-process');
const { DEFAULT_AUDIT_RETENTION_DAYS } = require('./audit') as typeof import('./audit');
const { DEFAULT_SIGNING_KEY_ROTATION_DAYS, defaultTokenLifetimes, descriptor, startAuthSubgraph } = require('./index') as typeof import('./index');
const { DEFAULT_REFRESH_REUSE_GRACE_SECONDS } = require('./tokens') as typeof import('./tokens');
const { oauthConfig } = require('./oauth/config') as typeof import('./oauth/config');
/* eslint-enable @typescript-eslint/no-require-imports */

const authEnvSchema = z.object({
  JWT_SIGNING_KEY: ecPrivateKeySchema,
  /** Previous signing keys' public PEMs, still accepted during a rotation (concatenated PEM blocks). */
  JWT_VERIFY_ONLY_PUBLIC_KEYS: z.string().optional(),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(30).max(86_400).default(defaultTokenLifetimes.accessTokenTtlSeconds),
  REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(300).default(defaultTokenLifetimes.refreshTokenTtlSeconds),
  /** How long a just-rotated refresh token is still accepted (a lost answer, two tabs); 0: never. */
  REFRESH_REUSE_GRACE_SECONDS: z.coerce.number().int().min(0).max(120).default(DEFAULT_REFRESH_REUSE_GRACE_SECONDS),
  /** How long a signing key signs before the next generation takes over; 0: only `linepack keys rotate-signing`. */
  SIGNING_KEY_ROTATION_DAYS: z.coerce.number().min(0).max(3_650).default(DEFAULT_SIGNING_KEY_ROTATION_DAYS),
  /** How long audit events are kept. */
  AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(3_650).default(DEFAULT_AUDIT_RETENTION_DAYS),
  /** The gateways' limit on an access token's life (the same variable): introspection applies their rules. */
  MAX_ACCESS_TOKEN_AGE_SECONDS: maxAccessTokenAgeSchema,
});

/** Every block must be an EC P-256 public key: a key that silently fails to load would log everyone out mid-rotation. */
function verifyOnlyKeys(raw: string | undefined): string[] {
  if (!raw?.trim()) return [];
  try {
    return publicKeyBlocks(raw);
  } catch (err) {
    throw new ConfigError(`auth subgraph: invalid configuration\n  JWT_VERIFY_ONLY_PUBLIC_KEYS: ${(err as Error).message}`);
  }
}

runSubgraphProcess(descriptor, (options) => {
  const env = parseConfig('auth subgraph', authEnvSchema, process.env);
  // Its own tokens would be called inactive by introspection, and refused by gateways configured alike.
  if (env.MAX_ACCESS_TOKEN_AGE_SECONDS < env.ACCESS_TOKEN_TTL_SECONDS) {
    throw new ConfigError(
      `auth subgraph: invalid configuration\n  MAX_ACCESS_TOKEN_AGE_SECONDS: must be at least ACCESS_TOKEN_TTL_SECONDS (${env.ACCESS_TOKEN_TTL_SECONDS})`,
    );
  }
  // Read again on each request (oauth/config.ts); read here first so a bad value stops the service at start.
  oauthConfig(process.env);
  return startAuthSubgraph({
    ...options,
    auth: {
      signingKeyPem: env.JWT_SIGNING_KEY,
      verifyOnlyPublicKeyPems: verifyOnlyKeys(env.JWT_VERIFY_ONLY_PUBLIC_KEYS),
      accessTokenTtlSeconds: env.ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlSeconds: env.REFRESH_TOKEN_TTL_SECONDS,
      refreshReuseGraceSeconds: env.REFRESH_REUSE_GRACE_SECONDS,
      maxAccessTokenAgeSeconds: env.MAX_ACCESS_TOKEN_AGE_SECONDS,
      auditRetentionDays: env.AUDIT_RETENTION_DAYS,
      signingKeyRotationMs: env.SIGNING_KEY_ROTATION_DAYS * 86_400_000,
    },
  });
});
