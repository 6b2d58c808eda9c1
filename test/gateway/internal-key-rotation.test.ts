/**
 * Rotating the internal identity key (gateway → subgraphs) under load, with no failed request (issue 29 item 3),
 * the way a rolling deployment does it (README, Rotating keys; docs/runbook.md):
 *
 *   1. every subgraph is rolled to trust both keys (INTERNAL_TOKEN_PUBLIC_KEY = old + new);
 *   2. the gateway is rolled to sign with the new key (INTERNAL_TOKEN_PRIVATE_KEY);
 *   3. every subgraph is rolled to trust the new key only.
 *
 * Each service runs as replicas behind a round-robin balancer (test/support/balancer.ts, a Service's endpoints): a
 * roll starts the new replica, routes to it, takes the old one out, waits until nothing is in flight there, then
 * stops it. Requests flow through the gateway the whole time — a query reaching all five subgraphs, and mutations —
 * and every answer is checked. A gateway started with the new key before the subgraphs trust it reports itself
 * unavailable (/readyz 503, naming each refusal), so a rollout would never route to it.
 */
import { randomBytes } from 'node:crypto';
import type { MongoClient } from 'mongodb';
import { startGateway, type RunningGateway } from '@linepack/gateway/server';
import {
  generateInternalKeyPair,
  INTERNAL_IDENTITY_HEADER,
  internalKeyId,
  InternalTokenVerifier,
  InvalidInternalTokenError,
  mintInternalToken,
  type Identity,
} from '@linepack/lib/identity';
import { createLogger } from '@linepack/lib/logger';
import { connectMongo, databaseName } from '@linepack/lib/mongo';
import type { RunningService, SubgraphModule, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { subgraphNames, type SubgraphName } from '@linepack/schema/subgraphs';
import { defaultTokenLifetimes, startAuthSubgraph } from '@linepack/subgraph-auth';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { AuthStore } from '@linepack/subgraph-auth/store';
import { startBalancer, type Balancer } from '../support/balancer';
import { allReadWriteScopes, createAssetMutation, gatewayConfigFor } from '../support/stack';
import { waitFor } from '../support/wait';

jest.setTimeout(240_000);

const oldKey = generateInternalKeyPair();
const newKey = generateInternalKeyPair();

describe('identity tokens name their key; a key set verifies by kid', () => {
  const identity: Identity = { subject: 'k1', kind: 'api_key', tenantId: '00000000-0000-4000-8000-000000000001', scopes: ['assets:read'], requestId: 'r1' };
  const kidOf = (token: string) => (JSON.parse(Buffer.from(token.split('.')[0]!, 'base64url').toString()) as { kid?: string }).kid;

  it('puts the RFC 7638 thumbprint of the signing key in the header', () => {
    const token = mintInternalToken(identity, 'assets', newKey.privateKeyPem);
    expect(kidOf(token)).toBe(internalKeyId(newKey.privateKeyPem));
    expect(kidOf(token)).not.toBe(internalKeyId(oldKey.privateKeyPem));
    expect(kidOf(token)).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });

  it('accepts tokens of every key in the set and refuses a kid it does not hold, saying which', () => {
    const both = new InternalTokenVerifier('assets', `${oldKey.publicKeyPem}${newKey.publicKeyPem}`);
    expect(both.keyIds.sort()).toEqual([internalKeyId(oldKey.privateKeyPem), internalKeyId(newKey.privateKeyPem)].sort());
    expect(both.verify(mintInternalToken(identity, 'assets', oldKey.privateKeyPem)).subject).toBe('k1');
    expect(both.verify(mintInternalToken(identity, 'assets', newKey.privateKeyPem)).subject).toBe('k1');
    const onlyNew = new InternalTokenVerifier('assets', newKey.publicKeyPem);
    const old = mintInternalToken(identity, 'assets', oldKey.privateKeyPem);
    expect(() => onlyNew.verify(old)).toThrow(InvalidInternalTokenError);
    expect(() => onlyNew.verify(old)).toThrow(`signed by a key this service does not trust (kid ${internalKeyId(oldKey.privateKeyPem)})`);
  });

  it('refuses a token whose kid names a trusted key but which another key signed (the kid picks the key, it proves nothing)', () => {
    const forged = mintInternalToken(identity, 'assets', generateInternalKeyPair().privateKeyPem);
    const [, payload, signature] = forged.split('.');
    const header = Buffer.from(JSON.stringify({ alg: 'ES256', typ: 'JWT', kid: internalKeyId(newKey.privateKeyPem) })).toString('base64url');
    const verifier = new InternalTokenVerifier('assets', `${oldKey.publicKeyPem}${newKey.publicKeyPem}`);
    expect(() => verifier.verify(`${header}.${payload}.${signature}`)).toThrow('invalid signature');
  });
});

// ─────────────────────────────── the rotation under load ───────────────────────────────

const dbPrefix = `t${randomBytes(5).toString('hex')}`;
const jwtRootPem = SigningKeys.generatePem();
const quiet = createLogger('rotation-test', 'silent');
let mongo: MongoClient;
let apiKey: string;
const balancers = {} as Record<SubgraphName, Balancer>;
let gatewayBalancer: Balancer;
/** Everything started, stopped at the end whatever happened (stop is idempotent). */
const running: { stop(): Promise<void> }[] = [];

async function startReplica(name: SubgraphName, trustedKeys: string): Promise<RunningService> {
  const options: SubgraphStartOptions = {
    port: 0,
    host: '127.0.0.1',
    mongoUri: process.env['MONGODB_URI'],
    dbPrefix,
    internalTokenPublicKey: trustedKeys,
    logger: quiet,
    eventRelay: false,
  };
  const service =
    name === 'auth'
      ? await startAuthSubgraph({ ...options, auth: { ...defaultTokenLifetimes, signingKeyPem: jwtRootPem, verifyOnlyPublicKeyPems: [] } })
      : await ((await import(`@linepack/subgraph-${name}`)) as { subgraph: SubgraphModule }).subgraph.start(options);
  running.push(service);
  return service;
}

async function startGatewayReplica(privateKeyPem: string): Promise<RunningGateway> {
  const subgraphUrls = Object.fromEntries(subgraphNames.map((name) => [name, balancers[name].url]));
  // Every request asks the auth service (through its balancer) to verify the key: credentialCacheTtlSeconds 0.
  const gateway = await startGateway(gatewayConfigFor({ authUrl: balancers.auth.origin, subgraphUrls, internalTokenPrivateKey: privateKeyPem }), quiet);
  running.push(gateway);
  return gateway;
}

/** Takes `from` out of its balancer, waits until nothing it was sent is in flight, then drains and stops it. */
async function retire(balancer: Balancer, from: { url: string; drain(): void; stop(): Promise<void> }, to: { url: string }): Promise<void> {
  balancer.route(to.url);
  await balancer.settled(from.url);
  from.drain();
  await from.stop();
}

/** Rolls every subgraph to replicas trusting `trustedKeys`, one subgraph at a time (maxSurge 1, maxUnavailable 0). */
async function rollSubgraphs(replicas: Record<SubgraphName, RunningService>, trustedKeys: string): Promise<Record<SubgraphName, RunningService>> {
  const next = {} as Record<SubgraphName, RunningService>;
  for (const name of subgraphNames) {
    next[name] = await startReplica(name, trustedKeys);
    balancers[name].route(replicas[name].url, next[name].url);
    await retire(balancers[name], replicas[name], next[name]);
  }
  return next;
}

interface Outcome {
  ok: boolean;
  what: string;
}

/** Clients sending through the gateway's balancer until stopped: a query reaching all five subgraphs, and writes. */
function startLoad(clients: number) {
  const outcomes: Outcome[] = [];
  let stopping = false;
  let wake: () => void = () => undefined;
  const query = '{ me { id } pipelineSummary { totalAssets measurementCount segmentsByRiskBand { count } complianceByState { count } } }';
  const send = async (i: number): Promise<Outcome> => {
    const write = i % 4 === 0;
    const body = write ? { query: createAssetMutation, variables: { input: { type: 'SYSTEM', name: `rotation ${i}` } } } : { query };
    try {
      const res = await fetch(gatewayBalancer.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
        body: JSON.stringify(body),
      });
      const text = await res.text();
      const answer = JSON.parse(text) as { data?: Record<string, unknown> | null; errors?: unknown[] };
      const ok = res.status === 200 && !answer.errors && answer.data != null && Object.values(answer.data).every((v) => v != null);
      return { ok, what: ok ? 'ok' : `${res.status} ${text.slice(0, 300)}` };
    } catch (err) {
      return { ok: false, what: (err as Error).message };
    }
  };
  let sent = 0;
  const loops = Array.from({ length: clients }, async () => {
    while (!stopping) {
      outcomes.push(await send(sent++));
      wake();
    }
  });
  return {
    outcomes,
    /** Resolves once `count` more answers have come back (each phase is seen by requests, however slow the machine). */
    async more(count: number): Promise<void> {
      const target = outcomes.length + count;
      while (outcomes.length < target) await new Promise<void>((resolve) => (wake = resolve));
    },
    async stop(): Promise<void> {
      stopping = true;
      await Promise.all(loops);
    },
  };
}

