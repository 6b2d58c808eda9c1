import type { Collection, Db } from 'mongodb';
import { duplicateKeyIndexes, isDuplicateKeyError } from '@linepack/lib/mongo';
import { modelVersionOf, modifiedB31G, resolveFlowStress, type B31GInput, type FlowStressMethod } from './model/b31g';
import { effectiveArea, type ProfilePoint } from './model/rstreng';
import { acceptanceLimit, DEFAULT_GROWTH_SETTINGS, growthRate, matchFeature, remainingLife, type RunFeature } from './model/growth';
import { exceedanceProbability } from './model/exceedance';
import { depthSizingSd } from './model/matching';
import { crackCategory, dentCategory, repairDueAt, responseCategory, type CategoryDecision, type ResponseCategory } from './model/response-category';
import { RISK_MODEL_VERSION, segmentRisk } from './model/risk';
import type { InteractionRule } from './model/interaction';
import { clusterNote, runKeyOf } from './clusters';
import { DEFAULT_TOOL_TOLERANCE_PCT_WT, depthWithTolerance } from './model/tool-tolerance';
import { HELD_RUN_STATUSES, requestRunComparison, runsOf, type IliRunProjection, type RunAnomalyProjection } from './ili-runs';
import { DigRecordReader, NO_DIG_RECORDS, type AnomalyDigRecords } from './integrity/anomaly-records';
import {
  ANALYTICS_COLLECTIONS,
  type AnomalyProjection,
  type AssessmentDocument,
  type AssetProjection,
  type CpReadingProjection,
  type RiskDocument,
  type SettingsDocument,
} from './documents';

/**
 * Most urgent first; the order the anomaly lists use. SIXTY_DAY came later: 0.5 puts it between IMMEDIATE and
 * ONE_HUNDRED_EIGHTY_DAY without renumbering the urgency stored in every existing assessment.
 */
export const CATEGORY_URGENCY: Record<ResponseCategory, number> = {
  IMMEDIATE: 0,
  SIXTY_DAY: 0.5,
  ONE_HUNDRED_EIGHTY_DAY: 1,
  ONE_YEAR: 2,
  TWO_YEAR: 3,
  MONITORED: 4,
  OTHER: 4,
};
/** Every response category, most urgent first (CATEGORY_URGENCY's key order). */
export const RESPONSE_CATEGORIES = Object.keys(CATEGORY_URGENCY) as readonly ResponseCategory[];
const NOT_ASSESSABLE_URGENCY = 9;
/** The dent and crack repair conditions (model/response-category.ts), recorded on their assessments. */
export const REPAIR_CONDITIONS_MODEL = 'repair-conditions-dent-crack/1.0.0';
export const NO_DUE_DATE = new Date('9999-12-31T00:00:00.000Z');
const PIPE_TYPES = new Set(['PIPELINE', 'SEGMENT']);
/** The certainty a tool tolerance is stated at when the run gives none: the usual ±10 % of wall at 80 % (API 1163). */
const DEFAULT_CERTAINTY_PCT = 80;
const ASSESSED_FEATURES = new Set(['METAL_LOSS', 'GOUGE']);

export interface TenantSettings {
  toolTolerancePctWt: number;
  odometerToleranceM: number;
  clockToleranceDeg: number;
  floorRateMmPerYear: number;
  flowStress: FlowStressMethod;
  /** How interacting metal loss of an imported run is clustered (model/interaction.ts cites each rule). */
  interaction: InteractionRule;
}

export function settingsOf(doc: SettingsDocument | null): TenantSettings {
  return {
    toolTolerancePctWt: doc?.toolTolerancePctWt ?? DEFAULT_TOOL_TOLERANCE_PCT_WT,
    odometerToleranceM: doc?.odometerToleranceM ?? DEFAULT_GROWTH_SETTINGS.odometerToleranceM,
    clockToleranceDeg: doc?.clockToleranceDeg ?? DEFAULT_GROWTH_SETTINGS.clockToleranceDeg,
    floorRateMmPerYear: doc?.floorRateMmPerYear ?? DEFAULT_GROWTH_SETTINGS.floorRateMmPerYear,
    flowStress: doc?.flowStress ?? 'SMYS_PLUS_69_MPA',
    interaction: {
      name: doc?.interactionRule ?? 'ASME_B31G_3T',
      ...(doc?.interactionAxialGapMm != null ? { axialGapMm: doc.interactionAxialGapMm } : {}),
      ...(doc?.interactionCircumferentialGapMm != null ? { circumferentialGapMm: doc.interactionCircumferentialGapMm } : {}),
    },
  };
}

