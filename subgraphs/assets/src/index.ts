import DataLoader from 'dataloader';
import type { GraphQLResolverMap } from '@linepack/lib/resolver-map';
import { eventStream } from '@linepack/lib/events/outbox';
import { startOutboxRelay } from '@linepack/lib/events/relay-process';
import { startDatabaseSubgraph } from '@linepack/lib/subgraph-server';
import type { RunningService, SubgraphDescriptor, SubgraphModule, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { readSubgraphSdl } from '@linepack/schema/sdl';
import { subgraphPort } from '@linepack/schema/subgraphs';
import type { SubgraphContext } from './context';
import type { AssetDocument } from './documents';
import { ASSETS_COLLECTION, AssetRepository, ensureAssetIndexes } from './repository';
import { resolvers } from './resolvers';

export const descriptor: SubgraphDescriptor = { name: 'assets', defaultPort: subgraphPort('assets'), ownsDatabase: true };

export function startAssetsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startDatabaseSubgraph<SubgraphContext>(options, {
    name: 'assets',
    sdl: readSubgraphSdl('assets'),
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    async prepare(db) {
      await ensureAssetIndexes(db);
      const relay = startOutboxRelay(
        options,
        db.collection<AssetDocument>(ASSETS_COLLECTION),
        eventStream(options.dbPrefix, 'assets'),
        (_asset, entry) => entry.data ?? {},
      );
      return {
        buildContext: (base) => {
          const assets = new AssetRepository(db, base.identity.tenantId, base.identity.deadline);
          return { ...base, assets, assetById: new DataLoader((ids: readonly string[]) => assets.findByIds(ids)) };
        },
        stop: () => relay.stop(),
      };
    },
  });
}

export const subgraph: SubgraphModule = { descriptor, start: startAssetsSubgraph };
