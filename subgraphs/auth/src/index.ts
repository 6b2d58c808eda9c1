import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { connectMongo, databaseName } from '../../../lib/mongo';
import type { SubgraphStartOptions } from '../../../lib/subgraph-config';
import { startSubgraphServer, type RunningService } from '../../../lib/subgraph-server';
import type { SubgraphContext } from './context';
import { resolvers } from './resolvers';
import { authRoutes } from './rest';
import { AuthStore } from './store';

export async function startAuthSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  const mongo = await connectMongo(options.mongoUri);
  const db = mongo.db(databaseName(options.dbPrefix, 'auth'));
  const store = new AuthStore(db);
  await store.ensureIndexes();
  const service = await startSubgraphServer<SubgraphContext>({
    name: 'auth',
    port: options.port,
    host: options.host,
    internalTokenPublicKey: options.internalTokenPublicKey,
    logger: options.logger,
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    buildContext: (base) => ({ ...base, store }),
    routes: (app) => authRoutes(app, store, options.logger),
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
