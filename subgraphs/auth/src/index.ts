import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { createRedisClient } from '@linepack/lib/redis';
import { RevocationPublisher } from '@linepack/lib/revocations';
import { startDatabaseSubgraph } from '@linepack/lib/subgraph-server';
import type { RunningService, SubgraphDescriptor, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { readSubgraphSdl, subgraphPort } from '@linepack/schema/subgraphs';
import type { SubgraphContext } from './context';
import { defaultLoginThrottle, LoginThrottle, type LoginThrottleWindows } from './login-throttle';
import { resolvers } from './resolvers';
import { DEFAULT_AUDIT_RETENTION_DAYS } from './audit';
import { auditRoutes, authRoutes } from './rest';
import { SigningKeys } from './signing-keys';
import { AuthStore } from './store';
import { TokenService, type TokenLifetimes } from './tokens';

export const descriptor: SubgraphDescriptor = { name: 'auth', defaultPort: subgraphPort('auth'), ownsDatabase: true };

export interface AuthServiceOptions extends TokenLifetimes {
  signingKeyPem: string;
  verifyOnlyPublicKeyPems: string[];
  loginThrottle?: LoginThrottleWindows;
  /** Audit events older than this are removed (default DEFAULT_AUDIT_RETENTION_DAYS). */
  auditRetentionDays?: number;
}

export const defaultTokenLifetimes: TokenLifetimes = { accessTokenTtlSeconds: 900, refreshTokenTtlSeconds: 30 * 86_400 };

export function startAuthSubgraph(options: SubgraphStartOptions & { auth: AuthServiceOptions }): Promise<RunningService> {
  const keys = new SigningKeys(options.auth.signingKeyPem, options.auth.verifyOnlyPublicKeyPems);
  return startDatabaseSubgraph<SubgraphContext>(options, {
    name: 'auth',
    sdl: readSubgraphSdl('auth'),
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    async prepare(db) {
      const redis = options.redisUrl ? createRedisClient(options.redisUrl, options.logger, { commandTimeoutMs: 250 }) : null;
      const revocations = new RevocationPublisher(redis, options.auth.accessTokenTtlSeconds + 60, options.logger);
      const store = new AuthStore(db, revocations, options.logger);
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
          authRoutes(app, { store, tokens, keys, throttle, logger: options.logger, internalTokenPublicKey: options.internalTokenPublicKey });
          auditRoutes(app, { store, internalTokenPublicKey: options.internalTokenPublicKey, logger: options.logger });
        },
        stop: async () => {
          clearInterval(pruning);
          redis?.disconnect();
        },
      };
    },
  });
}
