/**
 * GATEWAY_WORKERS=2: the gateway as a node:cluster (gateway/src/cluster.ts), started as an operator starts it — a real
 * `gateway/src/main.ts` process against real subgraphs and the suite's Redis. Two worker processes share the port and
 * serve; a free key still gets exactly its 60 requests (the workers count in one Redis, as replicas do); the one
 * /metrics on METRICS_PORT sums the workers; a worker killed with SIGKILL is replaced while the other serves; SIGTERM
 * ends everything once the request in flight is answered; Ctrl-C (SIGINT to the process group) stops it once; a worker
 * that cannot start stops the gateway instead of restarting forever. Which process answered a request is read from the
 * access log (each worker's lines carry its pid); which processes exist, from /proc.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import http from 'node:http';
import path from 'node:path';
import { exited } from '@linepack/lib/infra/child-process';
import { freePort } from '@linepack/lib/infra/free-port';
import { repoRoot } from '@linepack/lib/repo-root';
import { tierLimits } from '@linepack/gateway/rate-limit';
import { metricValue, startTestStack, type TestStack } from '../support/stack';
import { eventually, waitFor } from '../support/wait';
import { holdingProxy } from '../support/holding-proxy';
import { processesWithMarker, processState, running } from '../support/linepack-process';

jest.setTimeout(180_000);

/** A gateway started as a process: its primary, and everything it printed (stdout and stderr interleaved). */
interface GatewayCluster {
  primary: ChildProcess;
  port: number;
  metricsPort: number;
  /** Every process of this start (primary and workers) carries it in its environment, so /proc finds them all. */
  marker: string;
  output(): string;
}

async function startGatewayCluster(stack: TestStack, env: Record<string, string> = {}, options: { detached?: boolean } = {}): Promise<GatewayCluster> {
  const [port, metricsPort] = [await freePort(), await freePort()];
  const marker = `linepack-workers-test-${randomBytes(6).toString('hex')}`;
  const childEnv: Record<string, string> = {
    ...(process.env as Record<string, string>),
    PORT: String(port),
    HOST: '127.0.0.1',
    METRICS_PORT: String(metricsPort),
    AUTH_URL: stack.authUrl,
    INTERNAL_TOKEN_PRIVATE_KEY: stack.internalKeys.privateKeyPem,
    REDIS_URL: process.env['REDIS_URL']!,
    GATEWAY_WORKERS: '2',
    // Access logs name the worker (pid) that served each request.
    LOG_LEVEL: 'info',
    LINEPACK_TEST_MARKER: marker,
    ...Object.fromEntries(Object.entries(stack.subgraphs).map(([name, service]) => [`SUBGRAPH_URL_${name.toUpperCase()}`, service.url])),
    ...env,
  };
  const primary = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'gateway/src/main.ts')], {
    cwd: repoRoot,
    env: childEnv,
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group, as a terminal gives a command: Ctrl-C signals the whole group.
    detached: options.detached ?? false,
  });
  let output = '';
  primary.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  primary.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  return { primary, port, metricsPort, marker, output: () => output };
}

const commandLine = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
  } catch {
    return [];
  }
};

/** The running worker processes: children of the primary that run the gateway (tsx's esbuild service is one too). */
function workersOf(gateway: GatewayCluster): number[] {
  return processesWithMarker(gateway.marker).filter(
    (pid) => processState(pid)?.parent === gateway.primary.pid && commandLine(pid).some((arg) => arg.endsWith('gateway/src/main.ts')),
  );
}

/**
 * POST /graphql on a new connection each time (`agent: false`): the primary hands out connections round-robin, so a
 * kept-alive connection would pin every request to one worker.
 */
function post(port: number, apiKey: string, query: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const body = JSON.stringify({ query });
    const req = http.request(
      {
        host: '127.0.0.1',
        port,
        path: '/graphql',
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.once('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.once('error', reject);
    req.end(body);
  });
}

/** `count` requests, `concurrency` at a time; the statuses in the order they were sent. */
async function postMany(port: number, apiKey: string, count: number, concurrency: number): Promise<number[]> {
  const statuses: number[] = new Array<number>(count);
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        statuses[i] = (await post(port, apiKey, '{ __typename }')).status;
      }
    }),
  );
  return statuses;
}

/** The access-log lines (JSON) of GraphQL requests: which worker (pid) answered, with what, for which tenant. */
function graphqlAccessLog(output: string): { pid: number; status: number; tenantId?: string }[] {
  return output
    .split('\n')
    .filter((line) => line.startsWith('{') && line.includes('"msg":"request"'))
    .map((line) => JSON.parse(line) as { pid: number; status: number; path: string; tenantId?: string })
    .filter((entry) => entry.path === '/graphql');
}

const ok = async (url: string) => (await fetch(url)).ok;

/** Resolves once every worker serves (the primary says so, and the port answers); throws with the output if it exits. */
async function untilServing(gateway: GatewayCluster): Promise<void> {
  const up = await eventually(
    async () =>
      gateway.primary.exitCode !== null || (gateway.output().includes('gateway workers serving') && (await ok(`http://127.0.0.1:${gateway.port}/healthz`))),
    120_000,
  );
  if (!up || gateway.primary.exitCode !== null) throw new Error(`the gateway workers did not come up (exit ${gateway.primary.exitCode}):\n${gateway.output()}`);
}

