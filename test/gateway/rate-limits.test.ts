import Redis from 'ioredis';
import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { graphql, startTestStack, type TestStack } from '../support/stack';
import { waitFor } from '@linepack/lib/testing/until';
import { redisBackends, type RedisBackend } from '@linepack/lib/testing/redis-backends';
import { startGatewayProcess } from '../support/gateway-process';
import { requestFrom, typenameFrom } from '../support/from-address';
import { credentialCacheLookups } from '@linepack/lib/metrics';
import { FAILED_AUTH_PER_MINUTE } from '@linepack/gateway/rate-limit';

const typename = (url: string, apiKey: string) => graphql(url, '{ __typename }', { apiKey });

/**
 * Counting tests run on windows no test outlasts: a window starts with its key's first request, so with 60-second
 * windows a test slowed past a minute (a loaded machine) would see the count start over and a limit look broken. The
 * production windows' lengths are checked in config.test.ts; the headers here describe whatever windows are configured.
 */
const hourWindows = { minuteSeconds: 3_600, daySeconds: 86_400 };

async function inBatches<T>(count: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = [];
  for (let start = 0; start < count; start += concurrency) {
    const batch = Array.from({ length: Math.min(concurrency, count - start) }, (_, j) => task(start + j));
    results.push(...(await Promise.all(batch)));
  }
  return results;
}

