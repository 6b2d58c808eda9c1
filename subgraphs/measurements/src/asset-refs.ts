import type { Db } from 'mongodb';
import { duplicateKeyIndexes } from '@linepack/lib/mongo';
import type { DomainEvent } from '@linepack/lib/events/consumer';
import { ASSET_UPSERTED, assetUpsertedData } from '@linepack/subgraph-assets/events';

/**
 * Which assets exist in which tenant, as the assets subgraph announces them (`asset.upserted`): a measurement
 * may only name an asset of its caller's tenant. The measurements subgraph keeps this projection of its own
 * rather than reading the assets database (each subgraph owns one database).
 */
export const ASSET_REFS_COLLECTION = 'asset_refs';

export interface AssetRef {
  _id: string;
  tenantId: string;
  /** The pipe's nominal dimensions (latest version): an ILI listing in mm or inches of depth is converted with them. */
  outsideDiameterMm?: number | null;
  wallThicknessMm?: number | null;
  /** The asset's version the dimensions are of (absent on refs recorded before it was kept). */
  version?: number;
}

/** How long a batch waits for an asset created a moment ago to reach the projection (events take ~0.2 s). */
const PROJECTION_WAIT_MS = 3_000;
const POLL_MS = 100;
/** More ids missing than this are not waited for (a client creates a handful of assets, then records). */
const MAX_AWAITED_IDS = 20;

export async function ensureAssetRefIndexes(db: Db): Promise<void> {
  await db.collection<AssetRef>(ASSET_REFS_COLLECTION).createIndex({ tenantId: 1, _id: 1 }, { name: 'tenant_asset' });
}

/**
 * Idempotent: an asset is recorded once, with the dimensions of its latest version. Only a newer version replaces them:
 * replicas split the assets stream between them (and take over each other's pending entries), so an older version of
 * an asset can be applied after a newer one.
 */
export function assetRefHandler(db: Db) {
  const refs = db.collection<AssetRef>(ASSET_REFS_COLLECTION);
  return async (events: readonly DomainEvent[]): Promise<void> => {
    const upserts = events
      .filter((event) => event.type === ASSET_UPSERTED)
      .map((event) => {
        const { id, outsideDiameterMm, wallThicknessMm, version } = assetUpsertedData.parse(event.data);
        return {
          updateOne: {
            filter: { _id: id, tenantId: event.tenantId, $or: [{ version: { $lt: version } }, { version: { $exists: false } }] },
            update: { $set: { outsideDiameterMm, wallThicknessMm, version } },
            upsert: true,
          },
        };
      });
    if (upserts.length === 0) return;
    try {
      await refs.bulkWrite(upserts, { ordered: false });
    } catch (err) {
      // The ref is stored with this version or a newer one: the upsert's insert collided on _id.
      if (!duplicateKeyIndexes(err)) throw err;
    }
  };
}

export class AssetRefs {
  constructor(private readonly db: Db) {}

  /** The asset's pipe dimensions as last announced; null when the asset is not (yet) known in this tenant. */
  async dimensions(tenantId: string, assetId: string): Promise<{ outsideDiameterMm: number | null; wallThicknessMm: number | null } | null> {
    const ref = await this.db.collection<AssetRef>(ASSET_REFS_COLLECTION).findOne({ _id: assetId, tenantId });
    return ref ? { outsideDiameterMm: ref.outsideDiameterMm ?? null, wallThicknessMm: ref.wallThicknessMm ?? null } : null;
  }

  /**
   * The ids among `assetIds` that name no asset of `tenantId`, after giving the projection time to catch up —
   * never past the request's own deadline. The wait polls only while a few ids are missing: a batch naming
   * many unknown ids is a mistake, not a race with a create, and is answered at once.
   */
  async unknown(tenantId: string, assetIds: readonly string[], requestDeadline?: number): Promise<Set<string>> {
    const refs = this.db.collection<AssetRef>(ASSET_REFS_COLLECTION);
    const missing = new Set(assetIds);
    const deadline = Math.min(Date.now() + PROJECTION_WAIT_MS, (requestDeadline ?? Infinity) - 1_000);
    for (;;) {
      const found = await refs.find({ tenantId, _id: { $in: [...missing] } }, { projection: { _id: 1 } }).toArray();
      for (const { _id } of found) missing.delete(_id);
      if (missing.size === 0 || missing.size > MAX_AWAITED_IDS || Date.now() >= deadline) return missing;
      await new Promise((r) => setTimeout(r, POLL_MS));
    }
  }
}
