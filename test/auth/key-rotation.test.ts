import { createPublicKey } from 'node:crypto';
import { createLogger } from '@linepack/lib/logger';
import type { RunningService } from '@linepack/lib/subgraph-server';
import { defaultTokenLifetimes, startAuthSubgraph } from '@linepack/subgraph-auth';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { publishAheadMsFor, SigningKeyRing } from '@linepack/subgraph-auth/signing-key-ring';
import { startGateway, type RunningGateway } from '@linepack/gateway/server';
import { startBalancer, type Balancer } from '../support/balancer';
import { gatewayConfigFor, graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * Rotating the token signing key without downtime: the auth service is redeployed with a new key
 * (the old one verify-only) while the gateway keeps running; old and new tokens both work.
 */
const oldKeyPem = SigningKeys.generatePem();
const newKeyPem = SigningKeys.generatePem();
const password = 'rotation password 123';
let stack: TestStack;
let replacement: RunningService | null = null;

beforeAll(async () => {
  stack = await startTestStack({ auth: { signingKeyPem: oldKeyPem } });
  const { tenantId } = await stack.tenantWithKey();
  await stack.authStore.createUser({ tenantId, email: 'rotate-key@example.com', password, role: 'VIEWER' });
});
afterAll(async () => {
  await replacement?.stop();
  await stack?.stop();
});

async function login(): Promise<string> {
  const res = await fetch(`${stack.gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'rotate-key@example.com', password }),
  });
  expect(res.status).toBe(200);
  return ((await res.json()) as { access_token: string }).access_token;
}

const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid: string }).kid;

it('keeps old tokens valid and accepts tokens from the new key once the gateway meets its kid', async () => {
  const oldToken = await login();
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: oldToken })).status).toBe(200); // gateway now caches the old JWKS

  // Redeploy auth on the same address: new signing key, the old public key verify-only.
  const port = stack.subgraphs.auth.port;
  await stack.subgraphs.auth.stop();
  const oldPublicPem = createPublicKey(oldKeyPem).export({ type: 'spki', format: 'pem' }).toString();
  replacement = await startAuthSubgraph({
    port,
    host: '127.0.0.1',
    mongoUri: process.env['MONGODB_URI']!,
    dbPrefix: stack.dbPrefix,
    internalTokenPublicKey: stack.internalKeys.publicKeyPem,
    logger: createLogger('auth', 'silent'),
    auth: { ...defaultTokenLifetimes, signingKeyPem: newKeyPem, verifyOnlyPublicKeyPems: [oldPublicPem] },
  });

  const jwks = (await (await fetch(`${stack.gatewayOrigin}/auth/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] };
  expect(jwks.keys).toHaveLength(2);

  const newToken = await login();
  expect(kidOf(newToken)).not.toBe(kidOf(oldToken));
  expect(jwks.keys.map((k) => k.kid)).toEqual(expect.arrayContaining([kidOf(oldToken), kidOf(newToken)]));
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: oldToken })).status).toBe(200);
  // The gateway refetches the JWKS for an unknown kid (at most every 5 s, against forged-kid floods).
  await new Promise((r) => setTimeout(r, 5_100));
  expect((await graphql(stack.gatewayUrl, '{ me { id } }', { apiKey: newToken })).status).toBe(200);
}, 60_000);

