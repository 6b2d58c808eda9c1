import type { OutboxEntry } from '@linepack/lib/events/outbox';
import type { Connection } from '@linepack/lib/pagination';
import type { TenantDocument } from '@linepack/lib/tenant-collection';

export type MeasurementType =
  | 'ILI_ANOMALY'
  | 'WALL_THICKNESS_UT'
  | 'CP_PIPE_TO_SOIL'
  | 'RECTIFIER_OUTPUT'
  | 'PRESSURE'
  | 'TEMPERATURE'
  | 'FLOW'
  | 'CORROSION_COUPON'
  | 'ILI_RUN'
  | 'PRESSURE_TEST'
  | 'DIRECT_ASSESSMENT'
  | 'CP_SURVEY'
  | 'VALVE_INSPECTION'
  | 'LEAK_SURVEY'
  | 'PATROL'
  | 'ATMOSPHERIC_CORROSION_INSPECTION';

export type MetalLossKind = 'GENERAL_CORROSION' | 'PITTING' | 'GROOVE' | 'CIRCUMFERENTIAL_CORROSION';

export type MeasurementUnit = 'MM' | 'PERCENT_WT' | 'MV' | 'A' | 'V' | 'KPA' | 'CELSIUS' | 'M3_PER_H' | 'MM_PER_YEAR';

/** Inspection records: completing one is what compliance obligations are measured against. */
export const inspectionRecordTypes: readonly MeasurementType[] = [
  'ILI_RUN',
  'PRESSURE_TEST',
  'DIRECT_ASSESSMENT',
  'CP_SURVEY',
  'VALVE_INSPECTION',
  'LEAK_SURVEY',
  'PATROL',
  'ATMOSPHERIC_CORROSION_INSPECTION',
];

/** A measurement as stored (collection `measurements`). */
export interface MeasurementDocument extends TenantDocument {
  _id: string;
  assetId: string;
  type: MeasurementType;
  observedAt: Date;
  stationM: number | null;
  value: number | null;
  unit: MeasurementUnit | null;
  source: 'ILI' | 'FIELD' | 'SCADA' | 'LAB';
  idempotencyKey: string;
  runId: string | null;
  featureType: 'METAL_LOSS' | 'DENT' | 'CRACK' | 'GOUGE' | 'LAMINATION' | 'WELD_ANOMALY' | null;
  surface: 'EXTERNAL' | 'INTERNAL' | 'MID_WALL' | null;
  odometerM: number | null;
  clockDeg: number | null;
  depthPctWt: number | null;
  lengthMm: number | null;
  widthMm: number | null;
  /**
   * The anomaly details the repair conditions need (§192.933(d), §192.714(d), §195.452(h)(4)). Measurements stored
   * before these fields existed do not have them; readers take an absent field as null (not reported).
   */
  dentDepthPctOd?: number | null;
  dentHasMetalLoss?: boolean | null;
  dentHasCracking?: boolean | null;
  dentHasStressRiser?: boolean | null;
  interactsWithGirthWeld?: boolean | null;
  interactsWithSeamWeld?: boolean | null;
  atPipelineCrossing?: boolean | null;
  metalLossKind?: MetalLossKind | null;
  recordedAt: Date;
  /** The measurement.recorded event, until the relay has published it. */
  outbox?: OutboxEntry[];
}

export { MEASUREMENT_RECORDED } from './events';

/** The body of a measurement.recorded event: the measurement itself (it never changes once stored). */
export function measurementEventData(m: MeasurementDocument): Record<string, unknown> {
  const { _id, tenantId: _tenantId, outbox: _outbox, ...fields } = m;
  return { id: _id, ...fields };
}

/**
 * A page of an asset's measurements as the resolvers see it: the total is counted only when the selection reads
 * `totalCount` (resolvers/MeasurementConnection.ts) — a count is a second query, over every matching measurement.
 */
export interface MeasurementPage extends Omit<Connection<MeasurementDocument>, 'totalCount'> {
  count(): Promise<number>;
}

/** The assets subgraph owns Asset; here it is only its key. */
export interface AssetReference {
  id: string;
}

export interface PipelineSummaryParent {
  tenantId: string;
}