/** Kills what is left of a gateway a test did not stop (its primary, then anything else of its start). */
async function killLeftovers(gateway: GatewayCluster | undefined): Promise<void> {
  if (!gateway) return;
  if (gateway.primary.exitCode === null && gateway.primary.signalCode === null) {
    gateway.primary.kill('SIGKILL');
    await exited(gateway.primary);
  }
  // Workers whose primary died exit on their own (the IPC channel closes); make sure, as a last resort.
  for (const pid of processesWithMarker(gateway.marker)) process.kill(pid, 'SIGKILL');
}

let stack: TestStack;
let gateway: GatewayCluster;
let enterpriseKey: string;
let analytics: Awaited<ReturnType<typeof holdingProxy>>;

/** Answered by the analytics subgraph alone, through the proxy that holds it. */
const heldQuery = `{ modifiedB31G(input: { outsideDiameterMm: 610, wallThicknessMm: 9.5, smysMpa: 359, defectDepthMm: 3.8,
  defectLengthMm: 200, regulation: CFR_192, classLocation: 3, maopKpa: 6900 }) { applicable erf } }`;

beforeAll(async () => {
  stack = await startTestStack();
  ({ apiKey: enterpriseKey } = await stack.tenantWithKey());
  analytics = await holdingProxy(stack.subgraphs.analytics.url, 'modifiedB31G');
  // The free tier's window is a "minute" of 10 minutes here: a slow shared machine cannot end it mid-test and hand
  // out a second 60. The limit, what is checked, stays the free tier's.
  gateway = await startGatewayCluster(stack, { RATE_LIMIT_MINUTE_WINDOW_SECONDS: '600', SUBGRAPH_URL_ANALYTICS: analytics.url });
  await untilServing(gateway);
}, 180_000);

const startedByTests: GatewayCluster[] = [];

afterAll(async () => {
  for (const started of [gateway, ...startedByTests]) await killLeftovers(started);
  analytics?.release();
  await analytics?.close();
  await stack?.stop();
});

it('runs two worker processes under the primary, and both serve requests on the one port', async () => {
  const workers = workersOf(gateway);
  expect(workers).toHaveLength(2);
  expect(workers).not.toContain(gateway.primary.pid);
  const statuses = await postMany(gateway.port, enterpriseKey, 20, 1);
  expect(statuses.every((s) => s === 200)).toBe(true);
  // The access log of every answered request names the process that answered it: both workers did.
  expect(await eventually(async () => new Set(graphqlAccessLog(gateway.output()).map((e) => e.pid)).size === 2, 10_000)).toBe(true);
  expect(new Set(graphqlAccessLog(gateway.output()).map((e) => e.pid))).toEqual(new Set(workers));
});

it("keeps the free tier's limit exact across the workers: 60 of 80 requests, from both workers", async () => {
  const { apiKey, tenantId } = await stack.tenantWithKey({ tier: 'FREE' });
  const limit = tierLimits.free.minute;
  const before = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
  const statuses = await postMany(gateway.port, apiKey, limit + 20, 8);
  expect({ accepted: statuses.filter((s) => s === 200).length, refused: statuses.filter((s) => s === 429).length }).toEqual({ accepted: limit, refused: 20 });
  // Not one worker's 60: the accepted ones were answered by both, each counting in the shared Redis.
  await eventually(async () => graphqlAccessLog(gateway.output()).filter((e) => e.tenantId === tenantId).length === limit + 20, 10_000);
  const acceptedBy = new Set(
    graphqlAccessLog(gateway.output())
      .filter((e) => e.tenantId === tenantId && e.status === 200)
      .map((e) => e.pid),
  );
  expect(acceptedBy.size).toBe(2);

  // The one /metrics of the gateway (the primary's, on METRICS_PORT) sums both workers' decisions.
  const res = await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`);
  expect(res.status).toBe(200);
  const after = await res.text();
  const delta = (labels: Record<string, string>) =>
    metricValue(after, 'linepack_rate_limit_decisions_total', labels) - metricValue(before, 'linepack_rate_limit_decisions_total', labels);
  expect({ allowed: delta({ tier: 'free', decision: 'allowed' }), limited: delta({ tier: 'free', decision: 'limited' }) }).toEqual({
    allowed: limit,
    limited: 20,
  });
  // Each metric once (a text exposition with a name twice is refused by Prometheus), the workers counted.
  expect(after.match(/^# TYPE linepack_rate_limit_decisions_total /gm)).toHaveLength(1);
  expect(metricValue(after, 'linepack_gateway_workers')).toBe(2);
  expect(metricValue(after, 'linepack_redis_up', { client: 'gateway' })).toBe(1);
  // The public port does not answer /metrics.
  expect((await fetch(`http://127.0.0.1:${gateway.port}/metrics`)).status).toBe(404);
});

