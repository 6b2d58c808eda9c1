import type { Collection, Db } from 'mongodb';
import { duplicateKeyIndexes } from '@linepack/lib/mongo';
import {
  COMPLIANCE_COLLECTIONS,
  COMPLIANCE_SETTINGS_COLLECTION,
  type AssetProjection,
  type ComplianceSettingsDocument,
  type ComplianceState,
  type EvidenceProjection,
  type StatusRow,
} from './documents';
import { DEFAULT_TIME_ZONE } from './domain/calendar';
import { notInService, obligationsFor, obligationsOnceInService, worstState, type ApplicableObligation, type ObligationEvaluation } from './rules';

const MAX_HIERARCHY_DEPTH = 12;
const EVIDENCE_SHOWN = 20;

export interface EvaluatedObligation extends ObligationEvaluation {
  obligation: ApplicableObligation;
  evidence: EvidenceProjection[];
}

/** An obligation of the asset as answered: evaluated, or (for a PLANNED asset) NOT_IN_SERVICE. */
export interface ObligationStatus extends Omit<EvaluatedObligation, 'state'> {
  state: ComplianceState;
}

/** An asset's status rows as evaluated from one read of its lineage and evidence (StatusComputer.evaluateRows). */
export interface StatusEvaluation {
  tenantId: string;
  assetId: string;
  /** When its reads began: the rows carry it as computedAt (see storeRows). */
  readAt: Date;
  /** Null when the asset is not projected (yet). */
  rows: StatusRow[] | null;
}

export interface AssetComplianceResult {
  asOf: Date;
  state: ComplianceState;
  /** The IANA zone the calendar days were counted in; every dueAt is a day of it. */
  timeZone: string;
  obligations: ObligationStatus[];
}

/**
 * Evaluates obligations from the projections: for one asset at any instant (Asset.compliance), and
 * materialised as status rows when evidence or the asset changes (complianceStatus, the summary).
 */
export class StatusComputer {
  private readonly assets: Collection<AssetProjection>;
  private readonly evidence: Collection<EvidenceProjection>;
  private readonly rows: Collection<StatusRow>;
  private readonly settings: Collection<ComplianceSettingsDocument>;

  constructor(db: Db) {
    this.assets = db.collection(COMPLIANCE_COLLECTIONS.assets);
    this.evidence = db.collection(COMPLIANCE_COLLECTIONS.evidence);
    this.rows = db.collection(COMPLIANCE_COLLECTIONS.status);
    this.settings = db.collection(COMPLIANCE_SETTINGS_COLLECTION);
  }

  /** The tenant's time zone (ComplianceSettings.timeZone; UTC when none was set). */
  async timeZoneOf(tenantId: string): Promise<string> {
    return (await this.settings.findOne({ _id: tenantId }))?.timeZone ?? DEFAULT_TIME_ZONE;
  }

  /** The asset and its ancestors, nearest first (cycles and runaway chains are cut off). */
  private async lineage(tenantId: string, assetId: string): Promise<AssetProjection[]> {
    const chain: AssetProjection[] = [];
    let next: string | null = assetId;
    while (next && chain.length < MAX_HIERARCHY_DEPTH && !chain.some((a) => a._id === next)) {
      const asset: AssetProjection | null = await this.assets.findOne({ _id: next, tenantId });
      if (!asset) break;
      chain.push(asset);
      next = asset.parentId;
    }
    return chain;
  }

  /** The CP test points attached to these assets (their readings are the pipe's CP survey). */
  private async testPointsOf(tenantId: string, assetIds: readonly string[]): Promise<Set<string>> {
    const points = await this.assets.find({ tenantId, type: 'CP_TEST_POINT', parentId: { $in: [...assetIds] } }, { projection: { _id: 1 } }).toArray();
    return new Set(points.map((p) => p._id));
  }

