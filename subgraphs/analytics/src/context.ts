import type { BaseSubgraphContext } from '@linepack/lib/subgraph-server';
import type { IliRunRepository } from './ili-run-repository';
import type { AnalyticsRepository } from './repository';
import type { TenantSettingsStore } from './settings';

export interface SubgraphContext extends BaseSubgraphContext {
  /** The caller's tenant's results (tenant from the verified identity only). */
  analytics: AnalyticsRepository;
  /** The caller's tenant's analytics settings. */
  settings: TenantSettingsStore;
  /** The caller's tenant's ILI run comparisons. */
  iliRuns: IliRunRepository;
}
