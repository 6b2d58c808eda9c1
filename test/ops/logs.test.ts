/**
 * Logs are JSON everywhere (issue 29 item 6): every line a service prints is one JSON object with a string level —
 * also while its database is gone and every REST route fails (the issue saw the auth service print 292 lines of
 * Express's default handler, MongoBulkWriteError stacks from /internal/keys/used; the OAuth token endpoint answered
 * such an outage 500 server_error), for a body that does not parse,
 * for an uncaught exception and for a process warning. Probes log at debug. (Trace ids in log lines:
 * test/ops/tracing.test.ts.)
 */
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { generateInternalKeyPair, INTERNAL_IDENTITY_HEADER, mintInternalToken, NO_TENANT } from '@linepack/lib/identity';
import { freePort } from '@linepack/lib/infra/free-port';
import { repoRoot } from '@linepack/lib/repo-root';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { runProcess } from '../support/linepack-process';
import { mongoUriThrough, startTcpProxy } from '../support/tcp-proxy';
import { waitFor } from '../support/wait';

jest.setTimeout(120_000);

interface LogLine {
  level: unknown;
  msg?: string;
  [field: string]: unknown;
}

/** Every non-empty line parsed; a line that is not a JSON object fails the test, naming it. */
function jsonLines(output: string): LogLine[] {
  return output
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => {
      try {
        const entry = JSON.parse(line) as unknown;
        if (typeof entry !== 'object' || entry === null || Array.isArray(entry)) throw new Error('not an object');
        return entry as LogLine;
      } catch {
        throw new Error(`a line that is not a JSON object: ${line}`);
      }
    });
}

const levels = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'];

