import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { databaseName } from '@linepack/lib/mongo';
import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { waitFor } from '@linepack/lib/testing/until';
import { startGatewayProcess } from '../support/gateway-process';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * Redis away (issue "Fair share under heavy writes", item 4): two gateway replicas used to give a free key twice its
 * limit (each counted the whole limit in its own memory), and a revoked key or a signed-out session kept working until
 * a cache entry or the access token expired, because revocations travel on Redis. Now each of the GATEWAY_REPLICAS
 * gives at most its share, and every gateway pulls the revocation list from the auth service while the channel is
 * down.
 */
const REPLICAS = 2;
const KEY_CACHE_SECONDS = 300;
let redisServer: RedisServerProcess;
let stack: TestStack;
let replica: { url: string; origin: string; process: ChildProcess };
let tenantId: string;
const password = 'a long enough password';

const typename = (url: string, token: string) => graphql(url, '{ __typename }', { apiKey: token });
const readiness = async (origin: string) => ((await (await fetch(`${origin}/readyz`)).json()) as { rateLimits: string }).rateLimits;

beforeAll(async () => {
  redisServer = await startRedisServer();
  // Keys cached for 5 minutes: without the revocation list a revoked key would work that long. A "minute" of an hour,
  // so no window ends while the test counts.
  stack = await startTestStack({
    redisUrl: redisServer.url,
    inProcessLimitShares: REPLICAS,
    credentialCacheTtlSeconds: KEY_CACHE_SECONDS,
    rateLimitWindows: { minuteSeconds: 3_600, daySeconds: 86_400 },
  });
  replica = await startGatewayProcess(stack, redisServer.url, {
    GATEWAY_REPLICAS: String(REPLICAS),
    CREDENTIAL_CACHE_TTL_SECONDS: String(KEY_CACHE_SECONDS),
    RATE_LIMIT_MINUTE_WINDOW_SECONDS: '3600',
  });
  tenantId = (await stack.tenantWithKey({ tier: 'ENTERPRISE' })).tenantId;
  await stack.authStore.createUser({ tenantId, email: 'outage@example.com', password, role: 'VIEWER' });
  await redisServer.stop();
  for (const origin of [stack.gatewayOrigin, replica.origin]) {
    await waitFor(async () => (await readiness(origin)) === 'degraded', 15_000, `${origin} to notice Redis is down`);
  }
}, 90_000);
afterAll(async () => {
  replica?.process.kill('SIGTERM');
  await stack?.stop();
  await redisServer?.stop();
});

it('two replicas together give a free key at most its limit: each gives its share (60 ÷ GATEWAY_REPLICAS)', async () => {
  const key = await stack.keyFor(tenantId, ['assets:read'], 'FREE');
  const statuses = { [stack.gatewayUrl]: [] as number[], [replica.url]: [] as number[] };
  for (let i = 0; i < 80; i++) {
    for (const url of [stack.gatewayUrl, replica.url]) statuses[url]!.push((await typename(url, key)).status);
  }
  for (const answers of Object.values(statuses)) {
    expect(answers.filter((s) => s === 200)).toHaveLength(60 / REPLICAS);
    expect(answers.slice(60 / REPLICAS).every((s) => s === 429)).toBe(true);
  }
  // The headers describe what this gateway gives.
  const refused = await typename(stack.gatewayUrl, key);
  expect(refused.headers.get('ratelimit-limit')).toBe(String(60 / REPLICAS));
});

it('a key revoked while Redis is down is refused by every gateway long before its cache entry expires', async () => {
  const created = await stack.authStore.createApiKey({ tenantId, name: 'revoked in an outage', scopes: ['assets:read'], tier: 'PRO' });
  // Both gateways verify it and keep it for KEY_CACHE_SECONDS.
  for (const url of [stack.gatewayUrl, replica.url]) expect((await typename(url, created.secret)).status).toBe(200);
  // Revoked in the database only (as the CLI does it, or the auth service when it cannot publish).
  await stack.authStore.revokeApiKey(tenantId, created.apiKey._id);
  for (const url of [stack.gatewayUrl, replica.url]) {
    await waitFor(async () => (await typename(url, created.secret)).status === 401, 20_000, `${url} to refuse the revoked key`);
  }
}, 60_000);

