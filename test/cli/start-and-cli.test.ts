import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '@linepack/lib/repo-root';
import { graphql } from '../support/stack';
import { processesWith, runEntry, runProcess, startLinepack, type LinepackProcess } from '../support/linepack-process';

/** `npm start` and the `linepack` CLI as a user runs them: separate processes, a file-backed database. */
interface DevState {
  gatewayUrl: string;
  authUrl: string;
  metricsUrl: string;
  mongodbUri: string;
  tenantId: string;
  apiKey: string;
  user: { email: string; password: string };
}

const stateDir = mkdtempSync(path.join(os.tmpdir(), 'linepack-start-'));
const devJson = path.join(stateDir, 'dev.json');
let running: ChildProcess | null = null;
let linepack: LinepackProcess | null = null;
/** What the last started Linepack printed. */
const output = () => linepack?.output() ?? '';

async function start(nodeArgs: string[] = []): Promise<DevState> {
  // Without MONGODB_URI, like `npm start` on a fresh clone: the embedded server, file-backed in the state dir.
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['MONGODB_URI'];
  delete env['REDIS_URL'];
  // A process group of its own, as a terminal gives `npm start`, so stop() can Ctrl-C the whole group.
  linepack = await startLinepack([process.execPath, ...nodeArgs, '--import', 'tsx', 'scripts/start.ts', '--free-ports', '--state-dir', stateDir], {
    env,
    detached: true,
  });
  running = linepack.child;
  return JSON.parse(readFileSync(devJson, 'utf8')) as DevState;
}

function exitOf(child: ChildProcess): Promise<number | null> {
  if (child.exitCode !== null) return Promise.resolve(child.exitCode);
  return new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
}

async function stop(): Promise<number | null> {
  const child = running!;
  running = null;
  const exited = exitOf(child);
  const stoppingAt = output().length;
  // A terminal's Ctrl-C signals every process of the foreground group, the databases' too.
  process.kill(-child.pid!, 'SIGINT');
  const code = await exited;
  // Services stop before the databases they write to: nothing fails on the way down.
  expect(output().slice(stoppingAt)).not.toMatch(/"level":50|ECONNREFUSED/);
  return code;
}

/**
 * The CLI as a separate process, awaited rather than run synchronously: a blocked event loop misses the gateway
 * closing this client's idle keep-alive connection, and the next request here fails on the dead socket.
 */
function cli(args: string[], state = stateDir, input?: string): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = { ...process.env, LINEPACK_STATE_DIR: state };
  // The running system's databases come from its dev.json, as for someone at a terminal.
  delete env['MONGODB_URI'];
  delete env['REDIS_URL'];
  return runProcess([process.execPath, path.join(repoRoot, 'bin/linepack.cjs'), ...args], { env, input: input ?? '' }).then(({ code, stdout, stderr }) => ({
    status: code,
    stdout,
    stderr,
  }));
}

afterAll(async () => {
  if (running) await stop();
  rmSync(stateDir, { recursive: true, force: true });
});

/** Pids of the embedded MongoDB JVMs serving this state directory's file. */
const databasePids = () => processesWith(path.join(stateDir, 'mongo.h2'));

const mode = (file: string) => (statSync(path.join(stateDir, file)).mode & 0o777).toString(8);

const measurementCount = async (s: DevState, assetId: string) =>
  (
    await graphql<{ asset: { measurements: { totalCount: number } } }>(s.gatewayUrl, `{ asset(id: "${assetId}") { measurements(first: 1) { totalCount } } }`, {
      apiKey: s.apiKey,
    })
  ).body.data?.asset.measurements.totalCount;

const totalAssets = async (s: DevState, key = s.apiKey) =>
  (await graphql<{ pipelineSummary: { totalAssets: number } }>(s.gatewayUrl, '{ pipelineSummary { totalAssets } }', { apiKey: key })).body.data?.pipelineSummary
    .totalAssets;

