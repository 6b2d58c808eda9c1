import { randomBytes, randomUUID } from 'node:crypto';
import type { Db, MongoClient } from 'mongodb';
import { generateInternalKeyPair, INTERNAL_IDENTITY_HEADER, mintInternalToken, type Identity } from '../identity';
import { createLogger } from '../logger';
import { connectMongo, databaseName } from '../mongo';
import type { Scope } from '../scopes';
import type { RunningService, SubgraphModule, SubgraphStartOptions } from '../subgraph-types';

/**
 * One subgraph, alone and in-process, for its team's tests: its own database on the test MongoDB
 * (a fresh prefix per harness), real HTTP on a free loopback port, and requests carrying an identity
 * token minted here exactly as the gateway mints them — so scope checks, tenancy and `_entities`
 * resolution run for real, without the gateway or any other subgraph.
 */
export interface SubgraphHarness {
  url: string;
  /** The subgraph's own database. */
  db: Db;
  dbPrefix: string;
  service: RunningService;
  /** Sends a GraphQL operation as `identity` (a new tenant with every scope when omitted). */
  request<T = Record<string, any>>(query: string, options?: HarnessRequestOptions): Promise<HarnessResponse<T>>;
  /** An identity of its own tenant, with these scopes (default: every read and write scope the test names). */
  identity(scopes: readonly Scope[], tenantId?: string): Identity;
  stop(): Promise<void>;
}

export interface HarnessRequestOptions {
  identity?: Identity;
  variables?: Record<string, unknown>;
}

export interface HarnessResponse<T> {
  status: number;
  data?: T | null;
  errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, any> }[];
}

export async function startSubgraphHarness(
  subgraph: SubgraphModule,
  options: { defaultScopes: readonly Scope[]; start?: Partial<SubgraphStartOptions> },
): Promise<SubgraphHarness> {
  const mongoUri = process.env['MONGODB_URI'];
  if (subgraph.descriptor.ownsDatabase && !mongoUri) throw new Error('MONGODB_URI is not set: the jest global setup starts the test database');
  const keys = generateInternalKeyPair();
  const dbPrefix = `t${randomBytes(5).toString('hex')}`;
  const service = await subgraph.start({
    port: 0,
    host: '127.0.0.1',
    mongoUri,
    dbPrefix,
    internalTokenPublicKey: keys.publicKeyPem,
    logger: createLogger(subgraph.descriptor.name, process.env['TEST_LOG_LEVEL'] ?? 'silent'),
    redisUrl: process.env['REDIS_URL'],
    ...options.start,
  });
  let mongo: MongoClient | undefined;
  try {
    mongo = await connectMongo(mongoUri ?? 'mongodb://127.0.0.1:1');
  } catch (err) {
    if (subgraph.descriptor.ownsDatabase) {
      await service.stop();
      throw err;
    }
  }
  const identity = (scopes: readonly Scope[], tenantId: string = randomUUID()): Identity => ({
    subject: `test-${randomUUID()}`,
    kind: 'api_key',
    tenantId,
    scopes: [...scopes],
    requestId: randomUUID(),
  });
  const defaultIdentity = identity(options.defaultScopes);
  return {
    url: service.url,
    db: mongo?.db(databaseName(dbPrefix, subgraph.descriptor.name)) as Db,
    dbPrefix,
    service,
    identity,
    async request<T>(query: string, requestOptions: HarnessRequestOptions = {}) {
      const who = requestOptions.identity ?? defaultIdentity;
      const res = await fetch(service.url, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          [INTERNAL_IDENTITY_HEADER]: mintInternalToken({ ...who, requestId: randomUUID() }, subgraph.descriptor.name, keys.privateKeyPem),
        },
        body: JSON.stringify({ query, variables: requestOptions.variables ?? {} }),
      });
      const body = (await res.json()) as Omit<HarnessResponse<T>, 'status'>;
      return { status: res.status, ...body };
    },
    async stop() {
      await service.stop();
      await mongo?.close();
    },
  };
}