/** What a segment's risk is computed from besides its assessments, read once for a batch's segments: see Analyzer.riskContext. */
export interface RiskContext {
  tenantId: string;
  assets: Map<string, AssetProjection>;
  cp: Map<string, CpReadingProjection>;
  /**
   * When its reads began: what is computed from it carries this as computedAt, so a result computed from older inputs
   * (an event batch that read the records before a repair was written, the segment before it changed) never replaces
   * one computed from newer (write(), refreshRisk()).
   */
  readAt: Date;
}

/** What an event batch (or a rebuild chunk) reads once for one tenant: see Analyzer.context. */
export interface BatchContext extends RiskContext {
  settings: TenantSettings;
  /** The latest field result and the repair of each anomaly of these assets that has one (by measurement id). */
  digs: Map<string, AnomalyDigRecords>;
}

/** Whether the asset has a risk: a pipe in service (an abandoned one's risk is taken away; assets are never deleted). */
const bearsRisk = (asset: AssetProjection) => PIPE_TYPES.has(asset.type) && asset.status !== 'ABANDONED';

/** Why a dent or crack cannot be categorised on this asset (its regulation decides the rules), or null when it can. */
function notCategorisable(asset: AssetProjection): string | null {
  return asset.regulation == null ? 'the asset has no regulation (it decides between §192.933/§192.714 and §195.452)' : null;
}

/** Why a metal-loss anomaly cannot be assessed on this asset, or null when it can. */
function notAssessable(asset: AssetProjection, a: AnomalyProjection): string | null {
  if (a.featureType && !ASSESSED_FEATURES.has(a.featureType)) {
    return `a ${a.featureType.toLowerCase().replace('_', ' ')} is not a metal-loss feature; Modified B31G does not apply`;
  }
  const missing = [
    ['regulation', asset.regulation],
    ['outsideDiameterMm', asset.outsideDiameterMm],
    ['wallThicknessMm', asset.wallThicknessMm],
    ['smysMpa', asset.smysMpa],
    ['maopKpa', asset.maopKpa],
  ]
    .filter(([, v]) => v == null)
    .map(([k]) => k);
  if (asset.regulation === 'CFR_192' && asset.classLocation == null) missing.push('classLocation');
  if (missing.length > 0) return `the asset has no ${missing.join(', ')}`;
  if (a.depthPctWt == null || a.lengthMm == null)
    return `the anomaly has no ${[a.depthPctWt == null ? 'depthPctWt' : null, a.lengthMm == null ? 'lengthMm' : null].filter(Boolean).join(', ')}`;
  return null;
}

/** The figures of an assessment without them: not assessable, or a dent or crack (no Modified B31G). */
const NO_FIGURES = {
  depthWithTolerancePctWt: null,
  failurePressureKpa: null,
  nominalFailurePressureKpa: null,
  safePressureKpa: null,
  failurePressureRatio: null,
  erf: null,
  responseCategory: null,
  ruleRef: null,
  categoryReason: null,
  repairDueAt: null,
  dueSort: NO_DUE_DATE,
  growthRateMmPerYear: null,
  growthBasis: null,
  matchedMeasurementId: null,
  remainingLifeYears: null,
  remainingLifeLimit: null,
  exceedanceProbability: null,
  methodNotes: [],
};

/**
 * A field-measured river-bottom profile assessed with RSTRENG's effective area (model/rstreng.ts, which caps the safe
 * pressure at the design pressure as Modified B31G does), with the profile said in words; null when the method does not apply (deeper than
 * 80 % of the wall: Modified B31G's own answer, not applicable, stands).
 */
