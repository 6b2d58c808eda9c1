import type { Collection, Db } from 'mongodb';
import { ANALYTICS_COLLECTIONS, type FieldResultDocument, type RepairDocument } from '../documents';
import type { RunAnomalyProjection } from '../ili-runs';

/** What the dig crews recorded against one anomaly that changes its assessment. */
export interface AnomalyDigRecords {
  /** The latest examination (by examinedAt, then recordedAt): it supersedes the tool's call. */
  fieldResult: FieldResultDocument | null;
  /** The latest repair covering the anomaly: it closes it. */
  repair: RepairDocument | null;
  /**
   * When the repair was recorded against an earlier run's call of the same feature (see carriedRepairs): that call's
   * measurement id; null when recorded against this anomaly.
   */
  repairCarriedFrom: string | null;
}

export const NO_DIG_RECORDS: AnomalyDigRecords = { fieldResult: null, repair: null, repairCarriedFrom: null };

/** Repairs that leave the defect in the pipe under a reinforcing sleeve: the next runs report it again, still repaired. */
const SLEEVES = new Set(['TYPE_A_SLEEVE', 'TYPE_B_SLEEVE', 'COMPOSITE_SLEEVE']);
/** More runs of one segment than anyone keeps; bounds the walk along a feature's calls. */
const MAX_RUNS = 50;

/**
 * Reads the field results and repairs of a batch's assets for the Analyzer (not tenant-scoped by a request: the
 * event consumer serves every tenant, so the tenant is an argument). Digs are few next to anomalies (tens per
 * segment), so one read per collection per batch, served by tenant_asset, costs little.
 */
export class DigRecordReader {
  private readonly fieldResults: Collection<FieldResultDocument>;
  private readonly repairs: Collection<RepairDocument>;

  private readonly anomalies: Collection<RunAnomalyProjection>;

  constructor(db: Db) {
    this.fieldResults = db.collection(ANALYTICS_COLLECTIONS.fieldResults);
    this.repairs = db.collection(ANALYTICS_COLLECTIONS.repairs);
    this.anomalies = db.collection(ANALYTICS_COLLECTIONS.anomalies);
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
    if (repairs.length > 0) await this.carryRepairs(tenantId, byAnomaly);
    return byAnomaly;
  }

  /**
   * A repair recorded against one run's call of a feature also covers the later runs' calls of the same feature (each
   * older call's supersededBy, written by the run comparison) that it still covers: every later call when the defect
   * stays in the pipe under a sleeve, and otherwise the calls of runs made before the repair (they reported the defect
   * the crew then repaired; a run after a recoat, grind or cut-out reports what is left or new pipe, assessed afresh).
   * A call's own repair wins. Walks forward from the repaired calls only, so it costs nothing where nothing is repaired.
   */
  private async carryRepairs(tenantId: string, byAnomaly: Map<string, AnomalyDigRecords>): Promise<void> {
    let frontier = new Map<string, { repair: RepairDocument; from: string }>();
    for (const [id, records] of byAnomaly) if (records.repair) frontier.set(id, { repair: records.repair, from: id });
    for (let step = 0; step < MAX_RUNS && frontier.size > 0; step++) {
      const older = await this.anomalies.find({ _id: { $in: [...frontier.keys()] }, tenantId }, { projection: { _id: 1, supersededBy: 1 } }).toArray();
      const laterIds = older.map((o) => o.supersededBy?.measurementId).filter((id): id is string => id != null);
      if (laterIds.length === 0) return;
      const later = new Map(
        (await this.anomalies.find({ _id: { $in: laterIds }, tenantId }, { projection: { _id: 1, observedAt: 1 } }).toArray()).map((l) => [l._id, l]),
      );
      const next = new Map<string, { repair: RepairDocument; from: string }>();
      for (const o of older) {
        const call = o.supersededBy ? later.get(o.supersededBy.measurementId) : undefined;
        const carried = frontier.get(o._id)!;
        if (!call || byAnomaly.get(call._id)?.repair) continue;
        if (!SLEEVES.has(carried.repair.repairType) && carried.repair.repairedAt < call.observedAt) continue;
        const records = byAnomaly.get(call._id) ?? byAnomaly.set(call._id, { ...NO_DIG_RECORDS }).get(call._id)!;
        records.repair = carried.repair;
        records.repairCarriedFrom = carried.from;
        next.set(call._id, carried);
      }
      frontier = next;
    }
  }
}
