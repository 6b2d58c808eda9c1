import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import type { SubgraphStartOptions } from '../../../lib/subgraph-config';
import { startSubgraphServer, type RunningService } from '../../../lib/subgraph-server';
import type { SubgraphContext } from './context';
import { resolvers } from './resolvers';

export function startAnalyticsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startSubgraphServer<SubgraphContext>(options, {
    name: 'analytics',
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    buildContext: (base) => base,
  });
}