it('replaces a worker killed with SIGKILL while the other keeps answering', async () => {
  const [victim, survivor] = workersOf(gateway);
  process.kill(victim!, 'SIGKILL');
  // Once the primary has seen it die, every new connection goes to the survivor.
  await waitFor(async () => !running(victim!), 30_000, 'the killed worker to be gone');
  await waitFor(async () => gateway.output().includes('gateway worker died'), 30_000, 'the primary to notice');
  const whileReplacing = await postMany(gateway.port, enterpriseKey, 10, 2);
  expect(whileReplacing.every((s) => s === 200)).toBe(true);

  // A new worker takes the dead one's place and serves too.
  await waitFor(async () => gateway.output().includes('gateway worker replaced'), 120_000, 'a replacement worker');
  const workers = workersOf(gateway);
  expect(workers).toHaveLength(2);
  expect(workers).toContain(survivor);
  const [replacement] = workers.filter((pid) => pid !== survivor);
  expect(replacement).not.toBe(victim);
  const logged = graphqlAccessLog(gateway.output()).length;
  const after = await postMany(gateway.port, enterpriseKey, 10, 1);
  expect(after.every((s) => s === 200)).toBe(true);
  expect(
    await eventually(
      async () =>
        graphqlAccessLog(gateway.output())
          .slice(logged)
          .some((e) => e.pid === replacement),
      10_000,
    ),
  ).toBe(true);

  const metrics = await (await fetch(`http://127.0.0.1:${gateway.metricsPort}/metrics`)).text();
  expect(metricValue(metrics, 'linepack_gateway_worker_restarts_total')).toBe(1);
  expect(metricValue(metrics, 'linepack_gateway_workers')).toBe(2);
  // The dead worker's counts stay in the totals (as the last scrape saw them): the gateway's counters never go down,
  // which Prometheus would read as a reset followed by a burst.
  const decisions = (decision: string) => metricValue(metrics, 'linepack_rate_limit_decisions_total', { tier: 'free', decision });
  expect({ allowed: decisions('allowed'), limited: decisions('limited') }).toEqual({ allowed: tierLimits.free.minute, limited: 20 });
});

it('ends the primary and every worker on SIGTERM, after answering the request in flight, leaving no process', async () => {
  const processes = processesWithMarker(gateway.marker);
  const workers = workersOf(gateway);
  expect(processes).toEqual(expect.arrayContaining([gateway.primary.pid, ...workers]));
  // A request in flight in one worker (its analytics fetch held by the proxy) when SIGTERM comes.
  const inFlight = post(gateway.port, enterpriseKey, heldQuery);
  // (Should the query be answered without reaching the subgraph, say so instead of waiting for ever.)
  const early = await Promise.race([analytics.firstArrival.then(() => null), inFlight]);
  expect(early).toBeNull();
  gateway.primary.kill('SIGTERM');
  // The idle worker stops at once; the busy one is draining, and answers once its subgraph does.
  await waitFor(async () => workers.filter(running).length === 1, 60_000, 'the idle worker to stop');
  expect(gateway.primary.exitCode).toBeNull();
  analytics.release();
  const answer = await inFlight;
  expect(answer.status).toBe(200);
  expect(JSON.parse(answer.body)).toEqual({ data: { modifiedB31G: { applicable: true, erf: expect.any(Number) } }, extensions: expect.anything() });
  await exited(gateway.primary);
  expect({ code: gateway.primary.exitCode, signal: gateway.primary.signalCode }).toEqual({ code: 0, signal: null });
  expect(processes.filter(running)).toEqual([]);
  expect(processesWithMarker(gateway.marker)).toEqual([]);
  // Nothing listens on the port any more.
  await expect(fetch(`http://127.0.0.1:${gateway.port}/healthz`)).rejects.toThrow();
});

it('stops, exit status 1, when a worker cannot start — no restart loop, no process left', async () => {
  const broken = await startGatewayCluster(stack, { SUPERGRAPH_PATH: path.join(repoRoot, 'no-such-supergraph.graphql'), LOG_LEVEL: 'warn' });
  startedByTests.push(broken);
  await exited(broken.primary);
  expect(broken.primary.exitCode).toBe(1);
  expect(broken.output()).toContain('"msg":"gateway failed to start"');
  expect(broken.output()).not.toContain('gateway worker died');
  expect(processesWithMarker(broken.marker)).toEqual([]);
});

it('stops once on Ctrl-C (SIGINT to the whole process group, primary and workers alike): exit 0, no process left', async () => {
  const interactive = await startGatewayCluster(stack, {}, { detached: true });
  startedByTests.push(interactive);
  await untilServing(interactive);
  expect(workersOf(interactive)).toHaveLength(2);
  process.kill(-interactive.primary.pid!, 'SIGINT');
  await exited(interactive.primary);
  expect({ code: interactive.primary.exitCode, signal: interactive.primary.signalCode }).toEqual({ code: 0, signal: null });
  // The workers leave Ctrl-C to the primary, which stops them with SIGTERM: none was seen to die and none replaced.
  expect(interactive.output()).not.toContain('gateway worker died');
  expect(processesWithMarker(interactive.marker)).toEqual([]);
});
