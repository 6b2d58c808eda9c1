/**
 * What the gateway does per request, kept cheap without changing what it decides (issue 13): one Redis round trip for
 * the failure check and both rate-limit windows (counted so rate-limiter-flexible reads the same numbers), identity
 * tokens reused per credential and subgraph, scope analysis cached per document but checked per credential.
 */
import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import Redis from 'ioredis';
import jwt from 'jsonwebtoken';
import { RateLimiterRedis } from 'rate-limiter-flexible';
import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { deadlineFromHeader, generateInternalKeyPair, InternalTokenVerifier, MAX_REQUEST_DEADLINE_MS, mintInternalToken } from '@linepack/lib/identity';
import type { GatewayContext } from '@linepack/gateway/context';
import { AuthenticatedSubgraphDataSource } from '@linepack/gateway/subgraph-data-source';
import { IdentityTokenCache } from '@linepack/gateway/identity-tokens';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';
import { waitFor } from '../support/wait';

/**
 * The commands sent to Redis on the gateway's own keys (rate limits, write counters) while `send` runs, read with
 * MONITOR over a plain socket; the commands a script runs inside Redis (source "lua") are left out. The stack's event
 * consumers poll the same Redis with other keys.
 */
async function gatewayCommandsDuring(redisUrl: string, send: () => Promise<unknown>): Promise<string[][]> {
  const { hostname, port } = new URL(redisUrl);
  const socket = net.connect(Number(port), hostname);
  let buffered = '';
  const commands: string[][] = [];
  let monitoring!: () => void;
  const started = new Promise<void>((resolve) => (monitoring = resolve));
  socket.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    let end: number;
    while ((end = buffered.indexOf('\r\n')) >= 0) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 2);
      if (line === '+OK') monitoring();
      // +1795455283.918893 [0 127.0.0.1:49668] "get" "linepack:writes:…"
      const match = /^\+[\d.]+ \[\d+ ([^\]]+)\] (.*)$/.exec(line);
      if (!match || match[1] === 'lua') continue;
      const args = [...match[2]!.matchAll(/"((?:[^"\\]|\\.)*)"/g)].map((m) => m[1]!);
      if (args.some((a) => /^linepack:(rl|writes):/.test(a))) commands.push(args);
    }
  });
  socket.write('MONITOR\r\n');
  await started;
  try {
    await send();
    await new Promise((resolve) => setTimeout(resolve, 200));
  } finally {
    socket.destroy();
  }
  return commands;
}

