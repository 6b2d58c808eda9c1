/**
 * `npm start`: the whole of Linepack on this machine (scripts/start-stack.ts says what runs and how).
 * This entry only switches tracing on first (when OTEL_EXPORTER_OTLP_ENDPOINT is set), so the
 * instrumentations patch express, http, mongodb and ioredis before the stack loads them.
 */
import { startTracing } from '@linepack/lib/tracing';

startTracing('stack');
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./start-stack');
