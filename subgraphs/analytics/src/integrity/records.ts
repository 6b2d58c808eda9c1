import { randomUUID } from 'node:crypto';
import type { Db } from 'mongodb';
import { fieldError } from '@linepack/lib/errors';
import type { Identity } from '@linepack/lib/identity';
import { isDuplicateKeyError } from '@linepack/lib/mongo';
import { TenantCollection, type TenantDocument } from '@linepack/lib/tenant-collection';
import { projectionOf } from '@linepack/lib/selection';
import { invalidInput, validateInput, type Violation } from '@linepack/lib/validation';
import type { AssessmentField } from '../selection';
import { Analyzer } from '../compute';
import {
  ANALYTICS_COLLECTIONS,
  type AssessmentDocument,
  type AssetProjection,
  type FieldResultDocument,
  type PressureReductionDocument,
  type RepairDocument,
} from '../documents';
import { fieldResultInput, liftInput, pressureReductionInput, repairInput } from './validation';

/** A record as stored: with the client's idempotency key, unique per tenant (tenant_idempotency_key). */
type Keyed<T> = T & { idempotencyKey: string };

type NamedAssessment = Pick<AssessmentDocument, '_id' | 'assetId' | 'cluster'>;

/**
 * The anomalies named and every other member of their clusters: a cluster is dug, assessed and repaired as one
 * feature, so a repair recorded against one of its anomalies (the lead the dig list shows) covers all of them.
 */
function withClusterMembers(measurementIds: readonly string[], named: readonly NamedAssessment[]): string[] {
  const covered = new Set(measurementIds);
  for (const a of named) for (const id of a.cluster?.memberIds ?? []) covered.add(id);
  return [...covered];
}

/** Who recorded a record: the credential's kind and id, from the verified identity only. */
export function recorderOf(identity: Identity): string {
  return `${identity.kind}:${identity.subject}`;
}

/**
 * One tenant's field results, repairs and pressure reductions (tenant from the verified identity only). A record is
 * checked whole before anything is stored, stored once per idempotency key, and a field result or repair reassesses
 * the anomalies it covers and their segment's risk before the mutation answers: the answer is already true.
 */
export class DigRecordStore {
  private readonly fieldResults: TenantCollection<Keyed<FieldResultDocument>>;
  private readonly repairs: TenantCollection<Keyed<RepairDocument>>;
  private readonly reductions: TenantCollection<Keyed<PressureReductionDocument>>;
  private readonly assessments: TenantCollection<AssessmentDocument>;
  private readonly assets: TenantCollection<AssetProjection>;

  constructor(
    private readonly db: Db,
    private readonly tenantId: string,
    deadline?: number,
  ) {
    const scoped = <T extends TenantDocument>(name: string) => new TenantCollection(db.collection<T>(name), tenantId, deadline);
    this.fieldResults = scoped(ANALYTICS_COLLECTIONS.fieldResults);
    this.repairs = scoped(ANALYTICS_COLLECTIONS.repairs);
    this.reductions = scoped(ANALYTICS_COLLECTIONS.pressureReductions);
    this.assessments = scoped(ANALYTICS_COLLECTIONS.assessments);
    this.assets = scoped(ANALYTICS_COLLECTIONS.assets);
  }

  async recordFieldResult(input: unknown, identity: Identity): Promise<FieldResultDocument> {
    const values = validateInput(fieldResultInput, input);
    const stored = await this.fieldResults.findOne({ idempotencyKey: values.idempotencyKey });
    if (stored) return stored;
    const asset = await this.assetOfAnomalies([values.measurementId], () => 'input.measurementId');
    let depthPctWt = values.measuredDepthPctWt ?? null;
    if (values.remainingWallMm != null) {
      const wall = asset.wallThicknessMm;
      if (wall == null) throw invalidInput([{ field: 'input.remainingWallMm', message: 'the segment has no wallThicknessMm to measure it against' }]);
      if (values.remainingWallMm >= wall)
        throw invalidInput([{ field: 'input.remainingWallMm', message: `must be less than the segment's wall thickness (${wall} mm)` }]);
      // The depth the anomaly is assessed on, when only the remaining wall was measured.
      depthPctWt ??= ((wall - values.remainingWallMm) / wall) * 100;
    }
    const profile = values.profile?.map((p) => ({ axialMm: p.axialPositionMm, depthMm: p.depthMm })) ?? null;
    if (profile) {
      const wall = asset.wallThicknessMm;
      if (wall == null) throw invalidInput([{ field: 'input.profile', message: 'the segment has no wallThicknessMm to measure it against' }]);
      const tooDeep = profile.flatMap((p, i) =>
        p.depthMm >= wall ? [{ field: `input.profile[${i}].depthMm`, message: `must be less than the segment's wall thickness (${wall} mm)` }] : [],
      );
      if (tooDeep.length > 0) throw invalidInput(tooDeep);
    }
    const doc: Keyed<FieldResultDocument> = {
      _id: randomUUID(),
      tenantId: this.tenantId,
      idempotencyKey: values.idempotencyKey,
      assetId: asset._id,
      measurementId: values.measurementId,
      examinedAt: values.examinedAt,
      method: values.method,
      measuredDepthPctWt: depthPctWt,
      measuredLengthMm: values.measuredLengthMm ?? null,
      measuredWidthMm: values.measuredWidthMm ?? null,
      remainingWallMm: values.remainingWallMm ?? null,
      profile,
      notes: values.notes || null,
      recordedBy: recorderOf(identity),
      recordedAt: new Date(),
    };
    const kept = await this.insertOnce(this.fieldResults, doc);
    await this.reassess(asset._id, [values.measurementId]);
    return kept;
  }

