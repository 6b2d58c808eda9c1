import type { BaseSubgraphContext } from '@linepack/lib/subgraph-server';

/** Analytics answers from its inputs alone today; its own database arrives with the event consumers. */
export type SubgraphContext = BaseSubgraphContext;
