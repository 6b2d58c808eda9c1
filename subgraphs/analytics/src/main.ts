import { runSubgraphProcess } from '../../../lib/subgraph-config';
import { startAnalyticsSubgraph } from './index';

runSubgraphProcess('analytics', startAnalyticsSubgraph);