describe("the auth service while its MongoDB is gone, under the gateway's REST calls", () => {
  const keys = generateInternalKeyPair();
  let output = '';
  let port: number;
  let child: ReturnType<typeof spawn>;
  let database: Awaited<ReturnType<typeof startTcpProxy>>;
  const identity = () => ({
    [INTERNAL_IDENTITY_HEADER]: mintInternalToken(
      { subject: 'gateway', kind: 'api_key', tenantId: NO_TENANT, scopes: [], requestId: randomBytes(4).toString('hex') },
      'auth',
      keys.privateKeyPem,
    ),
  });
  const post = (route: string, body: string, headers: Record<string, string> = {}) =>
    fetch(`http://127.0.0.1:${port}${route}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });

  beforeAll(async () => {
    const mongo = new URL(process.env['MONGODB_URI']!);
    database = await startTcpProxy({ host: mongo.hostname, port: Number(mongo.port) });
    port = await freePort();
    child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'subgraphs/auth/src/main.ts')], {
      cwd: repoRoot,
      env: {
        ...process.env,
        PORT: String(port),
        HOST: '127.0.0.1',
        METRICS_PORT: '0',
        MONGODB_URI: mongoUriThrough(database.port),
        LINEPACK_DB_PREFIX: `logs${randomBytes(4).toString('hex')}`,
        INTERNAL_TOKEN_PUBLIC_KEY: keys.publicKeyPem,
        JWT_SIGNING_KEY: SigningKeys.generatePem(),
        MONGODB_SERVER_SELECTION_TIMEOUT_MS: '3000',
        SHUTDOWN_DRAIN_SECONDS: '0',
        LOG_LEVEL: 'info',
        // The OAuth authorization server on, so its token endpoint meets the outage too.
        OAUTH_ISSUER: 'https://linepack.example',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await waitFor(async () => child.exitCode !== null || (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, 120_000, 'the auth service');
    if (child.exitCode !== null) throw new Error(`the auth service exited ${child.exitCode}:\n${output}`);
  });

  afterAll(async () => {
    if (child?.exitCode === null) child.kill('SIGKILL');
    await database?.close();
  });

  it('answers every failing REST route with JSON (503 + Retry-After for the database) and logs only JSON lines, without a stack', async () => {
    const keyUse = JSON.stringify({ uses: [{ id: 'k1', at: new Date().toISOString() }] });
    expect((await post('/internal/keys/used', keyUse, identity())).status).toBe(204);
    // A body that does not parse is the client's mistake: 400, no error logged.
    const malformed = await post('/internal/keys/used', '{"uses": [', identity());
    expect(malformed.status).toBe(400);
    expect(((await malformed.json()) as { code: string }).code).toBe('MALFORMED_JSON');

    // The token endpoint reads the database for a code: an unknown one is the client's mistake while it is up.
    const redeem = () =>
      fetch(`http://127.0.0.1:${port}/auth/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({
          grant_type: 'authorization_code',
          client_id: 'https://client.example/metadata.json',
          code: 'no-such-code',
          code_verifier: 'v'.repeat(43),
        }),
      });
    const unknownCode = await redeem();
    expect([unknownCode.status, ((await unknownCode.json()) as { error: string }).error]).toEqual([400, 'invalid_grant']);

    await database.cut();
    for (const call of [
      () => post('/internal/keys/used', keyUse, identity()),
      () => fetch(`http://127.0.0.1:${port}/internal/revocations?since=0`, { headers: identity() }),
      () => post('/auth/login', JSON.stringify({ email: 'someone@example.com', password: 'a password that is long' })),
    ]) {
      const res = await call();
      if (res.status !== 503) throw new Error(`${res.url} ${res.status} ${await res.text()}\n${output}`);
      expect(res.headers.get('retry-after')).toBe('5');
      expect(res.headers.get('content-type')).toContain('application/problem+json');
      const problem = (await res.json()) as { code: string; status: number };
      expect(problem).toMatchObject({ status: 503, code: 'DATABASE_UNAVAILABLE' });
    }
    // OAuth clients get the outage in OAuth's shape (RFC 6749 §5.2 JSON; temporarily_unavailable is §4.1.2.1's code
    // for it), not a 500 server_error: a client that knows the code retries.
    const token = await redeem();
    expect([token.status, token.headers.get('retry-after'), token.headers.get('cache-control')]).toEqual([503, '5', 'no-store']);
    expect(token.headers.get('content-type')).toContain('application/json');
    expect(await token.json()).toEqual({ error: 'temporarily_unavailable', error_description: 'the database is unavailable; retry shortly' });

    const me = await post('/graphql', JSON.stringify({ query: '{ me { id } }' }), identity());
    expect(JSON.stringify(await me.json())).toContain('DATABASE_UNAVAILABLE');
    expect((await fetch(`http://127.0.0.1:${port}/readyz`)).status).toBe(503);

    child.kill('SIGTERM');
    await new Promise((resolve) => child.once('exit', resolve));
    expect(child.exitCode).toBe(0);

    const lines = jsonLines(output);
    for (const line of lines) expect([line.msg, levels.includes(String(line.level))]).toEqual([line.msg, true]);
    // An outage is named, at warn, with the driver's error — no stack (one per request would flood the log).
    const unavailable = lines.filter((line) => line.msg === 'database unavailable');
    expect(unavailable.length).toBeGreaterThanOrEqual(5);
    expect(unavailable.filter((line) => line['path'] === '/auth/oauth/token')).toHaveLength(1);
    for (const line of unavailable) expect([line.level, (line['error'] as { name: string }).name]).toEqual(['warn', expect.stringMatching(/^Mongo/)]);
    expect(output).not.toMatch(/"stack"|\n\s+at /);
    expect(lines.filter((line) => line.level === 'error' || line.level === 'fatal')).toEqual([]);
    // Probes are debug: not one line for the /readyz polls at info.
    expect(lines.filter((line) => line['path'] === '/readyz' || line['path'] === '/healthz')).toEqual([]);
    expect(lines.some((line) => line['path'] === '/internal/keys/used' && line['status'] === 503)).toBe(true);
    expect(lines.some((line) => line['path'] === '/auth/oauth/token' && line['status'] === 503)).toBe(true);
  });
});

it('logs an uncaught exception (with its stack inside the line) and a process warning as JSON, and exits 1', async () => {
  const script = `
    const { createLogger } = require('./lib/logger');
    const { logProcessFailures } = require('./lib/shutdown');
    logProcessFailures(createLogger('probe', 'info'));
    process.emitWarning('something old was used', 'DeprecationWarning', 'DEP0999');
    setTimeout(() => { throw new Error('boom'); }, 10);
  `;
  const run = await runProcess([process.execPath, '--import', 'tsx', '-e', script]);
  expect(run.code).toBe(1);
  const lines = jsonLines(`${run.stdout}\n${run.stderr}`);
  // The fatal line is written synchronously on the way out while the warning may still sit in the
  // asynchronous log buffer, so their order in the output is not fixed: both must be there, once each.
  expect(lines).toHaveLength(2);
  expect(lines).toEqual(
    expect.arrayContaining([
      expect.objectContaining({
        level: 'warn',
        msg: 'process warning',
        warning: { name: 'DeprecationWarning', message: 'something old was used', code: 'DEP0999' },
      }),
      expect.objectContaining({
        level: 'fatal',
        msg: 'uncaught exception: exiting',
        err: expect.objectContaining({ message: 'boom', stack: expect.stringContaining('Error: boom') }),
      }),
    ]),
  );
});
