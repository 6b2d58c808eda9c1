import type { GraphQLResolverMap } from '@linepack/lib/resolver-map';
import { replayStreams } from '@linepack/lib/events/consumer';
import { startEventConsumer } from '@linepack/lib/events/consumer-process';
import { eventStream } from '@linepack/lib/events/outbox';
import { startDatabaseSubgraph } from '@linepack/lib/subgraph-server';
import type { RunningService, SubgraphDescriptor, SubgraphModule, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { readSubgraphSdl } from '@linepack/schema/sdl';
import { subgraphPort } from '@linepack/schema/subgraphs';
import type { SubgraphContext } from './context';
import { complianceEventHandler, dropComplianceProjections, ensureComplianceIndexes } from './projections';
import { ComplianceRepository } from './repository';
import { resolvers } from './resolvers';
import { ComplianceSettingsStore } from './settings';
import { StatusComputer } from './status';

export const descriptor: SubgraphDescriptor = { name: 'compliance', defaultPort: subgraphPort('compliance'), ownsDatabase: true };

/** Compliance follows both producers: assets (what applies) and measurements (the evidence). */
export const COMPLIANCE_CONSUMER_GROUP = 'compliance';
const streamsOf = (prefix: string) => [eventStream(prefix, 'assets'), eventStream(prefix, 'measurements')];

export function startComplianceSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startDatabaseSubgraph<SubgraphContext>(options, {
    name: 'compliance',
    sdl: readSubgraphSdl('compliance'),
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    async prepare(db) {
      await ensureComplianceIndexes(db);
      const consumer = startEventConsumer(options, db, {
        group: COMPLIANCE_CONSUMER_GROUP,
        streams: streamsOf(options.dbPrefix),
        handle: complianceEventHandler(db),
      });
      const computer = new StatusComputer(db);
      return {
        buildContext: (base) => ({
          ...base,
          compliance: new ComplianceRepository(db, base.identity.tenantId, computer, base.identity.deadline),
          settings: new ComplianceSettingsStore(db, base.identity.tenantId, computer, base.logger),
        }),
        stop: () => consumer.stop(),
      };
    },
  });
}

export const subgraph: SubgraphModule = {
  descriptor,
  start: startComplianceSubgraph,
  async rebuild({ db, dbPrefix, redis, tenantId, logger }) {
    await ensureComplianceIndexes(db);
    await dropComplianceProjections(db, tenantId);
    return replayStreams(redis, streamsOf(dbPrefix), complianceEventHandler(db), { ...(tenantId ? { tenantId } : {}), logger });
  },
};