describe('the signing key ring: rotation on a schedule, with overlap, and retirement', () => {
  let ringStack: TestStack;
  const rootPem = SigningKeys.generatePem();
  const jwksKids = async (s: TestStack) =>
    ((await (await fetch(`${s.gatewayOrigin}/auth/.well-known/jwks.json`)).json()) as { keys: { kid: string }[] }).keys.map((k) => k.kid);
  const waitFor = async (check: () => Promise<boolean>, ms: number) => {
    const until = Date.now() + ms;
    while (Date.now() < until) {
      if (await check()) return true;
      await new Promise((r) => setTimeout(r, 100));
    }
    return false;
  };
  beforeAll(async () => {
    // Auth replicas re-read the ring every 200 ms here (30 s by default); no automatic rotation in this stack.
    ringStack = await startTestStack({ auth: { signingKeyPem: rootPem, signingKeyRefreshMs: 200, signingKeyRotationMs: 0 } });
    const { tenantId } = await ringStack.tenantWithKey();
    await ringStack.authStore.createUser({ tenantId, email: 'ring@example.com', password, role: 'VIEWER' });
  });
  afterAll(async () => {
    await ringStack?.stop();
  });
  const loginAt = async (s: TestStack) => {
    const res = await fetch(`${s.gatewayOrigin}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'ring@example.com', password }),
    });
    return (await res.json()) as { access_token: string; refresh_token: string };
  };

  it('rotates (linepack keys rotate-signing): new tokens from the new key, old ones valid until they expire, then retired', async () => {
    const before = await loginAt(ringStack);
    const authDb = ringStack.authStore.users.db;
    // Published at once, signing later (a minute in production: publishAheadMsFor the replicas' refresh; an hour
    // here, then moved to now, so the wait is not a clock's).
    const rotated = await SigningKeyRing.rotate(authDb, rootPem, undefined, undefined, 3_600_000);
    const kid = rotated!.kid;
    expect(await waitFor(async () => (await jwksKids(ringStack)).includes(kid), 30_000)).toBe(true);
    expect(kidOf((await loginAt(ringStack)).access_token)).toBe(kidOf(before.access_token));
    await authDb.collection<{ _id: string; signsFrom: Date }>('signingKeys').updateOne({ _id: kid }, { $set: { signsFrom: new Date() } });
    expect(await waitFor(async () => kidOf((await loginAt(ringStack)).access_token) === kid, 30_000)).toBe(true);
    expect(await jwksKids(ringStack)).toEqual(expect.arrayContaining([kid, kidOf(before.access_token)]));
    expect((await graphql(ringStack.gatewayUrl, '{ me { id } }', { apiKey: before.access_token })).status).toBe(200);
    // A refresh token the old key signed still refreshes (into tokens of the new key).
    const refreshed = await fetch(`${ringStack.gatewayOrigin}/auth/refresh`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ refresh_token: before.refresh_token }),
    });
    expect(refreshed.status).toBe(200);
    expect(kidOf(((await refreshed.json()) as { access_token: string }).access_token)).toBe(kid);

    // Once the last access token it signed has expired, the old key leaves the JWKS; once its last refresh token
    // has, it is deleted. (Its retirement is moved back in time instead of waiting 15 minutes and 30 days.)
    const keys = authDb.collection<{ _id: string; retiredAt: Date | null }>('signingKeys');
    await keys.updateOne({ _id: kidOf(before.access_token) }, { $set: { retiredAt: new Date(Date.now() - 3_600_000) } });
    expect(await waitFor(async () => !(await jwksKids(ringStack)).includes(kidOf(before.access_token)), 30_000)).toBe(true);
    await keys.updateOne({ _id: kidOf(before.access_token) }, { $set: { retiredAt: new Date(Date.now() - 40 * 86_400_000) } });
    expect(await waitFor(async () => (await keys.countDocuments({ _id: kidOf(before.access_token) })) === 0, 30_000)).toBe(true);
  }, 120_000);

  it('keeps private keys encrypted at rest under JWT_SIGNING_KEY', async () => {
    const docs = await ringStack.authStore.users.db.collection('signingKeys').find().toArray();
    expect(docs.length).toBeGreaterThan(0);
    expect(JSON.stringify(docs)).not.toContain('PRIVATE KEY');
  });

  it('rotates on its own when the key is older than the schedule allows', async () => {
    // A schedule of an hour, so nothing rotates by the clock while the stack starts, however long that takes on a busy
    // machine; the key is then made two hours old in the ring, as time would.
    const scheduled = await startTestStack({ auth: { signingKeyRefreshMs: 200, signingKeyRotationMs: 3_600_000 } });
    try {
      // The first generation (the root), made two hours old in the ring, as time would: the next refresh (200 ms)
      // finds it due and publishes a second generation beside it.
      const keys = scheduled.authStore.users.db.collection<{ _id: string; generation: number; activatedAt: Date; signsFrom?: Date }>('signingKeys');
      const first = (await keys.findOne({ generation: 0 }))!._id;
      expect(await jwksKids(scheduled)).toEqual([first]);
      const twoHoursAgo = new Date(Date.now() - 2 * 3_600_000);
      await keys.updateOne({ _id: first }, { $set: { activatedAt: twoHoursAgo, signsFrom: twoHoursAgo } });
      expect(await waitFor(async () => (await jwksKids(scheduled)).length === 2, 30_000)).toBe(true);
      expect(await jwksKids(scheduled)).toContain(first);
      expect(await keys.countDocuments({ generation: { $gt: 0 } })).toBe(1);
    } finally {
      await scheduled.stop();
    }
  }, 90_000);
});

describe('a signing-key rotation under load, two auth replicas behind a balancer', () => {
  /**
   * Users sign in and use their fresh access token at once, through a gateway whose auth service is two replicas
   * behind a round-robin balancer (each re-reading the ring every second), while an older token keeps being used.
   * The new generation is in every replica's JWKS before any token is signed with it (publishAheadMsFor), so the
   * gateway, whichever replica it asks for the JWKS, never meets a kid it cannot find: no request fails. (Signing at
   * once — publish ahead 0 — a replica that has not re-read the ring yet answers the gateway's refetch without the key,
   * and the gateway refuses the new tokens until its next refetch.)
   */
  const refreshMs = 1_000;
  const rootPem = SigningKeys.generatePem();
  let replicaStack: TestStack;
  let second: RunningService;
  let balancer: Balancer;
  let gateway: RunningGateway;
  const roomyThrottle = {
    perEmailAndIp: { failures: 5, seconds: 900 },
    perIp: { failures: 500, seconds: 900 },
    perEmail: { softAfter: 10, seconds: 900, maxDelaySeconds: 2 },
  };

  beforeAll(async () => {
    const auth = { signingKeyPem: rootPem, signingKeyRefreshMs: refreshMs, signingKeyRotationMs: 0, loginThrottle: roomyThrottle };
    replicaStack = await startTestStack({ auth });
    second = await startAuthSubgraph({
      port: 0,
      host: '127.0.0.1',
      mongoUri: process.env['MONGODB_URI']!,
      dbPrefix: replicaStack.dbPrefix,
      internalTokenPublicKey: replicaStack.internalKeys.publicKeyPem,
      logger: createLogger('auth', 'silent'),
      auth: { ...defaultTokenLifetimes, verifyOnlyPublicKeyPems: [], ...auth },
    });
    balancer = await startBalancer('/graphql', replicaStack.subgraphs.auth.url, second.url);
    const subgraphUrls = Object.fromEntries(Object.entries(replicaStack.subgraphs).map(([name, s]) => [name, s.url]));
    gateway = await startGateway(
      gatewayConfigFor({
        authUrl: balancer.origin,
        subgraphUrls: { ...subgraphUrls, auth: balancer.url },
        internalTokenPrivateKey: replicaStack.internalKeys.privateKeyPem,
      }),
    );
    const { tenantId } = await replicaStack.tenantWithKey();
    await replicaStack.authStore.createUser({ tenantId, email: 'load@example.com', password, role: 'VIEWER' });
  }, 120_000);
  afterAll(async () => {
    await gateway?.stop();
    await second?.stop();
    await balancer?.close();
    await replicaStack?.stop();
  });

  it('signs in and serves fresh and older tokens throughout the rotation: no failed request', async () => {
    const failures: string[] = [];
    const kidsSeen = new Set<string>();
    let answered = 0;
    const signIn = async (): Promise<string | null> => {
      const res = await fetch(`${gateway.origin}/auth/login`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ email: 'load@example.com', password }),
      });
      if (res.status !== 200) return (void failures.push(`login ${res.status} ${await res.text()}`), null);
      return ((await res.json()) as { access_token: string }).access_token;
    };
    const use = async (token: string, what: string) => {
      const res = await graphql(gateway.url, '{ me { id } }', { apiKey: token });
      answered += 1;
      if (res.status !== 200 || res.body.errors) failures.push(`${what} (kid ${kidOf(token)}): ${res.status} ${JSON.stringify(res.body.errors)}`);
    };
    const older = (await signIn())!;
    let stopping = false;
    const loops = Array.from({ length: 3 }, async () => {
      while (!stopping) {
        const fresh = await signIn();
        if (fresh) {
          kidsSeen.add(kidOf(fresh));
          await use(fresh, 'a fresh token');
        }
        await use(older, 'the older token');
      }
    });
    const until = async (check: () => boolean) => {
      while (!check() && failures.length === 0) await new Promise((r) => setTimeout(r, 50));
    };
    await until(() => answered >= 10);
    const rotated = await SigningKeyRing.rotate(replicaStack.authStore.users.db, rootPem, undefined, undefined, publishAheadMsFor(refreshMs));
    // Until its tokens have been used many times over after it took over.
    await until(() => kidsSeen.has(rotated!.kid));
    const after = answered;
    await until(() => answered >= after + 30);
    stopping = true;
    await Promise.all(loops);
    expect(failures).toEqual([]);
    expect(kidsSeen).toEqual(new Set([kidOf(older), rotated!.kid]));
  }, 120_000);
});

describe('rate limits belong to the key lineage: rotating a key does not give it a fresh budget', () => {
  let limited: TestStack;
  const introspect = async (key: string) =>
    (await (await fetch(`${limited.gatewayOrigin}/auth/introspect`, { headers: { authorization: `Bearer ${key}` } })).json()) as Record<string, unknown>;
  const typename = (key: string) => graphql(limited.gatewayUrl, '{ __typename }', { apiKey: key });
  beforeAll(async () => {
    // Counted in Redis as in production; a "minute" of an hour, so no window ends while the test runs.
    limited = await startTestStack({ redisUrl: process.env['REDIS_URL'], rateLimitWindows: { minuteSeconds: 3_600, daySeconds: 86_400 } });
  });
  afterAll(async () => {
    await limited?.stop();
  });

  it('a rotated free key goes on from what its predecessor spent, rotation after rotation', async () => {
    const { tenantId, apiKey: admin } = await limited.tenantWithKey({ scopes: ['admin:*'] });
    const original = await limited.authStore.createApiKey({ tenantId, name: 'nightly export', scopes: ['assets:read'], tier: 'FREE' });
    for (let i = 0; i < 55; i++) expect((await typename(original.secret)).status).toBe(200);

    // Rotated by the tenant's admin through the API: the new key's first request sees the 5 requests left.
    const rotated = await graphql<{ rotateApiKey: { secret: string; apiKey: { id: string } } }>(
      limited.gatewayUrl,
      `mutation { rotateApiKey(id: "${original.apiKey._id}") { secret apiKey { id } } }`,
      { apiKey: admin },
    );
    expect(rotated.body.errors).toBeUndefined();
    const second = rotated.body.data!.rotateApiKey;
    expect(second.apiKey.id).not.toBe(original.apiKey._id);
    const first = await typename(second.secret);
    expect(first.status).toBe(200);
    expect(first.headers.get('ratelimit-remaining')).toBe('4');
    for (let i = 0; i < 4; i++) expect((await typename(second.secret)).status).toBe(200);
    expect((await typename(second.secret)).status).toBe(429);

    // Rotating again (the CLI's path) does not reset it either: the lineage is the original key's id.
    const third = await limited.authStore.rotateApiKey(tenantId, second.apiKey.id);
    expect((await typename(third.secret)).status).toBe(429);
    expect(await introspect(third.secret)).toMatchObject({ active: true, sub: third.apiKey._id, lineage_id: original.apiKey._id });
  });

  it('a new key (not a rotation) has a budget of its own', async () => {
    const { tenantId } = await limited.tenantWithKey();
    const created = await limited.authStore.createApiKey({ tenantId, name: 'another script', scopes: ['assets:read'], tier: 'FREE' });
    const res = await typename(created.secret);
    expect(res.status).toBe(200);
    expect(res.headers.get('ratelimit-remaining')).toBe('59');
    expect(await introspect(created.secret)).toMatchObject({ lineage_id: created.apiKey._id });
  });
});
