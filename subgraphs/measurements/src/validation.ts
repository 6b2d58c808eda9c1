import { z } from 'zod';
import type { Violation } from '@linepack/lib/validation';
import { safeText, textLimits, violationsOf } from '@linepack/lib/validation';
import { inspectionRecordTypes, type MeasurementType, type MeasurementUnit } from './documents';

export const MAX_BATCH_SIZE = 10_000;
/** How far in the future an observation may claim to be, for clock skew between field devices and us. */
export const FUTURE_SKEW_MS = 5 * 60_000;

const finite = z.number().finite();
/** As for asset stations (assets validation): beyond 10,000 km is a mistake. */
const MAX_DISTANCE_M = 10_000_000;
const distance = finite.min(0, 'must be ≥ 0').max(MAX_DISTANCE_M, `must be ≤ ${MAX_DISTANCE_M} m`);
/** A pipe joint is about 12 m long; anomalies longer than 100 m are not single features. */
const featureSize = finite.gt(0, 'must be > 0').max(100_000, 'must be ≤ 100000 mm');

const itemSchema = z.object({
  idempotencyKey: safeText(textLimits.key),
  assetId: z.string().min(1, 'must not be empty').max(textLimits.id, `at most ${textLimits.id} characters`),
  type: z.string(),
  observedAt: z.date(),
  stationM: distance.nullish(),
  value: finite.nullish(),
  unit: z.string().nullish(),
  source: z.enum(['ILI', 'FIELD', 'SCADA', 'LAB']),
  runId: safeText(100).nullish(),
  featureType: z.enum(['METAL_LOSS', 'DENT', 'CRACK', 'GOUGE', 'LAMINATION', 'WELD_ANOMALY']).nullish(),
  surface: z.enum(['EXTERNAL', 'INTERNAL', 'MID_WALL']).nullish(),
  odometerM: distance.nullish(),
  clockDeg: finite.min(0, 'must be from 0 to 360').max(360, 'must be from 0 to 360').nullish(),
  depthPctWt: finite.min(0, 'must be from 0 to 100').max(100, 'must be from 0 to 100').nullish(),
  lengthMm: featureSize.nullish(),
  widthMm: featureSize.nullish(),
  // A dent deeper than half the diameter is a collapsed pipe, not a dent: such a figure is a unit mistake (mm for %).
  dentDepthPctOd: finite
    .gt(0, 'must be more than 0 and at most 50 % of the diameter')
    .max(50, 'must be more than 0 and at most 50 % of the diameter')
    .nullish(),
  dentHasMetalLoss: z.boolean().nullish(),
  dentHasCracking: z.boolean().nullish(),
  dentHasStressRiser: z.boolean().nullish(),
  interactsWithGirthWeld: z.boolean().nullish(),
  interactsWithSeamWeld: z.boolean().nullish(),
  atPipelineCrossing: z.boolean().nullish(),
  metalLossKind: z.enum(['GENERAL_CORROSION', 'PITTING', 'GROOVE', 'CIRCUMFERENTIAL_CORROSION']).nullish(),
});

/** Anomaly details that describe a dent: recorded only on a DENT, where the dent repair conditions read them. */
const DENT_FIELDS = ['dentDepthPctOd', 'dentHasMetalLoss', 'dentHasCracking', 'dentHasStressRiser'] as const;
/** Anomaly details of any ILI feature. */
const FEATURE_CONTEXT_FIELDS = ['interactsWithGirthWeld', 'interactsWithSeamWeld', 'atPipelineCrossing'] as const;

export type MeasurementItem = z.output<typeof itemSchema> & { type: MeasurementType; unit?: MeasurementUnit | null };

/** Units a reading of each type may carry, and the plausible range of its value in that unit. */
const readingRules: Partial<Record<MeasurementType, { units: MeasurementUnit[]; min: number; max: number }>> = {
  WALL_THICKNESS_UT: { units: ['MM'], min: 0.1, max: 100 },
  CP_PIPE_TO_SOIL: { units: ['MV'], min: -5000, max: 2000 },
  RECTIFIER_OUTPUT: { units: ['A', 'V'], min: 0, max: 1000 },
  PRESSURE: { units: ['KPA'], min: -101.325, max: 50_000 },
  TEMPERATURE: { units: ['CELSIUS'], min: -80, max: 250 },
  FLOW: { units: ['M3_PER_H'], min: 0, max: 10_000_000 },
  CORROSION_COUPON: { units: ['MM_PER_YEAR'], min: 0, max: 50 },
  ILI_ANOMALY: { units: ['PERCENT_WT'], min: 0, max: 100 },
};

