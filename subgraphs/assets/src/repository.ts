import type { Db, Filter, UpdateFilter } from 'mongodb';
import { z } from 'zod';
import { ensureOutboxIndex, withoutOutbox, type OutboxEntry } from '@linepack/lib/events/outbox';
import { decodeCursor, encodeCursor, toConnection } from '@linepack/lib/pagination';
import { projectionOf } from '@linepack/lib/selection';
import { TenantCollection } from '@linepack/lib/tenant-collection';
import { fieldError } from '@linepack/lib/errors';
import type { AssetDocument, AssetPage, AssetStatus, AssetType, Regulation } from './documents';
import type { AssetField } from './selection';

export const ASSETS_COLLECTION = 'assets';

/** Every index starts with tenantId, so no query can scan across tenants. */
export async function ensureAssetIndexes(db: Db): Promise<void> {
  const assets = db.collection<AssetDocument>(ASSETS_COLLECTION);
  await ensureOutboxIndex(assets);
  await assets.createIndexes([
    { key: { tenantId: 1, nameLower: 1, _id: 1 }, name: 'tenant_name' },
    { key: { tenantId: 1, parentId: 1 }, name: 'tenant_parent' },
    { key: { tenantId: 1, type: 1, status: 1 }, name: 'tenant_type_status' },
    // One per order of the list (AssetOrderField): the order's key, then the name and id that break its ties. Each
    // also serves the filter on that key with the default order by name.
    { key: { tenantId: 1, type: 1, nameLower: 1, _id: 1 }, name: 'tenant_type_name' },
    { key: { tenantId: 1, status: 1, nameLower: 1, _id: 1 }, name: 'tenant_status_name' },
    { key: { tenantId: 1, classLocation: 1, nameLower: 1, _id: 1 }, name: 'tenant_class_name' },
    { key: { tenantId: 1, regulation: 1, nameLower: 1, _id: 1 }, name: 'tenant_regulation_name' },
    // createAsset's idempotency keys, unique per tenant. The one index that does not start with tenantId: its value
    // does (`<tenantId>/<key>`). Sparse, so assets created without a key are not in it; a compound index would need a
    // partial filter, which the embedded test server ignores.
    { key: { 'idempotency.scope': 1 }, name: 'tenant_idempotency_key', unique: true, sparse: true },
  ]);
}

export interface AssetListFilter {
  type?: AssetType | null;
  status?: AssetStatus | null;
  parentId?: string | null;
  inHca?: boolean | null;
  nameContains?: string | null;
  regulation?: Regulation | null;
  classLocation?: number | null;
}

export type AssetOrderField = 'NAME' | 'TYPE' | 'STATUS' | 'CLASS_LOCATION' | 'REGULATION';
export interface AssetOrder {
  field: AssetOrderField;
  direction: 'ASC' | 'DESC';
}
export const defaultAssetOrder: AssetOrder = { field: 'NAME', direction: 'ASC' };

/** The stored field each order sorts by before the name and id that break its ties. */
const orderKeyOf = { TYPE: 'type', STATUS: 'status', CLASS_LOCATION: 'classLocation', REGULATION: 'regulation' } as const;

/** By name (ascending): the sort key of the last row, as this list has always written it. */
const nameCursor = z.tuple([z.string(), z.string()]);
/** Any other order: the order itself, then the sort key of the last row (its key may be null: not recorded). */
const orderedCursor = z.tuple([z.string(), z.enum(['ASC', 'DESC']), z.union([z.string(), z.number(), z.null()]), z.string(), z.string()]);
const assetCursor = z.union([nameCursor, orderedCursor]);

type SortKey = string | number | null;
/** The order keys an asset may have unrecorded (null). */
const nullableKeys = new Set<string>(['classLocation', 'regulation']);

/**
 * The rows after `values` in a lexicographic order over `paths` (one direction for all): the disjunction, over each
 * position, of "equal up to here, beyond at this one". Null (not recorded) sorts lowest, as MongoDB sorts it; a range
 * operator never matches null, so beyond a null ascending is "not null", and beyond a value descending includes null.
 */
function keysetAfter(paths: readonly string[], values: readonly SortKey[], direction: 'ASC' | 'DESC'): Filter<AssetDocument> {
  const branches: Record<string, unknown>[] = [];
  for (let i = 0; i < paths.length; i++) {
    const equal = Object.fromEntries(paths.slice(0, i).map((p, j) => [p, values[j]]));
    const value = values[i]!;
    const path = paths[i]!;
    if (direction === 'ASC') branches.push({ ...equal, [path]: value === null ? { $ne: null } : { $gt: value } });
    else if (value !== null) {
      branches.push({ ...equal, [path]: { $lt: value } });
      if (nullableKeys.has(path)) branches.push({ ...equal, [path]: null });
    }
  }
  return { $or: branches } as Filter<AssetDocument>;
}

