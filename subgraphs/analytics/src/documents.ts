import type { TenantDocument } from '@linepack/lib/tenant-collection';
import type { ClusterMembership } from './clusters';
import type { InteractionRuleName } from './model/interaction';

/**
 * The analytics database (`<prefix>_analytics`): projections of other subgraphs' entities, fed by
 * domain events, and the results computed from them. Every result records the model version, when it
 * was computed and the event it was computed from, so a reader sees how fresh it is.
 */

/** What analytics keeps of an asset (from `asset.upserted`): geometry, material, operating limits, location class. */
export interface AssetProjection extends TenantDocument {
  _id: string;
  version: number;
  type: string;
  name: string;
  parentId: string | null;
  status: string;
  product: string | null;
  regulation: 'CFR_192' | 'CFR_195' | null;
  outsideDiameterMm: number | null;
  wallThicknessMm: number | null;
  smysMpa: number | null;
  smtsMpa: number | null;
  maopKpa: number | null;
  classLocation: number | null;
  inHca: boolean;
  couldAffectHca: boolean | null;
  sourceEventId: string;
}

/** An ILI anomaly as recorded (from `measurement.recorded` of type ILI_ANOMALY); it never changes. */
export interface AnomalyProjection extends TenantDocument {
  _id: string;
  assetId: string;
  runId: string | null;
  observedAt: Date;
  featureType: string | null;
  surface: string | null;
  odometerM: number | null;
  stationM: number | null;
  clockDeg: number | null;
  depthPctWt: number | null;
  lengthMm: number | null;
  widthMm: number | null;
  /**
   * The details the repair conditions read (measurements' MeasurementInput); null when not reported. Projections
   * written before these fields existed have none: readers take an absent field as null.
   */
  dentDepthPctOd?: number | null;
  dentHasMetalLoss?: boolean | null;
  dentHasCracking?: boolean | null;
  dentHasStressRiser?: boolean | null;
  interactsWithGirthWeld?: boolean | null;
  interactsWithSeamWeld?: boolean | null;
  atPipelineCrossing?: boolean | null;
  metalLossKind?: string | null;
  sourceEventId: string;
}

/** The latest pipe-to-soil potential of an asset (from `measurement.recorded` of type CP_PIPE_TO_SOIL). */
export interface CpReadingProjection extends TenantDocument {
  _id: string;
  assetId: string;
  observedAt: Date;
  potentialMv: number;
  sourceEventId: string;
}

export const ANALYTICS_COLLECTIONS = {
  assets: 'assets',
  anomalies: 'anomalies',
  cpReadings: 'cp_readings',
  assessments: 'assessments',
  risks: 'risks',
  settings: 'settings',
  fieldResults: 'field_results',
  repairs: 'repairs',
  pressureReductions: 'pressure_reductions',
} as const;

/**
 * What the dig crew found at an anomaly (NDE in the ditch). It supersedes the tool's call: the anomaly is assessed
 * again on the measured depth and length, with no tool tolerance added (the tolerance is the tool's, not the
 * ultrasonic gauge's). The latest examination of an anomaly wins; earlier ones stay for the audit trail.
 */
export interface FieldResultDocument extends TenantDocument {
  _id: string;
  assetId: string;
  /** The ILI_ANOMALY measurement examined. */
  measurementId: string;
  examinedAt: Date;
  /** e.g. UT, PAUT, MPI, LASER_SCAN, PIT_GAUGE, VISUAL. */
  method: string;
  measuredDepthPctWt: number | null;
  measuredLengthMm: number | null;
  measuredWidthMm: number | null;
  remainingWallMm: number | null;
  /** The river-bottom profile measured along the deepest path (e.g. laser scan): assessed with RSTRENG when given. */
  profile?: { axialMm: number; depthMm: number }[] | null;
  notes: string | null;
  recordedBy: string;
  recordedAt: Date;
}

/**
 * A repair that closes anomalies: their assessments stay (auditable) but read REPAIRED, leave the dig list and no
 * longer count in the segment's risk likelihood.
 */
export interface RepairDocument extends TenantDocument {
  _id: string;
  assetId: string;
  /** RECOAT, TYPE_A_SLEEVE, TYPE_B_SLEEVE, COMPOSITE_SLEEVE, CUT_OUT, GRIND_REPAIR, DEPOSITED_WELD, OTHER. */
  repairType: string;
  repairedAt: Date;
  measurementIds: string[];
  notes: string | null;
  recordedBy: string;
  recordedAt: Date;
}

