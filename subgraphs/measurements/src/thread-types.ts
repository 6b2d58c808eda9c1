import type { RedisTarget } from '@linepack/lib/redis';

/** What the measurements subgraph's threads (threads.ts) are started with: plain data, cloned into the thread. */
export interface MeasurementsThreadOptions {
  mongoUri: string;
  dbPrefix: string;
  logLevel: string;
  /** Whether the subgraph follows asset events (asset ids are checked), as its loop does. */
  followsAssets: boolean;
  /** Where the relay thread publishes (REDIS_URL); null: no relay thread is started. */
  redisUrl: RedisTarget | null;
  /** The job runner's lease (JOB_LEASE_SECONDS); undefined: lib/jobs.ts's default. */
  jobLeaseMs: number | undefined;
  /** The process's tracing service name (lib/tracing.ts), so the threads' spans are told as its own; null: not traced. */
  tracingServiceName: string | null;
}

export interface MeasurementsThread {
  /**
   * `jobs`: the job runner (ILI imports); `lane`: the requests the gateway's expensive-operation lane sends; `relay`:
   * the outbox relays (relays.ts).
   */
  role: 'jobs' | 'lane' | 'relay';
  options: MeasurementsThreadOptions;
}

/** What the lane's resolvers send the loop when they queue a job (the job runner's thread is the loop's to wake). */
export const WAKE_JOB_RUNNER = 'wake-job-runner';
