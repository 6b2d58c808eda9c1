import { type Db, type Document, type Filter } from 'mongodb';
import { v7 as uuidv7 } from 'uuid';
import { z } from 'zod';
import { decodeCursor, encodeCursor, toConnection } from '@linepack/lib/pagination';
import { projectionOf } from '@linepack/lib/selection';
import { TenantCollection } from '@linepack/lib/tenant-collection';
import { heavyWork } from '@linepack/lib/fair-share';
import { insertKeepingDuplicates } from '@linepack/lib/mongo';
import { ensureOutboxIndex, outboxEntry, withoutOutbox } from '@linepack/lib/events/outbox';
import { inspectionRecordTypes, MEASUREMENT_RECORDED, type MeasurementDocument, type MeasurementPage, type MeasurementType } from './documents';
import type { MeasurementItem } from './validation';
import type { MeasurementField } from './selection';

export const MEASUREMENTS_COLLECTION = 'measurements';

/**
 * Documents per insertMany of a batch, each insert one piece of heavy work (lib/fair-share.ts). The embedded server
 * inserts holding the collection's lock, so a slice is how long another tenant's read of the same collection can wait
 * behind it: 100 documents, a few milliseconds (250 were tens: B's readings p99 under A's import 5.3× → 4.7×,
 * bench:fairness). Sent together, the slices of a 10,000-item batch took every core of the database for a second
 * (another tenant's p50 went from 21 ms to 560 ms).
 */
const INSERT_SLICE = 100;
/** Duplicate lookups in flight at once: enough to keep the server busy, few enough not to queue on the pool. */
const LOOKUP_CONCURRENCY = 50;

/**
 * A measurement as stored: a new id, the tenant, the item's fields (absent ones null) and its recorded event in the
 * outbox. The id is a UUIDv7 (time-ordered, as MongoDB's ObjectIds are): readings arrive roughly in time order, so a
 * batch's documents sit together in the id-ordered storage of both servers (the _id index; the embedded server's H2
 * file is keyed by _id), and reading an asset's readings by time touches few pages — random v4 ids scattered them.
 */
export function measurementDocument(item: MeasurementItem, tenantId: string, recordedAt: Date): MeasurementDocument {
  return {
    _id: uuidv7(),
    tenantId,
    assetId: item.assetId,
    type: item.type,
    observedAt: item.observedAt,
    stationM: item.stationM ?? null,
    value: item.value ?? null,
    unit: item.unit ?? null,
    source: item.source,
    idempotencyKey: item.idempotencyKey,
    runId: item.runId ?? null,
    featureType: item.featureType ?? null,
    surface: item.surface ?? null,
    odometerM: item.odometerM ?? null,
    clockDeg: item.clockDeg ?? null,
    depthPctWt: item.depthPctWt ?? null,
    lengthMm: item.lengthMm ?? null,
    widthMm: item.widthMm ?? null,
    dentDepthPctOd: item.dentDepthPctOd ?? null,
    dentHasMetalLoss: item.dentHasMetalLoss ?? null,
    dentHasCracking: item.dentHasCracking ?? null,
    dentHasStressRiser: item.dentHasStressRiser ?? null,
    interactsWithGirthWeld: item.interactsWithGirthWeld ?? null,
    interactsWithSeamWeld: item.interactsWithSeamWeld ?? null,
    atPipelineCrossing: item.atPipelineCrossing ?? null,
    metalLossKind: item.metalLossKind ?? null,
    recordedAt,
    outbox: [outboxEntry(MEASUREMENT_RECORDED)],
  };
}