/** A pressure reduction taken for an immediate repair condition (§192.933(a)(1), §195.452(h)(1)). */
export interface PressureReductionDocument extends TenantDocument {
  _id: string;
  assetId: string;
  measurementIds: string[];
  reducedPressureKpa: number;
  effectiveAt: Date;
  /** null while the reduction is in force. */
  liftedAt: Date | null;
  reason: string;
  recordedBy: string;
  recordedAt: Date;
}

/** One ILI anomaly's assessment (`_id` = the measurement id). */
export interface AssessmentDocument extends TenantDocument {
  _id: string;
  assetId: string;
  assessable: boolean;
  notAssessableReason: string | null;
  depthPctWt: number | null;
  depthWithTolerancePctWt: number | null;
  failurePressureKpa: number | null;
  nominalFailurePressureKpa: number | null;
  safePressureKpa: number | null;
  failurePressureRatio: number | null;
  erf: number | null;
  responseCategory: string | null;
  /** Sort key: 0 = most urgent; not-assessable last. */
  urgency: number;
  /** Sort key: repairDueAt, or 9999-12-31 when there is none, so "no due date" sorts last. */
  dueSort: Date;
  ruleRef: string | null;
  categoryReason: string | null;
  discoveredAt: Date | null;
  repairDueAt: Date | null;
  growthRateMmPerYear: number | null;
  growthBasis: 'MATCHED' | 'FLOOR' | null;
  matchedMeasurementId: string | null;
  remainingLifeYears: number | null;
  remainingLifeLimit: string | null;
  /** P(depth as inspected ≥ the acceptance limit), model/exceedance.ts; null for dents, cracks and older results. */
  exceedanceProbability?: number | null;
  /** Where the assessment departs from the settings or the plain method (flow-stress fallback, caps); absent on older results. */
  methodNotes?: string[];
  /**
   * OPEN; REPAIRED once a repair covers the anomaly; SUPERSEDED once a newer imported run of the segment reported the
   * same feature (absent on older results: OPEN). Only OPEN anomalies are on the dig list and in the segment's risk.
   */
  status?: 'OPEN' | 'REPAIRED' | 'SUPERSEDED';
  /** The newer run's measurement of the same feature, when SUPERSEDED. */
  supersededBy?: string | null;
  repairId?: string | null;
  /** TOOL (the ILI call, with tool tolerance) or FIELD (a field result's measurement, no tool tolerance). */
  depthSource?: 'TOOL' | 'FIELD';
  fieldResultId?: string | null;
  /** The cluster of interacting anomalies it is assessed as (clusters.ts); absent or null when it stands alone. */
  cluster?: ClusterMembership | null;
  /** True for a cluster member that is not its lead: the dig list shows a cluster once, by its lead. */
  clusterMember?: boolean;
  /** The ILI run the anomaly was reported by, when it came from an imported run. */
  runId?: string | null;
  /** The anomaly's feature type, so the segment's risk can name its dents; absent on older results. */
  featureType?: string | null;
  modelVersion: string;
  computedAt: Date;
  sourceEventId: string;
}

/** A pipe segment's risk (`_id` = the asset id). */
export interface RiskDocument extends TenantDocument {
  _id: string;
  regulation: 'CFR_192' | 'CFR_195' | null;
  likelihood: number;
  consequence: number;
  score: number;
  band: string;
  drivers: string[];
  potentialImpactRadiusM: number | null;
  /** Absent on risks computed before risk model 1.1.0. */
  expectedAnomaliesBeyondLimit?: number;
  modelVersion: string;
  computedAt: Date;
}

/** A tenant's analytics settings (`_id` = the tenant id); absent fields take the documented defaults. */
export interface SettingsDocument {
  _id: string;
  toolTolerancePctWt?: number;
  odometerToleranceM?: number;
  clockToleranceDeg?: number;
  floorRateMmPerYear?: number;
  flowStress?: 'SMYS_PLUS_69_MPA' | 'SMYS_TIMES_1_1' | 'MEAN_OF_SMYS_AND_SMTS';
  interactionRule?: InteractionRuleName;
  interactionAxialGapMm?: number;
  interactionCircumferentialGapMm?: number;
}

export interface AssetReference {
  id: string;
}

export interface MeasurementReference {
  id: string;
}

export interface SummaryParent {
  tenantId: string;
}