describe('one Redis round trip per request, counted as rate-limiter-flexible counts', () => {
  let redisServer: RedisServerProcess;
  let stack: TestStack;
  let tenantId: string;
  let client: Redis;

  beforeAll(async () => {
    redisServer = await startRedisServer();
    // Keys verified once and then answered from the gateway's cache: the hot path.
    stack = await startTestStack({ redisUrl: redisServer.url, credentialCacheTtlSeconds: 30 });
    tenantId = (await stack.tenantWithKey({ tier: 'ENTERPRISE' })).tenantId;
    client = new Redis(redisServer.url);
  });

  afterAll(async () => {
    client?.disconnect();
    await stack?.stop();
    await redisServer?.stop();
  });

  it('checks the credential and counts both windows of a pro key in one command', async () => {
    const key = await stack.keyFor(tenantId, ['assets:read'], 'PRO');
    expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: key })).status).toBe(200);
    let res!: Awaited<ReturnType<typeof graphql>>;
    const commands = await gatewayCommandsDuring(redisServer.url, async () => {
      res = await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: key });
    });
    expect(res.status).toBe(200);
    const touching = (fragment: string) => commands.filter((args) => args.some((a) => a.includes(fragment)));
    // The failure counter, the minute and the day window, all in one script call.
    const windows = touching('linepack:rl:pro:minute');
    expect(windows).toHaveLength(1);
    expect(windows[0]![0]!.toLowerCase()).toMatch(/^eval(sha)?$/);
    expect(windows[0]!.some((a) => a.startsWith('linepack:rl:pro:day'))).toBe(true);
    expect(windows[0]!.some((a) => a.startsWith('linepack:rl:credential-failures'))).toBe(true);
    expect(touching('linepack:rl:pro:day')).toHaveLength(1);
    expect(touching('linepack:rl:credential-failures')).toHaveLength(1);
    expect(res.headers.get('ratelimit-remaining')).toBe('298');
  });

  it('sends nothing to Redis for an enterprise key on a request that calls no subgraph, and one read when it does', async () => {
    const key = await stack.keyFor(tenantId, ['assets:read'], 'ENTERPRISE');
    expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: key })).status).toBe(200);
    const commandsDuring = (send: () => Promise<unknown>) => gatewayCommandsDuring(redisServer.url, send);
    expect(await commandsDuring(() => graphql(stack.gatewayUrl, '{ __typename }', { apiKey: key }))).toEqual([]);
    const reads = await commandsDuring(() =>
      graphql(stack.gatewayUrl, '{ a: assets(first: 1) { totalCount } b: assets(first: 2) { totalCount } }', { apiKey: key }),
    );
    // The tenant's write counter, read once for the request however many subgraph queries it makes.
    // In the tenant's Redis Cluster hash slot ({tenant}), beside its credentials' windows.
    expect(reads).toEqual([['get', `linepack:writes:{${tenantId}}`]]);
  });

  it('leaves counts that rate-limiter-flexible reads exactly, so replicas on either path share one budget', async () => {
    const key = await stack.keyFor(tenantId, ['assets:read'], 'FREE');
    for (let i = 0; i < 7; i++) expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: key })).status).toBe(200);
    const subject = (await graphql<{ __typename: string }>(stack.gatewayUrl, '{ __typename }', { apiKey: key })).headers;
    expect(subject.get('ratelimit-remaining')).toBe('52');
    // The gateway's own limiter settings (rate-limit.ts), read back by the library it replaces on the hot path.
    const keyId = (await stack.authStore.listApiKeys(tenantId)).find((k) => k.tier === 'FREE')!._id;
    const minute = new RateLimiterRedis({ storeClient: client, points: 60, duration: 60, keyPrefix: 'linepack:rl:free:minute:60' });
    const day = new RateLimiterRedis({ storeClient: client, points: 1000, duration: 86_400, keyPrefix: 'linepack:rl:free:day:86400' });
    // The credential's windows are counted under its tenant's hash tag (gateway/src/rate-limit.ts windowCounterKey).
    const counted = `{${tenantId}}:key:${keyId}`;
    expect((await minute.get(counted))?.consumedPoints).toBe(8);
    expect((await day.get(counted))?.consumedPoints).toBe(8);
    // And the other way round: points spent through the library are seen by the gateway.
    await minute.consume(counted, 50);
    const after = await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: key });
    expect(after.status).toBe(200);
    expect(after.headers.get('ratelimit-remaining')).toBe('1');
    expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: key })).status).toBe(200);
    expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: key })).status).toBe(429);
  });

  it('shares identical reads in flight only within a tenant, and a mutation moves its tenant past the reads before it', async () => {
    const a = await stack.tenantWithKey({ tier: 'ENTERPRISE' });
    const b = await stack.tenantWithKey({ tier: 'ENTERPRISE' });
    await createAsset(stack.gatewayUrl, a.apiKey, { type: 'PIPELINE', name: 'Line of A' });
    await createAsset(stack.gatewayUrl, b.apiKey, { type: 'PIPELINE', name: 'Line of B' });
    const query = '{ assets(first: 10) { edges { node { name } } } }';
    const names = (res: Awaited<ReturnType<typeof graphql<{ assets: { edges: { node: { name: string } }[] } }>>>) =>
      res.body.data?.assets.edges.map((e) => e.node.name);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) =>
        graphql<{ assets: { edges: { node: { name: string } }[] } }>(stack.gatewayUrl, query, { apiKey: i % 2 ? a.apiKey : b.apiKey }),
      ),
    );
    answers.forEach((res, i) => expect(names(res)).toEqual([i % 2 ? 'Line of A' : 'Line of B']));
    const epoch = async () => Number((await client.get(`linepack:writes:{${a.tenantId}}`)) ?? 0);
    const before = await epoch();
    await createAsset(stack.gatewayUrl, a.apiKey, { type: 'PIPELINE', name: 'Second line of A' });
    expect(await epoch()).toBe(before + 1);
    expect(names(await graphql(stack.gatewayUrl, query, { apiKey: a.apiKey }))?.sort()).toEqual(['Line of A', 'Second line of A']);
  });

  it('checks scopes per credential even when the same query was analysed for another one', async () => {
    const query = '{ assets(first: 1) { totalCount } measurement(id: "00000000-0000-4000-8000-000000000000") { id } }';
    const both = await stack.keyFor(tenantId, ['assets:read', 'measurements:read']);
    const assetsOnly = await stack.keyFor(tenantId, ['assets:read']);
    expect((await graphql(stack.gatewayUrl, query, { apiKey: both })).status).toBe(200);
    const refused = await graphql(stack.gatewayUrl, query, { apiKey: assetsOnly });
    expect(refused.status).toBe(403);
    expect(refused.body.errors?.[0]?.extensions?.['missingScopes']).toEqual(['measurements:read']);
    expect((await graphql(stack.gatewayUrl, query, { apiKey: both })).status).toBe(200);
  });
});

