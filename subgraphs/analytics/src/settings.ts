import type { Collection, Db } from 'mongodb';
import { z } from 'zod';
import type { Logger } from '@linepack/lib/logger';
import { invalidInput, validateInput } from '@linepack/lib/validation';
import { Analyzer, settingsOf, type TenantSettings } from './compute';
import { ANALYTICS_COLLECTIONS, type SettingsDocument } from './documents';

const range = (min: number, max: number, unit: string) =>
  z.number().finite().min(min, `must be from ${min} to ${max} ${unit}`).max(max, `must be from ${min} to ${max} ${unit}`).nullish();

const settingsInput = z.object({
  toolTolerancePctWt: range(0, 50, '% of wall'),
  odometerToleranceM: range(0, 100, 'm'),
  clockToleranceDeg: range(0, 180, '°'),
  floorRateMmPerYear: range(0, 10, 'mm/year'),
  flowStress: z.enum(['SMYS_PLUS_69_MPA', 'SMYS_TIMES_1_1', 'MEAN_OF_SMYS_AND_SMTS']).nullish(),
  interactionRule: z.enum(['ASME_B31G_3T', 'POF_6T', 'SPACING']).nullish(),
  interactionAxialGapMm: range(0, 1000, 'mm'),
  interactionCircumferentialGapMm: range(0, 1000, 'mm'),
});

/**
 * One tenant's analytics settings. A change recomputes every assessment and risk of the tenant; that
 * runs after the mutation answers (a tenant can hold 100k anomalies), so results show the new settings
 * once their `computedAt` passes the change.
 */
export class TenantSettingsStore {
  private readonly settings: Collection<SettingsDocument>;

  constructor(
    private readonly db: Db,
    private readonly tenantId: string,
    private readonly logger: Logger,
  ) {
    this.settings = db.collection(ANALYTICS_COLLECTIONS.settings);
  }

  async get(): Promise<TenantSettings> {
    return settingsOf(await this.settings.findOne({ _id: this.tenantId }));
  }

  /** Omitted fields keep their value; null returns a field to its default. */
  async update(input: unknown): Promise<TenantSettings> {
    const values = validateInput(settingsInput, input);
    const set: Partial<SettingsDocument> = {};
    const unset: Record<string, ''> = {};
    for (const [field, value] of Object.entries(values)) {
      if (value === undefined) continue;
      if (value === null) unset[field] = '';
      else (set as Record<string, unknown>)[field] = value;
    }
    const update = { ...(Object.keys(set).length > 0 ? { $set: set } : {}), ...(Object.keys(unset).length > 0 ? { $unset: unset } : {}) };
    if (Object.keys(update).length === 0) return this.get();
    // SPACING without its two limits would leave the rule undefined: refused, naming what is missing, before any write.
    const current = await this.settings.findOne({ _id: this.tenantId });
    const after = { ...current, ...set, ...Object.fromEntries(Object.keys(unset).map((k) => [k, undefined])) } as Partial<SettingsDocument>;
    if (after.interactionRule === 'SPACING') {
      const missing = (['interactionAxialGapMm', 'interactionCircumferentialGapMm'] as const).filter((f) => after[f] == null);
      if (missing.length > 0) throw invalidInput(missing.map((f) => ({ field: `input.${f}`, message: 'is required for the SPACING interaction rule' })));
    }
    const doc = await this.settings.findOneAndUpdate({ _id: this.tenantId }, update, { upsert: true, returnDocument: 'after' });
    const tenantId = this.tenantId;
    new Analyzer(this.db)
      .reassessTenant(tenantId)
      .catch((err: unknown) => this.logger.error({ err, tenantId }, 'reassessing the tenant after a settings change failed'));
    return settingsOf(doc);
  }
}