function typeRules(item: MeasurementItem, add: (field: string, message: string) => void): void {
  if (item.type === 'ILI_ANOMALY') {
    if (item.source !== 'ILI') add('source', 'an ILI_ANOMALY comes from source ILI');
    if (!item.runId) add('runId', 'required for ILI_ANOMALY');
    if (!item.featureType) add('featureType', 'required for ILI_ANOMALY');
    if (item.depthPctWt == null && item.featureType === 'METAL_LOSS') add('depthPctWt', 'required for a METAL_LOSS anomaly');
    if (item.odometerM == null && item.stationM == null) add('odometerM', 'an ILI_ANOMALY needs odometerM or stationM');
  }
  anomalyDetailRules(item, add);
  if (inspectionRecordTypes.includes(item.type)) {
    if (item.unit != null && item.value == null) add('value', `a ${item.type} record with a unit needs a value`);
    return;
  }
  const rule = readingRules[item.type];
  if (!rule) return;
  if (item.type !== 'ILI_ANOMALY' && item.value == null) add('value', `required for ${item.type}`);
  if (item.value != null) {
    if (item.unit == null) add('unit', `required with a value; ${item.type} uses ${rule.units.join(' or ')}`);
    else if (!rule.units.includes(item.unit)) add('unit', `${item.type} is measured in ${rule.units.join(' or ')}, not ${item.unit}`);
    if (item.value < rule.min || item.value > rule.max) add('value', `${item.type} must be from ${rule.min} to ${rule.max} ${rule.units[0]}`);
  }
}

/**
 * The anomaly details are refused where they cannot mean anything, so a detail is never stored on a feature whose
 * assessment would ignore it (a dent depth on metal loss, say, is a mistake the client should hear of).
 */
function anomalyDetailRules(item: MeasurementItem, add: (field: string, message: string) => void): void {
  const isAnomaly = item.type === 'ILI_ANOMALY';
  for (const field of [...DENT_FIELDS, ...FEATURE_CONTEXT_FIELDS, 'metalLossKind'] as const) {
    if (item[field] != null && !isAnomaly) add(field, 'only for an ILI_ANOMALY');
  }
  if (!isAnomaly) return;
  for (const field of DENT_FIELDS) {
    if (item[field] != null && item.featureType !== 'DENT') add(field, `only for a DENT anomaly (this one is ${item.featureType ?? 'of no featureType'})`);
  }
  if (item.metalLossKind != null && item.featureType !== 'METAL_LOSS')
    add('metalLossKind', `only for a METAL_LOSS anomaly (this one is ${item.featureType ?? 'of no featureType'})`);
}

/** Checks the whole batch and returns every violation, each naming the item index and field. */
export function validateBatch(items: readonly unknown[], now = new Date()): { items: MeasurementItem[]; violations: Violation[] } {
  const violations: Violation[] = [];
  if (items.length === 0) violations.push({ field: 'input', message: 'must contain at least one measurement' });
  if (items.length > MAX_BATCH_SIZE) violations.push({ field: 'input', message: `at most ${MAX_BATCH_SIZE} measurements per call (got ${items.length})` });
  if (violations.length > 0) return { items: [], violations };
  const valid: MeasurementItem[] = [];
  const firstIndexOfKey = new Map<string, number>();
  items.forEach((raw, index) => {
    const root = `input[${index}]`;
    const parsed = itemSchema.safeParse(raw);
    if (!parsed.success) {
      violations.push(...violationsOf(parsed.error, root));
      return;
    }
    const item = parsed.data as MeasurementItem;
    const add = (field: string, message: string) => violations.push({ field: `${root}.${field}`, message });
    if (item.observedAt.getTime() > now.getTime() + FUTURE_SKEW_MS) add('observedAt', 'must not be in the future');
    if (item.observedAt.getUTCFullYear() < 1900) add('observedAt', 'must be after 1900');
    typeRules(item, add);
    const previous = firstIndexOfKey.get(item.idempotencyKey);
    if (previous !== undefined) add('idempotencyKey', `repeats input[${previous}].idempotencyKey within the batch`);
    else firstIndexOfKey.set(item.idempotencyKey, index);
    valid.push(item);
  });
  return { items: valid, violations };
}
