/**
 * MongoDB and Redis for a run that starts a stack as separate processes (scripts/scale-out.ts, the gateway
 * benchmark): MONGODB_URI and REDIS_URL when set, else an in-memory embedded mongo-java-server and a redis-server of
 * the run's own, stopped by its clean-up and counted among its processes.
 */
import type { MongoClient } from 'mongodb';
import { connectMongo } from '../mongo';
import type { Cleanup, ProcessSet } from './child-process';
import { startEmbeddedMongo } from './embedded-mongo';
import { startRedisServer } from './redis-server';

export interface RunStores {
  mongoUri: string;
  /** Where MongoDB came from, for the run's report. */
  mongoLabel: string;
  /** The embedded server's pid (for its CPU time); null when MONGODB_URI names the server. */
  mongoPid: number | null;
  redisUrl: string;
  redisLabel: string;
}

export async function startRunStores(processes: ProcessSet, cleanup: Cleanup, log: (line: string) => void): Promise<RunStores> {
  const mongoFromEnv = process.env['MONGODB_URI'];
  const redisFromEnv = process.env['REDIS_URL'];
  const [mongoStart, redisStart] = await Promise.allSettled([
    mongoFromEnv ? Promise.resolve(null) : startEmbeddedMongo({ log }),
    redisFromEnv ? Promise.resolve(null) : startRedisServer(),
  ]);
  // Whichever started is stopped by the clean-up, also when the other failed to.
  const mongo = mongoStart.status === 'fulfilled' ? mongoStart.value : null;
  const redis = redisStart.status === 'fulfilled' ? redisStart.value : null;
  if (mongo) {
    processes.track(mongo.pid);
    cleanup.add('embedded MongoDB', async () => {
      await mongo.stop();
      processes.untrack(mongo.pid);
    });
  }
  if (redis) cleanup.add('redis-server', () => redis.stop());
  for (const start of [mongoStart, redisStart]) if (start.status === 'rejected') throw start.reason;
  return {
    mongoUri: mongoFromEnv ?? mongo!.uri,
    mongoLabel: mongoFromEnv ? 'MONGODB_URI' : `embedded mongo-java-server (pid ${mongo!.pid}, in memory)`,
    mongoPid: mongo?.pid ?? null,
    redisUrl: redisFromEnv ?? redis!.url,
    redisLabel: redisFromEnv ? 'REDIS_URL' : `redis-server on ${redis!.url}`,
  };
}

/**
 * A client of the run's MongoDB whose clean-up drops `databases`, the run's own, then closes it: nothing of the run
 * stays behind in a shared MongoDB.
 */
export async function connectRunMongo(mongoUri: string, databases: readonly string[], cleanup: Cleanup): Promise<MongoClient> {
  const mongo = await connectMongo(mongoUri);
  cleanup.add('MongoDB client', async () => {
    for (const name of databases)
      await mongo
        .db(name)
        .dropDatabase()
        .catch(() => undefined);
    await mongo.close();
  });
  return mongo;
}
