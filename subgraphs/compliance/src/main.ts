import { runSubgraphProcess } from '../../../lib/subgraph-config';
import { startComplianceSubgraph } from './index';

runSubgraphProcess('compliance', startComplianceSubgraph);