const readyz = async (gateway: RunningGateway) => {
  const res = await fetch(`${gateway.origin}/readyz`);
  return { status: res.status, body: (await res.json()) as { status: string; identityKey: string; authService: string; subgraphs: Record<string, string> } };
};

beforeAll(async () => {
  mongo = await connectMongo(process.env['MONGODB_URI']!);
  const store = new AuthStore(mongo.db(databaseName(dbPrefix, 'auth')));
  await store.ensureIndexes();
  const tenant = await store.createTenant({ name: 'rotation tenant', tier: 'ENTERPRISE' });
  apiKey = (await store.createApiKey({ tenantId: tenant._id, name: 'rotation key', scopes: allReadWriteScopes, tier: 'ENTERPRISE' })).secret;
});

afterAll(async () => {
  for (const service of running.reverse()) await service.stop().catch(() => undefined);
  for (const balancer of [gatewayBalancer, ...Object.values(balancers)]) await balancer?.close();
  await mongo?.close();
});

it('rotates the gateway key under load — subgraphs trust both, gateway switches, old key removed — with no failed request', async () => {
  // Generation 1: subgraphs trust the old key; the gateway signs with it.
  let replicas = {} as Record<SubgraphName, RunningService>;
  for (const name of subgraphNames) {
    replicas[name] = await startReplica(name, oldKey.publicKeyPem);
    balancers[name] = await startBalancer('/graphql', replicas[name].url);
  }
  const oldGateway = await startGatewayReplica(oldKey.privateKeyPem);
  gatewayBalancer = await startBalancer('/graphql', oldGateway.url);
  expect((await readyz(oldGateway)).body).toMatchObject({ status: 'ready', identityKey: internalKeyId(oldKey.privateKeyPem) });

  const load = startLoad(4);
  await load.more(8);

  // A gateway with the new key, too early: every subgraph and the auth service refuse its identity, and it says so.
  const newGateway = await startGatewayReplica(newKey.privateKeyPem);
  const early = await readyz(newGateway);
  expect(early.status).toBe(503);
  expect(early.body.status).toBe('unavailable');
  expect(early.body.identityKey).toBe(internalKeyId(newKey.privateKeyPem));
  const refusal = `refuses this gateway's identity token (signed by a key this service does not trust (kid ${internalKeyId(newKey.privateKeyPem)}))`;
  expect(early.body.authService).toBe(refusal);
  expect(early.body.subgraphs).toEqual(Object.fromEntries(subgraphNames.map((name) => [name, refusal])));

  // 1. Every subgraph trusts both keys.
  replicas = await rollSubgraphs(replicas, `${oldKey.publicKeyPem}${newKey.publicKeyPem}`);
  await load.more(8);

  // 2. The new gateway becomes ready once its identity is accepted everywhere; then it replaces the old one.
  await waitFor(async () => (await readyz(newGateway)).body.status === 'ready', 30_000, 'the new gateway to be ready');
  gatewayBalancer.route(oldGateway.url, newGateway.url);
  await load.more(8);
  await retire(gatewayBalancer, { ...oldGateway, url: oldGateway.url }, newGateway);
  await load.more(8);

  // 3. Every subgraph trusts the new key only.
  replicas = await rollSubgraphs(replicas, newKey.publicKeyPem);
  await load.more(8);
  await load.stop();

  const failed = load.outcomes.filter((o) => !o.ok);
  expect({ failed: failed.length, first: failed.slice(0, 3).map((o) => o.what) }).toEqual({ failed: 0, first: [] });
  expect(load.outcomes.length).toBeGreaterThanOrEqual(48);

  // The old key is gone for good: a token it signs is refused by the new replicas; the new gateway stays ready.
  const identity: Identity = { subject: 'old-gateway', kind: 'api_key', tenantId: '00000000-0000-4000-8000-000000000001', scopes: [], requestId: 'r' };
  const refused = await fetch(replicas.assets.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [INTERNAL_IDENTITY_HEADER]: mintInternalToken(identity, 'assets', oldKey.privateKeyPem) },
    body: JSON.stringify({ query: '{ __typename }' }),
  });
  expect(refused.status).toBe(401);
  await waitFor(async () => (await readyz(newGateway)).body.status === 'ready', 30_000, 'the new gateway to stay ready');
});
