import { runSubgraphProcess } from '../../../lib/subgraph-config';
import { startMeasurementsSubgraph } from './index';

runSubgraphProcess('measurements', startMeasurementsSubgraph);
