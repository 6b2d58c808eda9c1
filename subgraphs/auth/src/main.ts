import { runSubgraphProcess } from '../../../lib/subgraph-config';
import { startAuthSubgraph } from './index';

runSubgraphProcess('auth', startAuthSubgraph);
