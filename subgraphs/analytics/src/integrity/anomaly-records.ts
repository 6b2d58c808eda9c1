import type { Collection, Db } from 'mongodb';
import { ANALYTICS_COLLECTIONS, type FieldResultDocument, type RepairDocument } from '../documents';

/** What the dig crews recorded against one anomaly that changes its assessment. */
export interface AnomalyDigRecords {
  /** The latest examination (by examinedAt, then recordedAt): it supersedes the tool's call. */
  fieldResult: FieldResultDocument | null;
  /** The latest repair covering the anomaly: it closes it. */
  repair: RepairDocument | null;
}

export const NO_DIG_RECORDS: AnomalyDigRecords = { fieldResult: null, repair: null };

/**
 * Reads the field results and repairs of a batch's assets for the Analyzer (not tenant-scoped by a request: the
 * event consumer serves every tenant, so the tenant is an argument). Digs are few next to anomalies (tens per
 * segment), so one read per collection per batch, served by tenant_asset, costs little.
 */
export class DigRecordReader {
  private readonly fieldResults: Collection<FieldResultDocument>;
  private readonly repairs: Collection<RepairDocument>;

  constructor(db: Db) {
    this.fieldResults = db.collection(ANALYTICS_COLLECTIONS.fieldResults);
    this.repairs = db.collection(ANALYTICS_COLLECTIONS.repairs);
  }

  async ofAssets(tenantId: string, assetIds: readonly string[]): Promise<Map<string, AnomalyDigRecords>> {
    const byAnomaly = new Map<string, AnomalyDigRecords>();
    if (assetIds.length === 0) return byAnomaly;
    const filter = { tenantId, assetId: { $in: [...assetIds] } };
    // Oldest first, so the latest record of an anomaly is the one left in the map.
    const [fieldResults, repairs] = await Promise.all([
      this.fieldResults.find(filter, { sort: { examinedAt: 1, recordedAt: 1 } }).toArray(),
      this.repairs.find(filter, { sort: { repairedAt: 1, recordedAt: 1 } }).toArray(),
    ]);
    const entry = (id: string) => byAnomaly.get(id) ?? byAnomaly.set(id, { ...NO_DIG_RECORDS }).get(id)!;
    for (const result of fieldResults) entry(result.measurementId).fieldResult = result;
    for (const repair of repairs) for (const id of repair.measurementIds) entry(id).repair = repair;
    return byAnomaly;
  }
}
