import type { BaseContext } from '@apollo/server';
import type { Logger } from '@linepack/lib/logger';
import type { RequestMetrics } from '@linepack/lib/metrics';
import type { VerifiedCredential } from './credentials';
import type { RequestDeadline } from './deadline';
import type { LaneResponse } from './expensive-lane';

export interface GatewayContext extends BaseContext {
  credential: VerifiedCredential;
  requestId: string;
  logger: Logger;
  deadline: RequestDeadline;
  /** Where the operation's name is left for the request metrics. */
  metrics: RequestMetrics;
  /** The client's address (req.ip, after TRUST_PROXY), for the audit log. */
  clientAddress: string;
  /**
   * The tenant's write counter as of the request's arrival or later (rate-limit.ts admit / writeEpoch), read at most
   * once; undefined (or a counter that cannot be read) disables de-duplication for the request.
   */
  writeEpoch?: () => Promise<string | undefined>;
  /** Set when a subgraph refused this request whole with a 4xx (subgraph-data-source.ts). */
  subgraphRefusalStatus?: number;
  /** Subgraph requests sent for this request, and how many of them were refused whole. */
  subgraphFetches?: number;
  subgraphRefusals?: number;
  /** The request's HTTP response, where an answer of the expensive-operation lane is written (expensive-lane.ts). */
  laneResponse?: LaneResponse;
}