function effectiveAreaOfProfile(
  pipe: Omit<B31GInput, 'defectDepthMm' | 'defectLengthMm'>,
  profile: readonly ProfilePoint[],
): {
  failurePressureKpa: number;
  safePressureKpa: number;
  erf: number | null;
  failurePressureRatio: number | null;
  notes: string[];
  modelVersion: string;
} | null {
  const result = effectiveArea({ ...pipe, profile });
  if (!result.applicable) return null;
  return {
    failurePressureKpa: result.failurePressureKpa,
    safePressureKpa: result.safePressureKpa,
    erf: result.erf,
    failurePressureRatio: result.failurePressureRatio,
    notes: [
      `assessed with the RSTRENG effective-area method over the field river-bottom profile (${profile.length} points; governing sub-length ${result.critical.lengthMm.toFixed(0)} mm)`,
      ...result.notes,
    ],
    modelVersion: result.modelVersion,
  };
}

/**
 * Recomputes assessments and risk from the projections. Anomalies are assessed when they arrive (with
 * the previous ILI run of their segment for growth) and all of a segment's anomalies again when the
 * segment itself changes; the segment's risk is recomputed from its assessments by one aggregation.
 */
export class Analyzer {
  private readonly assets: Collection<AssetProjection>;
  private readonly anomalies: Collection<AnomalyProjection>;
  private readonly cp: Collection<CpReadingProjection>;
  private readonly assessments: Collection<AssessmentDocument>;
  private readonly risks: Collection<RiskDocument>;
  private readonly settings: Collection<SettingsDocument>;
  private readonly iliRuns: Collection<IliRunProjection>;
  private readonly db: Db;
  private readonly digRecords: DigRecordReader;

  constructor(db: Db) {
    this.digRecords = new DigRecordReader(db);
    this.assets = db.collection(ANALYTICS_COLLECTIONS.assets);
    this.anomalies = db.collection(ANALYTICS_COLLECTIONS.anomalies);
    this.cp = db.collection(ANALYTICS_COLLECTIONS.cpReadings);
    this.assessments = db.collection(ANALYTICS_COLLECTIONS.assessments);
    this.risks = db.collection(ANALYTICS_COLLECTIONS.risks);
    this.settings = db.collection(ANALYTICS_COLLECTIONS.settings);
    this.iliRuns = runsOf(db);
    this.db = db;
  }

  async tenantSettings(tenantId: string): Promise<TenantSettings> {
    return settingsOf(await this.settings.findOne({ _id: tenantId }));
  }

  /** The features of the run before `before` on this asset (the latest earlier run), in depth mm. */
  private async previousRun(asset: AssetProjection, before: Date, runId: string | null): Promise<RunFeature[]> {
    const latest = await this.anomalies.findOne(
      { tenantId: asset.tenantId, assetId: asset._id, observedAt: { $lt: before }, ...(runId ? { runId: { $ne: runId } } : {}) },
      { sort: { observedAt: -1 }, projection: { runId: 1 } },
    );
    if (!latest) return [];
    const filter = latest.runId ? { runId: latest.runId } : { observedAt: { $lt: before } };
    const rows = await this.anomalies.find({ tenantId: asset.tenantId, assetId: asset._id, ...filter }).toArray();
    return rows.filter((r) => r.depthPctWt != null).map((r) => this.feature(asset, r));
  }

  private feature(asset: AssetProjection, a: AnomalyProjection): RunFeature {
    return {
      id: a._id,
      odometerM: a.odometerM ?? a.stationM,
      clockDeg: a.clockDeg,
      depthMm: ((a.depthPctWt ?? 0) / 100) * (asset.wallThicknessMm ?? 0),
      observedAt: a.observedAt,
    };
  }

  assess(
    asset: AssetProjection,
    a: RunAnomalyProjection,
    previous: readonly RunFeature[],
    settings: TenantSettings,
    now: Date,
    records: AnomalyDigRecords = NO_DIG_RECORDS,
  ): AssessmentDocument {
    const assessed = this.assessAnomaly(asset, a, previous, settings, now, records);
    if (!records.repairCarriedFrom || !records.repair) return assessed;
    const { repair } = records;
    const note = `closed by the ${repair.repairType.toLowerCase().replaceAll('_', ' ')} of ${repair.repairedAt.toISOString().slice(0, 10)} recorded against ${records.repairCarriedFrom}, an earlier run's call of the same feature`;
    return { ...assessed, methodNotes: [...(assessed.methodNotes ?? []), note] };
  }

