import type { GraphQLResolverMap } from '@apollo/subgraph/dist/schema-helper';
import { startSubgraphServer } from '@linepack/lib/subgraph-server';
import type { RunningService, SubgraphDescriptor, SubgraphModule, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import { readSubgraphSdl, subgraphPort } from '@linepack/schema/subgraphs';
import type { SubgraphContext } from './context';
import { resolvers } from './resolvers';

export const descriptor: SubgraphDescriptor = { name: 'compliance', defaultPort: subgraphPort('compliance'), ownsDatabase: false };

export function startComplianceSubgraph(options: SubgraphStartOptions): Promise<RunningService> {
  return startSubgraphServer<SubgraphContext>(options, {
    name: 'compliance',
    sdl: readSubgraphSdl('compliance'),
    resolvers: resolvers as GraphQLResolverMap<SubgraphContext>,
    buildContext: (base) => base,
  });
}

export const subgraph: SubgraphModule = { descriptor, start: startComplianceSubgraph };
