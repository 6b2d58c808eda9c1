import DataLoader from 'dataloader';
import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { eventStreams } from '../../../lib/events/outbox';
import { startOutboxRelay } from '../../../lib/events/relay-process';
import type { SubgraphStartOptions } from '../../../lib/subgraph-config';
import { startDatabaseSubgraph, type RunningService } from '../../../lib/subgraph-server';
import type { SubgraphContext } from './context';
import type { AssetDocument } from './documents';
import { ASSETS_COLLECTION, AssetRepository, ensureAssetIndexes } from './repository';
import { resolvers } from './resolvers';

export function startAssetsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startDatabaseSubgraph<SubgraphContext>(options, {
    name: 'assets',
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    async prepare(db) {
      await ensureAssetIndexes(db);
      const relay = startOutboxRelay(options, db.collection<AssetDocument>(ASSETS_COLLECTION), eventStreams.assets, (_asset, entry) => entry.data ?? {});
      return {
        buildContext: (base) => {
          const assets = new AssetRepository(db, base.identity.tenantId);
          return { ...base, assets, assetById: new DataLoader((ids: readonly string[]) => assets.findByIds(ids)) };
        },
        stop: () => relay.stop(),
      };
    },
  });
}