  private assessAnomaly(
    asset: AssetProjection,
    a: RunAnomalyProjection,
    previous: readonly RunFeature[],
    settings: TenantSettings,
    now: Date,
    records: AnomalyDigRecords,
  ): AssessmentDocument {
    // An imported run's tool tolerance where its vendor stated one (a field result below replaces any tool's).
    if (a.fromRun?.toolTolerancePctWt != null) settings = { ...settings, toolTolerancePctWt: a.fromRun.toolTolerancePctWt };
    const field = records.fieldResult;
    if (field) {
      // The latest field result supersedes the tool's call: assessed as measured, with no tool tolerance (the
      // tolerance is the tool's, not the gauge's). The tool's call stays on the measurement.
      a = {
        ...a,
        depthPctWt: field.measuredDepthPctWt ?? a.depthPctWt,
        lengthMm: field.measuredLengthMm ?? a.lengthMm,
        widthMm: field.measuredWidthMm ?? a.widthMm,
      };
      settings = { ...settings, toolTolerancePctWt: 0 };
    }
    // A member of a cluster of interacting metal loss is assessed as the cluster's box (clusters.ts), unless the crew
    // has measured it in the ditch: then the measurement stands.
    const cluster = !field && a.fromRun?.cluster && (a.featureType === 'METAL_LOSS' || a.featureType == null) ? a.fromRun.cluster : null;
    // The anomaly's own depth stays what the assessment reports as its depth; the box's is in the figures and notes.
    const ownDepthPctWt = a.depthPctWt;
    if (cluster) a = { ...a, depthPctWt: cluster.maxDepthPctWt, lengthMm: cluster.lengthMm, widthMm: cluster.widthMm };
    const base = {
      _id: a._id,
      tenantId: a.tenantId,
      assetId: a.assetId,
      depthPctWt: ownDepthPctWt,
      // §192.933(b): an imported run's conditions are discovered on the run's discovery date, not the day the tool ran.
      discoveredAt: a.fromRun?.discoveredAt ?? a.observedAt,
      computedAt: now,
      sourceEventId: a.sourceEventId,
      featureType: a.featureType,
      // A repaired or superseded anomaly keeps its figures (the audit trail) but leaves the dig list and the segment's
      // risk: the newer run's call of a superseded one is assessed and listed instead.
      status: records.repair ? ('REPAIRED' as const) : a.supersededBy ? ('SUPERSEDED' as const) : ('OPEN' as const),
      repairId: records.repair?._id ?? null,
      supersededBy: a.supersededBy?.measurementId ?? null,
      depthSource: field ? ('FIELD' as const) : ('TOOL' as const),
      fieldResultId: field?._id ?? null,
      runId: a.runId,
      cluster,
      clusterMember: cluster != null && cluster.leadId !== a._id,
    };
    const notAssessed = (why: string): AssessmentDocument => ({
      ...base,
      ...NO_FIGURES,
      assessable: false,
      notAssessableReason: why,
      urgency: NOT_ASSESSABLE_URGENCY,
      modelVersion: modelVersionOf(settings.flowStress),
    });
    if (a.featureType === 'DENT' || a.featureType === 'CRACK') {
      const missing = notCategorisable(asset);
      if (missing) return notAssessed(missing);
      const crackDepthPctWt = a.featureType === 'CRACK' && a.depthPctWt != null ? depthWithTolerance(a.depthPctWt, settings.toolTolerancePctWt) : null;
      const decision =
        a.featureType === 'DENT'
          ? dentCategory({
              regulation: asset.regulation!,
              inHca: asset.inHca,
              outsideDiameterMm: asset.outsideDiameterMm,
              clockDeg: a.clockDeg,
              dentDepthPctOd: a.dentDepthPctOd ?? null,
              hasMetalLoss: a.dentHasMetalLoss ?? null,
              hasCracking: a.dentHasCracking ?? null,
              hasStressRiser: a.dentHasStressRiser ?? null,
              interactsWithGirthWeld: a.interactsWithGirthWeld ?? null,
              interactsWithSeamWeld: a.interactsWithSeamWeld ?? null,
            })
          : crackCategory({
              regulation: asset.regulation!,
              inHca: asset.inHca,
              depthPctWt: crackDepthPctWt,
            });
      if (decision.category == null) return notAssessed(decision.reason);
      return this.categorised(base, decision as CategoryDecision, crackDepthPctWt);
    }
    const reason = notAssessable(asset, a);
    if (reason) return notAssessed(reason);
    const t = asset.wallThicknessMm!;
    // The tenant's method where it applies to this segment, else the stated fallback (resolveFlowStress): never a
    // dead letter for a segment without SMTS.
    const flow = resolveFlowStress(settings.flowStress, asset.smysMpa!, asset.smtsMpa);
    const pipe = {
      outsideDiameterMm: asset.outsideDiameterMm!,
      wallThicknessMm: t,
      smysMpa: asset.smysMpa!,
      smtsMpa: asset.smtsMpa,
      defectLengthMm: a.lengthMm!,
      regulation: asset.regulation!,
      classLocation: asset.classLocation,
      maopKpa: asset.maopKpa,
      flowStress: flow.method,
    };
    const tolerant = depthWithTolerance(a.depthPctWt!, settings.toolTolerancePctWt);
    const withTolerance = modifiedB31G({ ...pipe, defectDepthMm: (tolerant / 100) * t });
    const nominal = modifiedB31G({ ...pipe, defectDepthMm: (a.depthPctWt! / 100) * t });
    // A field river-bottom profile is assessed with RSTRENG's effective area (level 2) instead of the 0.85·d·L box.
    const level2 = field?.profile && field.profile.length >= 2 ? effectiveAreaOfProfile(pipe, field.profile) : null;
    const figures = level2 ?? (withTolerance.applicable ? withTolerance : null);
    const decision = responseCategory({
      regulation: asset.regulation!,
      inHca: asset.inHca,
      classLocation: asset.classLocation,
      depthPctWt: tolerant,
      failurePressureKpa: figures?.failurePressureKpa ?? null,
      safePressureKpa: figures?.safePressureKpa ?? null,
      maopKpa: asset.maopKpa,
      featureType: a.featureType,
      metalLossKind: a.metalLossKind ?? null,
      interactsWithGirthWeld: a.interactsWithGirthWeld ?? null,
      interactsWithSeamWeld: a.interactsWithSeamWeld ?? null,
      atPipelineCrossing: a.atPipelineCrossing ?? null,
    });
    const feature = this.feature(asset, a);
    // An imported run's growth comes from its run comparison (run-comparison.ts); a hand-recorded anomaly is matched by odometer.
    const rate = a.fromRun
      ? {
          rateMmPerYear: a.fromRun.rateMmPerYear ?? settings.floorRateMmPerYear,
          basis: a.fromRun.basis ?? ('FLOOR' as const),
          matchedMeasurementId: a.fromRun.matchedMeasurementId,
        }
      : growthRate(feature, matchFeature(feature, previous, settings), settings);
    const limit = acceptanceLimit(pipe);
    const life = remainingLife(pipe, (tolerant / 100) * t, rate.rateMmPerYear, limit);
    // The central estimate beside the conservative category: how probable it is that the depth as reported (the
    // cluster's box, or a field measurement with no sizing error) is already at the limit (model/exceedance.ts).
    const sizingSdMm = (depthSizingSd(settings.toolTolerancePctWt, (a.fromRun?.certaintyPct ?? DEFAULT_CERTAINTY_PCT) / 100) / 100) * t;
    const exceedance = exceedanceProbability((a.depthPctWt! / 100) * t, limit.depthMm, sizingSdMm);
    const due = repairDueAt(decision.category, base.discoveredAt);
    return {
      ...base,
      assessable: true,
      notAssessableReason: null,
      depthWithTolerancePctWt: tolerant,
      failurePressureKpa: figures?.failurePressureKpa ?? null,
      nominalFailurePressureKpa: nominal.applicable ? nominal.failurePressureKpa : null,
      safePressureKpa: figures?.safePressureKpa ?? null,
      failurePressureRatio: figures?.failurePressureRatio ?? null,
      erf: figures?.erf ?? null,
      responseCategory: decision.category,
      urgency: CATEGORY_URGENCY[decision.category],
      ruleRef: decision.ruleRef,
      categoryReason: decision.reason,
      repairDueAt: due,
      dueSort: due ?? NO_DUE_DATE,
      growthRateMmPerYear: rate.rateMmPerYear,
      growthBasis: rate.basis,
      matchedMeasurementId: rate.matchedMeasurementId,
      remainingLifeYears: life.years,
      remainingLifeLimit: life.limit,
      exceedanceProbability: exceedance,
      // The fallback (and SMTS cap) of the tenant's method, then the figures' own caps; a cap named by both once.
      methodNotes: [...new Set([...flow.notes, ...(figures?.notes ?? []), ...(a.fromRun ? [a.fromRun.note] : []), ...(cluster ? [clusterNote(cluster)] : [])])],
      modelVersion: `${level2?.modelVersion ?? withTolerance.modelVersion};${RISK_MODEL_VERSION}`,
    };
  }

