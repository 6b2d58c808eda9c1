/**
 * `npm run scale-out`: proves on one machine that Linepack scales out — every part a separate OS process, two
 * gateway replicas and two assets replicas behind a real load balancer (nginx), one replica of each killed with
 * SIGKILL under load — and reports, for an operator, whether:
 *
 *   1. no request failed beyond the ones in flight at a kill (nginx retries what never reached the dead replica);
 *   2. rate limits stay exact across replicas (a free key gets exactly its 60 per minute, not 2 × 60);
 *   3. no event is lost: every asset write acknowledged during the run shows up in the analytics risk register
 *      and the compliance status list (the `asset.upserted` consumers) once the streams have caught up.
 *
 *   client ─▶ nginx :LB ─▶ upstream gateway { gateway-1, gateway-2 } ──▶ auth, measurements, analytics, compliance
 *                                                    │
 *                                                    └─▶ nginx :ASSETS ─▶ upstream assets { assets-1, assets-2 }
 *
 * MongoDB: MONGODB_URI, else the embedded mongo-java-server (in memory). Redis: REDIS_URL, else a redis-server of
 * its own. Databases and streams use a fresh LINEPACK_DB_PREFIX, so a shared MongoDB/Redis is safe.
 *
 * Flags: --json (also print the result as one JSON line), --duration SECONDS (traffic, default 20),
 * --clients N (concurrent clients, default 8), --no-restart (leave the killed replicas dead), --keep-temp.
 * Exit status 0 on pass, 1 on fail (the reasons are printed), 130/143 when interrupted. Every process and the
 * temporary directory are removed on exit, also on failure and Ctrl-C.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { waitFor } from '@linepack/lib/testing/until';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { startEmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { startRedisServer } from '@linepack/lib/infra/redis-server';
import { freePort } from '@linepack/lib/infra/free-port';
import { processAlive, terminate, which } from '@linepack/lib/infra/child-process';
import { generateInternalKeyPair } from '@linepack/lib/identity';
import { repoRoot } from '@linepack/lib/repo-root';
import { canonicalScopes } from '@linepack/lib/scopes';
import { subgraphRegistry } from '@linepack/schema/subgraphs';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';

// ───────────────────────────── options and result ─────────────────────────────

export interface ScaleOutOptions {
  /** How long the clients send traffic. */
  durationMs: number;
  /** Concurrent clients. */
  clients: number;
  /** Restart the killed replicas (on the same ports) before the traffic ends. */
  restart: boolean;
  /** Requests the free key sends in the rate-limit check (its limit is 60 per minute). */
  rateLimitRequests: number;
  /** How long the event consumers get to catch up after the traffic. */
  eventsDeadlineMs: number;
  keepTemp: boolean;
  /** Progress lines (stderr). */
  log: (line: string) => void;
}

export const defaultOptions: ScaleOutOptions = {
  durationMs: 20_000,
  clients: 8,
  restart: true,
  rateLimitRequests: 80,
  eventsDeadlineMs: 60_000,
  keepTemp: false,
  log: (line) => process.stderr.write(`scale-out: ${line}\n`),
};

/** One SIGKILL: when it was sent and when the process was seen gone (ms since the traffic started). */
export interface KillRecord {
  replica: string;
  signalAtMs: number;
  deadAtMs: number;
  restartedAtMs: number | null;
  /** When the restarted replica answered /readyz. */
  readyAgainAtMs: number | null;
}

export interface ScaleOutResult {
  pass: boolean;
  reasons: string[];
  /** runId is in every process title (`linepack-scale-out[<runId>] gateway-1`), so `pgrep -af 'linepack-scale-out\[<runId>\]'` finds them. */
  setup: { runId: string; tempDir: string; mongo: string; redis: string; nginx: string; dbPrefix: string; startupMs: number };
  traffic: {
    durationMs: number;
    clients: number;
    sent: number;
    reads: number;
    writes: number;
    ok: number;
    failed: number;
    failedInFlight: number;
    failedBeyondInFlight: number;
    /** The first few failures beyond the in-flight ones, for the report. */
    unexplained: Array<{ op: string; startedAtMs: number; endedAtMs: number; status: number; error: string }>;
    /** Requests nginx sent to a second gateway replica after the first could not be reached. */
    retriedByNginx: number;
    /** Subgraph requests nginx sent to the second assets replica (from its access log). */
    assetsRetriedByNginx: number;
    /** The failures grouped by what the client saw (`502 Bad Gateway`, a GraphQL error code and message). */
    failuresByCause: Record<string, number>;
    /** Answers per gateway replica, as nginx reports the upstream. */
    servedBy: Record<string, number>;
    /** Answers per killed replica after it was ready again (it rejoined the rotation). */
    servedAfterRestart: Record<string, number>;
    kills: KillRecord[];
    p50Ms: number;
    p99Ms: number;
  };
  rateLimit: { tier: string; limit: number; sent: number; accepted: number; refused: number; other: number; acceptedBy: Record<string, number> };
  events: { acknowledgedWrites: number; inRiskRegister: number; inComplianceStatus: number; missing: string[]; caughtUpAfterMs: number | null };
  /** Processes this run started that were still alive after clean-up (must be empty). */
  leftoverProcesses: number[];
  totalMs: number;
}

// ───────────────────────────── clean-up ─────────────────────────────

/** Every process this run starts, so clean-up (also a synchronous last resort at exit) can reach it. */
const startedPids = new Set<number>();
/** Set once clean-up has begun (Ctrl-C mid-run): nothing new is started, the clients stop. */
let shuttingDown = false;

export class Cleanup {
  private readonly tasks: Array<{ name: string; run: () => Promise<unknown> }> = [];
  private running: Promise<string[]> | null = null;

  add(name: string, run: () => Promise<unknown>): void {
    this.tasks.push({ name, run });
  }

