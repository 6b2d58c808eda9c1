/**
 * The measurements subgraph's worker threads (index.ts starts them): its job runner (ILI imports), its
 * expensive-request lane and its outbox relays, each with a MongoDB client of its own, so none holds the loop that
 * answers requests (issue 31). Started from source as this file; in the subgraph's bundle as dist/main.js itself, which requires this
 * module when it finds itself off the main thread (main.ts).
 *
 * Nothing but the thread's start at the top: tracing must come before what the rest loads (lib/subgraph-thread.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runSubgraphThread } from '@linepack/lib/subgraph-thread';
import type { MeasurementsThread } from './thread-types';

const { role, options } = workerData as MeasurementsThread;
const threadNames = { jobs: 'job-runner', lane: 'expensive-lane', relay: 'event-relay' } as const satisfies Record<MeasurementsThread['role'], string>;

/* eslint-disable @typescript-eslint/no-require-imports -- each role loads only what it runs, after tracing started */
runSubgraphThread(parentPort!, { subgraph: 'measurements', thread: threadNames[role] }, options, async ({ port, db, mongo, logger }) => {
  const close = () => mongo.close();
  switch (role) {
    case 'jobs': {
      const { BACKGROUND_WORK_REST_RATIO, heavyWork } = require('@linepack/lib/fair-share') as typeof import('@linepack/lib/fair-share');
      // Nobody holds a request open for an import (its progress is polled): this thread's heavy work rests as background
      // work does. Another tenant's p99 under a 100,000-feature import fell from about 90 to 52–57 ms; the import took
      // 45 s instead of 32 (README, bench:fairness).
      heavyWork.restRatio = BACKGROUND_WORK_REST_RATIO;
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
      runWakeableWorkThread(port, runner, close);
      logger.info('job runner thread started');
      return;
    }
    case 'relay': {
      const { runOutboxRelayThread } = require('@linepack/lib/events/relay-thread') as typeof import('@linepack/lib/events/relay-thread');
      const { measurementRelays } = require('./relays') as typeof import('./relays');
      runOutboxRelayThread(port, { redisUrl: options.redisUrl!, logger }, measurementRelays(db, options.dbPrefix), close);
      return;
    }
    case 'lane': {
      const { runSubgraphLane } = require('@linepack/lib/subgraph-lane') as typeof import('@linepack/lib/subgraph-lane');
      const { createSubgraphApollo } = require('@linepack/lib/subgraph-server') as typeof import('@linepack/lib/subgraph-server');
      const { readSubgraphSdl } = require('@linepack/schema/sdl') as typeof import('@linepack/schema/sdl');
      const { AssetRefs } = require('./asset-refs') as typeof import('./asset-refs');
      const { measurementsContext } = require('./index') as typeof import('./index');
      const { resolvers } = require('./resolvers') as typeof import('./resolvers');
      const { WAKE_JOB_RUNNER } = require('./thread-types') as typeof import('./thread-types');
      await runSubgraphLane(port, async (post) => ({
        apollo: createSubgraphApollo({ sdl: readSubgraphSdl('measurements'), resolvers: resolvers as never }, logger),
        buildContext: measurementsContext(db, options.followsAssets ? new AssetRefs(db) : null, () => post(WAKE_JOB_RUNNER)),
        logger,
        close,
      }));
      return;
    }
    default:
      throw new Error(`unknown measurements thread role: ${String(role satisfies never)}`);
  }
});
/* eslint-enable @typescript-eslint/no-require-imports */
