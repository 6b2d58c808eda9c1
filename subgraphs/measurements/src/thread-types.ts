import type { RedisTarget } from '@linepack/lib/redis';
import type { SubgraphThreadOptions } from '@linepack/lib/subgraph-thread';

/** What the measurements subgraph's threads (threads.ts) are started with: plain data, cloned into the thread. */
export interface MeasurementsThreadOptions extends SubgraphThreadOptions {
  /** Whether the subgraph follows asset events (asset ids are checked), as its loop does. */
  followsAssets: boolean;
  /** Where the relay thread publishes (REDIS_URL); null: no relay thread is started. */
  redisUrl: RedisTarget | null;
  /** The job runner's lease (JOB_LEASE_SECONDS); undefined: lib/jobs.ts's default. */
  jobLeaseMs: number | undefined;
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