  /** A dent or crack in the category its repair condition gives (no B31G figures, growth or remaining life). */
  private categorised(
    base: Pick<
      AssessmentDocument,
      | '_id'
      | 'tenantId'
      | 'assetId'
      | 'depthPctWt'
      | 'discoveredAt'
      | 'computedAt'
      | 'sourceEventId'
      | 'featureType'
      | 'status'
      | 'repairId'
      | 'supersededBy'
      | 'depthSource'
      | 'fieldResultId'
      | 'runId'
    > & { discoveredAt: Date },
    decision: CategoryDecision,
    depthWithTolerancePctWt: number | null,
  ): AssessmentDocument {
    const due = repairDueAt(decision.category, base.discoveredAt);
    return {
      ...base,
      ...NO_FIGURES,
      assessable: true,
      notAssessableReason: null,
      depthWithTolerancePctWt,
      responseCategory: decision.category,
      urgency: CATEGORY_URGENCY[decision.category],
      ruleRef: decision.ruleRef,
      categoryReason: decision.reason,
      repairDueAt: due,
      dueSort: due ?? NO_DUE_DATE,
      modelVersion: `${REPAIR_CONDITIONS_MODEL};${RISK_MODEL_VERSION}`,
    };
  }

  /**
   * What one event batch reads once per tenant rather than once per asset: the tenant's settings, the assets the
   * batch touched and their latest CP readings (two `_id $in` reads, served by the _id index on every server).
   */
  async context(tenantId: string, assetIds: Iterable<string>): Promise<BatchContext> {
    const ids = [...new Set(assetIds)];
    // riskContext takes readAt before any of these reads starts.
    const [risk, settings, digs] = await Promise.all([this.riskContext(tenantId, ids), this.tenantSettings(tenantId), this.digRecords.ofAssets(tenantId, ids)]);
    return { ...risk, settings, digs };
  }

