import DataLoader from 'dataloader';
import type { MeasurementDocument, MeasurementType } from './documents';
import type { MeasurementRepository } from './repository';
import type { MeasurementField } from './selection';

/** One asset's latest measurement, optionally of one type, read as far as `fields` go. */
export interface LatestMeasurementKey {
  assetId: string;
  type: MeasurementType | null;
  /** Sorted (selection.ts), so equal selections batch together. */
  fields: readonly MeasurementField[];
}

export interface MeasurementLoaders {
  /**
   * Batches `Asset.latestMeasurement`: the gateway resolves it for every asset of a page in one `_entities`
   * request, and this turns those N lookups into one query per (type, selection) — normally exactly one.
   */
  latestMeasurement: DataLoader<LatestMeasurementKey, MeasurementDocument | null, string>;
  /** Batches Measurement entity references (e.g. every anomaly of an analytics page): one query for all. */
  measurementById: DataLoader<string, MeasurementDocument | null>;
}

/** The fields arrays come from selection.ts's cache, one per selection: so do their joined forms. */
const joined = new WeakMap<readonly MeasurementField[], string>();
function groupOf(key: LatestMeasurementKey): string {
  let fields = joined.get(key.fields);
  if (fields === undefined) joined.set(key.fields, (fields = key.fields.join(',')));
  return `${key.type ?? ''}|${fields}`;
}

/** Per request (they cache), built on the request's tenant-scoped repository. */
export function measurementLoaders(measurements: MeasurementRepository): MeasurementLoaders {
  return {
    latestMeasurement: new DataLoader(
      async (keys: readonly LatestMeasurementKey[]) => {
        const groups = new Map<string, LatestMeasurementKey[]>();
        for (const key of keys) {
          const group = groupOf(key);
          const members = groups.get(group);
          if (members) members.push(key);
          else groups.set(group, [key]);
        }
        const found = new Map<string, MeasurementDocument>();
        await Promise.all(
          [...groups.entries()].map(async ([group, members]) => {
            const { type, fields } = members[0]!;
            const latest = await measurements.latestOf(
              members.map((key) => key.assetId),
              type,
              fields,
            );
            for (const [assetId, doc] of latest) found.set(`${group}|${assetId}`, doc);
          }),
        );
        return keys.map((key) => found.get(`${groupOf(key)}|${key.assetId}`) ?? null);
      },
      { cacheKeyFn: (key) => `${groupOf(key)}|${key.assetId}` },
    ),
    measurementById: new DataLoader((ids: readonly string[]) => measurements.findByIds(ids)),
  };
}
