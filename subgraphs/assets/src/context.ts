import type DataLoader from 'dataloader';
import type { BaseSubgraphContext } from '@linepack/lib/subgraph-server';
import type { AssetDocument } from './documents';
import type { AssetRepository } from './repository';

export interface SubgraphContext extends BaseSubgraphContext {
  assets: AssetRepository;
  /** Batches entity lookups: N asset references cost one database round trip. */
  assetById: DataLoader<string, AssetDocument | null>;
}
