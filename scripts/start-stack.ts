/**
 * `npm start` (through scripts/start.ts, which switches tracing on first): the whole of Linepack on this machine.
 *   - MongoDB: MONGODB_URI when set, otherwise the embedded mongo-java-server, file-backed in
 *     .linepack/ so data survives a restart (in memory with --ephemeral).
 *   - Redis: REDIS_URL when set, otherwise a redis-server of its own (Debian package), persistent in
 *     .linepack/redis (throwaway with --ephemeral): rate limits and the domain events that feed
 *     analytics and compliance. Without redis-server it still starts, and says what does not work.
 *   - Five subgraphs and the gateway, each on its own port, talking over real HTTP.
 *   - On first start, a demo tenant, user, API key and pipeline; written to <state-dir>/dev.json.
 * Flags: --ephemeral (in-memory database, free ports), --free-ports (free ports, data kept),
 * --state-dir DIR (default .linepack).
 */
import { mkdirSync, readFileSync, rmSync, writeFileSync, existsSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { startEmbeddedMongo, EmbeddedMongoUnavailableError, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { startRedisServer, RedisServerUnavailableError, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { connectMongo, databaseName } from '@linepack/lib/mongo';
import { SHUTDOWN_GRACE_MS } from '@linepack/lib/http';
import { DEFAULT_METRICS_PORT, startMetricsServer } from '@linepack/lib/metrics';
import { activeTracing } from '@linepack/lib/tracing';
import { startStack } from '../dev/stack';
import { defaultConsoleDir, gatewayConfigSchema } from '@linepack/gateway/config';
import { ensureDemoIdentity, seedDemoPipeline, type DemoCredentials } from './demo-seed';
import { repoRoot } from '@linepack/lib/repo-root';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { lockStateDir, StateDirInUseError } from './state-dir';

export interface DevState extends DemoCredentials {
  gatewayUrl: string;
  authUrl: string;
  /** Prometheus metrics of every service in this process. */
  metricsUrl: string;
  mongodbUri: string;
  /** Absent when no Redis runs (events then wait in the outbox). */
  redisUrl?: string;
}

const DB_PREFIX = 'linepack';
/** Requests in flight get SHUTDOWN_GRACE_MS to finish; the whole stop, databases included, this long. */
const SHUTDOWN_DEADLINE_MS = SHUTDOWN_GRACE_MS + 10_000;

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: { ephemeral: { type: 'boolean', default: false }, 'free-ports': { type: 'boolean', default: false }, 'state-dir': { type: 'string' } },
  });
  const ephemeral = values.ephemeral ?? false;
  // Browser tools on other origins (the gateway's CORS_ORIGINS), checked as the gateway checks them, before anything starts.
  const corsOrigins = gatewayConfigSchema.shape.CORS_ORIGINS.safeParse(process.env['CORS_ORIGINS']);
  if (!corsOrigins.success) {
    console.error(`linepack: CORS_ORIGINS: ${corsOrigins.error.issues.map((i) => i.message).join('; ')}`);
    process.exit(2);
  }
  // Tiles under the console's map (the gateway's CONSOLE_MAP_TILE_URL), checked as the gateway checks them.
  const mapTileUrl = gatewayConfigSchema.shape.CONSOLE_MAP_TILE_URL.safeParse(process.env['CONSOLE_MAP_TILE_URL'] || undefined);
  if (!mapTileUrl.success) {
    console.error(`linepack: CONSOLE_MAP_TILE_URL: ${mapTileUrl.error.issues.map((i) => i.message).join('; ')}`);
    process.exit(2);
  }
  const freePorts = ephemeral || (values['free-ports'] ?? false);
  const stateDir = path.resolve(values['state-dir'] ?? process.env['LINEPACK_STATE_DIR'] ?? path.join(repoRoot, '.linepack'));
  const devJsonPath = path.join(stateDir, 'dev.json');
  // Before anything in the directory is touched: a second start must leave a running one alone.
  let releaseStateDir: () => void;
  try {
    releaseStateDir = lockStateDir(stateDir);
  } catch (err) {
    if (err instanceof StateDirInUseError) {
      console.error(`linepack: ${err.message}`);
      process.exit(1);
    }
    throw err;
  }
  process.on('exit', () => releaseStateDir());
  const previous = existsSync(devJsonPath) ? (JSON.parse(readFileSync(devJsonPath, 'utf8')) as Partial<DevState>) : null;
  // A stale file would tell scripts a stopped system is running.
  rmSync(devJsonPath, { force: true });

  let embedded: EmbeddedMongo | null = null;
  let mongoUri = process.env['MONGODB_URI'];
  if (!mongoUri) {
    try {
      embedded = await startEmbeddedMongo(ephemeral ? { log: console.log } : { dataFile: path.join(stateDir, 'mongo.h2'), log: console.log });
    } catch (err) {
      if (err instanceof EmbeddedMongoUnavailableError) {
        console.error(err.message);
        process.exit(1);
      }
      throw err;
    }
    mongoUri = embedded.uri;
  }

  let embeddedRedis: RedisServerProcess | null = null;
  let redisUrl = process.env['REDIS_URL'];
  let redisProblem: string | null = null;
  if (!redisUrl) {
    try {
      const dataDir = ephemeral ? undefined : path.join(stateDir, 'redis');
      if (dataDir) mkdirSync(dataDir, { recursive: true, mode: 0o700 });
      embeddedRedis = await startRedisServer(dataDir ? { dataDir } : {});
      redisUrl = embeddedRedis.url;
    } catch (err) {
      if (!(err instanceof RedisServerUnavailableError)) throw err;
      redisProblem = `${err.message}. Without Redis, domain events wait in the outbox: analytics and compliance do not update, and rate limits are counted in process.`;
      console.warn(`linepack: ${redisProblem}`);
    }
  }

  // Persisted so user tokens survive a restart of the development system.
  const signingKeyPath = path.join(stateDir, 'jwt-signing-key.pem');
  if (!ephemeral && !existsSync(signingKeyPath)) writeFileSync(signingKeyPath, SigningKeys.generatePem(), { mode: 0o600 });
  const signingKeyPem = ephemeral ? SigningKeys.generatePem() : readFileSync(signingKeyPath, 'utf8');

  // The web console is static files built by Vite; a fresh clone builds them once (a few seconds).
  if (!existsSync(path.join(defaultConsoleDir, 'index.html'))) {
    console.log('linepack: building the web console (npm run console:build)…');
    const build = spawnSync('npm', ['run', '--silent', 'console:build'], { cwd: repoRoot, stdio: ['ignore', 'inherit', 'inherit'] });
    if (build.status !== 0) console.warn('linepack: the console did not build; / answers 503 until `npm run console:build` succeeds.');
  }

  const stack = await startStack({
    corsOrigins: corsOrigins.data,
    consoleMapTiles: mapTileUrl.data ? { url: mapTileUrl.data, attribution: process.env['CONSOLE_MAP_TILE_ATTRIBUTION']?.trim() || null } : null,
    auth: { signingKeyPem },
    mongoUri,
    redisUrl,
    dbPrefix: DB_PREFIX,
    gatewayPort: freePorts ? 0 : Number(process.env['PORT'] ?? 4000),
    subgraphPorts: freePorts ? 'free' : 'default',
    logLevel: process.env['LOG_LEVEL'] ?? 'warn',
  });

  // One process runs every service here, so one endpoint serves all their metrics (label `service`).
  const metrics = await startMetricsServer({
    port: freePorts ? 0 : Number(process.env['METRICS_PORT'] ?? DEFAULT_METRICS_PORT),
    host: '127.0.0.1',
    service: 'linepack',
  });

  const mongo = await connectMongo(mongoUri);
  const { credentials, created } = await ensureDemoIdentity(mongo.db(databaseName(DB_PREFIX, 'auth')), previous);
  await mongo.close();
  let seeded = 0;
  if (created) seeded = await seedDemoPipeline(stack.gatewayUrl, credentials.apiKey);

  const state: DevState = {
    gatewayUrl: stack.gatewayUrl,
    // The base the auth routes hang off, as the service description writes them: {authUrl}/auth/login.
    authUrl: stack.gatewayOrigin,
    metricsUrl: metrics.url,
    mongodbUri: mongoUri,
    ...(redisUrl ? { redisUrl } : {}),
    ...credentials,
  };
  writeFileSync(devJsonPath, JSON.stringify(state, null, 2) + '\n', { mode: 0o600 });

  console.log(
    [
      '',
      `Linepack is running${ephemeral ? ' (ephemeral: data is discarded on exit)' : ''}.`,
      `  Web console      ${stack.gatewayOrigin}/  (sign in with the demo user below; the explorer is at ${stack.gatewayUrl})`,
      `  GraphQL gateway  ${stack.gatewayUrl}`,
      `  Auth routes      ${state.authUrl}/auth/login, /auth/refresh, /auth/introspect`,
      `  Metrics          ${metrics.url} (Prometheus; every service, label service)`,
      `  MongoDB          ${
        embedded
          ? `embedded mongo-java-server (${ephemeral ? 'in memory' : `${path.join(stateDir, 'mongo.h2')}; every acknowledged write is fsynced, crash-safe`})`
          : 'MONGODB_URI (writes acknowledged by a majority, journaled)'
      }`,
      `  Redis            ${process.env['REDIS_URL'] ? 'REDIS_URL' : embeddedRedis ? `redis-server on ${embeddedRedis.url}${ephemeral ? '' : ` (${path.join(stateDir, 'redis')})`}` : 'none'}`,
      `  Domain events    ${redisUrl ? 'flowing: analytics and compliance follow assets and measurements' : `NOT flowing — ${redisProblem ?? 'no Redis'}`}`,
      '',
      `Demo tenant ${credentials.tenantId}${seeded ? ` (seeded ${seeded} assets)` : ''}`,
      `  API key   ${credentials.apiKey}`,
      `  User      ${credentials.user.email} / ${credentials.user.password}`,
      `  Written to ${devJsonPath}`,
      '',
      'Try it:',
      `  curl -s -H "Authorization: Bearer ${credentials.apiKey}" -H 'content-type: application/json' \\`,
      `    -d '{"query":"{ pipelineSummary { totalAssets } }"}' ${stack.gatewayUrl}`,
      '',
      'Ctrl-C stops everything.',
    ].join('\n'),
  );

  // Supervision: the services share this process, so a crash in one (an uncaught error) or the loss of a
  // database takes the whole stack down in order, with the reason and a non-zero exit — never a half-alive
  // stack that answers some requests and fails others.
  let stopping = false;
  const shutdown = async (failure: string | null) => {
    if (stopping) return;
    stopping = true;
    console.log(failure ? `\nlinepack: ${failure}; stopping Linepack.` : '\nStopping Linepack…');
    // A stuck connection must not keep a stopped system half-alive.
    setTimeout(() => {
      console.error('linepack: shutdown took too long; exiting');
      process.exit(1);
    }, SHUTDOWN_DEADLINE_MS).unref();
    // In order: the gateway stops accepting and lets requests in flight finish (their clients get an
    // answer), then the subgraphs, and only then the databases they were writing to.
    await stack.stop().catch((err: unknown) => console.error(`linepack: stopping the services failed: ${(err as Error).message}`));
    await metrics.stop();
    await embeddedRedis?.stop();
    await embedded?.stop();
    await activeTracing()?.shutdown();
    process.exit(failure ? 1 : 0);
  };
  process.on('SIGINT', () => void shutdown(null));
  process.on('SIGTERM', () => void shutdown(null));
  const crashed = (kind: string) => (err: unknown) => {
    if (stopping) return;
    console.error(`linepack: ${kind} in a service:`, err);
    void shutdown(`a service crashed (${err instanceof Error ? err.message : String(err)})`);
  };
  process.on('uncaughtException', crashed('uncaught error'));
  process.on('unhandledRejection', crashed('unhandled promise rejection'));
  void embedded?.exited.then((how) => shutdown(`the embedded MongoDB exited unexpectedly (${how})`));
  void embeddedRedis?.exited.then((how) => shutdown(`redis-server exited unexpectedly (${how})`));
}

main().catch((err: unknown) => {
  console.error(`linepack: failed to start: ${(err as Error).message}`);
  process.exit(1);
});
