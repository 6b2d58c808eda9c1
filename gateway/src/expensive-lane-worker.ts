/**
 * The expensive-operation lane's thread (expensive-lane.ts). Started from source as this file; in the gateway's bundle
 * as dist/main.js itself, which requires this module when it finds itself in the lane's thread (main.ts).
 *
 * Tracing first, as in every process entry: the instrumentations patch what the rest loads (lib/tracing.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { startTracing } from '@linepack/lib/tracing';
import type { LaneConfig } from './expensive-lane';

const config = (workerData as { config: LaneConfig }).config;
// Traced when the gateway is (the same environment switches it on), under the gateway's name (`npm start` is one service).
startTracing('gateway', { env: { ...process.env, ...(config.tracingServiceName ? { OTEL_SERVICE_NAME: config.tracingServiceName } : {}) } });
/* eslint-disable @typescript-eslint/no-require-imports -- after startTracing */
const { runLane } = require('./expensive-lane-runner') as typeof import('./expensive-lane-runner');
/* eslint-enable @typescript-eslint/no-require-imports */
runLane(config, parentPort!);
