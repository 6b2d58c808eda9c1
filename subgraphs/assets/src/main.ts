import { runSubgraphProcess } from '../../../lib/subgraph-config';
import { startAssetsSubgraph } from './index';

runSubgraphProcess('assets', startAssetsSubgraph);
