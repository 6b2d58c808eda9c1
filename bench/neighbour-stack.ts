/**
 * The stacks bench:fairness and bench:isolation measure a victim tenant on, in either topology:
 *
 *   processes  what a deployment runs (the chart, docker compose, scripts/scale-out.ts): every subgraph and the
 *              gateway its own OS process (`node --import tsx <service>/src/main.ts`, NODE_ENV=production), the
 *              gateway with GATEWAY_WORKERS workers (default 1: one event loop for every tenant, the hardest case);
 *   single     `npm start`'s shape (dev/stack.ts): the gateway and the five subgraphs in one Node process — this
 *              benchmark's process, so the victim's client shares their event loop too.
 *
 * Both on the embedded MongoDB (or MONGODB_URI) and a redis-server of their own (or REDIS_URL). Either way the
 * benchmark can ask, per phase, how long each process's event loop was held and how much CPU each used: where the
 * victim's time went.
 */
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import type { MongoClient } from 'mongodb';
import { freePort } from '@linepack/lib/infra/free-port';
import { Cleanup, ProcessSet, stopOnSignals, type ManagedProcess } from '@linepack/lib/infra/child-process';
import { connectRunMongo, startRunStores, type RunStores } from '@linepack/lib/infra/run-stores';
import { generateInternalKeyPair } from '@linepack/lib/identity';
import { databaseName } from '@linepack/lib/mongo';
import { repoRoot } from '@linepack/lib/repo-root';
import { until } from '@linepack/lib/testing/until';
import { subgraphNames, type SubgraphName } from '@linepack/schema/subgraphs';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { AuthStore } from '@linepack/subgraph-auth/store';
import type { Tier } from '@linepack/subgraph-auth/documents';
import { ASSET_REFS_COLLECTION } from '@linepack/subgraph-measurements/asset-refs';
import { allReadWriteScopes, startTestStack } from '../test/support/stack';
import { processCpuMs, treeCpuMs } from './contenders/processes';

export type Topology = 'processes' | 'single';

export interface NeighbourStackOptions {
  topology: Topology;
  /** GATEWAY_WORKERS of the gateway process (processes only). */
  gatewayWorkers?: number;
  credentialCacheTtlSeconds?: number;
  /** Each Node process of the stack writes a CPU profile here when it stops (`--cpu-prof`). */
  cpuProfileDir?: string;
}

/** Per process of the stack: the longest its event loop was held and the CPU it used since the last `mark()`. */
export type ProcessLoad = Map<string, { loopMaxMs: number | null; cpuMs: number }>;

export interface NeighbourStack {
  gatewayUrl: string;
  /** What runs where, for the report. */
  description: string;
  /** A new tenant with one API key holding every read and write scope. */
  tenantWithKey(options?: { tier?: Tier; name?: string }): Promise<{ tenantId: string; apiKey: string }>;
  /** Another key in an existing tenant. */
  keyFor(tenantId: string, scopes: readonly string[], tier?: Tier): Promise<string>;
  /** Resolves once the measurements subgraph has projected the asset (it refuses measurements of assets it has not heard of). */
  knownToMeasurements(assetId: string): Promise<void>;
  /** Starts a new measuring interval of `load()`. */
  mark(): Promise<void>;
  /** Each process's event-loop delay and CPU since the last `mark()`. */
  load(): Promise<ProcessLoad>;
}

/**
 * Runs `body` against a fresh stack of `options.topology`; stops everything afterwards, also on failure and Ctrl-C
 * (every child is its own process group with a parent-death signal, so not even a SIGKILL of the benchmark leaves one).
 */
export async function withNeighbourStack<T>(options: NeighbourStackOptions, body: (stack: NeighbourStack) => Promise<T>): Promise<T> {
  const cleanup = new Cleanup();
  stopOnSignals(cleanup, (line) => console.error(line));
  try {
    const dir = await mkdtemp(path.join(os.tmpdir(), 'linepack-neighbour-bench-'));
    cleanup.add('temporary directory', () => rm(dir, { recursive: true, force: true }));
    cleanup.addLastResort(() => rmSync(dir, { recursive: true, force: true }));
    const processes = await ProcessSet.create(dir, `linepack-neighbour-bench[${path.basename(dir).replace('linepack-neighbour-bench-', '')}]`);
    cleanup.add('processes', () => processes.stopAll());
    cleanup.addLastResort(() => processes.killAllNow());
    // MongoDB and Redis from the environment, or started for this run (the embedded server's pid, for its CPU).
    const stores = await startRunStores(processes, cleanup, () => undefined);
    const stack = options.topology === 'single' ? await startSingle(options, stores, cleanup) : await startProcesses(options, stores, processes, cleanup);
    return await body(stack);
  } finally {
    const problems = await cleanup.run();
    for (const problem of problems) console.error(`clean-up: ${problem}`);
  }
}

