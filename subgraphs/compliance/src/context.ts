import type { BaseSubgraphContext } from '@linepack/lib/subgraph-server';

/** The obligation catalogue needs no storage; per-asset status arrives with the event consumers. */
export type SubgraphContext = BaseSubgraphContext;
