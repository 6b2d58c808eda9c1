import { z } from 'zod';
import { invalidInput, safeText, textLimits, type Violation } from '@linepack/lib/validation';
import type { AssetDocument, AssetStatus, AssetType } from './documents';

const finite = z.number().finite();
/** The longest pipeline on Earth is under 10,000 km; stations beyond that are mistakes, and sums of them stay finite. */
export const MAX_STATION_M = 10_000_000;
const station = finite.min(0, 'must be ≥ 0').max(MAX_STATION_M, `must be ≤ ${MAX_STATION_M} m`);
const position = z
  .union([z.tuple([finite, finite]), z.tuple([finite, finite, finite])])
  .refine(([lon, lat]) => lon >= -180 && lon <= 180 && lat >= -90 && lat <= 90, 'coordinates must be [longitude, latitude] within ±180, ±90');

export const geoJsonSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('Point'), coordinates: position }).strict(),
  z.object({ type: z.literal('LineString'), coordinates: z.array(position).min(2, 'a LineString needs at least two positions') }).strict(),
]);

/** Field rules shared by create and update; cross-field rules are checked on the merged result. */
const fields = {
  name: safeText(textLimits.name),
  parentId: z.string().min(1).max(textLimits.id, `at most ${textLimits.id} characters`).nullable(),
  product: z.enum(['NATURAL_GAS', 'CRUDE_OIL', 'REFINED_PRODUCTS', 'NGL', 'CO2', 'HYDROGEN']).nullable(),
  regulation: z.enum(['CFR_192', 'CFR_195']).nullable(),
  beginStationM: station.nullable(),
  endStationM: station.nullable(),
  outsideDiameterMm: finite.gt(0, 'must be > 0').max(5000, 'must be ≤ 5000 mm').nullable(),
  wallThicknessMm: finite.gt(0, 'must be > 0').max(2500, 'must be ≤ 2500 mm').nullable(),
  smysMpa: finite.min(100, 'must be from 100 to 1000 MPa').max(1000, 'must be from 100 to 1000 MPa').nullable(),
  maopKpa: finite.gt(0, 'must be > 0').max(50_000, 'must be ≤ 50000 kPa').nullable(),
  classLocation: z.number().int('must be an integer').min(1, 'must be 1, 2, 3 or 4').max(4, 'must be 1, 2, 3 or 4').nullable(),
  inHca: z.boolean(),
  couldAffectHca: z.boolean().nullable(),
  cathodicallyProtected: z.boolean().nullable(),
  atmosphericExposure: z.boolean().nullable(),
  offshore: z.boolean().nullable(),
  gasOdorized: z.boolean().nullable(),
  crossing: z.enum(['HIGHWAY', 'RAILROAD']).nullable(),
  smtsMpa: finite.min(100, 'must be from 100 to 1200 MPa').max(1200, 'must be from 100 to 1200 MPa').nullable(),
  location: geoJsonSchema.nullable(),
  installedAt: z.date().nullable(),
  status: z.enum(['PLANNED', 'ACTIVE', 'IDLE', 'ABANDONED']),
};

export const createAssetSchema = z.object({
  type: z.enum(['SYSTEM', 'PIPELINE', 'SEGMENT', 'VALVE', 'FITTING', 'LAUNCHER_RECEIVER', 'CP_TEST_POINT', 'RECTIFIER', 'STATION']),
  name: fields.name,
  parentId: fields.parentId.optional().default(null),
  status: fields.status.optional().default('PLANNED'),
  product: fields.product.optional().default(null),
  regulation: fields.regulation.optional().default(null),
  beginStationM: fields.beginStationM.optional().default(null),
  endStationM: fields.endStationM.optional().default(null),
  outsideDiameterMm: fields.outsideDiameterMm.optional().default(null),
  wallThicknessMm: fields.wallThicknessMm.optional().default(null),
  smysMpa: fields.smysMpa.optional().default(null),
  maopKpa: fields.maopKpa.optional().default(null),
  classLocation: fields.classLocation.optional().default(null),
  inHca: fields.inHca.optional().default(false),
  couldAffectHca: fields.couldAffectHca.optional().default(null),
  cathodicallyProtected: fields.cathodicallyProtected.optional().default(null),
  atmosphericExposure: fields.atmosphericExposure.optional().default(null),
  offshore: fields.offshore.optional().default(null),
  gasOdorized: fields.gasOdorized.optional().default(null),
  crossing: fields.crossing.optional().default(null),
  smtsMpa: fields.smtsMpa.optional().default(null),
  location: fields.location.optional().default(null),
  installedAt: fields.installedAt.optional().default(null),
  // Not part of the asset: what makes a repeated call answer the first one's asset (resolvers/Mutation.ts).
  idempotencyKey: safeText(textLimits.key).nullish(),
});

