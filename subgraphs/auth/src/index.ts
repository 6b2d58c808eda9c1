import type { GraphQLResolverMap } from '@linepack/lib/resolver-map';
import { createRedisClient } from '@linepack/lib/redis';
import { watchRedis } from '@linepack/lib/metrics';
import { RevocationPublisher } from '@linepack/lib/revocations';
import { startDatabaseSubgraph } from '@linepack/lib/subgraph-server';
import type { RunningService, SubgraphDescriptor, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { readSubgraphSdl } from '@linepack/schema/sdl';
import { subgraphPort } from '@linepack/schema/subgraphs';
import type { SubgraphContext } from './context';
import { defaultLoginThrottle, LoginThrottle, type LoginThrottleWindows } from './login-throttle';
import { resolvers } from './resolvers';
import { DEFAULT_AUDIT_RETENTION_DAYS } from './audit';
import { auditRoutes, authRoutes } from './rest';
import { SigningKeyRing } from './signing-key-ring';
import { AuthStore } from './store';
import { TokenService, type TokenLifetimes } from './tokens';

export const descriptor: SubgraphDescriptor = { name: 'auth', defaultPort: subgraphPort('auth'), ownsDatabase: true };

export interface AuthServiceOptions extends TokenLifetimes {
  signingKeyPem: string;
  verifyOnlyPublicKeyPems: string[];
  loginThrottle?: LoginThrottleWindows;
  /** Audit events older than this are removed (default DEFAULT_AUDIT_RETENTION_DAYS). */
  auditRetentionDays?: number;
  /** A signing key signs this long before the next generation takes over (default 90 days; 0: only by the CLI). */
  signingKeyRotationMs?: number;
  /** How often each replica re-reads the signing keys (default 30 s). */
  signingKeyRefreshMs?: number;
}

export const DEFAULT_SIGNING_KEY_ROTATION_DAYS = 90;

export const defaultTokenLifetimes: TokenLifetimes = { accessTokenTtlSeconds: 900, refreshTokenTtlSeconds: 30 * 86_400 };

export function startAuthSubgraph(options: SubgraphStartOptions & { auth: AuthServiceOptions }): Promise<RunningService> {
  return startDatabaseSubgraph<SubgraphContext>(options, {
    name: 'auth',
    sdl: readSubgraphSdl('auth'),
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    async prepare(db) {
      const redis = options.redisUrl ? createRedisClient(options.redisUrl, options.logger, { commandTimeoutMs: 250 }) : null;
      const unwatchRedis = redis ? watchRedis(redis, 'auth') : () => undefined;
      const revocations = new RevocationPublisher(redis, options.auth.accessTokenTtlSeconds + 60, options.logger);
      const store = new AuthStore(db, revocations, options.logger);
      const keys = await SigningKeyRing.open(
        db,
        options.auth.signingKeyPem,
        options.auth.verifyOnlyPublicKeyPems,
        {
          accessTokenTtlSeconds: options.auth.accessTokenTtlSeconds,
          refreshTokenTtlSeconds: options.auth.refreshTokenTtlSeconds,
          rotateAfterMs: options.auth.signingKeyRotationMs ?? DEFAULT_SIGNING_KEY_ROTATION_DAYS * 86_400_000,
          refreshMs: options.auth.signingKeyRefreshMs ?? 30_000,
        },
        options.logger,
      );
      const tokens = new TokenService(db, keys, options.auth, revocations);
      await Promise.all([store.ensureIndexes(), tokens.ensureIndexes()]);
      // Retention is the only deletion in the audit log: at start and every six hours.
      const retentionDays = options.auth.auditRetentionDays ?? DEFAULT_AUDIT_RETENTION_DAYS;
      const prune = () => store.audit.prune(retentionDays).catch((err: Error) => options.logger.error({ err: err.message }, 'audit retention failed'));
      await prune();
      const pruning = setInterval(() => void prune(), 6 * 3_600_000);
      pruning.unref();
      const throttle = new LoginThrottle(redis, options.auth.loginThrottle ?? defaultLoginThrottle);
      return {
        buildContext: (base) => ({ ...base, store }),
        routes: (app) => {
          authRoutes(app, { db, store, tokens, keys, throttle, logger: options.logger, internalTokenPublicKey: options.internalTokenPublicKey });
          auditRoutes(app, { store, internalTokenPublicKey: options.internalTokenPublicKey, logger: options.logger });
        },
        stop: async () => {
          clearInterval(pruning);
          keys.stop();
          unwatchRedis();
          redis?.disconnect();
        },
      };
    },
  });
}
