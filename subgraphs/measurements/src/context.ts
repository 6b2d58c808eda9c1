import type { BaseSubgraphContext } from '@linepack/lib/subgraph-server';
import type { JobStore } from '@linepack/lib/jobs';
import type { AssetRefs } from './asset-refs';
import type { IliStore } from './ili/store';
import type { MeasurementLoaders } from './loaders';
import type { MeasurementRepository } from './repository';

export interface SubgraphContext extends BaseSubgraphContext, MeasurementLoaders {
  measurements: MeasurementRepository;
  /** Null when the subgraph follows no asset events (no REDIS_URL): asset ids are then not checked. */
  assetRefs: AssetRefs | null;
  /** The tenant's ILI uploads, runs, tally and mapping profiles. */
  ili: IliStore;
  jobs: JobStore;
  /** Tells this process's job runner a job was just queued (else it finds it at its next poll). */
  wakeJobRunner: () => void;
}