/** Every index starts with tenantId; the asset/time indexes serve the time-range pages newest first. */
export async function ensureMeasurementIndexes(db: Db): Promise<void> {
  const measurements = db.collection<MeasurementDocument>(MEASUREMENTS_COLLECTION);
  await ensureOutboxIndex(measurements);
  await measurements.createIndexes([
    { key: { tenantId: 1, idempotencyKey: 1 }, name: 'tenant_idempotency_key', unique: true },
    { key: { tenantId: 1, assetId: 1, observedAt: -1, _id: -1 }, name: 'tenant_asset_time' },
    { key: { tenantId: 1, assetId: 1, type: 1, observedAt: -1, _id: -1 }, name: 'tenant_asset_type_time' },
    { key: { tenantId: 1, type: 1, observedAt: -1 }, name: 'tenant_type_time' },
    // One ILI run's features (the console's along-the-line plot reads a run at a time, not every run of the asset). The
    // type is in it so that the plot's filter (asset, ILI_ANOMALY, run) is an equality prefix: its pages are one
    // ordered range and its totalCount, asked with every page, is counted from the index (without the type each count
    // read all 20,000 features of a run, on both servers).
    { key: { tenantId: 1, assetId: 1, type: 1, runId: 1, observedAt: -1, _id: -1 }, name: 'tenant_asset_type_run_time' },
  ]);
  // Superseded by tenant_asset_type_run_time (a database from before has it; it only costs writes). Dropped only when
  // present: a drop of a missing index is an error the embedded server logs with a stack on every fresh start.
  // Another replica starting at the same moment may drop it first.
  if (await measurements.indexExists('tenant_asset_run_time')) {
    await measurements.dropIndex('tenant_asset_run_time').catch((err: unknown) => {
      if ((err as { codeName?: string }).codeName !== 'IndexNotFound') throw err;
    });
  }
}

/**
 * [observedAt, id, tie]: the last row's sort key, and 1 when the row after it (the page's look-ahead row) was observed at
 * the same instant — the next page then starts inside a tie (an ILI run's features all carry the run's date). Cursors
 * from before the flag have two elements and read as no tie.
 */
const measurementCursor = z.union([z.tuple([z.string().datetime(), z.string()]), z.tuple([z.string().datetime(), z.string(), z.literal(1)])]);

export interface MeasurementQuery {
  assetId: string;
  type?: MeasurementType | null;
  from?: Date | null;
  to?: Date | null;
  /** Only the features of this ILI run (Measurement.runId). */
  runId?: string | null;
}

export interface RecordResult {
  insertedCount: number;
  duplicateCount: number;
  ids: string[];
}

/**
 * The stages, after the tenant's own $match (TenantCollection.aggregate), that find the latest measurement of each
 * asset: one group per asset, holding the measurement's id and `fields`.
 *
 * The shape is chosen for both servers. A real MongoDB serves the $match and the $sort from tenant_asset_time
 * (tenant_asset_type_time with a type: the tenant is an equality, the assets a set of points), and a $sort followed
 * by a $group on the sort's first key with only $first accumulators is what it answers with a DISTINCT_SCAN — one
 * index seek per asset, however many measurements each has. The embedded server uses no index in an aggregation:
 * it reads the collection once, keeps the tenant's measurements of these assets and sorts only those (a findOne
 * per asset read the whole collection once per asset).
 */
export function latestMeasurementStages(assetIds: readonly string[], type: MeasurementType | null, fields: readonly (keyof MeasurementDocument)[]): Document[] {
  const group: Document = { _id: '$assetId', measurementId: { $first: '$_id' } };
  for (const field of fields) {
    if (field !== '_id' && field !== 'assetId' && field !== 'tenantId' && field !== 'outbox') group[field] = { $first: `$${field}` };
  }
  return [
    // The type first: the embedded server tests a $match's fields in order, and an equality costs it far less than
    // a set of 50 ids (a real MongoDB plans the whole $match as index bounds; the order means nothing to it).
    { $match: { ...(type ? { type } : {}), assetId: { $in: [...new Set(assetIds)] } } },
    { $sort: { assetId: 1, observedAt: -1, _id: -1 } },
    { $group: group },
  ];
}

export class MeasurementRepository {
  private readonly measurements: TenantCollection<MeasurementDocument>;

  constructor(db: Db, tenantId: string, deadline?: number) {
    this.measurements = new TenantCollection(db.collection<MeasurementDocument>(MEASUREMENTS_COLLECTION), tenantId, deadline);
  }

  findById(id: string): Promise<MeasurementDocument | null> {
    return this.measurements.findOne({ _id: id }, withoutOutbox);
  }

