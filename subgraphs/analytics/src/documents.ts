import type { TenantDocument } from '@linepack/lib/tenant-collection';

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
} as const;

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
  /** Where the assessment departs from the settings or the plain method (flow-stress fallback, caps); absent on older results. */
  methodNotes?: string[];
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
