import { startTracing } from '@linepack/lib/tracing';

// First: the instrumentations patch express, mongodb, ioredis and http as the subgraph loads them.
startTracing('compliance');
/* eslint-disable @typescript-eslint/no-require-imports */
const { runSubgraphProcess } = require('@linepack/lib/subgraph-process') as typeof import('@linepack/lib/subgraph-process');
const { subgraph } = require('./index') as typeof import('./index');
/* eslint-enable @typescript-eslint/no-require-imports */

runSubgraphProcess(subgraph.descriptor, subgraph.start);