it('seeds a demo tenant, serves it, stops on Ctrl-C and keeps the data across a restart', async () => {
  const first = await start();
  expect(Object.keys(first).sort()).toEqual(['apiKey', 'authUrl', 'gatewayUrl', 'metricsUrl', 'mongodbUri', 'redisUrl', 'tenantId', 'user']);
  expect(first.tenantId).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  const gatewayRequests = async () =>
    Number(
      (await (await fetch(first.metricsUrl)).text()).match(
        /^linepack_graphql_request_duration_seconds_count\{linepack_service="gateway",operation="anonymous",status="200",outcome="ok"\} (\d+)$/m,
      )?.[1] ?? 0,
    );
  const requestsBefore = await gatewayRequests();
  expect(await totalAssets(first)).toBe(8);
  // The metrics endpoint (its own port, printed in the banner) moves with the traffic.
  expect(await gatewayRequests()).toBe(requestsBefore + 1);
  expect(output()).toContain(`Metrics          ${first.metricsUrl}`);
  const created = await graphql(first.gatewayUrl, 'mutation { createAsset(input: { type: STATION, name: "Compressor Station 3" }) { id } }', {
    apiKey: first.apiKey,
  });
  expect(created.body.errors).toBeUndefined();
  // authUrl is the base the routes hang off ({authUrl}/auth/login), as the service description names them.
  expect(first.authUrl).toBe(new URL(first.gatewayUrl).origin);
  const login = await fetch(`${first.authUrl}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(first.user),
  });
  expect(login.status).toBe(200);

  // What holds hashes and keys is its owner's only.
  expect({ dir: (statSync(stateDir).mode & 0o777).toString(8), db: mode('mongo.h2'), devJson: mode('dev.json'), key: mode('jwt-signing-key.pem') }).toEqual({
    dir: '700',
    db: '600',
    devJson: '600',
    key: '600',
  });

  // A second start on the directory in use says so and changes nothing.
  const devJsonBefore = readFileSync(devJson, 'utf8');
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env['MONGODB_URI'];
  delete env['REDIS_URL'];
  // Run without blocking this process: a spawnSync long enough on a busy machine let the gateway close this client's
  // idle keep-alive connection unnoticed, and the next request here failed on the dead socket.
  const again = await runEntry('scripts/start.ts', ['--free-ports', '--state-dir', stateDir], env);
  expect(again.code).toBe(1);
  expect(again.stderr).toContain(`${stateDir} is in use by another Linepack (pid ${running!.pid}); nothing was changed.`);
  expect(readFileSync(devJson, 'utf8')).toBe(devJsonBefore);
  expect(await totalAssets(first)).toBe(9);

  // Ctrl-C while a batch is being stored: its client gets the answer, the batch is there after the restart, and
  // nothing of the stack is left running. (How long stopping takes is a measurement, not a condition of this test.)
  const segment = (
    await graphql<{ createAsset: { id: string } }>(first.gatewayUrl, 'mutation { createAsset(input: { type: STATION, name: "Meter Station 7" }) { id } }', {
      apiKey: first.apiKey,
    })
  ).body.data!.createAsset.id;
  const batchSize = 1_000;
  const batch = Array.from({ length: batchSize }, (_, i) => ({
    idempotencyKey: `in-flight-${i}`,
    assetId: segment,
    type: 'PRESSURE',
    value: 6_000,
    unit: 'KPA',
    observedAt: '2026-03-01T00:00:00Z',
    source: 'SCADA',
  }));
  const inFlight = graphql<{ recordMeasurements: { insertedCount: number } }>(
    first.gatewayUrl,
    'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount } }',
    { apiKey: first.apiKey, variables: { i: batch } },
  );
  // Signalled only once the batch is being served (the gateway's in-flight gauge), however busy the machine is.
  const inFlightNow = async () =>
    Number((await (await fetch(first.metricsUrl)).text()).match(/^linepack_graphql_requests_in_flight\{linepack_service="gateway"\} (\d+)$/m)?.[1] ?? 0);
  let settled = false;
  void inFlight.finally(() => (settled = true));
  while ((await inFlightNow()) < 1) {
    if (settled) throw new Error('the batch finished before Ctrl-C could be sent while it was in flight');
    await new Promise((r) => setTimeout(r, 10));
  }
  const stopped = stop();
  const answer = await inFlight;
  expect({ status: answer.status, errors: answer.body.errors, data: answer.body.data }).toEqual({
    status: 200,
    errors: undefined,
    data: { recordMeasurements: { insertedCount: batchSize } },
  });
  expect(await stopped).toBe(0);
  expect(databasePids()).toEqual([]);
  expect(processesWith(stateDir)).toEqual([]);

  const second = await start();
  expect(second.tenantId).toBe(first.tenantId);
  expect(second.apiKey).toBe(first.apiKey);
  expect(await totalAssets(second)).toBe(10); // the seed did not run again and nothing was lost
  expect(await measurementCount(second, segment)).toBe(batchSize);
}, 180_000);

it('the linepack CLI creates a tenant, a key that works through the gateway, and a user', async () => {
  const state = JSON.parse(readFileSync(devJson, 'utf8')) as DevState;
  const tenant = await cli(['tenants', 'create', '--name', 'CLI Midstream', '--tier', 'pro', '--json']);
  expect(tenant.status).toBe(0);
  const tenantId = (JSON.parse(tenant.stdout) as { id: string }).id;

  const key = await cli(['keys', 'create', '--tenant', tenantId, '--scopes', 'read:assets', '--tier', 'free', '--expires-in-days', '7', '--json']);
  expect(key.status).toBe(0);
  const created = JSON.parse(key.stdout) as { apiKey: string; scopes: string[]; tier: string; expiresAt: string };
  expect(created.scopes).toEqual(['assets:read']);
  expect(created.tier).toBe('free');
  expect(Date.parse(created.expiresAt)).toBeGreaterThan(Date.now() + 6 * 86_400_000);
  expect(await totalAssets(state, created.apiKey)).toBe(0);

  // A password is never an argument (the process list shows arguments to every user of the machine).
  const onCommandLine = await cli([
    'users',
    'create',
    '--tenant',
    tenantId,
    '--email',
    'cli@example.com',
    '--password',
    'a long enough password',
    '--role',
    'viewer',
  ]);
  expect(onCommandLine.status).toBe(2);
  expect(onCommandLine.stderr).toContain('--password-stdin');
  // Without a terminal and without --password-stdin there is nobody to ask.
  expect((await cli(['users', 'create', '--tenant', tenantId, '--email', 'cli@example.com', '--role', 'viewer'])).stderr).toContain('--password-stdin');
  const user = await cli(
    ['users', 'create', '--tenant', tenantId, '--email', 'cli@example.com', '--password-stdin', '--role', 'viewer', '--json'],
    stateDir,
    'a long enough password\n',
  );
  expect(user.status).toBe(0);
  const login = (password: string) =>
    fetch(`${state.authUrl}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ email: 'cli@example.com', password }),
    });
  expect((await login('a long enough password')).status).toBe(200);
  // An operator's reset: a one-time token the user spends once.
  const reset = await cli(['users', 'reset-password', '--tenant', tenantId, '--email', 'cli@example.com', '--json']);
  expect(reset.status).toBe(0);
  const { token } = JSON.parse(reset.stdout) as { token: string };
  const spend = () =>
    fetch(`${state.authUrl}/auth/password/reset`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ reset_token: token, new_password: 'a brand new pass phrase' }),
    });
  expect((await spend()).status).toBe(204);
  expect((await spend()).status).toBe(401);
  expect((await login('a brand new pass phrase')).status).toBe(200);
  expect((await cli(['keys', 'list', '--tenant', tenantId, '--json'])).stdout).not.toContain(created.apiKey);

  const bad = await cli(['keys', 'create', '--tenant', tenantId, '--scopes', 'assets:delete']);
  expect(bad.status).toBe(2);
  expect(bad.stderr).toContain('unknown scope "assets:delete"');

  // Revoked with the CLI, the key stops working at once, though the gateway had just verified (and cached) it.
  const { id } = JSON.parse(key.stdout) as { id: string };
  expect((await cli(['keys', 'revoke', '--tenant', tenantId, '--id', id])).status).toBe(0);
  const afterRevoke = await graphql(state.gatewayUrl, '{ __typename }', { apiKey: created.apiKey });
  expect(afterRevoke.status).toBe(401);

  // A new token signing key, from the state dir's root key; the running auth service picks it up by itself.
  const rotated = await cli(['keys', 'rotate-signing', '--json']);
  expect(rotated.status).toBe(0);
  expect((JSON.parse(rotated.stdout) as { kid: string }).kid).toMatch(/^[\w-]{43}$/);
}, 60_000);