it('a session signed out while Redis is down is refused by every gateway, and introspection agrees', async () => {
  const login = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'outage@example.com', password }),
  });
  expect(login.status).toBe(200);
  const session = (await login.json()) as { access_token: string; refresh_token: string };
  for (const url of [stack.gatewayUrl, replica.url]) expect((await typename(url, session.access_token)).status).toBe(200);
  const out = await fetch(`${stack.gatewayOrigin}/auth/logout`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ refresh_token: session.refresh_token }),
  });
  expect(out.status).toBe(204);
  for (const url of [stack.gatewayUrl, replica.url]) {
    await waitFor(async () => (await typename(url, session.access_token)).status === 401, 20_000, `${url} to refuse the signed-out session`);
  }
  const introspected = await fetch(`${stack.gatewayOrigin}/auth/introspect`, { headers: { authorization: `Bearer ${session.access_token}` } });
  expect(await introspected.json()).toEqual({ active: false });
}, 60_000);

/** A sign-in through the gateway, and the session (refresh family) its access token names as `sid`. */
async function signIn(): Promise<{ accessToken: string; familyId: string }> {
  const login = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'outage@example.com', password }),
  });
  expect(login.status).toBe(200);
  const { access_token: accessToken } = (await login.json()) as { access_token: string };
  const claims = JSON.parse(Buffer.from(accessToken.split('.')[1]!, 'base64url').toString('utf8')) as { sid: string };
  return { accessToken, familyId: claims.sid };
}

/** The auth service's refresh tokens, written directly: thousands of rotations or sessions in a moment. */
const refreshTokens = () =>
  stack.mongo
    .db(databaseName(stack.dbPrefix, 'auth'))
    .collection<{ _id: string; familyId: string; userId: string; createdAt: Date; expiresAt: Date; rotatedAt: Date | null; revokedAt: Date | null }>(
      'refreshTokens',
    );

/** Ends a session in the database only (as when the auth service cannot publish), dated `at`. */
const endSession = (familyId: string, at: number) => refreshTokens().updateMany({ familyId }, { $set: { revokedAt: new Date(at) } });

const expectRefusedEverywhere = async (sessions: readonly { accessToken: string }[]) => {
  for (const url of [stack.gatewayUrl, replica.url]) {
    for (const [i, { accessToken }] of sessions.entries()) {
      await waitFor(async () => (await typename(url, accessToken)).status === 401, 20_000, `${url} to refuse signed-out session ${i}`);
    }
  }
};

/** More than one revocation-list answer (10,000) of refresh-token documents or of sessions. */
const MORE_THAN_ONE_ANSWER = 10_001;

it('sessions with thousands of rotated refresh tokens each, signed out while Redis is down, are all refused', async () => {
  // The list used to take the newest 10,000 token documents and then count sessions in them: one long session's
  // rotations filled it, the other session was never listed, and nothing said the list was cut.
  const [short, long] = [await signIn(), await signIn()];
  const { userId } = (await refreshTokens().findOne({ familyId: long.familyId }))!;
  const now = Date.now();
  await refreshTokens().insertMany(
    Array.from({ length: MORE_THAN_ONE_ANSWER }, () => ({
      _id: randomUUID(),
      familyId: long.familyId,
      userId,
      createdAt: new Date(now),
      expiresAt: new Date(now + 86_400_000),
      rotatedAt: new Date(now),
      revokedAt: null,
    })),
  );
  for (const url of [stack.gatewayUrl, replica.url]) {
    for (const { accessToken } of [short, long]) expect((await typename(url, accessToken)).status).toBe(200);
  }
  // The long session ends last; the short one is written afterwards (dated a second earlier), so no pull can see it
  // alone before the long one.
  await endSession(long.familyId, now);
  await endSession(short.familyId, now - 1_000);
  await expectRefusedEverywhere([short, long]);
}, 90_000);

it('more sessions signed out while Redis is down than one answer holds are all refused: the list is read in pages', async () => {
  const [oldest, newest] = [await signIn(), await signIn()];
  const { userId } = (await refreshTokens().findOne({ familyId: oldest.familyId }))!;
  for (const url of [stack.gatewayUrl, replica.url]) {
    for (const { accessToken } of [oldest, newest]) expect((await typename(url, accessToken)).status).toBe(200);
  }
  // Newest first in writing, oldest last, so every pull sees the oldest with all the others. Between them, more
  // sessions than one answer holds, all ended in the same millisecond (one user's "sign out everywhere").
  const now = Date.now();
  await endSession(newest.familyId, now);
  await refreshTokens().insertMany(
    Array.from({ length: MORE_THAN_ONE_ANSWER }, () => ({
      _id: randomUUID(),
      familyId: randomUUID(),
      userId,
      createdAt: new Date(now - 2_000),
      expiresAt: new Date(now + 86_400_000),
      rotatedAt: null,
      revokedAt: new Date(now - 500),
    })),
  );
  await endSession(oldest.familyId, now - 1_000);
  await expectRefusedEverywhere([oldest, newest]);
}, 90_000);
