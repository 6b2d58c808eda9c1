import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { eventStreams } from '../../../lib/events/outbox';
import { startOutboxRelay } from '../../../lib/events/relay-process';
import type { SubgraphStartOptions } from '../../../lib/subgraph-config';
import { startDatabaseSubgraph, type RunningService } from '../../../lib/subgraph-server';
import type { SubgraphContext } from './context';
import { measurementEventData, type MeasurementDocument } from './documents';
import { ensureMeasurementIndexes, MEASUREMENTS_COLLECTION, MeasurementRepository } from './repository';
import { resolvers } from './resolvers';

export function startMeasurementsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startDatabaseSubgraph<SubgraphContext>(options, {
    name: 'measurements',
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    async prepare(db) {
      await ensureMeasurementIndexes(db);
      const relay = startOutboxRelay(options, db.collection<MeasurementDocument>(MEASUREMENTS_COLLECTION), eventStreams.measurements, measurementEventData);
      return {
        buildContext: (base) => ({ ...base, measurements: new MeasurementRepository(db, base.identity.tenantId) }),
        stop: () => relay.stop(),
      };
    },
  });
}
