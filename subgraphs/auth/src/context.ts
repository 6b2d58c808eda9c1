import type { BaseSubgraphContext } from '@linepack/lib/subgraph-server';
import type { AuthStore } from './store';

export interface SubgraphContext extends BaseSubgraphContext {
  store: AuthStore;
}