  /** Runs every task once, last added first; returns the problems (never throws). Idempotent. */
  run(): Promise<string[]> {
    shuttingDown = true;
    this.running ??= (async () => {
      const problems: string[] = [];
      for (const task of this.tasks.reverse()) {
        try {
          await task.run();
        } catch (err) {
          problems.push(`${task.name}: ${(err as Error).message}`);
        }
      }
      return problems;
    })();
    return this.running;
  }
}

/** Synchronous last resort (process 'exit', a second Ctrl-C): SIGKILL every process group still alive. */
function killEverythingNow(): void {
  for (const pid of startedPids) {
    try {
      process.kill(-pid, 'SIGKILL');
    } catch {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  }
}

// ───────────────────────────── processes ─────────────────────────────

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function tailOf(file: string, lines = 30): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '(no log)';
  }
}

/** Env for a child: only what a process needs from ours (no stray PORT, SUBGRAPH_URL_*, NODE_OPTIONS from the caller). */
function baseEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const key of ['PATH', 'HOME', 'USER', 'LANG', 'TZ', 'TMPDIR', 'JAVA_HOME']) {
    const value = process.env[key];
    if (value !== undefined) env[key] = value;
  }
  return env;
}

/**
 * One Linepack service as its own OS process: `node --import tsx <entry>`, in its own process group (so a
 * terminal's Ctrl-C reaches this script, which stops the parts in order), with Linux's parent-death signal so
 * that not even a SIGKILL of this script leaves it running. Its output goes to a log file in the run's directory.
 */
class ServiceProcess {
  child: ChildProcess | null = null;
  readonly logFile: string;

  constructor(
    readonly name: string,
    private readonly entry: string,
    readonly port: number,
    private readonly env: Record<string, string>,
    private readonly runId: string,
    dir: string,
    private readonly setpriv: string | null,
  ) {
    this.logFile = path.join(dir, `${name}.log`);
  }

  get pid(): number {
    return this.child?.pid ?? -1;
  }

  get origin(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  start(): void {
    if (shuttingDown) throw new Error(`not starting ${this.name}: shutting down`);
    const fd = openSync(this.logFile, 'a');
    const nodeArgs = [`--title=linepack-scale-out[${this.runId}] ${this.name}`, '--import', 'tsx', path.join(repoRoot, this.entry)];
    const [command, args] = this.setpriv ? [this.setpriv, ['--pdeathsig', 'KILL', '--', process.execPath, ...nodeArgs]] : [process.execPath, nodeArgs];
    const child = spawn(command, args, {
      cwd: repoRoot,
      env: { ...baseEnv(), ...this.env, PORT: String(this.port), HOST: '127.0.0.1' },
      stdio: ['ignore', fd, fd],
      detached: true,
    });
    closeSync(fd);
    child.on('error', () => {}); // reported through readiness and the log
    if (child.pid) startedPids.add(child.pid);
    this.child = child;
  }

  async waitReady(timeoutMs = 60_000): Promise<void> {
    const child = this.child;
    await waitFor(
      async () => {
        if (child && (child.exitCode !== null || child.signalCode !== null)) {
          throw new Error(`${this.name} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${tailOf(this.logFile)}`);
        }
        return (await fetch(`${this.origin}/readyz`, { signal: AbortSignal.timeout(2_000) })).ok;
      },
      timeoutMs,
      `${this.name} (${this.origin}/readyz)`,
    ).catch((err: Error) => {
      throw new Error(`${err.message}\n--- ${this.logFile} ---\n${tailOf(this.logFile)}`);
    });
  }

  /** SIGKILL the process (its group), resolving once it is gone. */
  async kill(): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const gone = new Promise<void>((resolve) => child.once('exit', () => resolve()));
    process.kill(-child.pid!, 'SIGKILL');
    await gone;
  }

  async stop(): Promise<void> {
    if (this.child) await terminate(this.child, 15_000);
  }
}

// ───────────────────────────── nginx ─────────────────────────────

export interface NginxPorts {
  listenGateway: number;
  listenAssets: number;
  gateways: number[];
  assets: number[];
}

/**
 * The load balancer's configuration. Everything lives under `dir`; nginx runs in the foreground as the invoking
 * user (no system directories, no privileged ports).
 *
 * Retries: `proxy_next_upstream error timeout http_502 http_503` sends a request that could not be delivered
 * (connection refused, or reset before it was written) to the other replica, and
 * `max_fails=1 fail_timeout=5s` takes a replica out of rotation for 5 s after one such failure (a passive health
 * check: nothing polls; the next request after the 5 s probes it again, and is itself retried if it is still
 * down).
 *
 * What is NOT retried, deliberately: a POST that nginx had already sent. That is nginx's default (no
 * `non_idempotent` in proxy_next_upstream), and it is the correct choice here because every GraphQL request is a
 * POST and a mutation that reached a replica may have been applied even if the replica died before answering —
 * `createAsset` has no idempotency key, so a blind retry on the other replica could create the asset twice, and a
 * retried `updateAsset` would answer CONFLICT for a change that was in fact applied. The same rule holds for the
 * `http_502`/`http_503` conditions: they resend only what nginx may resend. The client gets 502 and decides: reads are
 * safe to retry, `recordMeasurements` is idempotent per idempotencyKey, updates carry the version they read. The
 * cost is that reads in flight at the moment a replica dies fail too; that is what "in flight" counts in the report.
 *
 * Keep-alive to the replicas: nginx closes an idle upstream connection after 4 s, before Node closes it (its
 * keepAliveTimeout is 5 s) — otherwise nginx could write a request into a connection the replica is closing,
 * and, that POST having been "sent", could not retry it.
 */