  /**
   * The assets and their latest CP readings, as refreshRisk needs them. A caller reads it after writing what it changed
   * of the segments (the asset, a reading, assessments): its readAt then comes after every input the caller wrote.
   */
  async riskContext(tenantId: string, assetIds: Iterable<string>): Promise<RiskContext> {
    const ids = [...new Set(assetIds)];
    const readAt = new Date();
    const [assets, cp] = await Promise.all([
      ids.length ? this.assets.find({ _id: { $in: ids }, tenantId }).toArray() : [],
      ids.length ? this.cp.find({ _id: { $in: ids }, tenantId }).toArray() : [],
    ]);
    return { tenantId, assets: new Map(assets.map((a) => [a._id, a])), cp: new Map(cp.map((c) => [c._id, c])), readAt };
  }

  /**
   * New anomalies of a batch, grouped by asset: each is assessed against the previous ILI run of its
   * asset. Anomalies of an asset analytics has not heard of wait for its asset.upserted.
   */
  async assessNew(context: BatchContext, assetId: string, anomalyIds: readonly string[]): Promise<void> {
    const asset = context.assets.get(assetId);
    if (!asset) return;
    const rows: RunAnomalyProjection[] = await this.anomalies.find({ _id: { $in: [...anomalyIds] }, tenantId: context.tenantId, assetId }).toArray();
    const waiting = [...new Set(rows.filter((r) => r.runId && !r.fromRun).map((r) => r.runId!))];
    const importedRuns = new Set(
      waiting.length
        ? (
            await this.iliRuns
              .find({ _id: { $in: waiting }, tenantId: context.tenantId, status: { $in: [...HELD_RUN_STATUSES] } }, { projection: { _id: 1 } })
              .toArray()
          ).map((r) => r._id)
        : [],
    );
    const previousByRun = new Map<string, RunFeature[]>();
    const docs: AssessmentDocument[] = [];
    for (const row of rows) {
      // An imported run's features wait for its run comparison, which assesses all of them (run-comparison.ts);
      // matching each by odometer as it arrives would be wasted work.
      if (!row.fromRun && row.runId && importedRuns.has(row.runId)) continue;
      const key = runKeyOf(row);
      if (!row.fromRun && !previousByRun.has(key)) previousByRun.set(key, await this.previousRun(asset, row.observedAt, row.runId));
      docs.push(this.assess(asset, row, previousByRun.get(key) ?? [], context.settings, context.readAt, context.digs.get(row._id)));
    }
    await this.write(docs);
  }