/** Omitted (undefined) keeps the stored value; null clears it where the field is optional. */
export const updateAssetSchema = z
  .object({
    name: fields.name,
    parentId: fields.parentId,
    status: fields.status,
    product: fields.product,
    regulation: fields.regulation,
    beginStationM: fields.beginStationM,
    endStationM: fields.endStationM,
    outsideDiameterMm: fields.outsideDiameterMm,
    wallThicknessMm: fields.wallThicknessMm,
    smysMpa: fields.smysMpa,
    maopKpa: fields.maopKpa,
    classLocation: fields.classLocation,
    inHca: fields.inHca,
    couldAffectHca: fields.couldAffectHca,
    cathodicallyProtected: fields.cathodicallyProtected,
    atmosphericExposure: fields.atmosphericExposure,
    offshore: fields.offshore,
    gasOdorized: fields.gasOdorized,
    crossing: fields.crossing,
    smtsMpa: fields.smtsMpa,
    location: fields.location,
    installedAt: fields.installedAt,
  })
  .partial();

export type UpdateAssetValues = z.output<typeof updateAssetSchema>;

/** Which asset types may sit directly under which (system › pipeline › segment › component). */
export const allowedParentTypes: Readonly<Record<AssetType, readonly AssetType[]>> = {
  SYSTEM: [],
  PIPELINE: ['SYSTEM'],
  STATION: ['SYSTEM', 'PIPELINE'],
  SEGMENT: ['PIPELINE'],
  VALVE: ['PIPELINE', 'SEGMENT', 'STATION'],
  FITTING: ['PIPELINE', 'SEGMENT', 'STATION'],
  LAUNCHER_RECEIVER: ['PIPELINE', 'SEGMENT', 'STATION'],
  CP_TEST_POINT: ['PIPELINE', 'SEGMENT'],
  RECTIFIER: ['PIPELINE', 'SEGMENT', 'STATION'],
};

/** PLANNED → ACTIVE ⇄ IDLE; any → ABANDONED; ABANDONED is final. */
const transitions: Readonly<Record<AssetStatus, readonly AssetStatus[]>> = {
  PLANNED: ['ACTIVE', 'ABANDONED'],
  ACTIVE: ['IDLE', 'ABANDONED'],
  IDLE: ['ACTIVE', 'ABANDONED'],
  ABANDONED: [],
};

export function checkStatusTransition(from: AssetStatus, to: AssetStatus): void {
  if (from === to || transitions[from].includes(to)) return;
  const allowed = transitions[from];
  throw invalidInput([
    {
      field: 'input.status',
      message: `cannot change status from ${from} to ${to}${allowed.length ? ` (allowed: ${allowed.join(', ')})` : ` (${from} is final)`}`,
    },
  ]);
}

/** Rules that involve more than one field, on the asset as it would be stored. */
export function checkAssetConsistency(
  asset: Pick<AssetDocument, 'outsideDiameterMm' | 'wallThicknessMm' | 'beginStationM' | 'endStationM' | 'smysMpa' | 'smtsMpa'>,
): void {
  const violations: Violation[] = [];
  if (asset.wallThicknessMm != null && asset.outsideDiameterMm != null && asset.wallThicknessMm >= asset.outsideDiameterMm / 2) {
    violations.push({ field: 'input.wallThicknessMm', message: `must be less than half the outside diameter (${asset.outsideDiameterMm / 2} mm)` });
  }
  if (asset.beginStationM != null && asset.endStationM != null && asset.endStationM < asset.beginStationM) {
    violations.push({ field: 'input.endStationM', message: 'must not be less than beginStationM' });
  }
  if (asset.smysMpa != null && asset.smtsMpa != null && asset.smtsMpa < asset.smysMpa) {
    violations.push({ field: 'input.smtsMpa', message: `must not be less than smysMpa (${asset.smysMpa} MPa)` });
  }
  if (violations.length > 0) throw invalidInput(violations);
}
