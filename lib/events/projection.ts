import type { Collection, Document, Filter } from 'mongodb';
import { isDuplicateKeyError } from '../mongo';

/**
 * Writes a projected copy of another subgraph's entity only when it is newer than what is stored,
 * so replays, duplicates and out-of-order delivery never move a projection backwards. Single-document
 * and transaction-free (the embedded server has no transactions).
 * Returns true when the stored copy changed.
 */
export async function upsertIfNewer<D extends Document & { _id: string; tenantId: string; version: number }>(
  collection: Collection<D>,
  doc: D,
): Promise<boolean> {
  const filter = { _id: doc._id, tenantId: doc.tenantId, version: { $lt: doc.version } } as unknown as Filter<D>;
  try {
    const { _id: _ignored, ...fields } = doc;
    const res = await collection.updateOne(filter, { $set: fields as Partial<D> }, { upsert: true });
    return res.modifiedCount + res.upsertedCount > 0;
  } catch (err) {
    // The document exists with this version or a newer one: the upsert's insert collided on _id.
    if (isDuplicateKeyError(err)) return false;
    throw err;
  }
}
