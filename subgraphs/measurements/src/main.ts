import { runSubgraphProcess } from '@linepack/lib/subgraph-config';
import { subgraph } from './index';

runSubgraphProcess(subgraph.descriptor, subgraph.start);