describe('identity tokens reused per credential and subgraph', () => {
  const keys = generateInternalKeyPair();
  const identity = {
    subject: 'key-1',
    kind: 'api_key' as const,
    tenantId: '3f0c2a5e-8d3b-4c1e-9a57-0d5b8e1f2a6c',
    scopes: ['assets:read' as const],
    clientAddress: '10.0.0.1',
  };

  it('answers the same identity with the same token and anything it vouches for differently with another', () => {
    const cache = new IdentityTokenCache(keys.privateKeyPem);
    const token = cache.tokenFor(identity, 'assets');
    expect(cache.tokenFor({ ...identity }, 'assets')).toBe(token);
    const variants = [
      cache.tokenFor(identity, 'measurements'),
      cache.tokenFor({ ...identity, tenantId: '0b9d7c1e-2f3a-4b5c-8d6e-7f8091a2b3c4' }, 'assets'),
      cache.tokenFor({ ...identity, scopes: ['assets:read', 'assets:write'] }, 'assets'),
      cache.tokenFor({ ...identity, clientAddress: '10.0.0.2' }, 'assets'),
      cache.tokenFor({ ...identity, sessionId: 'session-1' }, 'assets'),
      cache.tokenFor({ ...identity, kind: 'user' }, 'assets'),
      cache.tokenFor({ ...identity, subject: 'key-2' }, 'assets'),
    ];
    expect(new Set([token, ...variants]).size).toBe(variants.length + 1);
    const claims = jwt.decode(token) as Record<string, unknown>;
    // Nothing per request is signed in (it travels as headers); the agreed 60 s lifetime at most.
    expect(claims['request_id']).toBeUndefined();
    expect(claims['deadline']).toBeUndefined();
    expect(Number(claims['exp']) - Number(claims['iat'])).toBe(60);
    expect(claims).toMatchObject({ sub: 'key-1', aud: 'assets', tenant_id: identity.tenantId, scopes: ['assets:read'], client_address: '10.0.0.1' });
  });

  it('a subgraph answers a token it verified from memory only until the token expires', async () => {
    const verifier = new InternalTokenVerifier('assets', keys.publicKeyPem);
    // Expired 3 s ago: still inside the 5 s clock tolerance for one to two more seconds (exp and the verifier's clock are
    // whole seconds: at -4 s the rest of the current second, which may be a millisecond).
    const token = mintInternalToken(identity, 'assets', keys.privateKeyPem, -3);
    expect(verifier.verify(token)).toMatchObject({ subject: 'key-1', tenantId: identity.tenantId });
    expect(verifier.verify(token).subject).toBe('key-1');
    await new Promise((resolve) => setTimeout(resolve, 2_100));
    expect(() => verifier.verify(token)).toThrow(/expired/);
    const other = new InternalTokenVerifier('measurements', keys.publicKeyPem);
    expect(() => other.verify(new IdentityTokenCache(keys.privateKeyPem).tokenFor(identity, 'assets'))).toThrow(/audience/);
    // Another key: its kid is not one the subgraph trusts (internal-key-rotation.test.ts: a trusted kid on a forged signature).
    const forged = new IdentityTokenCache(generateInternalKeyPair().privateKeyPem).tokenFor(identity, 'assets');
    expect(() => verifier.verify(forged)).toThrow(/does not trust/);
  });

  it('bounds a deadline sent beside a reused token', () => {
    const now = 1_800_000_000_000;
    expect(deadlineFromHeader(String(now + 5_000), now)).toBe(now + 5_000);
    expect(deadlineFromHeader(String(now + 3_600_000), now)).toBe(now + MAX_REQUEST_DEADLINE_MS);
    expect(deadlineFromHeader('soon', now)).toBeUndefined();
    expect(deadlineFromHeader('1e20', now)).toBeUndefined();
    expect(deadlineFromHeader(undefined, now)).toBeUndefined();
  });
});

/** A stand-in subgraph that holds every request until released (or broken) and counts them. */
async function heldSubgraph(): Promise<{ url: string; bodies: string[]; release(): void; breakHeld(): void; close(): Promise<void> }> {
  const bodies: string[] = [];
  const held: Array<() => void> = [];
  const heldSockets: Array<() => void> = [];
  let released = false;
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      bodies.push(body);
      const answer = () => {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ data: { assets: { totalCount: bodies.length, edges: [] } } }));
      };
      if (released) answer();
      else {
        held.push(answer);
        heldSockets.push(() => req.socket.destroy());
      }
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    bodies,
    release() {
      released = true;
      heldSockets.splice(0);
      for (const answer of held.splice(0)) answer();
    },
    breakHeld() {
      held.splice(0);
      for (const destroy of heldSockets.splice(0)) destroy();
    },
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

