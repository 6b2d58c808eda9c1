import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { eventStreams } from '../../../lib/events/outbox';
import { startOutboxRelay } from '../../../lib/events/relay-process';
import { connectMongo, databaseName } from '../../../lib/mongo';
import type { SubgraphStartOptions } from '../../../lib/subgraph-config';
import { startSubgraphServer, type RunningService } from '../../../lib/subgraph-server';
import type { SubgraphContext } from './context';
import { measurementEventData, type MeasurementDocument } from './documents';
import { ensureMeasurementIndexes, MEASUREMENTS_COLLECTION, MeasurementRepository } from './repository';
import { resolvers } from './resolvers';

export async function startMeasurementsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  const mongo = await connectMongo(options.mongoUri, { monitorCommands: options.monitorCommands ?? false });
  const db = mongo.db(databaseName(options.dbPrefix, 'measurements'));
  await ensureMeasurementIndexes(db);
  const relay = startOutboxRelay(options, db.collection<MeasurementDocument>(MEASUREMENTS_COLLECTION), eventStreams.measurements, measurementEventData);
  const service = await startSubgraphServer<SubgraphContext>({
    name: 'measurements',
    port: options.port,
    host: options.host,
    internalTokenPublicKey: options.internalTokenPublicKey,
    logger: options.logger,
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    buildContext: (base) => ({ ...base, measurements: new MeasurementRepository(db, base.identity.tenantId) }),
    ready: async () => void (await db.command({ ping: 1 })),
  });
  return {
    ...service,
    mongo,
    async stop() {
      await service.stop();
      await relay.stop();
      await mongo.close();
    },
  };
}