  /**
   * Evidence that counts for each obligation of the asset: its own, its ancestors' where the rule allows,
   * and the readings at its (or its ancestors') CP test points for CP surveys.
   */
  private async evaluateLineage(lineage: AssetProjection[], asOf: Date, dueSoonDays: number, timeZone: string): Promise<EvaluatedObligation[]> {
    const [asset] = lineage;
    if (!asset) return [];
    const obligations = obligationsFor(lineage);
    if (obligations.length === 0) return [];
    const lineageIds = lineage.map((a) => a._id);
    const testPoints = obligations.some((o) => o.evidenceFromTestPoints) ? await this.testPointsOf(asset.tenantId, lineageIds) : new Set<string>();
    const types = [...new Set(obligations.flatMap((o) => o.evidenceTypes))];
    const records = await this.evidence
      .find({ tenantId: asset.tenantId, assetId: { $in: [...lineageIds, ...testPoints] }, type: { $in: types }, observedAt: { $lte: asOf } })
      .sort({ observedAt: -1 })
      .toArray();
    const ancestorIds = new Set(lineageIds.slice(1));
    return obligations.map((obligation) => {
      const counts = (assetId: string) =>
        assetId === asset._id ||
        (obligation.evidenceFromAncestors && ancestorIds.has(assetId)) ||
        (obligation.evidenceFromTestPoints && testPoints.has(assetId));
      const counted = records.filter((r) => obligation.evidenceTypes.includes(r.type) && counts(r.assetId));
      const evaluation = obligation.evaluate(
        counted.map((r) => r.observedAt),
        asOf,
        dueSoonDays,
        timeZone,
      );
      return { ...evaluation, obligation, evidence: counted.slice(0, EVIDENCE_SHOWN) };
    });
  }

  /**
   * One asset evaluated at `asOf` from the evidence. Without its projection nothing can be evaluated
   * (NOT_EVALUATED, never OK); an asset not in service owes nothing (NOT_IN_SERVICE), a PLANNED one
   * listing what it will owe once in service.
   */
  async assetCompliance(tenantId: string, assetId: string, asOf: Date, dueSoonDays: number, timeZone?: string): Promise<AssetComplianceResult> {
    const [lineage, zone] = await Promise.all([this.lineage(tenantId, assetId), timeZone ?? this.timeZoneOf(tenantId)]);
    const [asset] = lineage;
    if (!asset) return { asOf, state: 'NOT_EVALUATED', timeZone: zone, obligations: [] };
    if (notInService(asset)) {
      const future = obligationsOnceInService(lineage).map((obligation): ObligationStatus => ({
        obligation,
        state: 'NOT_IN_SERVICE',
        lastCompletedAt: null,
        dueAt: null,
        violations: [],
        evidence: [],
      }));
      return { asOf, state: 'NOT_IN_SERVICE', timeZone: zone, obligations: future };
    }
    const obligations = await this.evaluateLineage(lineage, asOf, dueSoonDays, zone);
    obligations.sort((a, b) => (a.dueAt?.getTime() ?? Infinity) - (b.dueAt?.getTime() ?? Infinity));
    return { asOf, state: worstState(obligations.map((o) => o.state)), timeZone: zone, obligations };
  }

  /** Re-evaluates every row of the tenant (after its settings changed). */
  async refreshTenant(tenantId: string): Promise<void> {
    const assets = await this.assets.find({ tenantId }, { projection: { _id: 1 } }).toArray();
    await this.refresh(
      tenantId,
      assets.map((a) => a._id),
    );
  }

