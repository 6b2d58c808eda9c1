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
import { databaseReads } from './fair-share';

/** Every stored document carries the tenant it belongs to. */
export interface TenantDocument extends Document {
  tenantId: string;
}

/**
 * A collection seen through one tenant. Repositories get one per request, built from the
 * verified identity, so no query can forget the tenant filter and no client input can pick
 * another tenant: every filter, pipeline, insert and upsert is pinned to `tenantId`.
 *
 * Every read takes one of its tenant's read slots (lib/fair-share.ts databaseReads) for as long as the driver works on
 * it, so a request that fans out into hundreds of reads sends them a few at a time and another tenant's read never
 * queues behind them; a read whose request's deadline passed while it waited is not sent.
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

  /** Runs one read in a read slot of the tenant; its maxTimeMS is what is left of the deadline when it starts. */
  private read<R>(work: () => Promise<R>): Promise<R> {
    return databaseReads.run(this.tenantId, work, { deadline: this.deadline });
  }

  findOne(filter: Filter<T>, options: FindOptions = {}): Promise<WithId<T> | null> {
    return this.read(() => this.collection.findOne(this.scoped(filter), this.bounded(options)));
  }

  /** The matching documents, read whole (`toArray`) in one read slot. */
  find(filter: Filter<T>, options: FindOptions = {}): { toArray(): Promise<WithId<T>[]> } {
    return { toArray: () => this.read(() => this.collection.find(this.scoped(filter), this.bounded(options)).toArray()) };
  }

  countDocuments(filter: Filter<T> = {}, options: CountDocumentsOptions = {}): Promise<number> {
    return this.read(() => this.collection.countDocuments(this.scoped(filter), this.bounded(options)));
  }

  /** The pipeline's results, read whole (`toArray`) in one read slot. */
  aggregate<R extends Document>(pipeline: Document[]): { toArray(): Promise<R[]> } {
    return { toArray: () => this.read(() => this.collection.aggregate<R>([{ $match: { tenantId: this.tenantId } }, ...pipeline], this.bounded({})).toArray()) };
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