export function nginxConfig(dir: string, ports: NginxPorts, runAsRoot: boolean): string {
  const upstream = (name: string, list: number[]) => `
  upstream ${name} {
${list.map((p) => `    server 127.0.0.1:${p} max_fails=1 fail_timeout=5s;`).join('\n')}
    keepalive 32;
    keepalive_timeout 4s;
  }`;
  const proxy = (upstreamName: string) => `
      proxy_pass http://${upstreamName};
      proxy_http_version 1.1;
      proxy_set_header Connection "";
      proxy_set_header Host $host;
      proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
      proxy_set_header X-Forwarded-Proto $scheme;
      proxy_next_upstream error timeout http_502 http_503;
      proxy_next_upstream_tries 2;
      proxy_next_upstream_timeout 10s;
      proxy_connect_timeout 2s;
      # The gateway's own deadline is 30 s (REQUEST_TIMEOUT_MS): it answers 504 before nginx gives up.
      proxy_read_timeout 35s;
      proxy_send_timeout 35s;
      # Which replica answered ("a, b" when nginx retried on the second): the report counts them.
      add_header X-Linepack-Upstream $upstream_addr always;`;
  return `# Generated by scripts/scale-out.ts for one run; everything lives under ${dir}.
${runAsRoot ? "# Started as root: keep the workers as root so they can use this run's private directory.\nuser root;\n" : ''}worker_processes 1;
pid ${dir}/nginx.pid;
error_log ${dir}/nginx-error.log warn;
events { worker_connections 4096; }

http {
  log_format upstreams '$msec $status $request_time "$upstream_addr" "$upstream_status" $server_port';
  access_log ${dir}/nginx-access.log upstreams buffer=64k flush=1s;
  client_body_temp_path ${dir}/nginx-temp/client_body;
  proxy_temp_path ${dir}/nginx-temp/proxy;
  fastcgi_temp_path ${dir}/nginx-temp/fastcgi;
  uwsgi_temp_path ${dir}/nginx-temp/uwsgi;
  scgi_temp_path ${dir}/nginx-temp/scgi;
  # The gateway refuses bodies over 8 MB itself; let it say so.
  client_max_body_size 9m;
  keepalive_timeout 65s;
${upstream('gateway', ports.gateways)}
${upstream('assets', ports.assets)}

  # The public entry: the two gateway replicas.
  server {
    listen 127.0.0.1:${ports.listenGateway};
    location = /lb-health { access_log off; return 200 "ok\\n"; }
    location / {${proxy('gateway')}
    }
  }

  # The assets subgraph for the gateways (SUBGRAPH_URL_ASSETS): the two assets replicas.
  server {
    listen 127.0.0.1:${ports.listenAssets};
    location / {${proxy('assets')}
    }
  }
}
`;
}

// ───────────────────────────── HTTP client ─────────────────────────────

interface Answer {
  status: number;
  body: { data?: Record<string, any> | null; errors?: Array<{ message: string; extensions?: Record<string, unknown> }> } | null;
  upstream: string | null;
  error: string | null;
}

async function post(url: string, apiKey: string, query: string, variables: Record<string, unknown> = {}, timeoutMs = 20_000): Promise<Answer> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query, variables }),
      signal: AbortSignal.timeout(timeoutMs),
    });
    const text = await res.text();
    let body: Answer['body'] = null;
    try {
      body = JSON.parse(text) as Answer['body'];
    } catch {
      body = null;
    }
    return { status: res.status, body, upstream: res.headers.get('x-linepack-upstream'), error: body ? null : `non-JSON answer: ${text.slice(0, 300)}` };
  } catch (err) {
    const cause = (err as { cause?: { code?: string; message?: string } }).cause;
    return { status: 0, body: null, upstream: null, error: cause?.code ?? cause?.message ?? (err as Error).message };
  }
}

/** The GraphQL answer was a success: 2xx, data, no errors. */
const succeeded = (a: Answer) => a.status >= 200 && a.status < 300 && !!a.body?.data && !a.body.errors?.length;

function describeFailure(a: Answer): string {
  if (a.status === 0) return `no answer: ${a.error}`;
  // nginx's own error pages are HTML: name the status and nginx's title.
  const title = a.error && /<title>([^<]*)<\/title>/.exec(a.error)?.[1];
  if (title) return `HTTP ${a.status} from nginx (${title})`;
  if (a.error) return `HTTP ${a.status}: ${a.error}`;
  const first = a.body?.errors?.[0];
  return first ? `HTTP ${a.status} ${String(first.extensions?.['code'] ?? 'ERROR')}: ${first.message}` : `HTTP ${a.status}`;
}

// ───────────────────────────── the run ─────────────────────────────

const READ_SUMMARY = '{ pipelineSummary { totalAssets } }';
const READ_LIST = '{ assets(first: 20) { edges { node { id } } } }';
const CREATE = 'mutation ScaleOutCreate($input: CreateAssetInput!) { createAsset(input: $input) { id version } }';
const RISK_PAGE = `query ScaleOutRisk($after: String) { riskRegister(first: 500, after: $after) {
  pageInfo { hasNextPage endCursor } edges { node { asset { id } } } } }`;
const COMPLIANCE_PAGE = `query ScaleOutCompliance($after: String) { complianceStatus(filter: { obligation: PATROL }, first: 500, after: $after) {
  pageInfo { hasNextPage endCursor } edges { node { asset { id } } } } }`;

interface Outcome {
  op: 'summary' | 'list' | 'create';
  startedAt: number;
  endedAt: number;
  status: number;
  ok: boolean;
  error: string;
  upstream: string | null;
}

function percentile(sorted: number[], p: number): number {
  if (!sorted.length) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** Runs the CLI (bin/linepack.cjs) and returns its --json output. */
function linepackCli(args: string[], env: Record<string, string>): Promise<Record<string, unknown>> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [path.join(repoRoot, 'bin/linepack.cjs'), ...args, '--json'], {
      cwd: repoRoot,
      env: { ...baseEnv(), ...env, LOG_LEVEL: 'warn' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (c: Buffer) => (out += c.toString()));
    child.stderr.on('data', (c: Buffer) => (err += c.toString()));
    child.once('error', reject);
    child.once('close', (code) => {
      if (code !== 0) return reject(new Error(`linepack ${args.slice(0, 2).join(' ')} failed (exit ${code}): ${err.trim() || out.trim()}`));
      try {
        resolve(JSON.parse(out.trim().split('\n').pop()!) as Record<string, unknown>);
      } catch {
        reject(new Error(`linepack ${args.slice(0, 2).join(' ')} printed no JSON: ${out.trim()}`));
      }
    });
  });
}

