import type { BaseSubgraphContext } from '@linepack/lib/subgraph-server';
import type { AssetRefs } from './asset-refs';
import type { MeasurementLoaders } from './loaders';
import type { MeasurementRepository } from './repository';

export interface SubgraphContext extends BaseSubgraphContext, MeasurementLoaders {
  measurements: MeasurementRepository;
  /** Null when the subgraph follows no asset events (no REDIS_URL): asset ids are then not checked. */
  assetRefs: AssetRefs | null;
}
