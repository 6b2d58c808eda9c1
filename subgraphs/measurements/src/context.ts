import type { BaseSubgraphContext } from '@linepack/lib/subgraph-server';
import type { MeasurementRepository } from './repository';

export interface SubgraphContext extends BaseSubgraphContext {
  measurements: MeasurementRepository;
}