it('a crashed service or a lost database stops the whole stack with the reason and a non-zero exit', async () => {
  if (!running) await start();
  // kill -9 of the database (the OOM killer, a JVM crash): no half-alive stack that still answers.
  const [database] = databasePids();
  expect(database).toBeDefined();
  const child = running!;
  running = null;
  process.kill(database!, 'SIGKILL');
  expect(await exitOf(child)).toBe(1);
  expect(output()).toMatch(/linepack: the embedded MongoDB exited unexpectedly \(signal SIGKILL\); stopping Linepack\./);

  // The next start takes over the dead stack's lock, and what was acknowledged is there.
  const state = await start([
    '--import',
    `data:text/javascript,${encodeURIComponent("process.on('SIGUSR2', () => setImmediate(() => { throw new Error('simulated resolver bug'); }));")}`,
  ]);
  expect(await totalAssets(state)).toBe(10);

  // An uncaught error in a service: logged with its reason, everything stopped in order, exit 1.
  const crashing = running!;
  running = null;
  process.kill(crashing.pid!, 'SIGUSR2');
  expect(await exitOf(crashing)).toBe(1);
  expect(output()).toContain('linepack: uncaught error in a service: Error: simulated resolver bug');
  expect(output()).toContain('linepack: a service crashed (simulated resolver bug); stopping Linepack.');
  expect(databasePids()).toEqual([]);
}, 180_000);
