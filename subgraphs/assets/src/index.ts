import DataLoader from 'dataloader';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { eventStreams } from '../../../lib/events/outbox';
import { startOutboxRelay } from '../../../lib/events/relay-process';
import { connectMongo, databaseName } from '../../../lib/mongo';
import type { SubgraphStartOptions } from '../../../lib/subgraph-config';
import { startSubgraphServer, type RunningService } from '../../../lib/subgraph-server';
import type { SubgraphContext } from './context';
import type { AssetDocument } from './documents';
import { ASSETS_COLLECTION, AssetRepository, ensureAssetIndexes } from './repository';
import { resolvers } from './resolvers';

export async function startAssetsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  const mongo = await connectMongo(options.mongoUri, { monitorCommands: options.monitorCommands ?? false });
  const db = mongo.db(databaseName(options.dbPrefix, 'assets'));
  await ensureAssetIndexes(db);
  const relay = startOutboxRelay(options, db.collection<AssetDocument>(ASSETS_COLLECTION), eventStreams.assets, (_asset, entry) => entry.data ?? {});
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
    mongo,
    async stop() {
      await service.stop();
      await relay.stop();
      await mongo.close();
    },
  };
}
