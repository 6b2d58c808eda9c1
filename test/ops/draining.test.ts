/**
 * Draining on SIGTERM, at the socket level (issue 29 item 4): every request that reached the server gets a complete
 * HTTP answer, nothing is reset, the process exits and leaves nothing running — for the gateway as one process, the
 * gateway with GATEWAY_WORKERS=2, and a subgraph process.
 *
 *   SIGTERM → /readyz 503 "draining" at once (never a refused connection) → requests still served, each answered with
 *   `Connection: close` and its connection closed after → a second signal ends the drain period (so no step of this
 *   test waits for a clock: SHUTDOWN_DRAIN_SECONDS is 120 here) → the listener closes, idle keep-alive connections
 *   are closed cleanly (FIN, not RST) → requests in flight — a mutation among them — finish and are answered →
 *   exit 0.
 *
 * The clients are raw keep-alive sockets (test/support/raw-http.ts): no client library to retry or hide a reset.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { generateInternalKeyPair, INTERNAL_IDENTITY_HEADER, mintInternalToken, type Identity } from '@linepack/lib/identity';
import { freePort } from '@linepack/lib/infra/free-port';
import { repoRoot } from '@linepack/lib/repo-root';
import { holdingProxy } from '../support/holding-proxy';
import { processesWithMarker } from '../support/linepack-process';
import { RawConnection, type RawResponse } from '../support/raw-http';
import { allReadWriteScopes, startTestStack, type TestStack } from '../support/stack';
import { canConnect, waitFor } from '../support/wait';
import { mongoUriThrough, startTcpProxy } from '../support/tcp-proxy';

jest.setTimeout(240_000);

/** A service started as its image starts it, with everything it printed. */
interface ServiceProcess {
  child: ChildProcess;
  port: number;
  marker: string;
  output(): string;
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

function startProcess(entry: string, port: number, env: Record<string, string>): ServiceProcess {
  const marker = `linepack-draining-test-${randomBytes(6).toString('hex')}`;
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, entry)], {
    cwd: repoRoot,
    env: {
      ...(process.env as Record<string, string>),
      PORT: String(port),
      HOST: '127.0.0.1',
      METRICS_PORT: '0',
      LOG_LEVEL: 'info',
      // The drain period ends with the second signal, not with a clock (120 s is the most it may be).
      SHUTDOWN_DRAIN_SECONDS: '120',
      LINEPACK_TEST_MARKER: marker,
      ...env,
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
  child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  return { child, port, marker, output: () => output, exited };
}

/** Every line a service printed is one JSON object with a string level (lib/logger.ts). */
function expectJsonLines(output: string): void {
  const lines = output.split('\n').filter((line) => line.trim() !== '');
  expect(lines.length).toBeGreaterThan(0);
  for (const line of lines) {
    let entry: { level?: unknown; msg?: unknown };
    try {
      entry = JSON.parse(line) as typeof entry;
    } catch {
      throw new Error(`a line that is not JSON: ${line}`);
    }
    expect([line, typeof entry.level]).toEqual([line, 'string']);
  }
}

/** /readyz on a connection of its own: never refused while draining. */
async function readyzStatus(port: number): Promise<number> {
  const connection = await RawConnection.open(port);
  try {
    return (await connection.request('GET', '/readyz', { Connection: 'close' })).status;
  } finally {
    connection.close();
  }
}

/** Resolves once the service answers /readyz with 200 (and printed `banner`); throws with its output if it exits first. */
async function untilReady(service: ServiceProcess, banner = ''): Promise<void> {
  await waitFor(
    async () => service.child.exitCode !== null || (service.output().includes(banner) && (await readyzStatus(service.port)) === 200),
    120_000,
    `${service.marker} to be ready`,
  );
  if (service.child.exitCode !== null) throw new Error(`it exited (${service.child.exitCode}):\n${service.output()}`);
}

const json = (response: RawResponse) => JSON.parse(response.body) as { data?: Record<string, unknown> | null; errors?: unknown[] };

let stack: TestStack;
let apiKey: string;
let held: Awaited<ReturnType<typeof holdingProxy>>;
const started: ServiceProcess[] = [];

beforeAll(async () => {
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  ({ apiKey } = await stack.tenantWithKey({ scopes: allReadWriteScopes }));
  // The gateway reaches assets through a proxy that holds the operations named Held…: requests in flight on demand.
  held = await holdingProxy(stack.subgraphs.assets.url, 'Held');
});

afterAll(async () => {
  for (const service of started) {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill('SIGKILL');
    for (const pid of processesWithMarker(service.marker)) process.kill(pid, 'SIGKILL');
  }
  held?.release();
  await held?.close();
  await stack?.stop();
});

const heldRead = 'query HeldRead { assets(first: 1) { totalCount } }';
const heldWrite = 'mutation HeldWrite($input: CreateAssetInput!) { createAsset(input: $input) { id name } }';

async function drainGatewayUnderLoad(gateway: ServiceProcess, workers: number): Promise<void> {
  const auth = { Authorization: `Bearer ${apiKey}` };
  // Two requests in flight (held at the assets subgraph), a mutation among them; two idle keep-alive connections.
  const writing = await RawConnection.open(gateway.port);
  const reading = await RawConnection.open(gateway.port);
  const heldBefore = held.arrivals();
  const write = writing.graphql(heldWrite, { input: { type: 'SYSTEM', name: `written while draining ${gateway.marker}` } }, auth);
  const read = reading.graphql(heldRead, {}, auth);
  const idle = await RawConnection.open(gateway.port);
  const idleThroughout = await RawConnection.open(gateway.port);
  for (const connection of [idle, idleThroughout]) expect((await connection.request('GET', '/healthz')).headers['connection']).toBe('keep-alive');
  await held.arrived(heldBefore + 2);

  gateway.child.kill('SIGTERM');
  // /readyz: 503 from the moment the signal is handled — and never a refused connection on the way there. Each worker
  // handles it when the primary passes it on: new connections go to the workers in turn, so 2 × workers 503s in a row
  // are every worker's.
  const everyWorkerDraining = async () => {
    for (let i = 0; i < 2 * workers; i++) if ((await readyzStatus(gateway.port)) !== 503) return false;
    return true;
  };
  await waitFor(everyWorkerDraining, 60_000, `/readyz to answer 503 from every worker (${workers})`);
  const readyz = await RawConnection.open(gateway.port);
  const draining = await readyz.request('GET', '/readyz');
  expect([draining.status, JSON.parse(draining.body)]).toEqual([503, { status: 'draining' }]);
  expect(draining.headers['connection']).toBe('close');
  expect(await readyz.ended).toEqual({ how: 'closed' });

  // Still serving while draining: on a kept-alive connection and on a new one, each answer says Connection: close and
  // the server closes that connection after it — cleanly.
  const onIdle = await idle.graphql('{ __typename }', {}, auth);
  expect([onIdle.status, json(onIdle).data, onIdle.headers['connection']]).toEqual([200, { __typename: 'Query' }, 'close']);
  expect(await idle.ended).toEqual({ how: 'closed' });
  const fresh = await RawConnection.open(gateway.port);
  const onFresh = await fresh.graphql('{ __typename }', {}, auth);
  expect([onFresh.status, onFresh.headers['connection']]).toEqual([200, 'close']);
  expect(await fresh.ended).toEqual({ how: 'closed' });
  expect(gateway.child.exitCode).toBeNull();

  // The second signal ends the drain period: the listener closes, the connection idle all along is closed cleanly.
  gateway.child.kill('SIGTERM');
  expect(await idleThroughout.ended).toEqual({ how: 'closed' });
  await waitFor(async () => !(await canConnect(gateway.port)), 60_000, 'the port to stop accepting');
  expect(gateway.child.exitCode).toBeNull(); // the requests in flight hold it

  // The requests in flight are answered in full — the mutation too, so its client knows it was applied.
  held.release();
  const [written, readBack] = await Promise.all([write, read]);
  expect([written.status, json(written).errors, written.headers['connection']]).toEqual([200, undefined, 'close']);
  expect(json(written).data).toEqual({ createAsset: { id: expect.any(String), name: `written while draining ${gateway.marker}` } });
  expect([readBack.status, json(readBack).data, readBack.headers['connection']]).toEqual([200, { assets: { totalCount: expect.any(Number) } }, 'close']);
  for (const connection of [writing, reading]) expect(await connection.ended).toEqual({ how: 'closed' });

  expect(await gateway.exited).toEqual({ code: 0, signal: null });
  expect(processesWithMarker(gateway.marker)).toEqual([]);
  expectJsonLines(gateway.output());
  expect(gateway.output()).toContain('"msg":"draining: /readyz answers 503, requests are still served until the drain period ends"');
}

function gatewayEnv(): Record<string, string> {
  return {
    AUTH_URL: stack.authUrl,
    INTERNAL_TOKEN_PRIVATE_KEY: stack.internalKeys.privateKeyPem,
    REDIS_URL: process.env['REDIS_URL']!,
    ...Object.fromEntries(Object.entries(stack.subgraphs).map(([name, service]) => [`SUBGRAPH_URL_${name.toUpperCase()}`, service.url])),
    SUBGRAPH_URL_ASSETS: held.url,
  };
}

it('the gateway (one process) drains on SIGTERM: every request that reached it is answered, none reset, then it exits', async () => {
  const gateway = startProcess('gateway/src/main.ts', await freePort(), { ...gatewayEnv(), GATEWAY_WORKERS: '1' });
  started.push(gateway);
  await untilReady(gateway);
  await drainGatewayUnderLoad(gateway, 1);
});

it('the gateway with GATEWAY_WORKERS=2 drains the same way, every worker, and no process is left', async () => {
  const gateway = startProcess('gateway/src/main.ts', await freePort(), { ...gatewayEnv(), GATEWAY_WORKERS: '2' });
  started.push(gateway);
  await untilReady(gateway, 'gateway workers serving');
  expect(processesWithMarker(gateway.marker).length).toBeGreaterThanOrEqual(3);
  await drainGatewayUnderLoad(gateway, 2);
});

it('a subgraph process drains on SIGTERM: requests waiting for their database are answered in full, then it exits', async () => {
  const keys = generateInternalKeyPair();
  const marker = `held-${randomBytes(4).toString('hex')}`;
  const database = new URL(process.env['MONGODB_URI']!);
  const mongo = await startTcpProxy({ host: database.hostname, port: Number(database.port) }, { holdWhen: marker });
  try {
    const subgraph = startProcess('subgraphs/assets/src/main.ts', await freePort(), {
      MONGODB_URI: mongoUriThrough(mongo.port),
      LINEPACK_DB_PREFIX: stack.dbPrefix,
      INTERNAL_TOKEN_PUBLIC_KEY: keys.publicKeyPem,
    });
    started.push(subgraph);
    await untilReady(subgraph);
    const tenantId = (await stack.tenantWithKey()).tenantId;
    const identity: Identity = { subject: 'draining-test', kind: 'api_key', tenantId, scopes: allReadWriteScopes, requestId: 'drain-1' };
    const headers = () => ({ [INTERNAL_IDENTITY_HEADER]: mintInternalToken(identity, 'assets', keys.privateKeyPem) });

    // A mutation whose insert waits at the database, and a read whose query does (its filter names the marker).
    const writing = await RawConnection.open(subgraph.port);
    const reading = await RawConnection.open(subgraph.port);
    const idle = await RawConnection.open(subgraph.port);
    expect((await idle.request('GET', '/healthz')).headers['connection']).toBe('keep-alive');
    const write = writing.graphql(
      'mutation HeldWrite($input: CreateAssetInput!) { createAsset(input: $input) { id name } }',
      { input: { type: 'SYSTEM', name: marker } },
      headers(),
    );
    await mongo.held(1);
    const read = reading.graphql('query HeldRead($name: String) { assets(filter: { nameContains: $name }) { totalCount } }', { name: marker }, headers());
    await mongo.held(2);

    subgraph.child.kill('SIGTERM');
    await waitFor(async () => (await readyzStatus(subgraph.port)) === 503, 60_000, '/readyz to answer 503');
    const onIdle = await idle.graphql('{ __typename }', {}, headers());
    expect([onIdle.status, onIdle.headers['connection']]).toEqual([200, 'close']);
    expect(await idle.ended).toEqual({ how: 'closed' });

    subgraph.child.kill('SIGTERM');
    await waitFor(async () => !(await canConnect(subgraph.port)), 60_000, 'the port to stop accepting');
    expect(subgraph.child.exitCode).toBeNull();
    mongo.release();
    const [written, readBack] = await Promise.all([
      write.catch((e: Error) => {
        throw new Error(`write: ${e.message}\n${subgraph.output()}`);
      }),
      read.catch((e: Error) => {
        throw new Error(`read: ${e.message}\n${subgraph.output()}`);
      }),
    ]);
    expect([written.status, json(written).data, written.headers['connection']]).toEqual([
      200,
      { createAsset: { id: expect.any(String), name: marker } },
      'close',
    ]);
    expect([readBack.status, json(readBack).data]).toEqual([200, { assets: { totalCount: expect.any(Number) } }]);
    for (const connection of [writing, reading]) expect(await connection.ended).toEqual({ how: 'closed' });
    expect(await subgraph.exited).toEqual({ code: 0, signal: null });
    expect(processesWithMarker(subgraph.marker)).toEqual([]);
    expectJsonLines(subgraph.output());
  } finally {
    mongo.release();
    await mongo.close();
  }
});