function escapeRegex(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

export interface AssetSummaryCounts {
  totalAssets: number;
  byType: { type: AssetType; count: number }[];
  byStatus: { status: AssetStatus; count: number }[];
  totalPipelineLengthM: number;
}

/** The assets of one tenant. */
export class AssetRepository {
  private readonly assets: TenantCollection<AssetDocument>;

  constructor(db: Db, tenantId: string, deadline?: number) {
    this.assets = new TenantCollection(db.collection<AssetDocument>(ASSETS_COLLECTION), tenantId, deadline);
  }

  get tenantId(): string {
    return this.assets.tenantId;
  }

  findById(id: string): Promise<AssetDocument | null> {
    return this.assets.findOne({ _id: id }, withoutOutbox);
  }

  async findByIds(ids: readonly string[]): Promise<(AssetDocument | null)[]> {
    const found = await this.assets.find({ _id: { $in: [...new Set(ids)] } }, withoutOutbox).toArray();
    const byId = new Map(found.map((a) => [a._id, a]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  /**
   * Ordered by (lower-cased name, id), or by the order's key then (lower-cased name, id): stable across pages even
   * when names repeat. `fields` (with `_id`, `nameLower` and the order's key, the cursor) is what the caller's
   * selection reads: only those travel; null reads whole assets.
   */
  async list(
    filter: AssetListFilter,
    size: number,
    after: string | null | undefined,
    fields: readonly AssetField[] | null = null,
    order: AssetOrder = defaultAssetOrder,
  ): Promise<AssetPage> {
    const query: Filter<AssetDocument> = {};
    if (filter.type) query.type = filter.type;
    if (filter.status) query.status = filter.status;
    if (filter.parentId) query.parentId = filter.parentId;
    if (filter.inHca != null) query.inHca = filter.inHca;
    if (filter.regulation) query.regulation = filter.regulation;
    if (filter.classLocation != null) query.classLocation = filter.classLocation;
    if (filter.nameContains) query.nameLower = { $regex: escapeRegex(filter.nameContains.toLowerCase()) };

    const key = order.field === 'NAME' ? null : orderKeyOf[order.field];
    const paths: string[] = key ? [key, 'nameLower', '_id'] : ['nameLower', '_id'];
    const byName = key === null && order.direction === 'ASC';
    const cursorOf = (a: AssetDocument): string => {
      const values = paths.map((p) => (a as unknown as Record<string, SortKey | undefined>)[p] ?? null);
      return encodeCursor(byName ? values : [order.field, order.direction, key ? values[0] : null, ...values.slice(-2)]);
    };
    const cursor = decodeCursor(after, assetCursor);
    let pageQuery: Filter<AssetDocument> = query;
    if (cursor) {
      const values: SortKey[] | null =
        cursor.length === 2
          ? byName
            ? [...cursor]
            : null
          : cursor[0] === order.field && cursor[1] === order.direction
            ? key
              ? cursor.slice(2)
              : cursor.slice(3)
            : null;
      if (values === null) throw fieldError('BAD_USER_INPUT', 'after is a cursor of another orderBy: start again without after', { field: 'after' });
      pageQuery = { ...query, ...keysetAfter(paths, values, order.direction) };
    }
    const projection = fields ? { projection: projectionOf([...fields, ...paths]) } : withoutOutbox;
    const sign = order.direction === 'ASC' ? 1 : -1;
    const sort = Object.fromEntries(paths.map((p) => [p, sign])) as Record<string, 1 | -1>;
    // A projected document: the resolvers read only the fields the selection asked for (selection.ts).
    const rows = (await this.assets.find(pageQuery, { ...projection, sort, limit: size + 1 }).toArray()) as AssetDocument[];
    const { edges, pageInfo } = toConnection(rows, size, 0, cursorOf);
    let total: Promise<number> | undefined;
    return { edges, pageInfo, count: () => (total ??= this.assets.countDocuments(query)) };
  }

  /** The asset createAsset made with this idempotency scope (AssetDocument.idempotency), if any. */
  findByIdempotencyScope(scope: string): Promise<AssetDocument | null> {
    return this.assets.findOne({ 'idempotency.scope': scope }, withoutOutbox);
  }

  async insert(doc: Omit<AssetDocument, 'tenantId'>): Promise<AssetDocument> {
    return this.assets.insertOne(doc);
  }

  /**
   * Optimistic concurrency: applies only when the stored version is the one the caller read.
   * The change and its event are one single-document write.
   */
  async updateIfVersion(id: string, version: number, set: Partial<AssetDocument>, event: OutboxEntry): Promise<AssetDocument | null> {
    // The driver types reject $push on an optional array field; the shape is checked by the tests.
    const update = { $set: set, $inc: { version: 1 }, $push: { outbox: event } } as unknown as UpdateFilter<AssetDocument>;
    return this.assets.findOneAndUpdate({ _id: id, version }, update, withoutOutbox);
  }

  async summary(): Promise<AssetSummaryCounts> {
    const [facets] = await this.assets
      .aggregate<{
        total: { n: number }[];
        byType: { _id: AssetType; count: number }[];
        byStatus: { _id: AssetStatus; count: number }[];
        length: { _id: null; m: number }[];
      }>([
        {
          $facet: {
            total: [{ $count: 'n' }],
            byType: [{ $group: { _id: '$type', count: { $sum: 1 } } }, { $sort: { _id: 1 } }],
            byStatus: [{ $group: { _id: '$status', count: { $sum: 1 } } }, { $sort: { _id: 1 } }],
            length: [
              { $match: { type: 'PIPELINE', beginStationM: { $ne: null }, endStationM: { $ne: null } } },
              { $group: { _id: null, m: { $sum: { $subtract: ['$endStationM', '$beginStationM'] } } } },
            ],
          },
        },
      ])
      .toArray();
    return {
      totalAssets: facets?.total[0]?.n ?? 0,
      byType: (facets?.byType ?? []).map((g) => ({ type: g._id, count: g.count })),
      byStatus: (facets?.byStatus ?? []).map((g) => ({ status: g._id, count: g.count })),
      totalPipelineLengthM: facets?.length[0]?.m ?? 0,
    };
  }
}
