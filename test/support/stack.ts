import { randomBytes } from 'node:crypto';
import type { CommandStartedEvent, MongoClient } from 'mongodb';
import { connectMongo, databaseName } from '@linepack/lib/mongo';
import { JOBS_COLLECTION } from '@linepack/lib/jobs';
import { until } from '@linepack/lib/testing/until';
import { ASSET_REFS_COLLECTION } from '@linepack/subgraph-measurements/asset-refs';
import { startStack, type RunningStack, type StackOptions } from '../../dev/stack';
import type { GatewayConfig } from '@linepack/gateway/config';
import { productionWindows } from '@linepack/gateway/rate-limit';
import { DEFAULT_MAX_ACCESS_TOKEN_AGE_SECONDS } from '@linepack/lib/config';
import { supergraphPath } from '@linepack/schema/subgraphs';
import { canonicalScopes, type Scope } from '@linepack/lib/scopes';
import type { Tier } from '@linepack/subgraph-auth/documents';
import { AuthStore } from '@linepack/subgraph-auth/store';

export interface TestStack extends RunningStack {
  dbPrefix: string;
  mongo: MongoClient;
  authStore: AuthStore;
  /** A new tenant with one API key holding exactly `scopes`. */
  tenantWithKey(options?: { scopes?: readonly string[]; tier?: Tier; name?: string }): Promise<{ tenantId: string; apiKey: string; keyId: string }>;
  /** Another key in an existing tenant. */
  keyFor(tenantId: string, scopes: readonly string[], tier?: Tier): Promise<string>;
  /**
   * Resolves once the measurements subgraph has projected the asset from its asset.upserted event: until then it
   * refuses the asset's id (measurements, ILI imports), as it would for a client that writes the moment it created it.
   * Immediate on a stack without Redis, which checks no asset ids.
   */
  knownToMeasurements(assetId: string): Promise<void>;
}

/** Every scope but admin:*, from the vocabulary the SDL declares. */
export const allReadWriteScopes: Scope[] = canonicalScopes.filter((s) => s !== 'admin:*');

/**
 * The suite runs three stacks side by side on two cores, each in one jest worker with its auth service on the same
 * event loop as its gateway: there, a key's first verification once took longer than the production 5 s (a CI run
 * answered a console test 503). That is load, not a hung auth service: test stacks wait longer. The 503 itself is
 * tested with a short timeout (test/gateway/credential-verification.test.ts).
 */
const SUITE_VERIFY_TIMEOUT_MS = 20_000;

/**
 * The real system on free ports against the test MongoDB (global setup), with its own database
 * prefix so test files never see each other's data.
 */
export async function startTestStack(overrides: Partial<StackOptions> = {}): Promise<TestStack> {
  const mongoUri = overrides.mongoUri ?? process.env['MONGODB_URI'];
  if (!mongoUri) throw new Error('MONGODB_URI is not set: the jest global setup starts the test database');
  const dbPrefix = overrides.dbPrefix ?? `t${randomBytes(5).toString('hex')}`;
  const stack = await startStack({
    dbPrefix,
    gatewayPort: 0,
    subgraphPorts: 'free',
    logLevel: process.env['TEST_LOG_LEVEL'] ?? 'silent',
    credentialCacheTtlSeconds: 0,
    credentialVerifyTimeoutMs: SUITE_VERIFY_TIMEOUT_MS,
    ...overrides,
    mongoUri,
  });
  const mongo = await connectMongo(mongoUri);
  const authStore = new AuthStore(mongo.db(databaseName(dbPrefix, 'auth')));
  const keyFor = async (tenantId: string, scopes: readonly string[], tier: Tier = 'ENTERPRISE') =>
    (await authStore.createApiKey({ tenantId, name: 'test key', scopes, tier })).secret;
  return {
    ...stack,
    dbPrefix,
    mongo,
    authStore,
    keyFor,
    async knownToMeasurements(assetId) {
      // Without Redis there are no asset events, and measurements checks no asset ids (asset-refs.ts).
      if (!overrides.redisUrl) return;
      const refs = mongo.db(databaseName(dbPrefix, 'measurements')).collection<{ _id: string }>(ASSET_REFS_COLLECTION);
      const ref = await until(
        () => refs.findOne({ _id: assetId }),
        (found) => found != null,
        30_000,
      );
      if (!ref) throw new Error(`the measurements subgraph has not heard of asset ${assetId} (no asset.upserted projected)`);
    },
    async tenantWithKey(options = {}) {
      const tier = options.tier ?? 'ENTERPRISE';
      const tenant = await authStore.createTenant({ name: options.name ?? `tenant ${dbPrefix}`, tier });
      const { apiKey, secret } = await authStore.createApiKey({ tenantId: tenant._id, name: 'test key', scopes: options.scopes ?? allReadWriteScopes, tier });
      return { tenantId: tenant._id, apiKey: secret, keyId: apiKey._id };
    },
    async stop() {
      await stack.stop();
      await mongo.close();
    },
  };
}

