/**
 * The whole stack behind the console's measurements (`npm run bench:console`, `npm run lighthouse`): MongoDB and Redis
 * from MONGODB_URI / REDIS_URL when set, otherwise the embedded MongoDB (in memory) and a redis-server of its own; a
 * database prefix of its own, whose databases are dropped on stop; the console as built, rebuilt first when its build is
 * missing or older than its sources. stop() runs once, also from Ctrl-C (exit 130), and stops everything it started.
 */
import { randomBytes } from 'node:crypto';
import { spawnSync } from 'node:child_process';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { createLogger } from '@linepack/lib/logger';
import { connectMongo } from '@linepack/lib/mongo';
import { createRedisClient, redisReady } from '@linepack/lib/redis';
import { repoRoot } from '@linepack/lib/repo-root';
import { requireBuiltConsole } from '../test/console/support/console';
import { startTestStack, type TestStack } from '../test/support/stack';

export interface ConsoleStack {
  stack: TestStack;
  /** Where MongoDB is, for the report: the embedded server, or MONGODB_URI without credentials. */
  mongoLabel: string;
  /**
   * Resolves once every consumer group of every stream has delivered and acknowledged everything (lag + pending 0, seen
   * twice a second apart): the services have finished reacting to what was seeded, so a measurement after it does not
   * share the CPU with them. Returns the seconds waited; throws after `timeoutMs`.
   */
  untilEventsSettled(timeoutMs?: number): Promise<number>;
  stop(): Promise<void>;
}

/** Unacknowledged events (lag + pending) over every consumer group of this stack's streams (`<dbPrefix>:events:…`). */
async function unsettledEvents(redis: ReturnType<typeof createRedisClient>, dbPrefix: string): Promise<number> {
  let total = 0;
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${dbPrefix}:events:*`, 'COUNT', 1000);
    cursor = next;
    for (const key of keys) {
      // Not every key under the prefix is a stream (the stream registry is a set).
      const groups = (await redis.xinfo('GROUPS', key).catch(() => [])) as unknown[][];
      for (const fields of groups) {
        const info: Record<string, unknown> = {};
        for (let i = 0; i + 1 < fields.length; i += 2) info[String(fields[i])] = fields[i + 1];
        total += Number(info['lag'] ?? 0) + Number(info['pending'] ?? 0);
      }
    }
  } while (cursor !== '0');
  return total;
}

/** The console's build, made when it is missing or stale (as `npm start` does when it is missing). */
export function ensureBuiltConsole(): void {
  try {
    requireBuiltConsole();
  } catch (err) {
    console.log(`${(err as Error).message.split(':')[0]}: building it (npm run console:build)…`);
    const build = spawnSync('npm', ['run', '--silent', 'console:build'], { cwd: repoRoot, stdio: ['ignore', 'ignore', 'inherit'] });
    if (build.status !== 0) throw new Error('npm run console:build failed');
    requireBuiltConsole();
  }
}

export async function startConsoleStack(prefix: string): Promise<ConsoleStack> {
  ensureBuiltConsole();
  const dbPrefix = `${prefix}${randomBytes(4).toString('hex')}`;
  let embedded: EmbeddedMongo | null = null;
  let redisServer: RedisServerProcess | null = null;
  let stack: TestStack | null = null;
  let mongoUri: string | null = null;
  let stopping: Promise<void> | null = null;
  const stop = () =>
    (stopping ??= (async () => {
      if (stack) {
        // The stack first: its consumers and relays would write (and so create) a database dropped under them.
        await stack.stop();
        const mongo = await connectMongo(mongoUri!);
        try {
          const { databases } = await mongo.db('admin').admin().listDatabases({ nameOnly: true });
          for (const { name } of databases.filter((d) => d.name.startsWith(`${dbPrefix}_`))) await mongo.db(name).dropDatabase();
        } finally {
          await mongo.close();
        }
      }
      await Promise.allSettled([embedded?.stop(), redisServer?.stop()]);
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void stop().finally(() => process.exit(130)));
  try {
    [embedded, redisServer] = await Promise.all([
      process.env['MONGODB_URI'] ? null : startEmbeddedMongo(),
      process.env['REDIS_URL'] ? null : startRedisServer(),
    ]);
    mongoUri = process.env['MONGODB_URI'] ?? embedded!.uri;
    stack = await startTestStack({ mongoUri, redisUrl: process.env['REDIS_URL'] ?? redisServer!.url, dbPrefix, credentialCacheTtlSeconds: 30 });
  } catch (err) {
    await stop();
    throw err;
  }
  const redisUrl = process.env['REDIS_URL'] ?? redisServer!.url;
  const untilEventsSettled = async (timeoutMs = 15 * 60_000) => {
    const redis = createRedisClient(redisUrl, createLogger('bench-console', 'silent'));
    try {
      await redisReady(redis);
      const started = performance.now();
      for (let quiet = 0; quiet < 2;) {
        quiet = (await unsettledEvents(redis, dbPrefix)) === 0 ? quiet + 1 : 0;
        if (performance.now() - started > timeoutMs) throw new Error(`domain events still unacknowledged after ${timeoutMs / 1000} s`);
        await new Promise((r) => setTimeout(r, 1_000));
      }
      return (performance.now() - started) / 1000;
    } finally {
      redis.disconnect();
    }
  };
  return { stack, mongoLabel: embedded ? 'embedded mongo-java-server, in memory' : mongoUri.replace(/\/\/[^@]*@/, '//'), untilEventsSettled, stop };
}
