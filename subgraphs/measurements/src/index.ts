import type { GraphQLResolverMap } from '@linepack/lib/resolver-map';
import { eventStream } from '@linepack/lib/events/outbox';
import { startOutboxRelay } from '@linepack/lib/events/relay-process';
import { startEventConsumer } from '@linepack/lib/events/consumer-process';
import { assetRefHandler, AssetRefs, ensureAssetRefIndexes } from './asset-refs';
import { startDatabaseSubgraph } from '@linepack/lib/subgraph-server';
import type { RunningService, SubgraphDescriptor, SubgraphModule, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { readSubgraphSdl } from '@linepack/schema/sdl';
import { subgraphPort } from '@linepack/schema/subgraphs';
import type { SubgraphContext } from './context';
import { measurementEventData, type MeasurementDocument } from './documents';
import { measurementLoaders } from './loaders';
import { ensureMeasurementIndexes, MEASUREMENTS_COLLECTION, MeasurementRepository } from './repository';
import { resolvers } from './resolvers';
import { ensureJobIndexes, JobRunner, JobStore, type JobHandler } from '@linepack/lib/jobs';
import { ensureIliIndexes, ILI_COLLECTIONS, type IliRunDocument } from './ili/documents';
import { ILI_IMPORT_JOB, iliImportHandler } from './ili/import-job';
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
      const relay = startOutboxRelay(
        options,
        db.collection<MeasurementDocument>(MEASUREMENTS_COLLECTION),
        eventStream(options.dbPrefix, 'measurements'),
        measurementEventData,
      );
      // Runs publish on the measurements stream too: analytics compares a segment's runs from ili.run.* events.
      const runRelay = startOutboxRelay(
        options,
        db.collection<IliRunDocument>(ILI_COLLECTIONS.runs),
        eventStream(options.dbPrefix, 'measurements'),
        (_run, entry) => entry.data ?? {},
      );
      // Imports run in the subgraph that owns their data; one job per tenant at a time (lib/jobs.ts).
      const jobRunner = new JobRunner(db, { [ILI_IMPORT_JOB]: iliImportHandler(db) as JobHandler<never, never> }, { logger: options.logger });
      jobRunner.start();
      const jobs = new JobStore(db);
      return {
        buildContext: (base) => {
          const measurements = new MeasurementRepository(db, base.identity.tenantId, base.identity.deadline);
          const ili = new IliStore(db, base.identity.tenantId, base.identity.deadline);
          return {
            ...base,
            assetRefs,
            measurements,
            ili,
            iliLocation: iliLocationLoader(ili),
            jobs,
            wakeJobRunner: () => jobRunner.wake(),
            ...measurementLoaders(measurements),
          };
        },
        stop: async () => {
          await jobRunner.stop();
          await consumer.stop();
          await relay.stop();
          await runRelay.stop();
        },
      };
    },
  });
}

export const subgraph: SubgraphModule = { descriptor, start: startMeasurementsSubgraph };
