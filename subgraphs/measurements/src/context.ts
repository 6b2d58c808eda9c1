import type { BaseSubgraphContext } from '@linepack/lib/subgraph-server';
import type { JobStore } from '@linepack/lib/jobs';
import type { AssetRefs } from './asset-refs';
import type { FeatureLocation, FeaturePosition } from './ili/location';
import type { IliStore } from './ili/store';
import type DataLoader from 'dataloader';
import type { MeasurementLoaders } from './loaders';
import type { MeasurementRepository } from './repository';

export interface SubgraphContext extends BaseSubgraphContext, MeasurementLoaders {
  measurements: MeasurementRepository;
  /** Null when the subgraph follows no asset events (no REDIS_URL): asset ids are then not checked. */
  assetRefs: AssetRefs | null;
  /** The tenant's ILI uploads, runs, tally and mapping profiles. */
  ili: IliStore;
  /** Batches `Measurement.iliLocation` (ili/location.ts): a page of features costs a few queries, not a few per feature. */
  iliLocation: DataLoader<FeaturePosition, FeatureLocation | null, string>;
  jobs: JobStore;
  /** Tells this process's job runner a job was just queued (else it finds it at its next poll). */
  wakeJobRunner: () => void;
}