  async recordRepair(input: unknown, identity: Identity): Promise<RepairDocument> {
    const values = validateInput(repairInput, input);
    const stored = await this.repairs.findOne({ idempotencyKey: values.idempotencyKey });
    if (stored) return stored;
    const named = await this.namedAssessments(values.measurementIds, true);
    const asset = await this.assetOf(values.measurementIds, named, (i) => `input.measurementIds[${i}]`);
    const measurementIds = withClusterMembers(values.measurementIds, named);
    const doc: Keyed<RepairDocument> = {
      _id: randomUUID(),
      tenantId: this.tenantId,
      idempotencyKey: values.idempotencyKey,
      assetId: asset._id,
      repairType: values.repairType,
      repairedAt: values.repairedAt,
      measurementIds,
      notes: values.notes || null,
      recordedBy: recorderOf(identity),
      recordedAt: new Date(),
    };
    const kept = await this.insertOnce(this.repairs, doc);
    await this.reassess(asset._id, measurementIds, kept._id);
    return kept;
  }

  /** A reduction changes no assessment: the anomaly stays due (the reduction is temporary); the dig list shows it. */
  async recordPressureReduction(input: unknown, identity: Identity): Promise<PressureReductionDocument> {
    const values = validateInput(pressureReductionInput, input);
    const stored = await this.reductions.findOne({ idempotencyKey: values.idempotencyKey });
    if (stored) return stored;
    const asset = await this.assetOfAnomalies(values.measurementIds, (i) => `input.measurementIds[${i}]`);
    if (asset.maopKpa == null)
      throw invalidInput([{ field: 'input.reducedPressureKpa', message: 'the segment has no maopKpa recorded: a reduction must be below it' }]);
    if (values.reducedPressureKpa >= asset.maopKpa)
      throw invalidInput([{ field: 'input.reducedPressureKpa', message: `must be below the segment's MAOP (${asset.maopKpa} kPa)` }]);
    const doc: Keyed<PressureReductionDocument> = {
      _id: randomUUID(),
      tenantId: this.tenantId,
      idempotencyKey: values.idempotencyKey,
      assetId: asset._id,
      measurementIds: values.measurementIds,
      reducedPressureKpa: values.reducedPressureKpa,
      effectiveAt: values.effectiveAt,
      liftedAt: null,
      reason: values.reason,
      recordedBy: recorderOf(identity),
      recordedAt: new Date(),
    };
    return this.insertOnce(this.reductions, doc);
  }

  async liftPressureReduction(id: string, liftedAt: Date): Promise<PressureReductionDocument> {
    const values = validateInput(liftInput, { id, liftedAt }, '');
    const reduction = await this.reductions.findOne({ _id: values.id });
    if (!reduction) throw fieldError('NOT_FOUND', 'no pressure reduction with this id', { field: 'id' });
    if (reduction.liftedAt) throw fieldError('CONFLICT', `the pressure reduction was already lifted at ${reduction.liftedAt.toISOString()}`, { field: 'id' });
    if (values.liftedAt < reduction.effectiveAt)
      throw invalidInput([{ field: 'liftedAt', message: `must not be before the reduction took effect (${reduction.effectiveAt.toISOString()})` }]);
    // Only a reduction still in force is lifted: two clients lifting at once cannot both succeed.
    const lifted = await this.reductions.findOneAndUpdate({ _id: values.id, liftedAt: null }, { $set: { liftedAt: values.liftedAt } });
    if (!lifted) throw fieldError('CONFLICT', 'the pressure reduction was lifted meanwhile', { field: 'id' });
    return lifted;
  }

  /** In the order of `ids`, null where there is none. */
  async fieldResultsByIds(ids: readonly string[]): Promise<(FieldResultDocument | null)[]> {
    const found = await this.fieldResults.find({ _id: { $in: [...ids] } }).toArray();
    return inOrder(ids, found);
  }

