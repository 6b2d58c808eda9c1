import { z } from 'zod';
import { flag, isoDate, num, text } from '@linepack/lib/events/payload-fields';

/**
 * The assets subgraph's domain events, as it publishes them and as consumers (measurements, analytics, compliance)
 * parse them: its contract, owned here and imported by consumers as `@linepack/subgraph-assets/events` (the one
 * entry point another subgraph may import; it holds nothing but the payload schemas). Adding a field is safe
 * (consumers ignore unknown ones); renaming or removing one breaks every consumer.
 */
export const ASSET_UPSERTED = 'asset.upserted';

export const assetUpsertedData = z.object({
  id: z.string().min(1),
  type: z.string(),
  name: z.string(),
  parentId: text,
  status: z.string(),
  product: text,
  regulation: z
    .enum(['CFR_192', 'CFR_195'])
    .nullable()
    .optional()
    .transform((v) => v ?? null),
  beginStationM: num,
  endStationM: num,
  outsideDiameterMm: num,
  wallThicknessMm: num,
  smysMpa: num,
  smtsMpa: num,
  maopKpa: num,
  classLocation: z
    .number()
    .int()
    .min(1)
    .max(4)
    .nullable()
    .optional()
    .transform((v) => v ?? null),
  inHca: z
    .boolean()
    .nullable()
    .optional()
    .transform((v) => v ?? false),
  couldAffectHca: flag,
  cathodicallyProtected: flag,
  atmosphericExposure: flag,
  offshore: flag,
  gasOdorized: flag,
  crossing: z
    .enum(['HIGHWAY', 'RAILROAD'])
    .nullable()
    .optional()
    .transform((v) => v ?? null),
  installedAt: isoDate
    .nullable()
    .optional()
    .transform((v) => v ?? null),
  version: z.number().int().min(1),
});
export type AssetUpsertedData = z.output<typeof assetUpsertedData>;
