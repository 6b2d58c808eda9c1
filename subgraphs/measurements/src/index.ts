import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { connectMongo, databaseName } from '../../../lib/mongo';
import type { SubgraphStartOptions } from '../../../lib/subgraph-config';
import { startSubgraphServer, type RunningService } from '../../../lib/subgraph-server';
import type { SubgraphContext } from './context';
import { ensureMeasurementIndexes, MeasurementRepository } from './repository';
import { resolvers } from './resolvers';

export async function startMeasurementsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  const mongo = await connectMongo(options.mongoUri);
  const db = mongo.db(databaseName(options.dbPrefix, 'measurements'));
  await ensureMeasurementIndexes(db);
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
    async stop() {
      await service.stop();
      await mongo.close();
    },
  };
}