  /** In the order asked, null where this tenant has no such measurement: one query for all. */
  async findByIds(ids: readonly string[]): Promise<(MeasurementDocument | null)[]> {
    const found = await this.measurements.find({ _id: { $in: [...new Set(ids)] } }, withoutOutbox).toArray();
    const byId = new Map(found.map((m) => [m._id, m]));
    return ids.map((id) => byId.get(id) ?? null);
  }

  private filterFor(query: MeasurementQuery): Filter<MeasurementDocument> {
    const filter: Filter<MeasurementDocument> = { assetId: query.assetId };
    if (query.type) filter.type = query.type;
    if (query.runId != null) filter.runId = query.runId;
    if (query.from || query.to) {
      filter.observedAt = { ...(query.from ? { $gte: query.from } : {}), ...(query.to ? { $lt: query.to } : {}) };
    }
    return filter;
  }

  /**
   * Newest observation first; ties broken by id so pages never skip or repeat. Each query is an index range read in
   * order and stopped at the page's end (tenant_asset_time, …_type_time or …_run_time), so a page costs the same
   * wherever it is, also inside a tie: the rest of the cursor's instant (observedAt equal, _id below the cursor's) is
   * read first, and only what it leaves of the page from the earlier instants. (One filter with an $or of both would
   * be bounded by observedAt alone: every page of a 20,000-feature run read from the run's first feature on.)
   * `fields` (with `_id` and `observedAt`, the cursor) is what the caller's selection reads: only those travel; null
   * reads whole measurements.
   */
  async list(
    query: MeasurementQuery,
    size: number,
    after: string | null | undefined,
    fields: readonly MeasurementField[] | null = null,
  ): Promise<MeasurementPage> {
    const filter = this.filterFor(query);
    const cursor = decodeCursor(after, measurementCursor);
    const sort = { observedAt: -1, _id: -1 } as const;
    const projection = fields ? { projection: projectionOf([...fields, '_id', 'observedAt']) } : withoutOutbox;
    // A projected document: the resolvers read only the fields the selection asked for (selection.ts).
    const read = (page: Filter<MeasurementDocument>, limit: number) => this.measurements.find(page, { ...projection, sort, limit }).toArray();
    let rows: MeasurementDocument[];
    if (!cursor) rows = await read(filter, size + 1);
    else {
      const [at, id, tie] = cursor;
      const instant = new Date(at);
      rows = tie ? await read({ $and: [filter, { observedAt: instant, _id: { $lt: id } }] }, size + 1) : [];
      if (rows.length <= size) {
        // Without the flag the cursor's instant may still hold rows below its id (recorded since, or a cursor from
        // before the flag): the $or keeps them; the range on observedAt starts the index scan at the cursor.
        const earlier: Filter<MeasurementDocument> = tie
          ? { observedAt: { $lt: instant } }
          : { observedAt: { $lte: instant }, $or: [{ observedAt: { $lt: instant } }, { observedAt: instant, _id: { $lt: id } }] };
        rows.push(...(await read({ $and: [filter, earlier] }, size + 1 - rows.length)));
      }
    }
    const { edges, pageInfo } = toConnection(rows, size, 0, (m, i) =>
      encodeCursor(rows[i + 1]?.observedAt.getTime() === m.observedAt.getTime() ? [m.observedAt.toISOString(), m._id, 1] : [m.observedAt.toISOString(), m._id]),
    );
    let total: Promise<number> | undefined;
    return { edges, pageInfo, count: () => (total ??= this.measurements.countDocuments(filter)) };
  }

  /**
   * The latest measurement (newest observedAt, ties by the highest id) of each of `assetIds` that has one,
   * optionally of one type, holding only `fields` (and its asset and tenant): one aggregation for all the assets
   * (latestMeasurementStages).
   */
  async latestOf(
    assetIds: readonly string[],
    type: MeasurementType | null,
    fields: readonly (keyof MeasurementDocument)[],
  ): Promise<Map<string, MeasurementDocument>> {
    const rows = await this.measurements
      .aggregate<{ _id: string; measurementId: string } & Partial<MeasurementDocument>>(latestMeasurementStages(assetIds, type, fields))
      .toArray();
    const tenantId = this.measurements.tenantId;
    // A projected document: the resolvers read only the fields the selection asked for (selection.ts).
    return new Map(
      rows.map(({ _id: assetId, measurementId, ...rest }) => [assetId, { ...rest, _id: measurementId, assetId, tenantId } as MeasurementDocument]),
    );
  }

