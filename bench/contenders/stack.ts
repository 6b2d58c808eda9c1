/**
 * The stack `npm run bench:gateway` loads, started once: MongoDB (MONGODB_URI, else the embedded mongo-java-server in
 * memory) and Redis (REDIS_URL, else a redis-server of its own), the five subgraphs as one process each (shared by
 * every contender), a tenant with its API keys, and the contenders — each its own OS process:
 *
 *   linepack   gateway/src/main.ts bundled as the Dockerfile ships it (esbuild → `node linepack-gateway.js`), with
 *              production settings: NODE_ENV=production, LOG_LEVEL=info (the chart's default), REDIS_URL (rate limits
 *              counted in Redis), GATEWAY_WORKERS=1, the subgraph URLs, the auth URL and the internal private key.
 *   linepack2  the same with GATEWAY_WORKERS=2 (only with --workers2).
 *   bare       bench/contenders/bare-apollo-gateway.ts, bundled the same way.
 *   hive       `hive-gateway supergraph <file> --fork 1` (@graphql-hive/gateway's CLI, its own dist) with
 *              bench/contenders/hive-gateway.config.ts bundled as its --config-path.
 * bare and hive mint identity tokens as --tokens says (bench/contenders/contender-tokens.ts).
 *
 * bare and hive get the supergraph with its routing URLs pointed at this run's subgraphs and passed through
 * withSecurityEnforcedByLinepack (the form @apollo/gateway accepts; Linepack does the same in memory).
 */
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { MongoClient } from 'mongodb';
import { freePort } from '@linepack/lib/infra/free-port';
import { connectRunMongo, startRunStores } from '@linepack/lib/infra/run-stores';
import { Cleanup, ProcessSet, type ManagedProcess } from '@linepack/lib/infra/child-process';
import { generateInternalKeyPair, type InternalKeyPair } from '@linepack/lib/identity';
import { databaseName } from '@linepack/lib/mongo';
import { repoRoot } from '@linepack/lib/repo-root';
import { canonicalScopes } from '@linepack/lib/scopes';
import { subgraphNames, supergraphPath, type SubgraphName } from '@linepack/schema/subgraphs';
import { withSecurityEnforcedByLinepack } from '@linepack/gateway/server';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { AuthStore } from '@linepack/subgraph-auth/store';
import { bundle, linkNodeModules } from './bundle';
import type { TokenMode } from './contender-tokens';

/** Every scope but admin:*. */
export const benchScopes: string[] = canonicalScopes.filter((s) => s !== 'admin:*');

/** One tenant may hold 100 active keys: one enterprise key, the rest pro keys for the counted contender. */
export const PRO_KEYS = 99;
/**
 * Q0 reads no tenant data, so its pro keys may come from tenants of their own: four more tenants' 100 keys each give
 * the pro contender 96,000 requests a minute at 80 % — Linepack answers Q0 fast enough to spend 99 keys' budget
 * (29,700 a minute) inside one 5 s run, and a refused request would be a failed one.
 */
export const Q0_PRO_TENANTS = 4;

export interface BenchStackOptions {
  log: (line: string) => void;
  /** Also start a Linepack gateway with GATEWAY_WORKERS=2. */
  workers2: boolean;
  /** LOG_LEVEL of every Linepack process (the gateway's and the subgraphs' access logs are part of what they do). */
  logLevel: string;
  proKeys: number;
  /** How the bare and Hive contenders mint identity tokens (contender-tokens.ts). */
  tokenMode: TokenMode;
}

export interface BenchStack {
  runId: string;
  dir: string;
  dbPrefix: string;
  mongoUri: string;
  mongoLabel: string;
  redisLabel: string;
  mongo: MongoClient;
  keys: InternalKeyPair;
  tenantId: string;
  enterpriseKey: string;
  proKeys: string[];
  /** Pro keys of Q0_PRO_TENANTS more tenants, for Q0 only. */
  q0ProKeys: string[];
  processes: ProcessSet;
  subgraphs: Record<SubgraphName, ManagedProcess>;
  subgraphUrl(name: SubgraphName): string;
  linepack: ManagedProcess;
  linepack2: ManagedProcess | null;
  bare: ManagedProcess;
  /** Null when the optional contender is not installed (npm run bench:contenders). */
  hive: ManagedProcess | null;
  hiveVersion: string | null;
  startupMs: number;
}

/**
 * Hive Gateway is an optional install (bench/contenders/hive/package.json, 745 packages Linepack itself does not need):
 * `npm run bench:contenders`, which `npm run bench:gateway` runs first. Without it the benchmark runs the other
 * contenders and says so.
 */
const hivePackage = path.join(repoRoot, 'bench', 'contenders', 'hive', 'node_modules', '@graphql-hive', 'gateway');
const hiveBin = path.join(hivePackage, 'dist', 'bin.js');
export const hiveInstalled = (): boolean => existsSync(hiveBin);

