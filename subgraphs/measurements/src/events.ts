import { z } from 'zod';
import { flag, isoDate, num, text } from '@linepack/lib/events/payload-fields';

/**
 * The measurements subgraph's domain events, as it publishes them and as consumers (analytics, compliance) parse
 * them: its contract, owned here and imported by consumers as `@linepack/subgraph-measurements/events` (the one
 * entry point another subgraph may import; it holds nothing but the payload schemas). Adding a field is safe
 * (consumers ignore unknown ones); renaming or removing one breaks every consumer.
 */
export const MEASUREMENT_RECORDED = 'measurement.recorded';

export const measurementRecordedData = z.object({
  id: z.string().min(1),
  assetId: z.string().min(1),
  type: z.string(),
  observedAt: isoDate,
  stationM: num,
  value: num,
  unit: text,
  source: text,
  runId: text,
  featureType: text,
  surface: text,
  odometerM: num,
  clockDeg: num,
  depthPctWt: num,
  lengthMm: num,
  widthMm: num,
  // ILI anomaly details the repair conditions read (added later: events published before them have none, hence null).
  dentDepthPctOd: num,
  dentHasMetalLoss: flag,
  dentHasCracking: flag,
  dentHasStressRiser: flag,
  interactsWithGirthWeld: flag,
  interactsWithSeamWeld: flag,
  atPipelineCrossing: flag,
  metalLossKind: text,
  recordedAt: isoDate
    .nullable()
    .optional()
    .transform((v) => v ?? null),
});
export type MeasurementRecordedData = z.output<typeof measurementRecordedData>;

/**
 * An ILI listing import (measurements' ili_runs): `ili.run.started` when the import job is queued (its features will
 * follow as measurement.recorded events, so a consumer can hold them until the run is complete), `ili.run.imported`
 * once every feature and tally row is stored, `ili.run.failed` when the import fails (before or after some features were
 * written: a consumer holding them assesses them as they are). The imported event carries the tally rows run alignment needs (girth
 * welds, wall changes and the named fittings and markers) because the tally stays in measurements' own database.
 * The relays of runs and of measurements are not ordered with each other: a consumer may hear of the run before,
 * among or after its features, and counts them (`featureCount`) rather than trusting the order.
 */
export const ILI_RUN_STARTED = 'ili.run.started';
export const ILI_RUN_IMPORTED = 'ili.run.imported';
export const ILI_RUN_FAILED = 'ili.run.failed';

const iliRunFields = {
  id: z.string().min(1),
  assetId: z.string().min(1),
  runDate: isoDate,
  /** §192.933(b): when the operator had enough information about the run's conditions; repair due dates count from it. */
  discoveredAt: isoDate,
  /** ± % of wall; null: the consumer's own setting applies. */
  toolTolerancePctWt: num,
  certaintyPct: num,
};

export const iliRunStartedData = z.object(iliRunFields);
export type IliRunStartedData = z.output<typeof iliRunStartedData>;

export const iliTallyRowData = z.object({
  rowNumber: z.number().int(),
  kind: z.string(),
  logDistanceM: z.number().finite(),
  jointNumber: num,
  jointLengthM: num,
  wallThicknessMm: num,
  name: text,
});
export type IliTallyRowData = z.output<typeof iliTallyRowData>;

export const iliRunImportedData = z.object({
  ...iliRunFields,
  featureCount: z.number().int().min(0),
  tally: z.array(iliTallyRowData),
});
export type IliRunImportedData = z.output<typeof iliRunImportedData>;

export const iliRunFailedData = z.object({
  id: z.string().min(1),
  assetId: z.string().min(1),
  /** Why, in words (the import job's failure). */
  failure: z.string(),
  /** Features stored before it failed (0 when the listing was refused before anything was written). */
  featuresWritten: z.number().int().min(0),
});
export type IliRunFailedData = z.output<typeof iliRunFailedData>;
