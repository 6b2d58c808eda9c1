import type { GraphQLResolverMap } from '@linepack/lib/resolver-map';
import { eventStream } from '@linepack/lib/events/outbox';
import { publishesEvents } from '@linepack/lib/events/relay-process';
import { OutboxRelayThread } from '@linepack/lib/events/relay-thread';
import { startEventConsumer } from '@linepack/lib/events/consumer-process';
import { assetRefHandler, AssetRefs, ensureAssetRefIndexes } from './asset-refs';
import { startDatabaseSubgraph, type BaseSubgraphContext } from '@linepack/lib/subgraph-server';
import type { RunningService, SubgraphDescriptor, SubgraphModule, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { readSubgraphSdl } from '@linepack/schema/sdl';
import { subgraphPort } from '@linepack/schema/subgraphs';
import type { SubgraphContext } from './context';
import { measurementLoaders } from './loaders';
import { ensureMeasurementIndexes, MeasurementRepository } from './repository';
import { resolvers } from './resolvers';
import { ensureJobIndexes, hasRunnableJob, JobStore } from '@linepack/lib/jobs';
import { JobRunnerThread } from '@linepack/lib/job-thread';
import { SubgraphLane } from '@linepack/lib/subgraph-lane';
import { threadEntry } from '@linepack/lib/threads';
import { subgraphThreadOptions } from '@linepack/lib/subgraph-thread';
import type { Db } from 'mongodb';
import { ensureIliIndexes } from './ili/documents';
import { ILI_IMPORT_JOB } from './ili/import-job';
import { measurementRelays } from './relays';
import { WAKE_JOB_RUNNER, type MeasurementsThread, type MeasurementsThreadOptions } from './thread-types';
import { IliStore } from './ili/store';
import { iliLocationLoader } from './ili/location';

/** Measurements follow the assets stream to know which asset ids exist (asset-refs.ts). */
export const MEASUREMENTS_CONSUMER_GROUP = 'measurements';

export const descriptor: SubgraphDescriptor = { name: 'measurements', defaultPort: subgraphPort('measurements'), ownsDatabase: true };

export function startMeasurementsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startDatabaseSubgraph<SubgraphContext>(options, {
    name: 'measurements',
    sdl: readSubgraphSdl('measurements'),
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    async prepare(db) {
      await ensureMeasurementIndexes(db);
      await ensureAssetRefIndexes(db);
      await ensureIliIndexes(db);
      await ensureJobIndexes(db);
      const consumer = startEventConsumer(options, db, {
        group: MEASUREMENTS_CONSUMER_GROUP,
        streams: [eventStream(options.dbPrefix, 'assets')],
        handle: assetRefHandler(db),
      });
      // Without asset events there is nothing to check ids against (startEventConsumer says so in the log).
      const assetRefs = consumer.following ? new AssetRefs(db) : null;
      // Imports run in the subgraph that owns their data, on a thread of their own (jobs.ts); one job per tenant at a
      // time (lib/jobs.ts).
      const threadOptions: MeasurementsThreadOptions = {
        ...subgraphThreadOptions(options),
        followsAssets: assetRefs !== null,
        jobLeaseMs: options.jobLeaseMs,
        redisUrl: options.redisUrl ?? null,
      };
      // Its events are published from a thread of its own too (relay-thread.ts): a relay round held the loop up to 190 ms.
      const relays = measurementRelays(db, options.dbPrefix);
      const relay = publishesEvents(options, relays[0].stream)
        ? new OutboxRelayThread(
            threadEntry(__filename, 'threads.ts'),
            { role: 'relay', options: threadOptions } satisfies MeasurementsThread,
            options.logger,
            relays,
          )
        : null;
      relay?.start();
      const jobRunner = new JobRunnerThread(
        threadEntry(__filename, 'threads.ts'),
        { role: 'jobs', options: threadOptions } satisfies MeasurementsThread,
        options.logger,
        // The kinds the thread's runner handles (threads.ts).
        () => hasRunnableJob(db, [ILI_IMPORT_JOB]),
      );
      jobRunner.start();
      const wakeJobRunner = () => jobRunner.wake();
      // Requests the gateway's expensive-operation lane sends run on a thread of their own too (lib/subgraph-lane.ts).
      const lane = new SubgraphLane(
        'measurements',
        threadEntry(__filename, 'threads.ts'),
        { role: 'lane', options: threadOptions } satisfies MeasurementsThread,
        options.logger,
        (message) => message === WAKE_JOB_RUNNER && wakeJobRunner(),
      );
      return {
        buildContext: measurementsContext(db, assetRefs, wakeJobRunner),
        lane,
        stop: async () => {
          await lane.stop();
          await jobRunner.stop();
          await consumer.stop();
          await relay?.stop();
        },
      };
    },
  });
}

/** How a request's context is made, on the subgraph's loop and on its expensive-request lane alike. */
export function measurementsContext(db: Db, assetRefs: AssetRefs | null, wakeJobRunner: () => void): (base: BaseSubgraphContext) => SubgraphContext {
  const jobs = new JobStore(db);
  return (base) => {
    const measurements = new MeasurementRepository(db, base.identity.tenantId, base.identity.deadline);
    const ili = new IliStore(db, base.identity.tenantId, base.identity.deadline);
    return {
      ...base,
      assetRefs,
      measurements,
      ili,
      iliLocation: iliLocationLoader(ili),
      jobs,
      wakeJobRunner,
      ...measurementLoaders(measurements),
    };
  };
}

export const subgraph: SubgraphModule = { descriptor, start: startMeasurementsSubgraph };