export interface GraphQLResponse<T = Record<string, unknown>> {
  status: number;
  headers: Headers;
  body: {
    data?: T | null;
    errors?: { message: string; path?: (string | number)[]; extensions?: Record<string, unknown> }[];
    extensions?: Record<string, unknown>;
  };
}

/** A GraphQL request over HTTP, as any client would send it. */
export async function graphql<T = Record<string, unknown>>(
  url: string,
  query: string,
  options: { apiKey?: string | null; variables?: Record<string, unknown>; headers?: Record<string, string> } = {},
): Promise<GraphQLResponse<T>> {
  const headers: Record<string, string> = { 'content-type': 'application/json', ...options.headers };
  if (options.apiKey) headers['authorization'] = `Bearer ${options.apiKey}`;
  const res = await fetch(url, { method: 'POST', headers, body: JSON.stringify({ query, variables: options.variables ?? {} }) });
  const text = await res.text();
  let body: GraphQLResponse<T>['body'];
  try {
    body = JSON.parse(text) as GraphQLResponse<T>['body'];
  } catch {
    throw new Error(`non-JSON response ${res.status}: ${text.slice(0, 200)}`);
  }
  return { status: res.status, headers: res.headers, body };
}

export const createAssetMutation = `mutation Create($input: CreateAssetInput!) {
  createAsset(input: $input) { id name type status version }
}`;

export async function createAsset(url: string, apiKey: string, input: Record<string, unknown>): Promise<{ id: string; version: number }> {
  const res = await graphql<{ createAsset: { id: string; version: number } }>(url, createAssetMutation, { apiKey, variables: { input } });
  if (res.body.errors?.length || !res.body.data) throw new Error(`createAsset failed: ${JSON.stringify(res.body.errors)}`);
  return res.body.data.createAsset;
}

/**
 * The commands a client sent while `work` ran. The job runner's polling of its jobs collection is left out: it runs on
 * its own timer, whatever the request, and would make a count of a request's queries depend on timing.
 */
export async function mongoCommandsDuring(client: MongoClient, work: () => Promise<unknown>): Promise<CommandStartedEvent[]> {
  const commands: CommandStartedEvent[] = [];
  const listener = (e: CommandStartedEvent) => {
    if (e.command[e.commandName] !== JOBS_COLLECTION) commands.push(e);
  };
  client.on('commandStarted', listener);
  try {
    await work();
  } finally {
    client.off('commandStarted', listener);
  }
  return commands;
}

/** The sum of one metric's samples with these labels in a Prometheus text exposition; 0 when absent. */
export function metricValue(text: string, name: string, labels: Record<string, string> = {}): number {
  let total = 0;
  for (const line of text.split('\n')) {
    const match = line.match(/^([a-zA-Z_:][\w:]*)(?:\{(.*)\})? (\S+)$/);
    if (!match || match[1] !== name) continue;
    const have = Object.fromEntries([...(match[2] ?? '').matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)].map((m) => [m[1], m[2]]));
    if (Object.entries(labels).every(([k, v]) => have[k] === v)) total += Number(match[3]);
  }
  return total;
}

/**
 * The configuration of one more in-process gateway (another replica, or one wired differently) in front of the given
 * auth service and subgraphs: production defaults, no Redis, no console, every API key verified by the auth service.
 */
export function gatewayConfigFor(
  services: { authUrl: string; subgraphUrls: Record<string, string>; internalTokenPrivateKey: string },
  overrides: Partial<GatewayConfig> = {},
): GatewayConfig {
  return {
    port: 0,
    host: '127.0.0.1',
    supergraphPath,
    credentialCacheTtlSeconds: 0,
    credentialVerifyTimeoutMs: SUITE_VERIFY_TIMEOUT_MS,
    redisUrl: undefined,
    rateLimitWindows: productionWindows,
    trustProxy: false,
    logLevel: 'silent',
    requestTimeoutMs: 30_000,
    maxAccessTokenAgeSeconds: DEFAULT_MAX_ACCESS_TOKEN_AGE_SECONDS,
    corsOrigins: [],
    consoleDir: null,
    ...services,
    ...overrides,
  };
}
