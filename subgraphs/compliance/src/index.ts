import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import type { SubgraphStartOptions } from '../../../lib/subgraph-config';
import { startSubgraphServer, type RunningService } from '../../../lib/subgraph-server';
import type { SubgraphContext } from './context';
import { resolvers } from './resolvers';

export async function startComplianceSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startSubgraphServer<SubgraphContext>({
    name: 'compliance',
    port: options.port,
    host: options.host,
    internalTokenPublicKey: options.internalTokenPublicKey,
    logger: options.logger,
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    buildContext: (base) => base,
  });
}
