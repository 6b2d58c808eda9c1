import type { Db, Filter, UpdateFilter } from 'mongodb';
import { z } from 'zod';
import { ensureOutboxIndex, withoutOutbox, type OutboxEntry } from '@linepack/lib/events/outbox';
import { decodeCursor, encodeCursor, toConnection } from '@linepack/lib/pagination';
import { TenantCollection } from '@linepack/lib/tenant-collection';
import type { AssetDocument, AssetPage, AssetStatus, AssetType } from './documents';
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
  ]);
}

export interface AssetListFilter {
  type?: AssetType | null;
  status?: AssetStatus | null;
  parentId?: string | null;
  inHca?: boolean | null;
  nameContains?: string | null;
}

const assetCursor = z.tuple([z.string(), z.string()]);

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
   * Ordered by (lower-cased name, id): stable across pages even when names repeat. `fields` (with `_id` and
   * `nameLower`, the cursor) is what the caller's selection reads: only those travel; null reads whole assets.
   */
  async list(filter: AssetListFilter, size: number, after: string | null | undefined, fields: readonly AssetField[] | null = null): Promise<AssetPage> {
    const query: Filter<AssetDocument> = {};
    if (filter.type) query.type = filter.type;
    if (filter.status) query.status = filter.status;
    if (filter.parentId) query.parentId = filter.parentId;
    if (filter.inHca != null) query.inHca = filter.inHca;
    if (filter.nameContains) query.nameLower = { $regex: escapeRegex(filter.nameContains.toLowerCase()) };
    const cursor = decodeCursor(after, assetCursor);
    const pageQuery: Filter<AssetDocument> = cursor
      ? { ...query, $or: [{ nameLower: { $gt: cursor[0] } }, { nameLower: cursor[0], _id: { $gt: cursor[1] } }] }
      : query;
    const projection = fields ? { projection: Object.fromEntries([...fields, '_id', 'nameLower'].map((field) => [field, 1])) } : withoutOutbox;
    // A projected document: the resolvers read only the fields the selection asked for (selection.ts).
    const rows = (await this.assets.find(pageQuery, { ...projection, sort: { nameLower: 1, _id: 1 }, limit: size + 1 }).toArray()) as AssetDocument[];
    const { edges, pageInfo } = toConnection(rows, size, 0, (a) => encodeCursor([a.nameLower, a._id]));
    let total: Promise<number> | undefined;
    return { edges, pageInfo, count: () => (total ??= this.assets.countDocuments(query)) };
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
