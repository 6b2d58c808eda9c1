import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { startGateway, type RunningGateway } from '@linepack/gateway/server';
import { FAILURES_BEFORE_DOWN } from '@linepack/gateway/readiness';
import { internalKeyId } from '@linepack/lib/identity';
import { freePort } from '@linepack/lib/infra/free-port';
import { subgraphNames } from '@linepack/schema/subgraphs';
import { gatewayConfigFor, startTestStack, type TestStack } from '../support/stack';
import { eventually, waitFor } from '../support/wait';

/**
 * The gateway's /readyz says whether this replica can serve, so an orchestrator takes one that cannot out of rotation
 * — and only that one: what every replica shares (one subgraph down or slow) leaves them all in.
 */
let stack: TestStack;
const started: RunningGateway[] = [];
beforeAll(async () => {
  stack = await startTestStack();
});
afterAll(async () => {
  for (const gateway of started) await gateway.stop();
  await stack?.stop();
});

interface Report {
  status: string;
  identityKey: string;
  rateLimits: string;
  authService: string;
  subgraphs: Record<string, string>;
}

const readyz = async (origin: string) => {
  const res = await fetch(`${origin}/readyz`);
  return { status: res.status, body: (await res.json()) as Report };
};

const subgraphUrls = () => Object.fromEntries(Object.entries(stack.subgraphs).map(([name, s]) => [name, s.url]));

async function gatewayWith(services: { authUrl?: string; subgraphUrls?: Record<string, string> }): Promise<RunningGateway> {
  const gateway = await startGateway(
    gatewayConfigFor({
      authUrl: services.authUrl ?? stack.authUrl,
      subgraphUrls: services.subgraphUrls ?? subgraphUrls(),
      internalTokenPrivateKey: stack.internalKeys.privateKeyPem,
    }),
  );
  started.push(gateway);
  return gateway;
}

