import { z } from 'zod';
import { parseConfig, pemSchema } from '../../../lib/config';
import { runSubgraphProcess } from '../../../lib/subgraph-config';
import { defaultTokenLifetimes, startAuthSubgraph } from './index';

const authEnvSchema = z.object({
  JWT_SIGNING_KEY: pemSchema,
  /** Previous signing keys' public PEMs, still accepted during a rotation (concatenated PEM blocks). */
  JWT_VERIFY_ONLY_PUBLIC_KEYS: z.string().optional(),
  ACCESS_TOKEN_TTL_SECONDS: z.coerce.number().int().min(30).max(86_400).default(defaultTokenLifetimes.accessTokenTtlSeconds),
  REFRESH_TOKEN_TTL_SECONDS: z.coerce.number().int().min(300).default(defaultTokenLifetimes.refreshTokenTtlSeconds),
  REDIS_URL: z.string().regex(/^rediss?:\/\//, 'must be a redis:// or rediss:// URL').optional(),
});

runSubgraphProcess('auth', (options) => {
  const env = parseConfig('auth subgraph', authEnvSchema, process.env);
  const verifyOnly = (env.JWT_VERIFY_ONLY_PUBLIC_KEYS ?? '').replace(/\\n/g, '\n').match(/-----BEGIN PUBLIC KEY-----[\s\S]+?-----END PUBLIC KEY-----/g) ?? [];
  return startAuthSubgraph({
    ...options,
    auth: {
      signingKeyPem: env.JWT_SIGNING_KEY,
      verifyOnlyPublicKeyPems: verifyOnly,
      accessTokenTtlSeconds: env.ACCESS_TOKEN_TTL_SECONDS,
      refreshTokenTtlSeconds: env.REFRESH_TOKEN_TTL_SECONDS,
      redisUrl: env.REDIS_URL,
    },
  });
});