/** Every asset id a paginated list (riskRegister / complianceStatus) holds. */
async function allAssetIds(url: string, apiKey: string, query: string, field: string): Promise<Set<string>> {
  const ids = new Set<string>();
  let after: string | null = null;
  for (let page = 0; page < 200; page++) {
    const answer = await post(url, apiKey, query, { after });
    if (!succeeded(answer)) throw new Error(`${field}: ${describeFailure(answer)}`);
    const connection = answer.body!.data![field] as {
      pageInfo: { hasNextPage: boolean; endCursor: string | null };
      edges: Array<{ node: { asset: { id: string } } }>;
    };
    for (const edge of connection.edges) ids.add(edge.node.asset.id);
    if (!connection.pageInfo.hasNextPage) break;
    after = connection.pageInfo.endCursor;
  }
  return ids;
}

export async function runScaleOut(options: ScaleOutOptions, cleanup: Cleanup): Promise<ScaleOutResult> {
  const { log } = options;
  const t0 = performance.now();
  const reasons: string[] = [];
  const dir = await mkdtemp(path.join(os.tmpdir(), 'linepack-scale-out-'));
  const runId = path.basename(dir).replace('linepack-scale-out-', '');
  cleanup.add('temporary directory', () => (options.keepTemp ? Promise.resolve() : rm(dir, { recursive: true, force: true })));
  log(`run ${runId} in ${dir}`);

  const dbPrefix = `scaleout_${runId.toLowerCase().replace(/[^a-z0-9]/g, '')}`.slice(0, 32);
  const setpriv = process.platform === 'linux' ? await which('setpriv') : null;
  const nginxBin = (await which('nginx')) ?? (existsSync('/usr/sbin/nginx') ? '/usr/sbin/nginx' : null);
  if (!nginxBin) throw new Error('nginx not found (apt-get install nginx-light, or nginx); scripts/setup.sh installs it');

  // ── MongoDB and Redis ──
  let mongoUri = process.env['MONGODB_URI'];
  let mongoLabel = 'MONGODB_URI';
  const redisFromEnv = process.env['REDIS_URL'];
  const [mongoStarted, redisStarted] = await Promise.all([
    mongoUri ? Promise.resolve(null) : startEmbeddedMongo({ log }),
    redisFromEnv ? Promise.resolve(null) : startRedisServer(),
  ]);
  if (mongoStarted) {
    startedPids.add(mongoStarted.pid);
    cleanup.add('embedded MongoDB', () => mongoStarted.stop());
    mongoUri = mongoStarted.uri;
    mongoLabel = `embedded mongo-java-server (pid ${mongoStarted.pid}, in memory)`;
  }
  if (redisStarted) cleanup.add('redis-server', () => redisStarted.stop());
  const redisUrl = redisFromEnv ?? redisStarted!.url;
  const redisLabel = redisFromEnv ? 'REDIS_URL' : `redis-server on ${redisUrl}`;

  // ── ports, keys, nginx ──
  const ports = {
    lbGateway: await freePort(),
    lbAssets: await freePort(),
    gateways: [await freePort(), await freePort()],
    assets: [await freePort(), await freePort()],
    auth: await freePort(),
    measurements: await freePort(),
    analytics: await freePort(),
    compliance: await freePort(),
  };
  const keys = generateInternalKeyPair();
  const signingKey = SigningKeys.generatePem();

  await mkdir(path.join(dir, 'nginx-temp'), { recursive: true });
  const confFile = path.join(dir, 'nginx.conf');
  await writeFile(
    confFile,
    nginxConfig(
      dir,
      { listenGateway: ports.lbGateway, listenAssets: ports.lbAssets, gateways: ports.gateways, assets: ports.assets },
      process.getuid?.() === 0,
    ),
  );
  const nginxErrorLog = path.join(dir, 'nginx-error.log');
  const nginxArgs = ['-p', dir, '-c', confFile, '-e', nginxErrorLog, '-g', 'daemon off;'];
  // Parent-death TERM: nginx's master stops its workers on TERM; a KILL would leave them behind.
  const nginx = spawn(setpriv ?? nginxBin, setpriv ? ['--pdeathsig', 'TERM', '--', nginxBin, ...nginxArgs] : nginxArgs, {
    stdio: ['ignore', 'ignore', 'ignore'],
    detached: true,
  });
  nginx.on('error', () => {});
  if (nginx.pid) startedPids.add(nginx.pid);
  cleanup.add('nginx', () => terminate(nginx, 10_000));
  const lbOrigin = `http://127.0.0.1:${ports.lbGateway}`;
  const lbUrl = `${lbOrigin}/graphql`;
  await waitFor(
    async () => {
      if (nginx.exitCode !== null) throw new Error(`nginx exited (${nginx.exitCode}):\n${tailOf(nginxErrorLog)}`);
      return (await fetch(`${lbOrigin}/lb-health`)).ok;
    },
    10_000,
    'nginx',
  );
  const nginxWorkers = await nginxWorkerPids(nginx.pid!);
  for (const pid of nginxWorkers) startedPids.add(pid);
  const nginxVersion = await new Promise<string>((resolve) => {
    const v = spawn(nginxBin, ['-v'], { stdio: ['ignore', 'ignore', 'pipe'] });
    let text = '';
    v.stderr.on('data', (c: Buffer) => (text += c.toString()));
    v.once('close', () => resolve(text.trim().replace('nginx version: ', '')));
    v.once('error', () => resolve('nginx'));
  });

  // ── the services, one process each ──
  const common = {
    MONGODB_URI: mongoUri!,
    LINEPACK_DB_PREFIX: dbPrefix,
    INTERNAL_TOKEN_PUBLIC_KEY: keys.publicKeyPem,
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'warn',
    // A metrics server defaults to 9464; 0 lets each of these processes take a free port.
    METRICS_PORT: '0',
  };
  const services: ServiceProcess[] = [];
  const service = (name: string, entry: string, port: number, env: Record<string, string>) => {
    const s = new ServiceProcess(name, entry, port, env, runId, dir, setpriv);
    services.push(s);
    return s;
  };
  const subgraphPorts: Record<string, number> = {
    auth: ports.auth,
    measurements: ports.measurements,
    analytics: ports.analytics,
    compliance: ports.compliance,
  };
  const singles = subgraphRegistry
    .filter(({ name }) => name !== 'assets')
    .map(({ name }) =>
      service(name, `subgraphs/${name}/src/main.ts`, subgraphPorts[name]!, name === 'auth' ? { ...common, JWT_SIGNING_KEY: signingKey } : common),
    );
  const assets = ports.assets.map((port, i) => service(`assets-${i + 1}`, 'subgraphs/assets/src/main.ts', port, common));
  const gatewayEnv: Record<string, string> = {
    AUTH_URL: `http://127.0.0.1:${ports.auth}`,
    INTERNAL_TOKEN_PRIVATE_KEY: keys.privateKeyPem,
    REDIS_URL: redisUrl,
    // Both gateways reach assets through nginx; the other subgraphs run once each.
    SUBGRAPH_URL_ASSETS: `http://127.0.0.1:${ports.lbAssets}/graphql`,
    SUBGRAPH_URL_AUTH: `http://127.0.0.1:${ports.auth}/graphql`,
    SUBGRAPH_URL_MEASUREMENTS: `http://127.0.0.1:${ports.measurements}/graphql`,
    SUBGRAPH_URL_ANALYTICS: `http://127.0.0.1:${ports.analytics}/graphql`,
    SUBGRAPH_URL_COMPLIANCE: `http://127.0.0.1:${ports.compliance}/graphql`,
    // nginx on the loopback sets X-Forwarded-For: the gateways see (and rate-limit failures by) the client's address.
    TRUST_PROXY: 'loopback',
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
  };
  const gateways = ports.gateways.map((port, i) => service(`gateway-${i + 1}`, 'gateway/src/main.ts', port, gatewayEnv));
  // Stopped in reverse: gateways first, then the subgraphs (the cleanup list runs last-added first).
  for (const s of [...singles, ...assets]) cleanup.add(s.name, () => s.stop());
  for (const s of gateways) cleanup.add(s.name, () => s.stop());
  log(`starting ${services.length} service processes (${services.map((s) => s.name).join(', ')})`);
  for (const s of services) s.start();
  await Promise.all([...singles, ...assets].map((s) => s.waitReady(90_000)));
  await Promise.all(gateways.map((s) => s.waitReady(60_000)));
  const startupMs = performance.now() - t0;
  log(`all up after ${(startupMs / 1000).toFixed(1)} s; nginx on ${lbOrigin}`);

  // ── a tenant and its keys, with the admin CLI ──
  const cliEnv = { MONGODB_URI: mongoUri!, LINEPACK_DB_PREFIX: dbPrefix, REDIS_URL: redisUrl, LINEPACK_STATE_DIR: dir };
  const tenant = await linepackCli(['tenants', 'create', '--name', `Scale-out ${runId}`, '--tier', 'enterprise'], cliEnv);
  const tenantId = String(tenant['id']);
  const [trafficKeyDoc, freeKeyDoc] = await Promise.all([
    linepackCli(
      [
        'keys',
        'create',
        '--tenant',
        tenantId,
        '--name',
        'scale-out traffic',
        '--tier',
        'enterprise',
        '--scopes',
        canonicalScopes.filter((s) => s !== 'admin:*').join(','),
      ],
      cliEnv,
    ),
    linepackCli(['keys', 'create', '--tenant', tenantId, '--name', 'scale-out free tier', '--tier', 'free', '--scopes', 'assets:read'], cliEnv),
  ]);
  const apiKey = String(trafficKeyDoc['apiKey']);
  const freeKey = String(freeKeyDoc['apiKey']);
  log(`tenant ${tenantId}: an enterprise key for the traffic, a free key for the rate-limit check`);

  const seed = async (input: Record<string, unknown>) => {
    const answer = await post(lbUrl, apiKey, CREATE, { input });
    if (!succeeded(answer)) throw new Error(`seeding ${String(input['type'])} failed: ${describeFailure(answer)}`);
    return String(answer.body!.data!['createAsset'].id);
  };
  const gas = { status: 'ACTIVE', product: 'NATURAL_GAS', regulation: 'CFR_192' };
  const system = await seed({ type: 'SYSTEM', name: 'Scale-out system', ...gas });
  const pipeline = await seed({ type: 'PIPELINE', name: 'Scale-out line', parentId: system, ...gas, beginStationM: 0, endStationM: 1_000_000 });

  // ── traffic, with two SIGKILLs in the middle ──
  const outcomes: Outcome[] = [];
  const acknowledged: string[] = [];
  const kills: KillRecord[] = [];
  const trafficStart = performance.now();
  const at = () => performance.now() - trafficStart;
  const endAt = options.durationMs;
  let writeSeq = 0;
  const client = async (n: number) => {
    for (let i = 0; at() < endAt && !shuttingDown; i++) {
      const roll = (n * 7 + i * 13) % 10;
      const op: Outcome['op'] = roll < 4 ? 'summary' : roll < 8 ? 'list' : 'create';
      const started = at();
      let answer: Answer;
      if (op === 'create') {
        const seq = writeSeq++;
        answer = await post(lbUrl, apiKey, CREATE, {
          input: {
            type: 'SEGMENT',
            name: `Scale-out segment ${n}-${i}`,
            parentId: pipeline,
            ...gas,
            beginStationM: seq * 10,
            endStationM: seq * 10 + 10,
            outsideDiameterMm: 508,
            wallThicknessMm: 7.9,
            smysMpa: 359,
            maopKpa: 6_200,
            classLocation: 1,
            inHca: false,
          },
        });
        if (succeeded(answer)) acknowledged.push(String(answer.body!.data!['createAsset'].id));
      } else {
        answer = await post(lbUrl, apiKey, op === 'summary' ? READ_SUMMARY : READ_LIST);
      }
      outcomes.push({
        op,
        startedAt: started,
        endedAt: at(),
        status: answer.status,
        ok: succeeded(answer),
        error: succeeded(answer) ? '' : describeFailure(answer),
        upstream: answer.upstream,
      });
    }
  };
  const killAt = async (replica: ServiceProcess, whenMs: number) => {
    await sleep(Math.max(0, whenMs - at()));
    const record: KillRecord = { replica: replica.name, signalAtMs: at(), deadAtMs: 0, restartedAtMs: null, readyAgainAtMs: null };
    kills.push(record);
    await replica.kill();
    record.deadAtMs = at();
    log(`SIGKILL ${replica.name} (pid ${replica.pid}) at ${(record.signalAtMs / 1000).toFixed(2)} s`);
    if (!options.restart) return;
    await sleep(Math.max(0, endAt * 0.6 - at()));
    record.restartedAtMs = at();
    replica.start();
    log(`restarting ${replica.name} on port ${replica.port}`);
    try {
      await replica.waitReady(60_000);
      record.readyAgainAtMs = at();
    } catch (err) {
      reasons.push(`the restarted ${replica.name} did not become ready: ${(err as Error).message}`);
    }
  };
  log(`traffic: ${options.clients} clients for ${options.durationMs / 1000} s through nginx`);
  const victims = [killAt(gateways[1]!, endAt * 0.35), killAt(assets[1]!, endAt * 0.5)];
  await Promise.all(Array.from({ length: options.clients }, (_, n) => client(n)));
  await Promise.all(victims);

  const sortedLatencies = outcomes.map((o) => o.endedAt - o.startedAt).sort((a, b) => a - b);
  const failures = outcomes.filter((o) => !o.ok);
  const inFlight = (o: Outcome) => kills.some((k) => o.startedAt <= k.deadAtMs && o.endedAt >= k.signalAtMs);
  const unexplained = failures.filter((o) => !inFlight(o));
  const gatewayName = new Map(gateways.map((g) => [`127.0.0.1:${g.port}`, g.name]));
  const servedBy: Record<string, number> = {};
  const servedAfterRestart: Record<string, number> = {};
  for (const o of outcomes) {
    const last = o.upstream?.split(',').pop()?.trim();
    if (!o.ok || !last) continue;
    const name = gatewayName.get(last) ?? last;
    servedBy[name] = (servedBy[name] ?? 0) + 1;
    const back = kills.find((k) => k.replica === name)?.readyAgainAtMs;
    if (back != null && o.startedAt >= back) servedAfterRestart[name] = (servedAfterRestart[name] ?? 0) + 1;
  }
  const failuresByCause: Record<string, number> = {};
  for (const o of failures) {
    const cause = o.error.length > 100 ? `${o.error.slice(0, 100)}…` : o.error;
    failuresByCause[cause] = (failuresByCause[cause] ?? 0) + 1;
  }
  const traffic: ScaleOutResult['traffic'] = {
    durationMs: Math.round(at()),
    clients: options.clients,
    sent: outcomes.length,
    reads: outcomes.filter((o) => o.op !== 'create').length,
    writes: outcomes.filter((o) => o.op === 'create').length,
    ok: outcomes.length - failures.length,
    failed: failures.length,
    failedInFlight: failures.length - unexplained.length,
    failedBeyondInFlight: unexplained.length,
    unexplained: unexplained
      .slice(0, 5)
      .map((o) => ({ op: o.op, startedAtMs: Math.round(o.startedAt), endedAtMs: Math.round(o.endedAt), status: o.status, error: o.error })),
    retriedByNginx: outcomes.filter((o) => o.upstream?.includes(',')).length,
    assetsRetriedByNginx: 0,
    failuresByCause,
    servedBy,
    servedAfterRestart,
    kills: kills.map((k) => ({
      ...k,
      signalAtMs: Math.round(k.signalAtMs),
      deadAtMs: Math.round(k.deadAtMs),
      restartedAtMs: k.restartedAtMs && Math.round(k.restartedAtMs),
      readyAgainAtMs: k.readyAgainAtMs && Math.round(k.readyAgainAtMs),
    })),
    p50Ms: Math.round(percentile(sortedLatencies, 50)),
    p99Ms: Math.round(percentile(sortedLatencies, 99)),
  };
  log(`traffic done: ${traffic.sent} requests, ${traffic.failed} failed (${traffic.failedInFlight} in flight at a kill)`);
  if (traffic.sent < options.clients * 10) reasons.push(`too little traffic to judge (${traffic.sent} requests)`);
  if (traffic.failedBeyondInFlight > 0) {
    reasons.push(
      `${traffic.failedBeyondInFlight} request(s) failed that were not in flight at a kill, e.g. ${traffic.unexplained.map((u) => `${u.op} at ${u.startedAtMs}–${u.endedAtMs} ms: ${u.error}`).join('; ')}`,
    );
  }

  // ── exact rate limits across the replicas ──
  // Both gateways back in rotation (nginx puts a failed one back after fail_timeout): GET /healthz until each answered.
  const seen = new Set<string>();
  await waitFor(
    async () => {
      const res = await fetch(`${lbOrigin}/healthz`);
      const upstream = res.headers.get('x-linepack-upstream')?.split(',').pop()?.trim();
      if (res.ok && upstream) seen.add(upstream);
      return seen.size >= gateways.length;
    },
    20_000,
    'nginx to route to both gateway replicas',
    250,
  ).catch((err: Error) => reasons.push(`rate limits: ${err.message}`));
  const limit = 60;
  const rlAnswers: Answer[] = [];
  for (let i = 0; i < options.rateLimitRequests; i++) rlAnswers.push(await post(lbUrl, freeKey, '{ __typename }'));
  const acceptedBy: Record<string, number> = {};
  for (const a of rlAnswers.filter(succeeded)) {
    const name = gatewayName.get(a.upstream?.split(',').pop()?.trim() ?? '') ?? String(a.upstream);
    acceptedBy[name] = (acceptedBy[name] ?? 0) + 1;
  }
  const rateLimit: ScaleOutResult['rateLimit'] = {
    tier: 'free',
    limit,
    sent: rlAnswers.length,
    accepted: rlAnswers.filter(succeeded).length,
    refused: rlAnswers.filter((a) => a.status === 429 && a.body?.errors?.[0]?.extensions?.['code'] === 'RATE_LIMITED').length,
    other: 0,
    acceptedBy,
  };
  rateLimit.other = rateLimit.sent - rateLimit.accepted - rateLimit.refused;
  log(`rate limit: ${rateLimit.accepted} of ${rateLimit.sent} accepted (${JSON.stringify(acceptedBy)})`);
  if (rateLimit.accepted !== limit) reasons.push(`rate limit: ${rateLimit.accepted} free-tier requests accepted, expected exactly ${limit}`);
  if (rateLimit.refused !== rateLimit.sent - limit)
    reasons.push(`rate limit: ${rateLimit.refused} refused with 429 RATE_LIMITED, expected ${rateLimit.sent - limit}`);
  if (Object.keys(acceptedBy).length < gateways.length)
    reasons.push(`rate limit: the accepted requests were not spread over both gateways (${JSON.stringify(acceptedBy)})`);

  // ── no lost events ──
  const eventsStart = performance.now();
  let risk = new Set<string>();
  let compliance = new Set<string>();
  let caughtUpAfterMs: number | null = null;
  const missingFrom = () => acknowledged.filter((id) => !risk.has(id) || !compliance.has(id));
  try {
    await waitFor(
      async () => {
        [risk, compliance] = await Promise.all([
          allAssetIds(lbUrl, apiKey, RISK_PAGE, 'riskRegister'),
          allAssetIds(lbUrl, apiKey, COMPLIANCE_PAGE, 'complianceStatus'),
        ]);
        return missingFrom().length === 0;
      },
      options.eventsDeadlineMs,
      'the analytics and compliance projections to hold every acknowledged write',
      1_000,
    );
    caughtUpAfterMs = Math.round(performance.now() - eventsStart);
  } catch (err) {
    reasons.push(`events: ${(err as Error).message}`);
  }
  const missing = missingFrom();
  const events: ScaleOutResult['events'] = {
    acknowledgedWrites: acknowledged.length,
    inRiskRegister: acknowledged.filter((id) => risk.has(id)).length,
    inComplianceStatus: acknowledged.filter((id) => compliance.has(id)).length,
    missing: missing.slice(0, 10),
    caughtUpAfterMs,
  };
  if (missing.length) reasons.push(`events: ${missing.length} acknowledged write(s) missing from a projection, e.g. ${missing.slice(0, 3).join(', ')}`);
  if (acknowledged.length === 0) reasons.push('events: no write was acknowledged');
  log(`events: ${events.inRiskRegister}/${events.inComplianceStatus} of ${events.acknowledgedWrites} acknowledged writes projected`);

  // nginx writes its access log on stop: count the assets requests it retried on the other replica.
  await terminate(nginx, 10_000);
  const accessLog = await readFile(path.join(dir, 'nginx-access.log'), 'utf8').catch(() => '');
  traffic.assetsRetriedByNginx = accessLog.split('\n').filter((line) => line.endsWith(` ${ports.lbAssets}`) && /"[^"]*,[^"]*"/.test(line)).length;

  if (reasons.length) {
    const logs = [...services.map((s) => s.logFile), nginxErrorLog]
      .map((file) => ({ file, text: tailOf(file, 15) }))
      .filter(({ text }) => text && text !== '(no log)');
    for (const { file, text } of logs) log(`--- ${path.basename(file)} ---\n${text}`);
  }

  return {
    pass: reasons.length === 0,
    reasons,
    setup: { runId, tempDir: dir, mongo: mongoLabel, redis: redisLabel, nginx: nginxVersion, dbPrefix, startupMs: Math.round(startupMs) },
    traffic,
    rateLimit,
    events,
    leftoverProcesses: [],
    totalMs: Math.round(performance.now() - t0),
  };
}