  /** Every anomaly of the asset again (its geometry, MAOP or class changed, or a rebuild). */
  async assessAll(context: BatchContext, assetId: string): Promise<void> {
    const ids = (await this.anomalies.find({ tenantId: context.tenantId, assetId }, { projection: { _id: 1 } }).toArray()).map((r) => r._id);
    for (let i = 0; i < ids.length; i += 1000) await this.assessNew(context, assetId, ids.slice(i, i + 1000));
    // Its imported runs are compared again where what they were compared with changed (wall thickness, settings).
    if (await this.iliRuns.findOne({ tenantId: context.tenantId, assetId, status: { $exists: true } }, { projection: { _id: 1 } }))
      await requestRunComparison(this.db, context.tenantId, assetId);
  }

  /** Every segment of the tenant again, assessments then risk (the tenant's settings changed). */
  async reassessTenant(tenantId: string): Promise<void> {
    const ids = (await this.assets.find({ tenantId }, { projection: { _id: 1 } }).toArray()).map((a) => a._id);
    for (let i = 0; i < ids.length; i += 500) {
      const chunk = ids.slice(i, i + 500);
      const context = await this.context(tenantId, chunk);
      for (const id of chunk) await this.assessAll(context, id);
      // Read after the assessments are written (riskContext says why).
      const risks = await this.riskContext(tenantId, chunk);
      for (const id of chunk) await this.refreshRisk(risks, id);
    }
  }

  /**
   * Stores assessments unless the stored one was computed from newer inputs (a later computedAt): the event consumer, a
   * run comparison and a field-result or repair mutation can assess one anomaly at the same time, and the one that read
   * last must win whichever writes last. A newer stored assessment makes the upsert's insert collide on _id: skipped.
   */
  private async write(docs: readonly AssessmentDocument[]): Promise<void> {
    if (docs.length === 0) return;
    try {
      await this.assessments.bulkWrite(
        docs.map((doc) => ({
          replaceOne: { filter: { _id: doc._id, tenantId: doc.tenantId, computedAt: { $lte: doc.computedAt } }, replacement: doc, upsert: true },
        })),
        { ordered: false },
      );
    } catch (err) {
      if (!duplicateKeyIndexes(err)) throw err;
    }
  }