/** On one redis-server and on a Redis Cluster, where each tenant's counters live in its own hash slot. */
describe.each(redisBackends())('rate limits shared through %s', (_name, startBackend) => {
  let backend: RedisBackend;
  let stack: TestStack;
  let tenantId: string;

  beforeAll(async () => {
    // A Redis of this file's own, so it can be killed and restarted without touching other tests.
    backend = await startBackend();
    stack = await startTestStack({ redisUrl: backend.target, rateLimitWindows: hourWindows });
    tenantId = (await stack.tenantWithKey({ tier: 'ENTERPRISE' })).tenantId;
  }, 120_000);

  afterAll(async () => {
    await stack?.stop();
    await backend?.close();
  });

  it('lets exactly 60 of 100 concurrent requests from one free key through', async () => {
    const key = await stack.keyFor(tenantId, ['assets:read'], 'FREE');
    const responses = await Promise.all(Array.from({ length: 100 }, () => typename(stack.gatewayUrl, key)));
    const ok = responses.filter((r) => r.status === 200);
    const refused = responses.filter((r) => r.status === 429);
    expect(ok).toHaveLength(60);
    expect(refused).toHaveLength(40);
    for (const r of refused) {
      expect(r.body.errors?.[0]?.extensions?.['code']).toBe('RATE_LIMITED');
      const retryAfter = Number(r.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(hourWindows.minuteSeconds);
      expect(r.headers.get('ratelimit-remaining')).toBe('0');
    }
  });

  it('counts down RateLimit-Remaining and describes both windows', async () => {
    const key = await stack.keyFor(tenantId, ['assets:read'], 'FREE');
    const remaining: number[] = [];
    for (let i = 0; i < 3; i++) {
      const res = await typename(stack.gatewayUrl, key);
      expect(res.status).toBe(200);
      expect(res.headers.get('ratelimit-limit')).toBe('60');
      expect(res.headers.get('ratelimit-policy')).toBe('60;w=3600, 1000;w=86400');
      const reset = Number(res.headers.get('ratelimit-reset'));
      expect(reset).toBeGreaterThan(0);
      expect(reset).toBeLessThanOrEqual(hourWindows.minuteSeconds);
      remaining.push(Number(res.headers.get('ratelimit-remaining')));
    }
    expect(remaining).toEqual([59, 58, 57]);
  });

  it('refused requests never reach a subgraph', async () => {
    const key = await stack.keyFor(tenantId, ['assets:read', 'assets:write'], 'FREE');
    await Promise.all(Array.from({ length: 60 }, () => typename(stack.gatewayUrl, key)));
    const refused = await graphql(stack.gatewayUrl, 'mutation { createAsset(input: { type: SYSTEM, name: "should not exist" }) { id } }', { apiKey: key });
    expect(refused.status).toBe(429);
    const stored = await stack.mongo.db(`${stack.dbPrefix}_assets`).collection('assets').countDocuments({ name: 'should not exist' });
    expect(stored).toBe(0);
  });

  it('shares one budget between two gateway processes', async () => {
    const second = await startGatewayProcess(stack, backend.target, {
      RATE_LIMIT_MINUTE_WINDOW_SECONDS: String(hourWindows.minuteSeconds),
      RATE_LIMIT_DAY_WINDOW_SECONDS: String(hourWindows.daySeconds),
    });
    try {
      const key = await stack.keyFor(tenantId, ['assets:read'], 'FREE');
      const urls = [stack.gatewayUrl, second.url];
      const statuses: number[] = [];
      for (let i = 0; i < 80; i++) statuses.push((await typename(urls[i % 2]!, key)).status);
      expect(statuses.filter((s) => s === 200)).toHaveLength(60);
      expect(statuses.slice(60).every((s) => s === 429)).toBe(true);
    } finally {
      second.process.kill('SIGTERM');
    }
  });

  it('never counts enterprise requests: 1,000 in a row, none refused', async () => {
    const key = await stack.keyFor(tenantId, ['assets:read'], 'ENTERPRISE');
    const countersBefore = await backend.keys('linepack:rl:*');
    const statuses = await inBatches(1_000, 25, async () => (await typename(stack.gatewayUrl, key)).status);
    expect(statuses.every((s) => s === 200)).toBe(true);
    expect(await backend.keys('linepack:rl:*')).toEqual(countersBefore);
  });

  it('keeps serving under in-process limits while Redis is down, then returns to Redis', async () => {
    const readiness = async () => (await (await fetch(`${stack.gatewayOrigin}/readyz`)).json()) as { status: string; rateLimits: string };
    expect(await readiness()).toMatchObject({ status: 'ready', rateLimits: 'redis' });
    await backend.stop();

    const key = await stack.keyFor(tenantId, ['assets:read'], 'FREE');
    const during = await Promise.all(Array.from({ length: 70 }, () => typename(stack.gatewayUrl, key)));
    expect(during.some((r) => r.status >= 500)).toBe(false);
    // Bounded, never unlimited: the fallback applies the same tier limit.
    expect(during.filter((r) => r.status === 200)).toHaveLength(60);
    expect(during.filter((r) => r.status === 429)).toHaveLength(10);
    expect(await readiness()).toMatchObject({ status: 'degraded', rateLimits: 'degraded' });

    await backend.start();
    await waitFor(async () => (await readiness()).rateLimits === 'redis', 30_000, 'the gateway to reconnect to Redis');

    // Shared counting resumed: a fresh key is counted in Redis again.
    const after = await stack.keyFor(tenantId, ['assets:read'], 'FREE');
    expect((await typename(stack.gatewayUrl, after)).status).toBe(200);
    expect(await backend.keys('linepack:rl:free:minute:*')).toHaveLength(1);
  });
});

describe('the daily window', () => {
  let redisServer: RedisServerProcess;
  let redis: Redis;
  let stack: TestStack;
  beforeAll(async () => {
    // A Redis of its own: the only minute counters in it are this test's.
    redisServer = await startRedisServer();
    redis = new Redis(redisServer.url);
    stack = await startTestStack({ redisUrl: redisServer.url, rateLimitWindows: hourWindows });
  });
  afterAll(async () => {
    await stack?.stop();
    await redis?.quit();
    await redisServer?.stop();
  });

  it('trips independently of the minute limit', async () => {
    const { apiKey } = await stack.tenantWithKey({ tier: 'FREE', scopes: ['assets:read'] });
    // 20 minutes of 50 requests: each minute ends the way it ends in Redis, its key gone, rather than by waiting for
    // the clock; the day's key stays and counts all 1,000.
    for (let minute = 0; minute < 20; minute++) {
      // Ten at a time: enough to overlap, not so many that this process (it runs the gateway too) lags past the
      // gateway's Redis timeout and counts in memory, which no deleted key resets.
      const batch = await inBatches(50, 10, () => typename(stack.gatewayUrl, apiKey));
      expect(batch.map((r) => r.status)).toEqual(Array(50).fill(200));
      const minuteKeys = await redis.keys('linepack:rl:free:minute:*');
      expect(minuteKeys).toHaveLength(1);
      await redis.del(minuteKeys[0]!);
    }
    const refused = await typename(stack.gatewayUrl, apiKey);
    expect(refused.status).toBe(429);
    expect(refused.headers.get('ratelimit-limit')).toBe('1000');
    // The day refuses (its limit, its wait), not a minute: this minute has had no request yet.
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(hourWindows.minuteSeconds);
  }, 120_000);
});

describe('failed authentications: aimed at the attacker, never at the valid credentials beside it', () => {
  let stack: TestStack;
  let tenantId: string;
  let apiKey: string;
  let userToken: string;
  const attacker = '127.0.0.2';
  beforeAll(async () => {
    // No test here waits for a window to end (each uses addresses of its own), and keys are cached as in production,
    // so "a key the gateway already knows" and "a key it would have to look up" both exist.
    stack = await startTestStack({ rateLimitWindows: hourWindows, credentialCacheTtlSeconds: 300 });
    const tenant = await stack.tenantWithKey();
    tenantId = tenant.tenantId;
    apiKey = tenant.apiKey;
    await stack.authStore.createUser({ tenantId: tenant.tenantId, email: 'beside-attacker@example.com', password: 'a long enough password', role: 'VIEWER' });
    const login = await requestFrom('127.0.0.3', `${stack.gatewayOrigin}/auth/login`, {
      body: { email: 'beside-attacker@example.com', password: 'a long enough password' },
    });
    userToken = login.body['access_token'] as string;
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers an address that keeps guessing with 429, while a valid key and token from that address still work', async () => {
    // The valid key was used before (the gateway has it cached); the token is verified locally (the gateway holds the
    // auth service's keys once it has verified one token).
    expect((await typenameFrom('127.0.0.3', stack.gatewayUrl, apiKey)).status).toBe(200);
    expect((await typenameFrom('127.0.0.3', stack.gatewayUrl, userToken)).status).toBe(200);
    const guesses = await Promise.all(Array.from({ length: 60 }, (_, i) => typenameFrom(attacker, stack.gatewayUrl, `lpk_${String(i).padStart(40, 'G')}`)));
    expect(guesses.every((r) => r.status === 401)).toBe(true);
    const blocked = await typenameFrom(attacker, stack.gatewayUrl, 'lpk_' + 'X'.repeat(40));
    expect(blocked.status).toBe(429);
    expect((blocked.body['errors'] as { extensions: { code: string } }[])[0]!.extensions.code).toBe('RATE_LIMITED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    // Behind a load balancer this address is everyone: the valid credentials beside the attacker that the gateway
    // verifies without a lookup go through.
    expect((await typenameFrom(attacker, stack.gatewayUrl, apiKey)).status).toBe(200);
    expect((await typenameFrom(attacker, stack.gatewayUrl, userToken)).status).toBe(200);
    // A key it would have to look up waits with the guesses (the lookup is what guessing must not get for free)…
    const unseen = await stack.keyFor(tenantId, ['assets:read'], 'PRO');
    expect((await typenameFrom(attacker, stack.gatewayUrl, unseen)).status).toBe(429);
    // …and works from any other address, which never noticed.
    expect((await typenameFrom('127.0.0.4', stack.gatewayUrl, unseen)).status).toBe(200);
    expect((await typenameFrom('127.0.0.4', stack.gatewayUrl, 'lpk_' + 'Y'.repeat(40))).status).toBe(401);
  });

  it('refuses guesses from a blocked address before any lookup: no introspection, no cache miss', async () => {
    const guesser = '127.0.0.15';
    const misses = async () => (await credentialCacheLookups.get()).values.find((v) => v.labels['result'] === 'miss')?.value ?? 0;
    const guess = (i: number) => typenameFrom(guesser, stack.gatewayUrl, `lpk_${String(i).padStart(40, 'Z')}`);
    const before = await misses();
    const answers: number[] = [];
    // One at a time: each guess is decided after the one before was counted.
    for (let i = 0; i < 100; i++) answers.push((await guess(i)).status);
    expect(answers.slice(0, FAILED_AUTH_PER_MINUTE).every((s) => s === 401)).toBe(true);
    expect(answers.slice(FAILED_AUTH_PER_MINUTE).every((s) => s === 429)).toBe(true);
    // Each of the first 60 cost a lookup; the 40 after the block cost none.
    expect((await misses()) - before).toBe(FAILED_AUTH_PER_MINUTE);
    // The same through the /auth proxy: introspection from the blocked address is refused before it is forwarded.
    const introspected = await requestFrom(guesser, `${stack.gatewayOrigin}/auth/introspect`, { headers: { authorization: `Bearer lpk_${'W'.repeat(40)}` } });
    expect(introspected.status).toBe(429);
    expect(introspected.body['code']).toBe('RATE_LIMITED');
  });

  it('refuses one credential that keeps failing from anywhere before verifying it again', async () => {
    const revoked = await stack.tenantWithKey();
    await stack.authStore.revokeApiKey(revoked.tenantId, revoked.keyId);
    const addresses = ['127.0.0.5', '127.0.0.6', '127.0.0.7', '127.0.0.8', '127.0.0.9', '127.0.0.10'];
    const answers = [];
    for (let i = 0; i < 12; i++) answers.push((await typenameFrom(addresses[i % addresses.length]!, stack.gatewayUrl, revoked.apiKey)).status);
    expect(answers.slice(0, 10).every((s) => s === 401)).toBe(true);
    expect(answers.slice(10)).toEqual([429, 429]);
  });

  it('throttles guessing through /auth/introspect like /graphql: a blocked address is refused before the auth service looks anything up', async () => {
    const introspect = (from: string, token: string) =>
      requestFrom(from, `${stack.gatewayOrigin}/auth/introspect`, { headers: { authorization: `Bearer ${token}` } });
    const guesser = '127.0.0.11';
    const answers = [];
    for (let i = 0; i < 70; i++) answers.push((await introspect(guesser, `lpk_${String(i).padStart(40, 'Q')}`)).status);
    expect(answers.slice(0, 60).every((s) => s === 200)).toBe(true); // {"active": false}
    expect(answers.slice(60).every((s) => s === 429)).toBe(true);
    // Introspection is an oracle (it tells a valid key from a guess): from the guesser's address it waits for the
    // window, whatever it is sent; from any other address it answers.
    expect((await introspect(guesser, apiKey)).status).toBe(429);
    const valid = await introspect('127.0.0.16', apiKey);
    expect(valid.status).toBe(200);
    expect(valid.body['active']).toBe(true);
  });

  it('throttles refresh-token guessing on /auth/refresh the same way (/auth/logout answers 204 whatever it is sent)', async () => {
    const guesser = '127.0.0.12';
    const answers = [];
    for (let i = 0; i < 62; i++)
      answers.push((await requestFrom(guesser, `${stack.gatewayOrigin}/auth/refresh`, { body: { refresh_token: `not.a.token${i}` } })).status);
    expect(answers.slice(0, 60).every((s) => s === 401)).toBe(true);
    expect(answers.slice(60)).toEqual([429, 429]);
    // A refresh token that failed its ten times is refused before the auth service sees it again, on either route.
    const stale = 'stale.refresh.token';
    for (let i = 0; i < 10; i++) await requestFrom('127.0.0.13', `${stack.gatewayOrigin}/auth/refresh`, { body: { refresh_token: stale } });
    expect((await requestFrom('127.0.0.14', `${stack.gatewayOrigin}/auth/refresh`, { body: { refresh_token: stale } })).status).toBe(429);
    expect((await requestFrom('127.0.0.14', `${stack.gatewayOrigin}/auth/logout`, { body: { refresh_token: stale } })).status).toBe(429);
  });
});