/** The stores, for the report. */
const storesLabel = (stores: RunStores) => `${stores.mongoLabel}, ${stores.redisLabel}`;

function tenantHelpers(mongo: MongoClient, dbPrefix: string) {
  const authStore = new AuthStore(mongo.db(databaseName(dbPrefix, 'auth')));
  const refs = mongo.db(databaseName(dbPrefix, 'measurements')).collection<{ _id: string }>(ASSET_REFS_COLLECTION);
  return {
    async tenantWithKey(options: { tier?: Tier; name?: string } = {}) {
      const tier = options.tier ?? 'ENTERPRISE';
      const tenant = await authStore.createTenant({ name: options.name ?? `tenant ${dbPrefix}`, tier });
      const { secret } = await authStore.createApiKey({ tenantId: tenant._id, name: 'bench key', scopes: allReadWriteScopes, tier });
      return { tenantId: tenant._id, apiKey: secret };
    },
    async keyFor(tenantId: string, scopes: readonly string[], tier: Tier = 'ENTERPRISE') {
      return (await authStore.createApiKey({ tenantId, name: 'bench key', scopes, tier })).secret;
    },
    async knownToMeasurements(assetId: string) {
      const ref = await until(
        () => refs.findOne({ _id: assetId }),
        (found) => found != null,
        30_000,
      );
      if (!ref) throw new Error(`the measurements subgraph has not heard of asset ${assetId} (no asset.upserted projected)`);
    },
  };
}

/** A CPU reading that `mark()` remembers and `load()` subtracts from. */
function cpuMeter(read: () => number) {
  let at = read();
  return { mark: () => void (at = read()), since: () => read() - at };
}

async function startSingle(options: NeighbourStackOptions, db: RunStores, cleanup: Cleanup): Promise<NeighbourStack> {
  const stack = await startTestStack({ mongoUri: db.mongoUri, redisUrl: db.redisUrl, credentialCacheTtlSeconds: options.credentialCacheTtlSeconds ?? 30 });
  cleanup.add('stack', () => stack.stop());
  const loop = monitorEventLoopDelay({ resolution: 10 });
  loop.enable();
  const meters = new Map([
    [
      'gateway + subgraphs + the victim (one process)',
      cpuMeter(() => {
        const u = process.cpuUsage();
        return (u.user + u.system) / 1000;
      }),
    ],
    ...(db.mongoPid ? [['MongoDB', cpuMeter(() => processCpuMs(db.mongoPid!))] as const] : []),
  ]);
  return {
    gatewayUrl: stack.gatewayUrl,
    description: `npm start's shape: the gateway and the five subgraphs in this process (the victim's client too); ${storesLabel(db)}`,
    tenantWithKey: (o) => stack.tenantWithKey(o),
    keyFor: (tenantId, scopes, tier) => stack.keyFor(tenantId, scopes, tier),
    knownToMeasurements: (id) => stack.knownToMeasurements(id),
    async mark() {
      loop.reset();
      for (const meter of meters.values()) meter.mark();
    },
    async load() {
      const load: ProcessLoad = new Map();
      for (const [name, meter] of meters) load.set(name, { loopMaxMs: name === 'MongoDB' ? null : loop.max / 1e6, cpuMs: meter.since() });
      return load;
    },
  };
}

