import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { startSubgraphServer } from '@linepack/lib/subgraph-server';
import type { RunningService, SubgraphDescriptor, SubgraphModule, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { readSubgraphSdl, subgraphPort } from '@linepack/schema/subgraphs';
import type { SubgraphContext } from './context';
import { resolvers } from './resolvers';

export const descriptor: SubgraphDescriptor = { name: 'analytics', defaultPort: subgraphPort('analytics'), ownsDatabase: false };

export function startAnalyticsSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startSubgraphServer<SubgraphContext>(options, {
    name: 'analytics',
    sdl: readSubgraphSdl('analytics'),
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    buildContext: (base) => base,
  });
}

export const subgraph: SubgraphModule = { descriptor, start: startAnalyticsSubgraph };
