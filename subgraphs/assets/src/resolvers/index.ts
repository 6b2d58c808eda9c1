import type { Resolvers } from '../generated/resolvers-types';
import { Asset } from './Asset';
import { AssetConnection } from './AssetConnection';
import { Mutation } from './Mutation';
import { PipelineSummary } from './PipelineSummary';
import { Query } from './Query';
import { DateTimeScalar, GeoJSONScalar } from './scalars';

export const resolvers: Resolvers = { Query, Mutation, Asset, AssetConnection, PipelineSummary, DateTime: DateTimeScalar, GeoJSON: GeoJSONScalar };
