import type { GraphQLResolveInfo } from 'graphql';
import { selectedStoredFields } from '@linepack/lib/selection';
import type { AssetDocument } from './documents';
import type { Asset } from './generated/resolvers-types';

export type AssetField = keyof AssetDocument;

/**
 * The stored fields each Asset field is resolved from (resolvers/Asset.ts). Typed against the generated Asset type,
 * so a field added to the SDL fails the type check here until it is mapped.
 */
const storedFieldsOf: Record<Exclude<keyof Asset, '__typename'>, readonly AssetField[]> = {
  id: ['_id'],
  type: ['type'],
  name: ['name'],
  parent: ['parentId'],
  status: ['status'],
  product: ['product'],
  regulation: ['regulation'],
  beginStationM: ['beginStationM'],
  endStationM: ['endStationM'],
  lengthM: ['beginStationM', 'endStationM'],
  outsideDiameterMm: ['outsideDiameterMm'],
  wallThicknessMm: ['wallThicknessMm'],
  smysMpa: ['smysMpa'],
  maopKpa: ['maopKpa'],
  classLocation: ['classLocation'],
  inHca: ['inHca'],
  smtsMpa: ['smtsMpa'],
  couldAffectHca: ['couldAffectHca'],
  cathodicallyProtected: ['cathodicallyProtected'],
  atmosphericExposure: ['atmosphericExposure'],
  offshore: ['offshore'],
  gasOdorized: ['gasOdorized'],
  crossing: ['crossing'],
  location: ['location'],
  installedAt: ['installedAt'],
  version: ['version'],
  createdAt: ['createdAt'],
  updatedAt: ['updatedAt'],
};

/**
 * The stored fields the assets under `path` of the current field read (`['edges', 'node']` for a page), sorted,
 * `_id` always included — so a query can project only those. Null when a selection names a field this does not know:
 * read them all (lib/selection.ts).
 */
export function selectedAssetFields(info: GraphQLResolveInfo, path: readonly string[]): readonly AssetField[] | null {
  return selectedStoredFields<AssetField>(info, path, storedFieldsOf, ['_id']);
}
