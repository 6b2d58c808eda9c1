import type { GraphQLFieldResolver, GraphQLScalarType } from 'graphql';

/**
 * The resolvers of a subgraph as buildSubgraphSchema takes them, typed by the context they read. @apollo/subgraph
 * declares this type only under its internal `dist/schema-helper` path (its entry exports the functions, not the type),
 * so it is restated here. lib/subgraph-server.ts hands it to buildSubgraphSchema: if an upgrade changes what that
 * accepts, the type check fails there rather than at run time.
 */
export interface GraphQLResolverMap<TContext> {
  [typeName: string]:
    | {
        [fieldName: string]:
          | GraphQLFieldResolver<any, TContext>
          | { requires?: string; resolve?: GraphQLFieldResolver<any, TContext>; subscribe?: GraphQLFieldResolver<any, TContext> };
      }
    | GraphQLScalarType
    | { [enumValue: string]: string | number };
}
