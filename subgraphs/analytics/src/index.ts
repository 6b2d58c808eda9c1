import type { GraphQLResolverMap } from '@linepack/lib/resolver-map';
import { replayStreams } from '@linepack/lib/events/consumer';
import { startEventConsumer } from '@linepack/lib/events/consumer-process';
import { eventStream } from '@linepack/lib/events/outbox';
import { WakeableWorkThread } from '@linepack/lib/job-thread';
import { startDatabaseSubgraph } from '@linepack/lib/subgraph-server';
import { threadEntry } from '@linepack/lib/threads';
import { subgraphThreadOptions } from '@linepack/lib/subgraph-thread';
import type { RunningService, SubgraphDescriptor, SubgraphModule, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { readSubgraphSdl } from '@linepack/schema/sdl';
import { subgraphPort } from '@linepack/schema/subgraphs';
import type { SubgraphContext } from './context';
import { IliRunRepository } from './ili-run-repository';
import { hasDueComparison } from './ili-runs';
import { analyticsEventHandler, dropAnalyticsProjections, ensureAnalyticsIndexes } from './projections';
import { AnalyticsRepository } from './repository';
import { resolvers } from './resolvers';
import { TenantSettingsStore } from './settings';

export const descriptor: SubgraphDescriptor = { name: 'analytics', defaultPort: subgraphPort('analytics'), ownsDatabase: true };

export const ANALYTICS_CONSUMER_GROUP = 'analytics';
/** Analytics follows both producers: assets (segment geometry, material, MAOP) and measurements (ILI anomalies, CP readings). */
const streamsOf = (prefix: string) => [eventStream(prefix, 'assets'), eventStream(prefix, 'measurements')];

export function startAnalyticsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startDatabaseSubgraph<SubgraphContext>(options, {
    name: 'analytics',
    sdl: readSubgraphSdl('analytics'),
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    async prepare(db) {
      await ensureAnalyticsIndexes(db);
      // Run comparisons are minutes of work for a large run: a worker beside the consumer does them (run-comparison.ts),
      // on a thread of its own (threads.ts) so that work never holds the loop that answers every tenant's queries.
      const comparisons = new WakeableWorkThread({
        what: 'the run comparison thread',
        meanwhile: 'a comparison it was running is taken up again when its lease runs out (10 minutes)',
        entry: threadEntry(__filename, 'threads.ts'),
        workerData: subgraphThreadOptions(options),
        logger: options.logger,
        hasWork: () => hasDueComparison(db),
      });
      comparisons.start();
      const consumer = startEventConsumer(options, db, {
        group: ANALYTICS_CONSUMER_GROUP,
        streams: streamsOf(options.dbPrefix),
        handle: analyticsEventHandler(db, () => comparisons.wake()),
      });
      return {
        buildContext: (base) => ({
          ...base,
          analytics: new AnalyticsRepository(db, base.identity.tenantId, base.identity.deadline),
          settings: new TenantSettingsStore(db, base.identity.tenantId, base.logger),
          iliRuns: new IliRunRepository(db, base.identity.tenantId, base.identity.deadline),
        }),
        stop: async () => {
          await consumer.stop();
          await comparisons.stop();
        },
      };
    },
  });
}

export const subgraph: SubgraphModule = {
  descriptor,
  start: startAnalyticsSubgraph,
  async rebuild({ db, dbPrefix, redis, tenantId, logger }) {
    await ensureAnalyticsIndexes(db);
    await dropAnalyticsProjections(db, tenantId);
    return replayStreams(redis, streamsOf(dbPrefix), analyticsEventHandler(db), { ...(tenantId ? { tenantId } : {}), logger });
  },
};
