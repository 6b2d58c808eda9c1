import type { BaseSubgraphContext } from '@linepack/lib/subgraph-server';
import type { ComplianceRepository } from './repository';
import type { ComplianceSettingsStore } from './settings';

export interface SubgraphContext extends BaseSubgraphContext {
  /** The caller's tenant's compliance (tenant from the verified identity only). */
  compliance: ComplianceRepository;
  /** The caller's tenant's compliance settings. */
  settings: ComplianceSettingsStore;
}