/** A subgraph's address whose /readyz answers only when released (a subgraph alive but too busy to answer yet). */
async function heldReadiness(target: string) {
  const held: (() => void)[] = [];
  let arrivals = 0;
  let pending = 0;
  const server = http.createServer((req, res) => {
    arrivals += 1;
    pending += 1;
    // Answered, or given up by the prober (its timeout aborts the request).
    res.once('close', () => (pending -= 1));
    const forward = async () => {
      const answer = await fetch(new URL(req.url ?? '/', target), { headers: req.headers as Record<string, string> });
      res.writeHead(answer.status, { 'content-type': 'application/json' }).end(await answer.text());
    };
    held.push(() => void forward().catch(() => res.destroy()));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/graphql`,
    arrivals: () => arrivals,
    /** Probes that arrived and are still waiting for their answer. */
    pending: () => pending,
    release: () => held.splice(0).forEach((forward) => forward()),
    close: () => new Promise<void>((resolve) => (server.closeAllConnections(), server.close(() => resolve()))),
  };
}

it('is ready when the auth service and every subgraph are, and names the key every one of them accepted', async () => {
  const ready = await readyz(stack.gatewayOrigin);
  expect(ready.status).toBe(200);
  expect(ready.body).toEqual({
    status: 'ready',
    rateLimits: expect.any(String),
    identityKey: internalKeyId(stack.internalKeys.privateKeyPem),
    authService: 'ready',
    subgraphs: Object.fromEntries(subgraphNames.map((name) => [name, 'ready'])),
  });
  // Liveness is another question, answered whatever the dependencies say.
  expect((await fetch(`${stack.gatewayOrigin}/healthz`)).status).toBe(200);
});

it('answers 503 "draining" at once when the gateway drains, while it still serves', async () => {
  const gateway = await gatewayWith({});
  expect((await readyz(gateway.origin)).status).toBe(200);
  gateway.drain();
  const res = await fetch(`${gateway.origin}/readyz`);
  expect(res.status).toBe(503);
  expect(await res.json()).toEqual({ status: 'draining' });
  // Still serving, and telling each client to go elsewhere after its answer.
  const health = await fetch(`${gateway.origin}/healthz`);
  expect(health.status).toBe(200);
  expect(health.headers.get('connection')).toBe('close');
});

it('probes the auth service at AUTH_URL, not the auth subgraph (SUBGRAPH_URL_AUTH), and tells the two apart', async () => {
  const dead = `http://127.0.0.1:${await freePort()}`;
  // The auth subgraph unreachable: one subgraph down, degraded but serving.
  const withoutAuthSubgraph = await gatewayWith({ subgraphUrls: { ...subgraphUrls(), auth: `${dead}/graphql` } });
  await waitFor(async () => (await readyz(withoutAuthSubgraph.origin)).body.status === 'degraded', 20_000, 'degraded');
  const degraded = await readyz(withoutAuthSubgraph.origin);
  expect(degraded.status).toBe(200);
  expect(degraded.body.authService).toBe('ready');
  expect(degraded.body.subgraphs['auth']).toMatch(/^unreachable/);
  // The auth service (AUTH_URL) unreachable: no credential can be verified, so unavailable — while its subgraph is fine.
  const withoutAuthService = await gatewayWith({ authUrl: dead });
  const unavailable = await readyz(withoutAuthService.origin);
  expect(unavailable.status).toBe(503);
  expect(unavailable.body.authService).toMatch(/^unreachable/);
  expect(unavailable.body.subgraphs['auth']).toBe('ready');
});

it('keeps answering from the last probes while a slow subgraph has not answered yet (never waits on it, never 503)', async () => {
  const slow = await heldReadiness(stack.subgraphs.analytics.url);
  try {
    const gateway = await gatewayWith({ subgraphUrls: { ...subgraphUrls(), analytics: slow.url } });
    // The first round waits for its probes: let the held one through once, so it has answered before.
    const first = readyz(gateway.origin);
    let firstOutcome = 'no answer yet';
    first.then(
      (r) => (firstOutcome = `answered ${r.status}`),
      (err: Error) => (firstOutcome = `failed: ${err.message}`),
    );
    await waitFor(async () => slow.arrivals() >= 1, 20_000, 'the first probe of the slow subgraph').catch((err: Error) => {
      throw new Error(`${err.message} (requests it received: ${slow.arrivals()}; the gateway's /readyz: ${firstOutcome})`);
    });
    slow.release();
    expect((await first).body.subgraphs['analytics']).toBe('ready');
    // From now on its probes are held: a later round starts and stays pending, and answers come without waiting for
    // it — were /readyz waiting, its answer would come only once the probe gave up (no probe pending any more).
    await waitFor(async () => (await readyz(gateway.origin)).status === 200 && slow.pending() >= 1, 20_000, 'a probe held in flight');
    const whileHeld = await readyz(gateway.origin);
    expect(slow.pending()).toBeGreaterThanOrEqual(1);
    expect(whileHeld.status).toBe(200);
    expect(whileHeld.body.status).toBe('ready');
    expect(whileHeld.body.subgraphs['analytics']).toBe('ready');
  } finally {
    slow.release();
    await slow.close();
  }
});

it(`calls one subgraph down only after ${FAILURES_BEFORE_DOWN} failed probes, and degraded (200), never unavailable; without auth, 503`, async () => {
  const gateway = await gatewayWith({});
  expect((await readyz(gateway.origin)).body.status).toBe('ready');
  await stack.subgraphs.measurements.stop();
  // Every answer on the way is 200: ready (with the failed probe named) until the failures count, then degraded.
  const seen: Report[] = [];
  const degraded = await eventually(async () => {
    const report = await readyz(gateway.origin);
    expect(report.status).toBe(200);
    seen.push(report.body);
    return report.body.status === 'degraded';
  }, 30_000);
  expect(degraded).toBe(true);
  expect(seen.at(-1)!.subgraphs['measurements']).toMatch(/^unreachable/);
  expect(seen.at(-1)!.subgraphs['assets']).toBe('ready');
  expect(seen.some((r) => r.status === 'ready' && /^ready \(last probe: unreachable/.test(r.subgraphs['measurements']!))).toBe(true);

  // Without the auth service no credential can be verified: out of the load balancer.
  await stack.subgraphs.auth.stop();
  await waitFor(async () => (await readyz(gateway.origin)).status === 503, 30_000, 'unavailable');
  const down = await readyz(gateway.origin);
  expect(down.body.status).toBe('unavailable');
  expect(down.body.authService).toMatch(/^unreachable/);
});
