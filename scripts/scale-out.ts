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
 *   client ─▶ nginx :LB ─▶ upstream gateway { gateway-1, gateway-2 } ──▶ every other subgraph, one process each
 *                                                    │
 *                                                    └─▶ nginx :ASSETS ─▶ upstream assets { assets-1, assets-2 }
 *
 * Every subgraph of the registry (schema/subgraphs.ts) runs: assets as two replicas, each other one once, so a new
 * subgraph takes part without a line here. MongoDB: MONGODB_URI, else the embedded mongo-java-server (in memory).
 * Redis: REDIS_URL, else a redis-server of its own. Databases and streams use a fresh LINEPACK_DB_PREFIX, so a shared
 * MongoDB/Redis is safe. The processes, their clean-up and nginx: lib/infra/child-process.ts, scale-out/nginx.ts.
 *
 * Flags: --json (also print the result as one JSON line), --duration SECONDS (traffic, default 20),
 * --clients N (concurrent clients, default 8), --no-restart (leave the killed replicas dead), --keep-temp.
 * Exit status 0 on pass, 1 on fail (the reasons are printed), 130/143 when interrupted. Every process and the
 * temporary directory are removed on exit, also on failure and Ctrl-C.
 */
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Cleanup, logTail, ProcessSet, stopOnSignals, type ManagedProcess } from '@linepack/lib/infra/child-process';
import { freePort } from '@linepack/lib/infra/free-port';
import { startRunStores } from '@linepack/lib/infra/run-stores';
import { generateInternalKeyPair } from '@linepack/lib/identity';
import { repoRoot } from '@linepack/lib/repo-root';
import { canonicalScopes } from '@linepack/lib/scopes';
import { waitFor } from '@linepack/lib/testing/until';
import { subgraphNames, type SubgraphName } from '@linepack/schema/subgraphs';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { allAssetIds, describeFailure, linepackCli, post, succeeded, type Answer } from './scale-out/client';
import { startNginx } from './scale-out/nginx';
import { summaryTable, type KillRecord, type ScaleOutResult } from './scale-out/report';

export type { KillRecord, ScaleOutResult };

// ───────────────────────────── options ─────────────────────────────

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

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

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

/** The temporary directory and the processes of one run: clean-up removes and stops them, also on failure and Ctrl-C. */
export interface ScaleOutRun {
  dir: string;
  runId: string;
  processes: ProcessSet;
}

export async function startRun(options: Pick<ScaleOutOptions, 'keepTemp' | 'log'>, cleanup: Cleanup): Promise<ScaleOutRun> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'linepack-scale-out-'));
  const runId = path.basename(dir).replace('linepack-scale-out-', '');
  cleanup.add('temporary directory', () => (options.keepTemp ? Promise.resolve() : rm(dir, { recursive: true, force: true })));
  // runId is in every process title (`linepack-scale-out[<runId>] gateway-1`): pgrep finds a run's processes by it.
  const processes = await ProcessSet.create(dir, `linepack-scale-out[${runId}]`);
  cleanup.addLastResort(() => processes.killAllNow());
  options.log(`run ${runId} in ${dir}`);
  return { dir, runId, processes };
}

/** The subgraph run as two replicas behind nginx, one of them killed mid-run (the traffic writes and reads assets). */
const REPLICATED: SubgraphName = 'assets';

