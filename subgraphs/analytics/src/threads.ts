/**
 * The analytics subgraph's worker thread (index.ts starts it): its run comparison worker (run-comparison.ts) with a
 * MongoDB client of its own. Reassessing a 100,000-feature run is tens of seconds of matching and assessing; on the
 * loop it held the subgraph's answers to every tenant's queries up to 792 ms at a time (bench:fairness, after A's
 * import). Started from source as this file; in the subgraph's bundle as dist/main.js itself, which requires this
 * module when it finds itself off the main thread (main.ts).
 *
 * Nothing but the thread's start at the top: tracing must come before what the rest loads (lib/subgraph-thread.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { runSubgraphThread, type SubgraphThreadOptions } from '@linepack/lib/subgraph-thread';

runSubgraphThread(parentPort!, { subgraph: 'analytics', thread: 'run-comparisons' }, workerData as SubgraphThreadOptions, ({ port, db, mongo, logger }) => {
  /* eslint-disable @typescript-eslint/no-require-imports -- after tracing started */
  const { runWakeableWorkThread } = require('@linepack/lib/job-thread') as typeof import('@linepack/lib/job-thread');
  const { RunComparisonWorker } = require('./run-comparison') as typeof import('./run-comparison');
  /* eslint-enable @typescript-eslint/no-require-imports */
  runWakeableWorkThread(port, new RunComparisonWorker(db, logger), () => mongo.close());
  logger.info('run comparison thread started');
});
