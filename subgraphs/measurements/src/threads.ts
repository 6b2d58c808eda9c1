/**
 * The measurements subgraph's worker threads (index.ts starts them): its job runner (ILI imports), its
 * expensive-request lane and its outbox relays, each with a MongoDB client of its own, so none holds the loop that
 * answers requests (issue 31). Started from source as this file; in the subgraph's bundle as dist/main.js itself, which requires this
 * module when it finds itself off the main thread (main.ts).
 *
 * Tracing first, as in every process entry: the instrumentations patch what the rest loads (lib/tracing.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startTracing } from '@linepack/lib/tracing';
import type { MeasurementsThread } from './thread-types';

const { role, options } = workerData as MeasurementsThread;
// Traced when the process is (the same environment switches it on), under its name (`npm start` is one service).
startTracing('measurements', { env: { ...process.env, ...(options.tracingServiceName ? { OTEL_SERVICE_NAME: options.tracingServiceName } : {}) } });
/* eslint-disable @typescript-eslint/no-require-imports -- after startTracing */
const { connectMongo, databaseName } = require('@linepack/lib/mongo') as typeof import('@linepack/lib/mongo');
const { createLogger } = require('@linepack/lib/logger') as typeof import('@linepack/lib/logger');
/* eslint-enable @typescript-eslint/no-require-imports */

const port = parentPort!;
const threadNames = { jobs: 'job-runner', lane: 'expensive-lane', relay: 'event-relay' } as const;
const logger = createLogger('measurements', options.logLevel).child({ thread: threadNames[role] });

async function main(): Promise<void> {
  const mongo = await connectMongo(options.mongoUri, { appName: `linepack-measurements-${role}` });
  const db = mongo.db(databaseName(options.dbPrefix, 'measurements'));
  /* eslint-disable @typescript-eslint/no-require-imports -- each role loads only what it runs */
  if (role === 'jobs') {
    const { JobRunner } = require('@linepack/lib/jobs') as typeof import('@linepack/lib/jobs');
    const { runWakeableWorkThread } = require('@linepack/lib/job-thread') as typeof import('@linepack/lib/job-thread');
    const { ILI_IMPORT_JOB, iliImportHandler } = require('./ili/import-job') as typeof import('./ili/import-job');
    const runner = new JobRunner(
      db,
      { [ILI_IMPORT_JOB]: iliImportHandler(db) as import('@linepack/lib/jobs').JobHandler<never, never> },
      {
        logger,
        ...(options.jobLeaseMs !== undefined ? { leaseMs: options.jobLeaseMs } : {}),
      },
    );
    runWakeableWorkThread(port, runner, () => mongo.close());
    logger.info('job runner thread started');
    return;
  }
  if (role === 'relay') {
    const { runOutboxRelayThread } = require('@linepack/lib/events/relay-thread') as typeof import('@linepack/lib/events/relay-thread');
    const { measurementRelays } = require('./relays') as typeof import('./relays');
    runOutboxRelayThread(port, { redisUrl: options.redisUrl!, logger }, measurementRelays(db, options.dbPrefix), () => mongo.close());
    return;
  }
  const { runSubgraphLane } = require('@linepack/lib/subgraph-lane') as typeof import('@linepack/lib/subgraph-lane');
  const { createSubgraphApollo } = require('@linepack/lib/subgraph-server') as typeof import('@linepack/lib/subgraph-server');
  const { readSubgraphSdl } = require('@linepack/schema/sdl') as typeof import('@linepack/schema/sdl');
  const { AssetRefs } = require('./asset-refs') as typeof import('./asset-refs');
  const { measurementsContext } = require('./index') as typeof import('./index');
  const { resolvers } = require('./resolvers') as typeof import('./resolvers');
  const { WAKE_JOB_RUNNER } = require('./thread-types') as typeof import('./thread-types');
  /* eslint-enable @typescript-eslint/no-require-imports */
  await runSubgraphLane(port, async (post) => ({
    apollo: createSubgraphApollo({ sdl: readSubgraphSdl('measurements'), resolvers: resolvers as never }, logger),
    buildContext: measurementsContext(db, options.followsAssets ? new AssetRefs(db) : null, () => post(WAKE_JOB_RUNNER)),
    logger,
    close: () => mongo.close(),
  }));
}

main().catch((err: unknown) => {
  logger.fatal({ err }, `the measurements ${role} thread failed to start`);
  process.exit(1);
});
