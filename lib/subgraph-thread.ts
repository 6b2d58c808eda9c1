/**
 * How a subgraph's worker thread begins (the measurements subgraph's job runner, lane and relay; analytics' run
 * comparisons): traced under its process's service name, with a MongoDB client of its own on the subgraph's database
 * and a logger that names the thread. Tracing comes first, as in every process entry: its instrumentations patch what
 * the rest loads (lib/tracing.ts). So this module loads the driver and the logger only after it, and a thread's own
 * modules are required inside its `run`.
 */
import { type MessagePort } from 'node:worker_threads';
import type { Db, MongoClient } from 'mongodb';
import type { Logger } from './logger';
import type { SubgraphStartOptions } from './subgraph-types';
import { activeTracing, startTracing } from './tracing';

/** What every subgraph thread is started with: plain data, cloned into the thread. */
export interface SubgraphThreadOptions {
  mongoUri: string;
  dbPrefix: string;
  logLevel: string;
  /** The process's tracing service name, so the thread's spans are told as its own; null: not traced. */
  tracingServiceName: string | null;
}

/** On the subgraph's loop: the options its threads start with, from its own. */
export function subgraphThreadOptions(options: SubgraphStartOptions): SubgraphThreadOptions {
  if (!options.mongoUri) throw new Error('a subgraph thread needs the subgraph’s MongoDB (MONGODB_URI)');
  return {
    mongoUri: options.mongoUri,
    dbPrefix: options.dbPrefix,
    logLevel: options.logger.level,
    tracingServiceName: activeTracing()?.serviceName ?? null,
  };
}

export interface SubgraphThread<Options extends SubgraphThreadOptions> {
  port: MessagePort;
  options: Options;
  mongo: MongoClient;
  /** The subgraph's own database (`<prefix>_<subgraph>`). */
  db: Db;
  logger: Logger;
}

/**
 * In the thread: starts tracing, connects, and runs `run`. A thread that cannot start logs why and exits 1 (its
 * `BackgroundThread` on the loop starts it again).
 */
export function runSubgraphThread<Options extends SubgraphThreadOptions>(
  port: MessagePort,
  where: { subgraph: string; thread: string },
  options: Options,
  run: (thread: SubgraphThread<Options>) => Promise<void> | void,
): void {
  const { subgraph, thread } = where;
  // Traced when the process is (the same environment switches it on), under its name (`npm start` is one service).
  startTracing(subgraph, { env: { ...process.env, ...(options.tracingServiceName ? { OTEL_SERVICE_NAME: options.tracingServiceName } : {}) } });
  /* eslint-disable @typescript-eslint/no-require-imports -- after startTracing */
  const { connectMongo, databaseName } = require('./mongo') as typeof import('./mongo');
  const { createLogger } = require('./logger') as typeof import('./logger');
  /* eslint-enable @typescript-eslint/no-require-imports */
  const logger = createLogger(subgraph, options.logLevel).child({ thread });
  const start = async () => {
    const mongo = await connectMongo(options.mongoUri, { appName: `linepack-${subgraph}-${thread}` });
    await run({ port, options, mongo, db: mongo.db(databaseName(options.dbPrefix, subgraph)), logger });
  };
  start().catch((err: unknown) => {
    logger.fatal({ err }, `the ${subgraph} ${thread} thread failed to start`);
    process.exit(1);
  });
}
