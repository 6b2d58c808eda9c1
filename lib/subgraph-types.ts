import type { Db, MongoClient } from 'mongodb';
import type { Logger } from './logger';
import type { RedisClient, RedisTarget } from './redis';

/**
 * What a subgraph package says about itself. The registry (`@linepack/schema`) only knows names and
 * ports; whether a subgraph owns a database is the owning team's decision, so it lives here.
 */
export interface SubgraphDescriptor {
  name: string;
  defaultPort: number;
  /** Whether the subgraph needs MONGODB_URI (its own `<prefix>_<name>` database). */
  ownsDatabase: boolean;
}

/** How a subgraph is started, from its process entry or from the development/test launcher. */
export interface SubgraphStartOptions {
  port: number;
  host: string;
  /** Required by subgraphs that own a database. */
  mongoUri: string | undefined;
  dbPrefix: string;
  /** The gateway keys whose identity tokens it accepts: one or more PEM public keys (two during a rotation). */
  internalTokenPublicKey: string;
  logger: Logger;
  /** Where domain events are published and read (Redis Streams); without it they wait in the outbox. */
  redisUrl?: RedisTarget | undefined;
  /** Run the outbox relay and event consumers in this process (default true when redisUrl is set). */
  eventRelay?: boolean;
  /** How long a job runner's claim lasts without a heartbeat (JOB_LEASE_SECONDS; lib/jobs.ts's default when absent). */
  jobLeaseMs?: number;
  /** Emit MongoDB command-monitoring events on RunningService.mongo (tests count round trips). */
  monitorCommands?: boolean;
}

export interface RunningService {
  name: string;
  url: string;
  port: number;
  /** The subgraph's own MongoDB client, for diagnostics (command monitoring in tests). */
  mongo?: MongoClient;
  /** Draining: /readyz 503 and `Connection: close` on every answer, still serving (lib/http.ts HttpDrain). */
  drain(): void;
  /** Stops accepting, closes idle connections, answers what is in flight, then releases everything. */
  stop(): Promise<void>;
}

/**
 * What every subgraph package exports as `subgraph` from its entry point, so the development stack
 * and the process entry start any subgraph by name without a list of them.
 */
export interface SubgraphModule {
  descriptor: SubgraphDescriptor;
  start(options: SubgraphStartOptions): Promise<RunningService>;
  /**
   * For subgraphs that project domain events: drop the projections (of one tenant, or all) and
   * replay everything the streams hold. `npx linepack <name> rebuild --tenant ID` calls it.
   */
  rebuild?(context: RebuildContext): Promise<{ events: number }>;
}

export interface RebuildContext {
  /** The subgraph's own database. */
  db: Db;
  /** The deployment's database prefix; event streams are named under it. */
  dbPrefix: string;
  redis: RedisClient;
  /** Null: every tenant. */
  tenantId: string | null;
  logger: Logger;
}