describe('in-flight de-duplication of subgraph queries', () => {
  const keys = generateInternalKeyPair();
  const query = 'query Q__assets__0{assets(first:50){totalCount}}';
  let subgraph: Awaited<ReturnType<typeof heldSubgraph>>;

  beforeEach(async () => {
    subgraph = await heldSubgraph();
  });
  afterEach(async () => {
    subgraph.release();
    await subgraph.close();
  });

  const contextFor = (over: { tenantId?: string; subject?: string; writeEpoch?: string | undefined } = {}): GatewayContext =>
    ({
      credential: {
        subject: over.subject ?? 'key-1',
        kind: 'api_key',
        tenantId: over.tenantId ?? '3f0c2a5e-8d3b-4c1e-9a57-0d5b8e1f2a6c',
        scopes: ['assets:read'],
        tier: 'enterprise',
        rateLimitKey: 'key:key-1',
      },
      requestId: `r-${Math.random()}`,
      clientAddress: '127.0.0.1',
      deadline: { at: Date.now() + 30_000, timeoutMs: 30_000, signal: new AbortController().signal, key: 'none' },
      writeEpoch: () => Promise.resolve('writeEpoch' in over ? over.writeEpoch : '0'),
    }) as unknown as GatewayContext;

  const send = (source: AuthenticatedSubgraphDataSource, context: GatewayContext, operation: 'query' | 'mutation' = 'query') =>
    source.process({
      kind: 'incoming operation',
      request: { query, variables: {} },
      context,
      incomingRequestContext: { operation: { operation } },
    } as never);

  /** Fails with what it waited for, where a silent give-up would leave the test asserting on a half-arrived state. */
  const bodiesArrived = (count: number) => waitFor(() => Promise.resolve(subgraph.bodies.length >= count), 30_000, `${count} subgraph request(s)`, 10);

  it('sends identical queries of one identity once and gives each request its own copy of the answer', async () => {
    const source = new AuthenticatedSubgraphDataSource('assets', subgraph.url, new IdentityTokenCache(keys.privateKeyPem), true);
    const answers = Promise.all([send(source, contextFor()), send(source, contextFor()), send(source, contextFor())]);
    await bodiesArrived(1);
    await new Promise((resolve) => setTimeout(resolve, 50));
    subgraph.release();
    const [a, b, c] = await answers;
    expect(subgraph.bodies).toHaveLength(1);
    expect(a!.data).toEqual({ assets: { totalCount: 1, edges: [] } });
    expect(b!.data).toEqual(a!.data);
    expect(c!.data).toEqual(a!.data);
    // The gateway merges answers in place: sharing one object would let one request change another's result.
    expect(b!.data).not.toBe(a!.data);
    expect(c!.data).not.toBe(b!.data);
  });

  it('never shares between tenants, credentials, write counters, mutations, or when switched off', async () => {
    const source = new AuthenticatedSubgraphDataSource('assets', subgraph.url, new IdentityTokenCache(keys.privateKeyPem), true);
    const off = new AuthenticatedSubgraphDataSource('assets', subgraph.url, new IdentityTokenCache(keys.privateKeyPem), false);
    const answers = Promise.all([
      send(source, contextFor()),
      send(source, contextFor({ tenantId: '0b9d7c1e-2f3a-4b5c-8d6e-7f8091a2b3c4' })),
      send(source, contextFor({ subject: 'key-2' })),
      // A mutation of the tenant finished after the first request arrived.
      send(source, contextFor({ writeEpoch: '1' })),
      // The write counter could not be read (Redis away): never shared.
      send(source, contextFor({ writeEpoch: undefined })),
      send(source, contextFor({ writeEpoch: undefined })),
      send(source, contextFor(), 'mutation'),
      send(source, contextFor(), 'mutation'),
      send(off, contextFor()),
    ]);
    await bodiesArrived(9);
    subgraph.release();
    await answers;
    expect(subgraph.bodies).toHaveLength(9);
  });

  it('a request that joined one that failed asks for itself', async () => {
    const source = new AuthenticatedSubgraphDataSource('assets', subgraph.url, new IdentityTokenCache(keys.privateKeyPem), true);
    const firstAnswer = send(source, contextFor()).then(
      (answer) => `answered ${JSON.stringify(answer.errors?.map((e) => e.extensions?.['code']))}`,
      (err: unknown) => `failed: ${String(err)}`,
    );
    await bodiesArrived(1);
    const second = send(source, contextFor()).catch((err: unknown) => ({ data: `failed: ${String(err)}` }));
    await new Promise((resolve) => setTimeout(resolve, 50));
    // The first request's connection breaks (a network fault): it is told its subgraph was unavailable
    // (subgraph-unavailable.ts), while the request that joined it asks for itself.
    subgraph.breakHeld();
    expect(await firstAnswer).toBe('answered ["SUBGRAPH_UNAVAILABLE"]');
    await bodiesArrived(2);
    subgraph.release();
    expect((await second).data).toEqual({ assets: { totalCount: 2, edges: [] } });
    expect(subgraph.bodies).toHaveLength(2);
  });
});