  async repairsByIds(ids: readonly string[]): Promise<(RepairDocument | null)[]> {
    const found = await this.repairs.find({ _id: { $in: [...ids] } }).toArray();
    return inOrder(ids, found);
  }

  /** In the order asked; holding only `fields` when given (a projected document: its resolvers read only those). */
  async assessmentsByIds(ids: readonly string[], fields: readonly AssessmentField[] | null = null): Promise<(AssessmentDocument | null)[]> {
    const found = await this.assessments.find({ _id: { $in: [...ids] } }, fields ? { projection: projectionOf(fields) } : {}).toArray();
    return inOrder(ids, found);
  }

  /** Every reduction taken for each anomaly, the latest first: one query for a page of anomalies (tenant_anomaly). */
  async reductionsOfAnomalies(measurementIds: readonly string[]): Promise<PressureReductionDocument[][]> {
    const found = await this.reductions.find({ measurementIds: { $in: [...measurementIds] } }, { sort: { effectiveAt: -1, _id: 1 } }).toArray();
    return measurementIds.map((id) => found.filter((r) => r.measurementIds.includes(id)));
  }

  /**
   * The one segment these anomalies are on; refused, naming each offending id, unless every id is an assessed ILI
   * anomaly of this tenant and all are on one segment (a record covers one dig on one segment). Another tenant's
   * anomaly reads as unknown: nothing says it exists.
   */
  private async assetOfAnomalies(ids: readonly string[], fieldOf: (index: number) => string): Promise<AssetProjection> {
    return this.assetOf(ids, await this.namedAssessments(ids), fieldOf);
  }

  /** The assessments of the anomalies named: their ids and segments, and their clusters when asked for. */
  private async namedAssessments(ids: readonly string[], withCluster = false): Promise<NamedAssessment[]> {
    const projection = withCluster ? { _id: 1, assetId: 1, cluster: 1 } : { _id: 1, assetId: 1 };
    return this.assessments.find({ _id: { $in: [...ids] } }, { projection }).toArray();
  }

  /** assetOfAnomalies from assessments already read. */
  private async assetOf(ids: readonly string[], named: readonly NamedAssessment[], fieldOf: (index: number) => string): Promise<AssetProjection> {
    const found = new Map(named.map((a) => [a._id, a.assetId]));
    const violations: Violation[] = [];
    const firstAsset = found.get(ids.find((id) => found.has(id)) ?? '');
    ids.forEach((id, index) => {
      const assetId = found.get(id);
      if (assetId === undefined) violations.push({ field: fieldOf(index), message: 'is not an assessed ILI anomaly of this tenant' });
      else if (assetId !== firstAsset)
        violations.push({ field: fieldOf(index), message: 'is on another segment than the first anomaly (a record covers one segment)' });
    });
    if (violations.length > 0) throw invalidInput(violations);
    const asset = await this.assets.findOne({ _id: firstAsset! });
    // An assessment exists only for an anomaly of a projected asset; absent only if the asset was dropped for a rebuild.
    if (!asset) throw fieldError('CONFLICT', 'the segment of these anomalies is being rebuilt; try again shortly', { field: fieldOf(0) });
    return asset;
  }

  /** Inserts once per idempotency key; a concurrent insert of the same key answers with the one stored. */
  private async insertOnce<T extends Keyed<TenantDocument & { _id: string }>>(collection: TenantCollection<T>, doc: T): Promise<T> {
    try {
      await collection.insertOne(doc);
      return doc;
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      const stored = await collection.findOne({ idempotencyKey: doc.idempotencyKey } as never);
      if (!stored) throw err;
      return stored as T;
    }
  }

  /**
   * The covered anomalies and the segment's risk again, with this record in the picture; for a repair also the later
   * runs' calls of the same features it covers (integrity/anomaly-records.ts carryRepairs).
   */
  private async reassess(assetId: string, measurementIds: readonly string[], repairId?: string): Promise<void> {
    const analyzer = new Analyzer(this.db);
    const context = await analyzer.context(this.tenantId, [assetId]);
    const carried = repairId ? [...context.digs].filter(([, r]) => r.repair?._id === repairId && r.repairCarriedFrom).map(([id]) => id) : [];
    await analyzer.assessNew(context, assetId, [...measurementIds, ...carried]);
    await analyzer.refreshRisk(await analyzer.riskContext(this.tenantId, [assetId]), assetId);
  }
}

function inOrder<T extends { _id: string }>(ids: readonly string[], found: readonly T[]): (T | null)[] {
  const byId = new Map(found.map((doc) => [doc._id, doc]));
  return ids.map((id) => byId.get(id) ?? null);
}