  /**
   * Re-evaluates the rows of these assets and of their descendants (evidence on a pipeline counts for its
   * segments); a reading at a CP test point re-evaluates the pipe the test point belongs to.
   */
  async refresh(tenantId: string, assetIds: readonly string[]): Promise<void> {
    const testPoints = await this.assets.find({ tenantId, _id: { $in: [...assetIds] }, type: 'CP_TEST_POINT' }, { projection: { parentId: 1 } }).toArray();
    const start = [...assetIds, ...testPoints.flatMap((p) => (p.parentId ? [p.parentId] : []))];
    const all = new Set(start);
    let frontier = [...all];
    for (let depth = 0; frontier.length > 0 && depth < MAX_HIERARCHY_DEPTH; depth++) {
      const children = await this.assets.find({ tenantId, parentId: { $in: frontier } }, { projection: { _id: 1 } }).toArray();
      frontier = children.map((c) => c._id).filter((id) => !all.has(id));
      for (const id of frontier) all.add(id);
    }
    // One read of the time zone for every asset, so the evaluations are stamped before it (see storeRows).
    const readAt = new Date();
    const timeZone = await this.timeZoneOf(tenantId);
    for (const assetId of all) await this.storeRows(await this.evaluateRows(tenantId, assetId, { readAt, timeZone }));
  }

  /** The asset's status rows from its lineage, evidence and the tenant's time zone, read after `read.readAt` (default: now). */
  async evaluateRows(tenantId: string, assetId: string, read?: { readAt: Date; timeZone: string }): Promise<StatusEvaluation> {
    const readAt = read?.readAt ?? new Date();
    const timeZone = read?.timeZone ?? (await this.timeZoneOf(tenantId));
    const lineage = await this.lineage(tenantId, assetId);
    if (lineage.length === 0) return { tenantId, assetId, readAt, rows: null };
    const statuses = await this.evaluateLineage(lineage, readAt, 0, timeZone);
    const rows = statuses.map((s): StatusRow => ({
      _id: `${assetId}:${s.obligation.obligation}`,
      tenantId,
      assetId,
      obligation: s.obligation.obligation,
      regulation: s.obligation.regulation,
      lastCompletedAt: s.lastCompletedAt,
      dueAt: s.dueAt,
      lastEvidenceAt: s.evidence[0]?.observedAt ?? null,
      computedAt: readAt,
    }));
    return { tenantId, assetId, readAt, rows };
  }

  /**
   * Replaces the asset's status rows with `evaluation`'s, except rows computed from a later read. The assets and
   * measurements batches of a tenant (and replicas) evaluate the same asset at once: a batch that read the asset's
   * evidence before an inspection, or its lineage before a regulation, class or status change, and writes last leaves
   * the newer rows alone. Every input of an evaluation is read after its readAt, and each writer of an input (asset,
   * evidence, time zone) evaluates after writing it, so the evaluation with the latest readAt saw every input.
   */
  async storeRows({ tenantId, assetId, readAt, rows }: StatusEvaluation): Promise<void> {
    // An asset not projected yet has no rows to take away (assets are never deleted): another batch is projecting
    // its asset.upserted beside this one and writes them; deleting here could remove what it has just written.
    if (!rows) return;
    const notNewer = { tenantId, assetId, computedAt: { $lte: readAt } };
    await this.rows.deleteMany({ ...notNewer, _id: { $nin: rows.map((r) => r._id) } });
    if (rows.length === 0) return;
    let inserted: boolean;
    try {
      const stored = await this.rows.bulkWrite(
        rows.map(({ _id, ...row }) => ({ replaceOne: { filter: { ...notNewer, _id }, replacement: row, upsert: true } })),
        { ordered: false },
      );
      inserted = stored.upsertedCount > 0;
    } catch (err) {
      // Rows computed from a later read: their upserts' inserts collided on _id; the others may have been inserted.
      if (!duplicateKeyIndexes(err)) throw err;
      inserted = true;
    }
    // A row taken away by a later evaluation (its obligation no longer applies) leaves no computedAt to be newer than
    // this one: rows inserted here are checked against the obligations of the asset read again, and taken back.
    if (inserted) {
      const applies = obligationsFor(await this.lineage(tenantId, assetId)).map((o) => `${assetId}:${o.obligation}`);
      await this.rows.deleteMany({ ...notNewer, _id: { $nin: applies } });
    }
  }
}
