import type { Collection, Db } from 'mongodb';
import { z } from 'zod';
import type { Logger } from '@linepack/lib/logger';
import { validateInput } from '@linepack/lib/validation';
import { COMPLIANCE_SETTINGS_COLLECTION, type ComplianceSettingsDocument } from './documents';
import { canonicalTimeZone, DEFAULT_TIME_ZONE } from './domain/calendar';
import { StatusComputer } from './status';

export interface ComplianceSettings {
  timeZone: string;
}

const settingsInput = z.object({
  timeZone: z
    .string()
    .transform((name, ctx) => {
      const zone = canonicalTimeZone(name);
      if (!zone) ctx.addIssue({ code: 'custom', message: 'must be an IANA time zone name such as America/Chicago' });
      return zone ?? name;
    })
    .nullish(),
});

const settingsOf = (doc: ComplianceSettingsDocument | null): ComplianceSettings => ({ timeZone: doc?.timeZone ?? DEFAULT_TIME_ZONE });

/**
 * One tenant's compliance settings. A change re-evaluates every status row of the tenant; that runs after
 * the mutation answers (a tenant can hold many assets), as analytics does with its settings. Asset.compliance
 * reads the setting on every call, so it answers in the new zone at once.
 */
export class ComplianceSettingsStore {
  private readonly settings: Collection<ComplianceSettingsDocument>;

  constructor(
    db: Db,
    private readonly tenantId: string,
    private readonly computer: StatusComputer,
    private readonly logger: Logger,
  ) {
    this.settings = db.collection(COMPLIANCE_SETTINGS_COLLECTION);
  }

  async get(): Promise<ComplianceSettings> {
    return settingsOf(await this.settings.findOne({ _id: this.tenantId }));
  }

  /** Omitted fields keep their value; null returns a field to its default. */
  async update(input: unknown): Promise<ComplianceSettings> {
    const { timeZone } = validateInput(settingsInput, input);
    if (timeZone === undefined) return this.get();
    const update = timeZone === null ? { $unset: { timeZone: '' as const } } : { $set: { timeZone } };
    const doc = await this.settings.findOneAndUpdate({ _id: this.tenantId }, update, { upsert: true, returnDocument: 'after' });
    const tenantId = this.tenantId;
    this.computer
      .refreshTenant(tenantId)
      .catch((err: unknown) => this.logger.error({ err, tenantId }, 're-evaluating the tenant after a settings change failed'));
    return settingsOf(doc);
  }
}