export async function startBenchStack(options: BenchStackOptions, cleanup: Cleanup): Promise<BenchStack> {
  const t0 = performance.now();
  const { log } = options;
  if (!hiveInstalled()) log('Hive Gateway is not installed (npm run bench:contenders): running without it');
  const dir = await mkdtemp(path.join(os.tmpdir(), 'linepack-gateway-bench-'));
  const runId = path.basename(dir).replace('linepack-gateway-bench-', '');
  cleanup.add('temporary directory', () => rm(dir, { recursive: true, force: true }));
  cleanup.addLastResort(() => rmSync(dir, { recursive: true, force: true }));
  const processes = await ProcessSet.create(dir, `linepack-gateway-bench[${runId}]`);
  cleanup.add('processes', () => processes.stopAll());
  cleanup.addLastResort(() => processes.killAllNow());
  const dbPrefix = `gwbench_${randomBytes(4).toString('hex')}`;

  // ── MongoDB and Redis ──
  const { mongoUri, mongoLabel, redisUrl, redisLabel } = await startRunStores(processes, cleanup, log);
  const mongo = await connectRunMongo(
    mongoUri,
    subgraphNames.map((name) => databaseName(dbPrefix, name)),
    cleanup,
  );

  // ── the bundles, built while the subgraphs start ──
  await linkNodeModules(dir);
  const bundles = Promise.all([
    bundle('gateway/src/main.ts', path.join(dir, 'linepack-gateway.js')),
    bundle('bench/contenders/bare-apollo-gateway.ts', path.join(dir, 'bare-apollo-gateway.js')),
    ...(hiveInstalled() ? [bundle('bench/contenders/hive-gateway.config.ts', path.join(dir, 'hive-gateway.config.mjs'), 'esm')] : []),
  ]);

  // ── the subgraphs, one process each ──
  const keys = generateInternalKeyPair();
  const ports = Object.fromEntries(await Promise.all(subgraphNames.map(async (name) => [name, await freePort()] as const))) as Record<SubgraphName, number>;
  const common = {
    NODE_ENV: 'production',
    HOST: '127.0.0.1',
    MONGODB_URI: mongoUri,
    LINEPACK_DB_PREFIX: dbPrefix,
    INTERNAL_TOKEN_PUBLIC_KEY: keys.publicKeyPem,
    REDIS_URL: redisUrl,
    LOG_LEVEL: options.logLevel,
    METRICS_PORT: '0',
  };
  const subgraphs = {} as Record<SubgraphName, ManagedProcess>;
  for (const name of subgraphNames) {
    subgraphs[name] = processes.add({
      name,
      nodeArgs: ['--import', 'tsx', path.join(repoRoot, 'subgraphs', name, 'src', 'main.ts')],
      port: ports[name],
      env: { ...common, PORT: String(ports[name]), ...(name === 'auth' ? { JWT_SIGNING_KEY: SigningKeys.generatePem() } : {}) },
      cwd: repoRoot,
    });
  }
  log(`starting the subgraphs (${subgraphNames.join(', ')}), one process each`);
  for (const name of subgraphNames) subgraphs[name].start();
  await Promise.all(subgraphNames.map((name) => subgraphs[name].waitReady('/readyz', 120_000)));
  const subgraphUrl = (name: SubgraphName) => `${subgraphs[name].origin}/graphql`;

  // ── a tenant and its keys (the auth store, as the admin CLI writes them) ──
  const authStore = new AuthStore(mongo.db(databaseName(dbPrefix, 'auth')));
  const tenant = await authStore.createTenant({ name: `Gateway bench ${runId}`, tier: 'ENTERPRISE' });
  const enterpriseKey = (await authStore.createApiKey({ tenantId: tenant._id, name: 'bench enterprise', scopes: benchScopes, tier: 'ENTERPRISE' })).secret;
  const proKeys: string[] = [];
  for (let i = 0; i < Math.min(options.proKeys, PRO_KEYS); i++) {
    proKeys.push((await authStore.createApiKey({ tenantId: tenant._id, name: `bench pro ${i + 1}`, scopes: benchScopes, tier: 'PRO' })).secret);
  }
  const q0ProKeys: string[] = [];
  for (let t = 0; t < Q0_PRO_TENANTS; t++) {
    const extra = await authStore.createTenant({ name: `Gateway bench ${runId} Q0 ${t + 1}`, tier: 'ENTERPRISE' });
    for (let i = 0; i < 100; i++) {
      q0ProKeys.push((await authStore.createApiKey({ tenantId: extra._id, name: `bench Q0 pro ${i + 1}`, scopes: benchScopes, tier: 'PRO' })).secret);
    }
  }
  log(`tenant ${tenant._id}: 1 enterprise key, ${proKeys.length} pro keys; for Q0 ${q0ProKeys.length} more pro keys in ${Q0_PRO_TENANTS} tenants`);

  // ── the supergraph bare and Hive load ──
  await bundles;
  const routed = readFileSync(supergraphPath, 'utf8').replace(/@join__graph\(name: "([a-z]+)", url: "[^"]*"\)/g, (whole, name: string) =>
    subgraphNames.includes(name as SubgraphName) ? `@join__graph(name: "${name}", url: "${subgraphUrl(name as SubgraphName)}")` : whole,
  );
  const benchSupergraph = path.join(dir, 'supergraph.graphql');
  await writeFile(benchSupergraph, withSecurityEnforcedByLinepack(routed));

  // ── the contenders ──
  const subgraphUrlEnv = Object.fromEntries(subgraphNames.map((name) => [`SUBGRAPH_URL_${name.toUpperCase()}`, subgraphUrl(name)]));
  const linepackEnv = (workers: number): Record<string, string> => ({
    NODE_ENV: 'production',
    APOLLO_TELEMETRY_DISABLED: 'true',
    HOST: '127.0.0.1',
    AUTH_URL: subgraphs.auth.origin,
    INTERNAL_TOKEN_PRIVATE_KEY: keys.privateKeyPem,
    REDIS_URL: redisUrl,
    LOG_LEVEL: options.logLevel,
    METRICS_PORT: '0',
    LINEPACK_SCHEMA_DIR: path.join(repoRoot, 'schema'),
    GATEWAY_WORKERS: String(workers),
    ...subgraphUrlEnv,
  });
  const identityEnv = {
    INTERNAL_TOKEN_PRIVATE_KEY: keys.privateKeyPem,
    BENCH_TENANT_ID: tenant._id,
    BENCH_SCOPES: benchScopes.join(','),
    BENCH_TOKEN_MODE: options.tokenMode,
  };
  const port = async () => String(await freePort());
  const linepackPort = await port();
  const linepack = processes.add({
    name: 'linepack',
    nodeArgs: [path.join(dir, 'linepack-gateway.js')],
    port: Number(linepackPort),
    env: { ...linepackEnv(1), PORT: linepackPort },
    cwd: repoRoot,
  });
  let linepack2: ManagedProcess | null = null;
  if (options.workers2) {
    const p = await port();
    linepack2 = processes.add({
      name: 'linepack-workers2',
      nodeArgs: [path.join(dir, 'linepack-gateway.js')],
      port: Number(p),
      env: { ...linepackEnv(2), PORT: p },
      cwd: repoRoot,
    });
  }
  const barePort = await port();
  const bare = processes.add({
    name: 'bare-apollo-gateway',
    nodeArgs: [path.join(dir, 'bare-apollo-gateway.js')],
    port: Number(barePort),
    env: {
      NODE_ENV: 'production',
      APOLLO_TELEMETRY_DISABLED: 'true',
      HOST: '127.0.0.1',
      PORT: barePort,
      SUPERGRAPH_PATH: benchSupergraph,
      ...subgraphUrlEnv,
      ...identityEnv,
    },
    cwd: repoRoot,
  });
  const hivePort = await port();
  const hive = !hiveInstalled()
    ? null
    : processes.add({
        name: 'hive-gateway',
        nodeArgs: [
          hiveBin,
          'supergraph',
          benchSupergraph,
          '--fork',
          '1',
          '--host',
          '127.0.0.1',
          '--port',
          hivePort,
          '--config-path',
          path.join(dir, 'hive-gateway.config.mjs'),
        ],
        port: Number(hivePort),
        env: { NODE_ENV: 'production', ...identityEnv },
        // Hive looks for gateway.config.* in its working directory: the run's directory has none but the one passed.
        cwd: dir,
      });
  const contenders = [linepack, ...(linepack2 ? [linepack2] : []), bare, ...(hive ? [hive] : [])];
  log(`starting the contenders (${contenders.map((c) => c.name).join(', ')}), one process each`);
  for (const c of contenders) c.start();
  await Promise.all([
    linepack.waitReady('/readyz'),
    linepack2?.waitReady('/readyz'),
    bare.waitReady('/healthz'),
    // Hive Gateway's readiness endpoint.
    hive?.waitReady('/readiness'),
  ]);
  const hiveVersion = hive ? (JSON.parse(readFileSync(path.join(hivePackage, 'package.json'), 'utf8')).version as string) : null;
  return {
    runId,
    dir,
    dbPrefix,
    mongoUri,
    mongoLabel,
    redisLabel,
    mongo,
    keys,
    tenantId: tenant._id,
    enterpriseKey,
    proKeys,
    q0ProKeys,
    processes,
    subgraphs,
    subgraphUrl,
    linepack,
    linepack2,
    bare,
    hive,
    hiveVersion,
    startupMs: performance.now() - t0,
  };
}