async function startProcesses(options: NeighbourStackOptions, db: RunStores, processes: ProcessSet, cleanup: Cleanup): Promise<NeighbourStack> {
  const dbPrefix = `neighbour_${randomBytes(4).toString('hex')}`;
  const mongo = await connectRunMongo(
    db.mongoUri,
    subgraphNames.map((name) => databaseName(dbPrefix, name)),
    cleanup,
  );

  const keys = generateInternalKeyPair();
  const profile = options.cpuProfileDir ? [`--cpu-prof`, `--cpu-prof-dir=${options.cpuProfileDir}`] : [];
  const metricsPorts = new Map<string, number>();
  const common = {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    MONGODB_URI: db.mongoUri,
    LINEPACK_DB_PREFIX: dbPrefix,
    INTERNAL_TOKEN_PUBLIC_KEY: keys.publicKeyPem,
    REDIS_URL: db.redisUrl,
    LOG_LEVEL: 'warn',
  };
  const subgraphs = {} as Record<SubgraphName, ManagedProcess>;
  for (const name of subgraphNames) {
    const port = await freePort();
    metricsPorts.set(name, await freePort());
    subgraphs[name] = processes.add({
      name,
      nodeArgs: [...profile, '--import', 'tsx', path.join(repoRoot, 'subgraphs', name, 'src', 'main.ts')],
      port,
      env: {
        ...common,
        PORT: String(port),
        METRICS_PORT: String(metricsPorts.get(name)),
        ...(name === 'auth' ? { JWT_SIGNING_KEY: SigningKeys.generatePem() } : {}),
      },
      cwd: repoRoot,
    });
    subgraphs[name].start();
  }
  await Promise.all(subgraphNames.map((name) => subgraphs[name].waitReady('/readyz', 120_000)));
  const gatewayPort = await freePort();
  metricsPorts.set('gateway', await freePort());
  const workers = options.gatewayWorkers ?? 1;
  const gateway = processes.add({
    name: 'gateway',
    nodeArgs: [...profile, '--import', 'tsx', path.join(repoRoot, 'gateway', 'src', 'main.ts')],
    port: gatewayPort,
    env: {
      NODE_ENV: 'production',
      HOST: '127.0.0.1',
      PORT: String(gatewayPort),
      METRICS_PORT: String(metricsPorts.get('gateway')),
      AUTH_URL: subgraphs.auth.origin,
      INTERNAL_TOKEN_PRIVATE_KEY: keys.privateKeyPem,
      REDIS_URL: db.redisUrl,
      LOG_LEVEL: 'warn',
      GATEWAY_WORKERS: String(workers),
      CREDENTIAL_CACHE_TTL_SECONDS: String(options.credentialCacheTtlSeconds ?? 30),
      ...Object.fromEntries(subgraphNames.map((name) => [`SUBGRAPH_URL_${name.toUpperCase()}`, `${subgraphs[name].origin}/graphql`])),
    },
    cwd: repoRoot,
  });
  gateway.start();
  await gateway.waitReady('/readyz', 120_000);

  const services = new Map<string, ManagedProcess>([['gateway', gateway], ...subgraphNames.map((name) => [name, subgraphs[name]] as const)]);
  const meters = new Map([
    ...[...services].map(([name, service]) => [name, cpuMeter(() => treeCpuMs(service.pid))] as const),
    ...(db.mongoPid ? [['MongoDB', cpuMeter(() => processCpuMs(db.mongoPid!))] as const] : []),
  ]);
  /** prom-client's event-loop gauges are read and reset at each scrape: the max since the previous one. */
  const loopMaxMs = async (name: string): Promise<number | null> => {
    const port = metricsPorts.get(name);
    if (!port) return null;
    try {
      const text = await (await fetch(`http://127.0.0.1:${port}/metrics`, { signal: AbortSignal.timeout(5_000) })).text();
      const line = text.split('\n').find((l) => l.startsWith('nodejs_eventloop_lag_max_seconds'));
      return line ? Number(line.split(' ').at(-1)) * 1000 : null;
    } catch {
      return null;
    }
  };
  return {
    gatewayUrl: `${gateway.origin}/graphql`,
    description: `a deployment's shape: the gateway (${workers} worker${workers === 1 ? '' : 's'}) and each subgraph its own process (NODE_ENV=production); ${storesLabel(db)}`,
    ...tenantHelpers(mongo, dbPrefix),
    async mark() {
      await Promise.all([...metricsPorts.keys()].map((name) => loopMaxMs(name)));
      for (const meter of meters.values()) meter.mark();
    },
    async load() {
      const load: ProcessLoad = new Map();
      const delays = new Map(await Promise.all([...metricsPorts.keys()].map(async (name) => [name, await loopMaxMs(name)] as const)));
      for (const [name, meter] of meters) load.set(name, { loopMaxMs: delays.get(name) ?? null, cpuMs: meter.since() });
      return load;
    },
  };
}
