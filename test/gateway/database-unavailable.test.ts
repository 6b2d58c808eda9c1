/**
 * The database stopped (issue 29, item 1): a subgraph waits for MongoDB only as long as
 * MONGODB_SERVER_SELECTION_TIMEOUT_MS (lib/config.ts, 3 s by default) and answers DATABASE_UNAVAILABLE, which the
 * gateway tells the client as SUBGRAPH_UNAVAILABLE — a 503 with a Retry-After when nothing could be served — instead
 * of a 200 with an internal error after a 10 s hang. The request's deadline here is 50 s and the test's 40 s: an
 * unbounded wait would answer 504 or not at all, not 503.
 */
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { ConfigError, mongoTimeoutsFromEnv } from '@linepack/lib/config';
import { UNAVAILABLE_RETRY_AFTER_SECONDS } from '@linepack/gateway/subgraph-unavailable';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

let database: EmbeddedMongo;
let stack: TestStack;
let apiKey: string;

beforeAll(async () => {
  // The production setting (the suite's global setup waits longer for its shared, busy database).
  process.env['MONGODB_SERVER_SELECTION_TIMEOUT_MS'] = String(mongoTimeoutsFromEnv({}).serverSelectionTimeoutMS);
  database = await startEmbeddedMongo();
  // Keys stay cached while the database is stopped: authentication needs no lookup then.
  stack = await startTestStack({ mongoUri: database.uri, credentialCacheTtlSeconds: 300, requestTimeoutMs: 50_000 });
  ({ apiKey } = await stack.tenantWithKey());
  await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Line' });
  expect((await graphql(stack.gatewayUrl, '{ assets(first: 1) { edges { node { id } } } }', { apiKey })).status).toBe(200);
}, 60_000);

afterAll(async () => {
  await stack?.stop();
  await database?.stop();
});

test('the timeouts are configuration, validated at start-up', () => {
  expect(mongoTimeoutsFromEnv({})).toEqual({ serverSelectionTimeoutMS: 3_000, connectTimeoutMS: 5_000 });
  expect(mongoTimeoutsFromEnv({ MONGODB_SERVER_SELECTION_TIMEOUT_MS: '1500' }).serverSelectionTimeoutMS).toBe(1_500);
  expect(() => mongoTimeoutsFromEnv({ MONGODB_SERVER_SELECTION_TIMEOUT_MS: 'soon' })).toThrow(ConfigError);
  expect(() => mongoTimeoutsFromEnv({ MONGODB_CONNECT_TIMEOUT_MS: '0' })).toThrow(/MONGODB_CONNECT_TIMEOUT_MS/);
});

test('with the database stopped a read is answered 503 SUBGRAPH_UNAVAILABLE within the driver timeout, naming the subgraph only', async () => {
  await database.stop();
  const res = await graphql(stack.gatewayUrl, '{ assets(first: 1) { edges { node { id } } } }', { apiKey });
  expect(res.status).toBe(503);
  expect(res.headers.get('retry-after')).toBe(String(UNAVAILABLE_RETRY_AFTER_SECONDS));
  expect(res.body.errors).toEqual([
    { message: 'the assets service is unavailable; retry shortly', path: ['assets'], extensions: { code: 'SUBGRAPH_UNAVAILABLE', serviceName: 'assets' } },
  ]);
}, 40_000);
