import DataLoader from 'dataloader';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { connectMongo, databaseName } from '../../../lib/mongo';
import type { SubgraphStartOptions } from '../../../lib/subgraph-config';
import { startSubgraphServer, type RunningService } from '../../../lib/subgraph-server';
import type { SubgraphContext } from './context';
import { AssetRepository, ensureAssetIndexes } from './repository';
import { resolvers } from './resolvers';

export async function startAssetsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  const mongo = await connectMongo(options.mongoUri);
  const db = mongo.db(databaseName(options.dbPrefix, 'assets'));
  await ensureAssetIndexes(db);
  const service = await startSubgraphServer<SubgraphContext>({
    name: 'assets',
    port: options.port,
    host: options.host,
    internalTokenPublicKey: options.internalTokenPublicKey,
    logger: options.logger,
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    buildContext: (base) => {
      const assets = new AssetRepository(db, base.identity.tenantId);
      return { ...base, assets, assetById: new DataLoader((ids: readonly string[]) => assets.findByIds(ids)) };
    },
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
