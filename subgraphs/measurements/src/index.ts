import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { eventStream } from '@linepack/lib/events/outbox';
import { startOutboxRelay } from '@linepack/lib/events/relay-process';
import { startDatabaseSubgraph } from '@linepack/lib/subgraph-server';
import type { RunningService, SubgraphDescriptor, SubgraphModule, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { readSubgraphSdl, subgraphPort } from '@linepack/schema/subgraphs';
import type { SubgraphContext } from './context';
import { measurementEventData, type MeasurementDocument } from './documents';
import { ensureMeasurementIndexes, MEASUREMENTS_COLLECTION, MeasurementRepository } from './repository';
import { resolvers } from './resolvers';

export const descriptor: SubgraphDescriptor = { name: 'measurements', defaultPort: subgraphPort('measurements'), ownsDatabase: true };

export function startMeasurementsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startDatabaseSubgraph<SubgraphContext>(options, {
    name: 'measurements',
    sdl: readSubgraphSdl('measurements'),
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    async prepare(db) {
      await ensureMeasurementIndexes(db);
      const relay = startOutboxRelay(
        options,
        db.collection<MeasurementDocument>(MEASUREMENTS_COLLECTION),
        eventStream(options.dbPrefix, 'measurements'),
        measurementEventData,
      );
      return {
        buildContext: (base) => ({ ...base, measurements: new MeasurementRepository(db, base.identity.tenantId) }),
        stop: () => relay.stop(),
      };
    },
  });
}

export const subgraph: SubgraphModule = { descriptor, start: startMeasurementsSubgraph };