async function nginxWorkerPids(masterPid: number): Promise<number[]> {
  // /proc/<pid>/task/<pid>/children lists a process's children (Linux); workers may take a moment to appear.
  for (let i = 0; i < 20; i++) {
    const text = await readFile(`/proc/${masterPid}/task/${masterPid}/children`, 'utf8').catch(() => '');
    const pids = text.trim().split(/\s+/).filter(Boolean).map(Number);
    if (pids.length) return pids;
    await sleep(50);
  }
  return [];
}

// ───────────────────────────── the report ─────────────────────────────

const n = (x: number) => x.toLocaleString('en-US');
const s = (ms: number | null) => (ms === null ? '—' : `${(ms / 1000).toFixed(1)} s`);

export function summaryTable(r: ScaleOutResult): string {
  const t = r.traffic;
  const killText = t.kills
    .map(
      (k) =>
        `${k.replica} SIGKILL at ${s(k.signalAtMs)}` +
        (k.readyAgainAtMs !== null ? `, back at ${s(k.readyAgainAtMs)}` : k.restartedAtMs !== null ? ', restart not ready' : ', not restarted'),
    )
    .join('; ');
  const rows: Array<[string, string, string]> = [
    ['setup', `2 gateways + 2 assets replicas behind nginx ${r.setup.nginx}; auth, measurements, analytics, compliance ×1`, ''],
    ['', `MongoDB: ${r.setup.mongo}; Redis: ${r.setup.redis}; up in ${s(r.setup.startupMs)}`, ''],
    [
      'requests sent',
      `${n(t.sent)} in ${s(t.durationMs)} by ${t.clients} clients (${n(t.reads)} reads, ${n(t.writes)} writes); p50 ${t.p50Ms} ms, p99 ${t.p99Ms} ms`,
      '',
    ],
    ['kills', killText, ''],
    ['failed', `${n(t.failed)} (non-2xx, GraphQL errors or no answer)`, ''],
    ['  in flight at a kill', n(t.failedInFlight), ''],
    ['  beyond in-flight', n(t.failedBeyondInFlight), t.failedBeyondInFlight === 0 && t.sent > 0 ? 'PASS' : 'FAIL'],
    [
      'retried by nginx',
      `${n(t.retriedByNginx)} client requests on the other gateway, ${n(t.assetsRetriedByNginx)} subgraph requests on the other assets replica`,
      '',
    ],
    ...Object.entries(t.failuresByCause).map(([cause, count]): [string, string, string] => ['  cause', `${n(count)} × ${cause}`, '']),
    [
      'answered by',
      Object.entries(t.servedBy)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k} ${n(v)}` + (t.servedAfterRestart[k] ? ` (${n(t.servedAfterRestart[k])} after its restart)` : ''))
        .join(', '),
      '',
    ],
    [
      'rate limit (free, 60/min)',
      `${r.rateLimit.sent} sent round-robin, ${r.rateLimit.accepted} accepted (${Object.entries(r.rateLimit.acceptedBy)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => `${k} ${v}`)
        .join(', ')}), ${r.rateLimit.refused} refused 429`,
      r.rateLimit.accepted === r.rateLimit.limit && r.rateLimit.other === 0 ? 'PASS' : 'FAIL',
    ],
    [
      'events (asset.upserted)',
      `${n(r.events.acknowledgedWrites)} acknowledged writes: ${n(r.events.inRiskRegister)} in riskRegister, ${n(r.events.inComplianceStatus)} in complianceStatus; caught up ${r.events.caughtUpAfterMs === null ? 'never' : `after ${s(r.events.caughtUpAfterMs)}`}`,
      r.events.missing.length === 0 && r.events.acknowledgedWrites > 0 && r.events.caughtUpAfterMs !== null ? 'PASS' : 'FAIL',
    ],
    ['processes left', r.leftoverProcesses.length ? r.leftoverProcesses.join(', ') : 'none', r.leftoverProcesses.length ? 'FAIL' : 'PASS'],
    ['result', r.pass ? `PASS in ${s(r.totalMs)}` : `FAIL in ${s(r.totalMs)}`, r.pass ? 'PASS' : 'FAIL'],
  ];
  const w0 = Math.max(...rows.map((row) => row[0].length));
  const w1 = Math.max(...rows.map((row) => row[1].length));
  const line = `${'─'.repeat(w0 + 2)}┼${'─'.repeat(w1 + 2)}┼──────`;
  const out = [`Linepack scale-out`, line];
  for (const [a, b, c] of rows) out.push(` ${a.padEnd(w0)} │ ${b.padEnd(w1)} │ ${c}`);
  out.push(line);
  if (!r.pass) out.push('', 'Why it failed:', ...r.reasons.map((reason) => `  - ${reason}`));
  return out.join('\n');
}

// ───────────────────────────── main ─────────────────────────────

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      json: { type: 'boolean', default: false },
      duration: { type: 'string' },
      clients: { type: 'string' },
      'no-restart': { type: 'boolean', default: false },
      'keep-temp': { type: 'boolean', default: false },
    },
  });
  const options: ScaleOutOptions = {
    ...defaultOptions,
    durationMs: values.duration ? Number(values.duration) * 1000 : defaultOptions.durationMs,
    clients: values.clients ? Number(values.clients) : defaultOptions.clients,
    restart: !values['no-restart'],
    keepTemp: values['keep-temp'] ?? false,
  };
  if (!(options.durationMs >= 5_000) || !(options.clients >= 1)) {
    console.error('usage: scale-out [--json] [--duration SECONDS (≥ 5)] [--clients N] [--no-restart] [--keep-temp]');
    process.exit(2);
  }

  const cleanup = new Cleanup();
  let interrupted = false;
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupted) {
      killEverythingNow();
      process.exit(signal === 'SIGINT' ? 130 : 143);
    }
    interrupted = true;
    process.stderr.write(`scale-out: ${signal}: stopping everything (again to kill at once)\n`);
    void cleanup.run().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  process.on('exit', killEverythingNow);

  let result: ScaleOutResult | null = null;
  let error: Error | null = null;
  try {
    result = await runScaleOut(options, cleanup);
  } catch (err) {
    error = err as Error;
  }
  const problems = await cleanup.run();
  if (interrupted) return; // the signal handler exits
  await sleep(200);
  const leftover = [...startedPids].filter((pid) => processAlive(pid));
  if (error || !result) {
    console.error(`scale-out: FAIL: ${error?.message ?? 'no result'}`);
    if (values.json) console.log(JSON.stringify({ pass: false, reasons: [error?.message ?? 'no result'], leftoverProcesses: leftover }));
    process.exit(1);
  }
  result.leftoverProcesses = leftover;
  if (leftover.length) result.reasons.push(`processes still running after clean-up: ${leftover.join(', ')}`);
  for (const problem of problems) result.reasons.push(`clean-up: ${problem}`);
  result.pass = result.reasons.length === 0;
  console.log(summaryTable(result));
  if (values.json) console.log(JSON.stringify(result));
  process.exit(result.pass ? 0 : 1);
}

if (require.main === module) void main();
