import { isMainThread } from 'node:worker_threads';
import { startTracing } from '@linepack/lib/tracing';

/* eslint-disable @typescript-eslint/no-require-imports */
if (!isMainThread) {
  // The bundle is also the entry of the subgraph's run comparison thread (threads.ts).
  require('./threads');
} else {
  // First: the instrumentations patch express, mongodb, ioredis and http as the subgraph loads them.
  startTracing('analytics');
  const { runSubgraphProcess } = require('@linepack/lib/subgraph-process') as typeof import('@linepack/lib/subgraph-process');
  const { subgraph } = require('./index') as typeof import('./index');
  runSubgraphProcess(subgraph.descriptor, subgraph.start);
}
/* eslint-enable @typescript-eslint/no-require-imports */
