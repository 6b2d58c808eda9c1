import type {
  AnyBulkWriteOperation,
  BulkWriteResult,
  Collection,
  CountDocumentsOptions,
  DeleteResult,
  Document,
  Filter,
  FindOptions,
  FindOneAndUpdateOptions,
  OptionalUnlessRequiredId,
  UpdateFilter,
  UpdateResult,
  WithId,
} from 'mongodb';

/** Every stored document carries the tenant it belongs to. */
export interface TenantDocument extends Document {
  tenantId: string;
}

/**
 * A collection seen through one tenant. Repositories get one per request, built from the
 * verified identity, so no query can forget the tenant filter and no client input can pick
 * another tenant: every filter, pipeline, insert and upsert is pinned to `tenantId`.
 */
export class TenantCollection<T extends TenantDocument> {
  /**
   * @param deadline when the gateway stops waiting for this request (epoch ms, from the identity token): reads
   * get maxTimeMS so the database stops too. Writes are never cut half-way.
   */
  constructor(
    readonly collection: Collection<T>,
    readonly tenantId: string,
    readonly deadline?: number,
  ) {}

  private scoped(filter: Filter<T> = {}): Filter<T> {
    // tenantId first in key order (a matcher that tests fields in order, as the embedded server's does, then drops other
    // tenants' documents before anything costlier) and last in value (nothing in `filter` can replace it).
    const scoped: Record<string, unknown> = { tenantId: this.tenantId, ...filter };
    scoped['tenantId'] = this.tenantId;
    return scoped as Filter<T>;
  }

  private bounded<O extends { maxTimeMS?: number }>(options: O): O {
    return this.deadline ? { ...options, maxTimeMS: Math.max(1, this.deadline - Date.now()) } : options;
  }

  findOne(filter: Filter<T>, options: FindOptions = {}): Promise<WithId<T> | null> {
    return this.collection.findOne(this.scoped(filter), this.bounded(options));
  }

  find(filter: Filter<T>, options: FindOptions = {}) {
    return this.collection.find(this.scoped(filter), this.bounded(options));
  }

  countDocuments(filter: Filter<T> = {}, options: CountDocumentsOptions = {}): Promise<number> {
    return this.collection.countDocuments(this.scoped(filter), this.bounded(options));
  }

  aggregate<R extends Document>(pipeline: Document[]) {
    return this.collection.aggregate<R>([{ $match: { tenantId: this.tenantId } }, ...pipeline], this.bounded({}));
  }

  async insertOne(doc: Omit<T, 'tenantId'>): Promise<T> {
    const full = { ...doc, tenantId: this.tenantId } as T;
    await this.collection.insertOne(full as OptionalUnlessRequiredId<T>);
    return full;
  }

  findOneAndUpdate(filter: Filter<T>, update: UpdateFilter<T>, options: FindOneAndUpdateOptions = {}) {
    return this.collection.findOneAndUpdate(this.scoped(filter), update, { returnDocument: 'after', ...options });
  }

  updateOne(filter: Filter<T>, update: UpdateFilter<T>): Promise<UpdateResult<T>> {
    return this.collection.updateOne(this.scoped(filter), update);
  }

  deleteMany(filter: Filter<T>): Promise<DeleteResult> {
    return this.collection.deleteMany(this.scoped(filter));
  }

  /** Upserts and updates only; each filter is pinned to the tenant and each insert stamped with it. */
  bulkUpsert(operations: { filter: Filter<T>; update: UpdateFilter<T> }[]): Promise<BulkWriteResult> {
    const ops: AnyBulkWriteOperation<T>[] = operations.map(({ filter, update }) => ({
      updateOne: { filter: this.scoped(filter), update, upsert: true },
    }));
    return this.collection.bulkWrite(ops, { ordered: false });
  }
}
