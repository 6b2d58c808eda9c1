/**
 * Jest global setup: real infrastructure for the whole run.
 *   - MongoDB: MONGODB_URI when set, otherwise an in-memory embedded mongo-java-server.
 *   - Redis:   REDIS_URL when set, otherwise a redis-server on a free port.
 * The variables set here are inherited by the jest workers; the handles stay on globalThis for global-teardown.ts.
 */
import { startEmbeddedMongo, type EmbeddedMongo } from '../infra/embedded-mongo';
import { startRedisServer, type RedisServerProcess } from '../infra/redis-server';

export interface LinepackTestInfra {
  mongo?: EmbeddedMongo;
  redis?: RedisServerProcess;
}

declare global {
  var __LINEPACK_TEST_INFRA__: LinepackTestInfra | undefined;
}

const SUITE_SERVER_SELECTION_TIMEOUT_MS = 20_000;
/**
 * How long the driver's monitor waits for the server's answer to its heartbeat before it gives the server up and
 * interrupts every operation in flight on it. On the loaded suite machine a server (or a process's event loop) held
 * for over the production 5 s is load, not an outage. (A CI run's ILI import failed within seconds; a server stalled
 * past the monitor's patience can do that to an import in flight, test/infra/ili-import-outage.test.ts.)
 */
const SUITE_CONNECT_TIMEOUT_MS = 20_000;

/**
 * The JVMs of a run (its shared embedded MongoDB, and those tests start: crash rounds on a file, index comparisons,
 * `npm start`) live for seconds to minutes, where C2's compilations cost more CPU than its faster code saves. With
 * C1 alone, back to back on 2026-11-29: embedded-indexes.test.ts took 55 machine CPU-seconds instead of 71; five
 * database-heavy e2e files 112–113 instead of 124–138, and 62 s instead of 69–76. The JVM reads JAVA_TOOL_OPTIONS
 * itself (and says so on its stderr); the processes tests start inherit it.
 */
const SUITE_JVM_OPTIONS = '-XX:TieredStopAtLevel=1';

export default async function globalSetup(): Promise<void> {
  // Each jest project runs this setup; the first one's setting holds.
  const javaToolOptions = process.env['JAVA_TOOL_OPTIONS'] ?? '';
  if (!javaToolOptions.includes('TieredStopAtLevel')) process.env['JAVA_TOOL_OPTIONS'] = `${javaToolOptions} ${SUITE_JVM_OPTIONS}`.trim();
  const infra: LinepackTestInfra = {};
  globalThis.__LINEPACK_TEST_INFRA__ = infra;
  const [mongo, redis] = await Promise.allSettled([
    process.env['MONGODB_URI'] ? Promise.resolve(undefined) : startEmbeddedMongo({ promoteSurvivors: false }),
    process.env['REDIS_URL'] ? Promise.resolve(undefined) : startRedisServer(),
  ]);
  if (mongo.status === 'fulfilled' && mongo.value) infra.mongo = mongo.value;
  if (redis.status === 'fulfilled' && redis.value) infra.redis = redis.value;
  const failure = [mongo, redis].find((r): r is PromiseRejectedResult => r.status === 'rejected');
  if (failure) {
    await Promise.allSettled([infra.mongo?.stop(), infra.redis?.stop()]);
    throw failure.reason;
  }
  if (infra.mongo) process.env['MONGODB_URI'] = infra.mongo.uri;
  // Tests that need a real MongoDB's features (explain plans) check this.
  process.env['LINEPACK_TEST_MONGO'] = infra.mongo ? 'embedded' : 'external';
  if (infra.redis) process.env['REDIS_URL'] = infra.redis.url;
  process.env['LINEPACK_TEST_INFRA'] = '1';
  // Every stack of the run shares this one database (three jest workers on two cores, and the processes tests start):
  // a slow answer there means load, not an outage. A subgraph that waited the production 3 s to select it failed to
  // start in a CI run. The outage itself is tested with the production setting (database-unavailable.test.ts).
  process.env['MONGODB_SERVER_SELECTION_TIMEOUT_MS'] ??= String(SUITE_SERVER_SELECTION_TIMEOUT_MS);
  process.env['MONGODB_CONNECT_TIMEOUT_MS'] ??= String(SUITE_CONNECT_TIMEOUT_MS);
}
