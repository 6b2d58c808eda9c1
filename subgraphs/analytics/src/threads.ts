/**
 * The analytics subgraph's worker thread (index.ts starts it): its run comparison worker (run-comparison.ts) with a
 * MongoDB client of its own. Reassessing a 100,000-feature run is tens of seconds of matching and assessing; on the
 * loop it held the subgraph's answers to every tenant's queries up to 792 ms at a time (bench:fairness, after A's
 * import). Started from source as this file; in the subgraph's bundle as dist/main.js itself, which requires this
 * module when it finds itself off the main thread (main.ts).
 *
 * Tracing first, as in every process entry: the instrumentations patch what the rest loads (lib/tracing.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startTracing } from '@linepack/lib/tracing';
import type { AnalyticsThreadOptions } from './thread-types';

const options = workerData as AnalyticsThreadOptions;
// Traced when the process is (the same environment switches it on), under its name (`npm start` is one service).
startTracing('analytics', { env: { ...process.env, ...(options.tracingServiceName ? { OTEL_SERVICE_NAME: options.tracingServiceName } : {}) } });
/* eslint-disable @typescript-eslint/no-require-imports -- after startTracing */
const { connectMongo, databaseName } = require('@linepack/lib/mongo') as typeof import('@linepack/lib/mongo');
const { createLogger } = require('@linepack/lib/logger') as typeof import('@linepack/lib/logger');
const { runWakeableWorkThread } = require('@linepack/lib/job-thread') as typeof import('@linepack/lib/job-thread');
const { RunComparisonWorker } = require('./run-comparison') as typeof import('./run-comparison');
/* eslint-enable @typescript-eslint/no-require-imports */

const logger = createLogger('analytics', options.logLevel).child({ thread: 'run-comparisons' });

async function main(): Promise<void> {
  const mongo = await connectMongo(options.mongoUri, { appName: 'linepack-analytics-comparisons' });
  const db = mongo.db(databaseName(options.dbPrefix, 'analytics'));
  runWakeableWorkThread(parentPort!, new RunComparisonWorker(db, logger), () => mongo.close());
  logger.info('run comparison thread started');
}

main().catch((err: unknown) => {
  logger.fatal({ err }, 'the analytics run comparison thread failed to start');
  process.exit(1);
});