  count(): Promise<number> {
    return this.measurements.countDocuments();
  }

  async latestInspectionAt(): Promise<Date | null> {
    const latest = await this.measurements.findOne({ type: { $in: [...inspectionRecordTypes] } }, { sort: { observedAt: -1 }, projection: { observedAt: 1 } });
    return latest?.observedAt ?? null;
  }

  /**
   * Stores a validated batch (its idempotency keys are distinct), each item exactly once per tenant: a retried
   * batch, or one that failed half-way, stores nothing twice, and a key already stored answers with its stored id.
   *
   * Items are inserted, not upserted: the unique index tenant_idempotency_key refuses a key already stored
   * (E11000) and only those items are then looked up. An insert is less server work than an upsert (no query, no
   * update operators to apply), and the common batch has no duplicates. Every document carries its
   * measurement.recorded event in its outbox, written by the same insert (lib/events/outbox.ts), so only a stored
   * item gets an event.
   */
  async record(items: readonly MeasurementItem[]): Promise<RecordResult> {
    const recordedAt = new Date();
    const docs = items.map((item) => measurementDocument(item, this.measurements.tenantId, recordedAt));
    const duplicates = await this.insertNew(docs);
    const ids = docs.map((doc) => doc._id);
    if (duplicates.length > 0) {
      const stored = await this.idsOfKeys(duplicates.map((index) => docs[index]!.idempotencyKey));
      for (const index of duplicates) {
        const id = stored.get(docs[index]!.idempotencyKey);
        // Refused as a duplicate yet not found: not a state a measurement (never deleted) can be in.
        if (id === undefined) throw new Error(`measurement ${docs[index]!.idempotencyKey} was refused as a duplicate but is not stored`);
        ids[index] = id;
      }
    }
    return { insertedCount: items.length - duplicates.length, duplicateCount: duplicates.length, ids };
  }

  /**
   * Inserts `docs` (all of this tenant) one slice at a time, each in its tenant's turn for the process's heavy-work
   * slots, so another tenant's slices (and its cheap requests) get the database between ours; returns the indexes of the documents refused because their key is already stored.
   * Any other failure — a write error of another kind, or a write concern not met — fails the call.
   */
  private insertNew(docs: readonly MeasurementDocument[]): Promise<number[]> {
    const { collection, tenantId } = this.measurements;
    // Stamped with the tenant above, as TenantCollection.insertOne stamps one document (it has no insertMany).
    return insertKeepingDuplicates(collection, docs, { size: INSERT_SLICE, each: (insert) => heavyWork.run(tenantId, insert) });
  }

  /**
   * The stored ids of these idempotency keys, one exact-match query per key: served by the unique index
   * tenant_idempotency_key on every server. (The embedded server uses a compound unique index only for an exact
   * match on all its fields: one `$in` query would compare every document of the collection with every key — over
   * 30 s for a retried 10,000-item batch in a collection of 120,000 measurements.)
   */
  private async idsOfKeys(keys: readonly string[]): Promise<Map<string, string>> {
    const found = new Map<string, string>();
    const { collection, tenantId } = this.measurements;
    for (let start = 0; start < keys.length; start += LOOKUP_CONCURRENCY) {
      await heavyWork.run(tenantId, () =>
        Promise.all(
          keys.slice(start, start + LOOKUP_CONCURRENCY).map(async (idempotencyKey) => {
            // On the collection itself, as insertNew writes: these lookups are heavy work, shared out by its slots, so
            // they take no read slots (lib/fair-share.ts databaseReads) besides.
            const stored = await collection.findOne({ tenantId, idempotencyKey }, { projection: { _id: 1 } });
            if (stored) found.set(idempotencyKey, stored._id);
          }),
        ),
      );
    }
    return found;
  }
}