  /**
   * The segment's risk from its assessments (one aggregation, read now) and the asset and latest CP reading of `context`
   * (see riskContext for when to read it). Batches of the other stream, other replicas, the run comparison and the dig
   * mutations refresh the same segment's risk at the same time: the one whose context was read last wins whichever
   * writes last. Every input a refresh reads is read after its readAt, and each writer of an input refreshes after
   * writing it, so the refresh with the latest readAt saw every input; one with an earlier readAt that writes later
   * (it read the segment before it changed, or aggregated before a reassessment was written) is left out.
   */
  async refreshRisk(context: RiskContext, assetId: string): Promise<void> {
    const { tenantId, readAt } = context;
    const asset = context.assets.get(assetId);
    // An asset the context does not know has no risk to take away (assets are abandoned, never deleted): it is one
    // whose asset.upserted another batch is projecting beside this one, and that batch computes its risk.
    if (!asset) return;
    const notNewer = { _id: assetId, tenantId, computedAt: { $lte: readAt } };
    if (!bearsRisk(asset)) {
      await this.risks.deleteOne(notNewer);
      return;
    }
    const groups = await this.assessments
      .aggregate<{ _id: string | null; count: number; dents: number; minLife: number | null; minFpr: number | null; beyondLimit: number }>([
        // Repaired and superseded anomalies no longer count (their assessments stay for the audit trail).
        { $match: { tenantId, assetId, assessable: true, status: { $nin: ['REPAIRED', 'SUPERSEDED'] } } },
        {
          $group: {
            _id: '$responseCategory',
            count: { $sum: 1 },
            dents: { $sum: { $cond: [{ $eq: ['$featureType', 'DENT'] }, 1, 0] } },
            minLife: { $min: '$remainingLifeYears' },
            minFpr: { $min: '$failurePressureRatio' },
            // A cluster counts once (its lead); an immediate dent or crack (no sizing model) counts 1.
            beyondLimit: {
              $sum: {
                $cond: [
                  { $eq: ['$clusterMember', true] },
                  0,
                  { $ifNull: ['$exceedanceProbability', { $cond: [{ $eq: ['$responseCategory', 'IMMEDIATE'] }, 1, 0] }] },
                ],
              },
            },
          },
        },
      ])
      .toArray();
    const counts: Partial<Record<ResponseCategory, number>> = {};
    const dentCounts: Partial<Record<ResponseCategory, number>> = {};
    let minLife: number | null = null;
    let minFpr: number | null = null;
    let beyondLimit = 0;
    for (const g of groups) {
      beyondLimit += g.beyondLimit ?? 0;
      if (g._id) counts[g._id as ResponseCategory] = g.count;
      if (g._id && g.dents > 0) dentCounts[g._id as ResponseCategory] = g.dents;
      if (g.minLife != null) minLife = minLife == null ? g.minLife : Math.min(minLife, g.minLife);
      if (g.minFpr != null) minFpr = minFpr == null ? g.minFpr : Math.min(minFpr, g.minFpr);
    }
    const cp = context.cp.get(assetId);
    const risk = segmentRisk({
      regulation: asset.regulation,
      product: asset.product,
      classLocation: asset.classLocation,
      inHca: asset.inHca,
      couldAffectHca: asset.couldAffectHca,
      outsideDiameterMm: asset.outsideDiameterMm,
      maopKpa: asset.maopKpa,
      categoryCounts: counts,
      dentCounts,
      minRemainingLifeYears: minLife,
      worstFailurePressureRatio: minFpr,
      latestPipeToSoilMv: cp?.potentialMv ?? null,
      expectedAnomaliesBeyondLimit: beyondLimit,
    });
    let inserted: boolean;
    try {
      const stored = await this.risks.replaceOne(notNewer, { tenantId, regulation: asset.regulation, ...risk, computedAt: readAt }, { upsert: true });
      inserted = stored.upsertedCount > 0;
    } catch (err) {
      // The stored risk was computed from a later read: the upsert's insert collided on _id.
      if (isDuplicateKeyError(err)) return;
      throw err;
    }
    // A risk taken away (the segment abandoned) leaves no computedAt to be newer than this one: a refresh that read the
    // segment in service before that and inserts after it looks at the segment again, and takes its own risk back.
    if (inserted) {
      const current = await this.assets.findOne({ _id: assetId, tenantId });
      if (current && !bearsRisk(current)) await this.risks.deleteOne(notNewer);
    }
  }
}
