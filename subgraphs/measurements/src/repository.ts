import { randomUUID } from 'node:crypto';
import type { Db, Filter } from 'mongodb';
import { z } from 'zod';
import { decodeCursor, encodeCursor, toConnection, type Connection } from '@linepack/lib/pagination';
import { TenantCollection } from '@linepack/lib/tenant-collection';
import { ensureOutboxIndex, outboxEntry, withoutOutbox } from '@linepack/lib/events/outbox';
import { inspectionRecordTypes, MEASUREMENT_RECORDED, type MeasurementDocument, type MeasurementType } from './documents';
import type { MeasurementItem } from './validation';

export const MEASUREMENTS_COLLECTION = 'measurements';

/** Every index starts with tenantId; the asset/time indexes serve the time-range pages newest first. */
export async function ensureMeasurementIndexes(db: Db): Promise<void> {
  const measurements = db.collection<MeasurementDocument>(MEASUREMENTS_COLLECTION);
  await ensureOutboxIndex(measurements);
  await measurements.createIndexes([
    { key: { tenantId: 1, idempotencyKey: 1 }, name: 'tenant_idempotency_key', unique: true },
    { key: { tenantId: 1, assetId: 1, observedAt: -1, _id: -1 }, name: 'tenant_asset_time' },
    { key: { tenantId: 1, assetId: 1, type: 1, observedAt: -1, _id: -1 }, name: 'tenant_asset_type_time' },
    { key: { tenantId: 1, type: 1, observedAt: -1 }, name: 'tenant_type_time' },
  ]);
}

const measurementCursor = z.tuple([z.string().datetime(), z.string()]);

export interface MeasurementQuery {
  assetId: string;
  type?: MeasurementType | null;
  from?: Date | null;
  to?: Date | null;
}

export interface RecordResult {
  insertedCount: number;
  duplicateCount: number;
  ids: string[];
}

export class MeasurementRepository {
  private readonly measurements: TenantCollection<MeasurementDocument>;

  constructor(db: Db, tenantId: string, deadline?: number) {
    this.measurements = new TenantCollection(db.collection<MeasurementDocument>(MEASUREMENTS_COLLECTION), tenantId, deadline);
  }

  findById(id: string): Promise<MeasurementDocument | null> {
    return this.measurements.findOne({ _id: id }, withoutOutbox);
  }

  private filterFor(query: MeasurementQuery): Filter<MeasurementDocument> {
    const filter: Filter<MeasurementDocument> = { assetId: query.assetId };
    if (query.type) filter.type = query.type;
    if (query.from || query.to) {
      filter.observedAt = { ...(query.from ? { $gte: query.from } : {}), ...(query.to ? { $lt: query.to } : {}) };
    }
    return filter;
  }

  /** Newest observation first; ties broken by id so pages never skip or repeat. */
  async list(query: MeasurementQuery, size: number, after: string | null | undefined): Promise<Connection<MeasurementDocument>> {
    const filter = this.filterFor(query);
    const cursor = decodeCursor(after, measurementCursor);
    const pageFilter: Filter<MeasurementDocument> = cursor
      ? {
          ...filter,
          $or: [{ observedAt: { $lt: new Date(cursor[0]) } }, { observedAt: new Date(cursor[0]), _id: { $lt: cursor[1] } }],
        }
      : filter;
    const [rows, totalCount] = await Promise.all([
      this.measurements.find(pageFilter, { ...withoutOutbox, sort: { observedAt: -1, _id: -1 }, limit: size + 1 }).toArray(),
      this.measurements.countDocuments(filter),
    ]);
    return toConnection(rows, size, totalCount, (m) => encodeCursor([m.observedAt.toISOString(), m._id]));
  }

  latest(assetId: string, type?: MeasurementType | null): Promise<MeasurementDocument | null> {
    return this.measurements.findOne(this.filterFor({ assetId, type }), { ...withoutOutbox, sort: { observedAt: -1, _id: -1 } });
  }

  count(): Promise<number> {
    return this.measurements.countDocuments();
  }

  async latestInspectionAt(): Promise<Date | null> {
    const latest = await this.measurements.findOne({ type: { $in: [...inspectionRecordTypes] } }, { sort: { observedAt: -1 }, projection: { observedAt: 1 } });
    return latest?.observedAt ?? null;
  }

  /**
   * Stores a validated batch. Each item is an upsert keyed by (tenant, idempotencyKey) that only
   * inserts: a retried batch, or one that failed half-way, stores each item exactly once.
   */
  async record(items: readonly MeasurementItem[]): Promise<RecordResult> {
    const recordedAt = new Date();
    const result = await this.measurements.bulkUpsert(
      items.map((item) => ({
        filter: { idempotencyKey: item.idempotencyKey },
        update: {
          $setOnInsert: {
            _id: randomUUID(),
            assetId: item.assetId,
            type: item.type,
            observedAt: item.observedAt,
            stationM: item.stationM ?? null,
            value: item.value ?? null,
            unit: item.unit ?? null,
            source: item.source,
            runId: item.runId ?? null,
            featureType: item.featureType ?? null,
            surface: item.surface ?? null,
            odometerM: item.odometerM ?? null,
            clockDeg: item.clockDeg ?? null,
            depthPctWt: item.depthPctWt ?? null,
            lengthMm: item.lengthMm ?? null,
            widthMm: item.widthMm ?? null,
            recordedAt,
            // Only a stored (new) measurement gets an event: a replayed item is not recorded twice.
            outbox: [outboxEntry(MEASUREMENT_RECORDED)],
          },
        },
      })),
    );
    // Ids of new items come back from the write; only the duplicates need a lookup.
    const ids: (string | undefined)[] = items.map((_, index) => result.upsertedIds[index] as string | undefined);
    const duplicateKeys = items.filter((_, index) => ids[index] === undefined).map((i) => i.idempotencyKey);
    if (duplicateKeys.length > 0) {
      const stored = await this.measurements.find({ idempotencyKey: { $in: duplicateKeys } }, { projection: { _id: 1, idempotencyKey: 1 } }).toArray();
      const idByKey = new Map(stored.map((m) => [m.idempotencyKey, m._id]));
      items.forEach((item, index) => (ids[index] ??= idByKey.get(item.idempotencyKey)));
    }
    return {
      insertedCount: result.upsertedCount,
      duplicateCount: items.length - result.upsertedCount,
      ids: ids.map((id) => id ?? ''),
    };
  }
}