export async function runScaleOut(options: ScaleOutOptions, cleanup: Cleanup, { dir, runId, processes }: ScaleOutRun): Promise<ScaleOutResult> {
  const { log } = options;
  const t0 = performance.now();
  const reasons: string[] = [];
  const dbPrefix = `scaleout_${runId.toLowerCase().replace(/[^a-z0-9]/g, '')}`.slice(0, 32);
  const { mongoUri, mongoLabel, redisUrl, redisLabel } = await startRunStores(processes, cleanup, log);

  // ── ports, keys, nginx ──
  const singleNames = subgraphNames.filter((name) => name !== REPLICATED);
  const ports = {
    lbGateway: await freePort(),
    lbAssets: await freePort(),
    gateways: [await freePort(), await freePort()],
    assets: [await freePort(), await freePort()],
    singles: Object.fromEntries(await Promise.all(singleNames.map(async (name) => [name, await freePort()] as const))) as Record<SubgraphName, number>,
  };
  const keys = generateInternalKeyPair();
  const nginx = await startNginx(
    dir,
    { listenGateway: ports.lbGateway, listenAssets: ports.lbAssets, gateways: ports.gateways, assets: ports.assets },
    processes,
    cleanup,
  );
  const lbOrigin = nginx.origin;
  const lbUrl = `${lbOrigin}/graphql`;

  // ── the services, one process each; stopped last added first: the gateways, then the subgraphs ──
  cleanup.add('service processes', () => processes.stopAll(15_000));
  const common = {
    HOST: '127.0.0.1',
    MONGODB_URI: mongoUri,
    LINEPACK_DB_PREFIX: dbPrefix,
    INTERNAL_TOKEN_PUBLIC_KEY: keys.publicKeyPem,
    REDIS_URL: redisUrl,
    LOG_LEVEL: 'warn',
    // A metrics server defaults to 9464; 0 lets each of these processes take a free port.
    METRICS_PORT: '0',
  };
  const service = (name: string, entry: string, port: number, env: Record<string, string>) =>
    processes.add({ name, nodeArgs: ['--import', 'tsx', path.join(repoRoot, entry)], port, env: { ...env, PORT: String(port) }, cwd: repoRoot });
  const subgraphEntry = (name: string) => `subgraphs/${name}/src/main.ts`;
  // The auth service signs users' tokens: the one subgraph with a key of its own.
  const envOf = (name: SubgraphName) => (name === 'auth' ? { ...common, JWT_SIGNING_KEY: SigningKeys.generatePem() } : common);
  const singles = singleNames.map((name) => service(name, subgraphEntry(name), ports.singles[name], envOf(name)));
  const assets = ports.assets.map((port, i) => service(`${REPLICATED}-${i + 1}`, subgraphEntry(REPLICATED), port, envOf(REPLICATED)));
  const subgraphUrl = (name: SubgraphName) =>
    // Both gateways reach the replicated subgraph through nginx; the others run once each.
    name === REPLICATED ? `http://127.0.0.1:${ports.lbAssets}/graphql` : `http://127.0.0.1:${ports.singles[name]}/graphql`;
  const gatewayEnv: Record<string, string> = {
    HOST: '127.0.0.1',
    AUTH_URL: `http://127.0.0.1:${ports.singles.auth}`,
    INTERNAL_TOKEN_PRIVATE_KEY: keys.privateKeyPem,
    REDIS_URL: redisUrl,
    ...Object.fromEntries(subgraphNames.map((name) => [`SUBGRAPH_URL_${name.toUpperCase()}`, subgraphUrl(name)])),
    // nginx on the loopback sets X-Forwarded-For: the gateways see (and rate-limit failures by) the client's address.
    TRUST_PROXY: 'loopback',
    LOG_LEVEL: 'warn',
    METRICS_PORT: '0',
  };
  const gateways = ports.gateways.map((port, i) => service(`gateway-${i + 1}`, 'gateway/src/main.ts', port, gatewayEnv));
  const services = [...singles, ...assets, ...gateways];
  log(`starting ${services.length} service processes (${services.map((s) => s.name).join(', ')})`);
  for (const s of services) s.start();
  await Promise.all([...singles, ...assets].map((s) => s.waitReady('/readyz', 90_000)));
  await Promise.all(gateways.map((s) => s.waitReady('/readyz', 60_000)));
  const startupMs = performance.now() - t0;
  log(`all up after ${(startupMs / 1000).toFixed(1)} s; nginx on ${lbOrigin}`);

  // ── a tenant and its keys, with the admin CLI ──
  const cliEnv = { MONGODB_URI: mongoUri, LINEPACK_DB_PREFIX: dbPrefix, REDIS_URL: redisUrl, LINEPACK_STATE_DIR: dir };
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
    for (let i = 0; at() < endAt && !cleanup.begun; i++) {
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
  const killAt = async (replica: ManagedProcess, whenMs: number) => {
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
      await replica.waitReady('/readyz', 60_000);
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
  await nginx.stop();
  const accessLog = await readFile(nginx.accessLog, 'utf8').catch(() => '');
  traffic.assetsRetriedByNginx = accessLog.split('\n').filter((line) => line.endsWith(` ${ports.lbAssets}`) && /"[^"]*,[^"]*"/.test(line)).length;

  if (reasons.length) {
    const logs = [...services.map((s) => s.logFile), nginx.errorLog]
      .map((file) => ({ file, text: logTail(file, 15) }))
      .filter(({ text }) => text && text !== '(no log)');
    for (const { file, text } of logs) log(`--- ${path.basename(file)} ---\n${text}`);
  }

  return {
    pass: reasons.length === 0,
    reasons,
    setup: {
      runId,
      tempDir: dir,
      mongo: mongoLabel,
      redis: redisLabel,
      nginx: nginx.version,
      dbPrefix,
      singles: singleNames,
      startupMs: Math.round(startupMs),
    },
    traffic,
    rateLimit,
    events,
    leftoverProcesses: [],
    totalMs: Math.round(performance.now() - t0),
  };
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
  const { interrupted } = stopOnSignals(cleanup, options.log);

  let result: ScaleOutResult | null = null;
  let error: Error | null = null;
  let run: ScaleOutRun | null = null;
  try {
    run = await startRun(options, cleanup);
    result = await runScaleOut(options, cleanup, run);
  } catch (err) {
    error = err as Error;
  }
  const problems = await cleanup.run();
  if (interrupted()) return; // the signal handler exits
  await sleep(200);
  const leftover = run?.processes.leftovers() ?? [];
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
