import type { Db } from 'mongodb';
import type { DomainEvent } from '@linepack/lib/events/consumer';
import { ASSET_UPSERTED, assetUpsertedData } from '@linepack/subgraph-assets/events';
import { MEASUREMENT_RECORDED, measurementRecordedData } from '@linepack/subgraph-measurements/events';
import { upsertIfNewer } from '@linepack/lib/events/projection';
import { COMPLIANCE_COLLECTIONS, type AssetProjection, type EvidenceProjection, type StatusRow } from './documents';
import { evidenceTypes } from './rules';
import { StatusComputer } from './status';

/**
 * Indexes start with tenantId. `tenant_due` serves the tenant-wide list, keyset-paged by (dueAt, _id), and the
 * counts by state (due-date ranges); `tenant_evidence` finds the rows that an earlier `asOf` (an audit) must
 * evaluate from the evidence — for `asOf` = now an empty range.
 */
export async function ensureComplianceIndexes(db: Db): Promise<void> {
  await db.collection<AssetProjection>(COMPLIANCE_COLLECTIONS.assets).createIndexes([{ key: { tenantId: 1, parentId: 1 }, name: 'tenant_parent' }]);
  await db
    .collection<EvidenceProjection>(COMPLIANCE_COLLECTIONS.evidence)
    .createIndexes([{ key: { tenantId: 1, assetId: 1, type: 1, observedAt: -1 }, name: 'tenant_asset_type_time' }]);
  await db.collection<StatusRow>(COMPLIANCE_COLLECTIONS.status).createIndexes([
    { key: { tenantId: 1, dueAt: 1, _id: 1 }, name: 'tenant_due' },
    { key: { tenantId: 1, lastEvidenceAt: 1 }, name: 'tenant_evidence' },
    { key: { tenantId: 1, assetId: 1 }, name: 'tenant_asset' },
  ]);
}

/**
 * Applies a batch of domain events: projects assets and evidence (idempotently: assets by version,
 * evidence by measurement id), then re-evaluates the status rows of every asset the batch touched —
 * once per asset, and for evidence on an ancestor, its descendants too.
 */
export function complianceEventHandler(db: Db) {
  const assets = db.collection<AssetProjection>(COMPLIANCE_COLLECTIONS.assets);
  const evidence = db.collection<EvidenceProjection>(COMPLIANCE_COLLECTIONS.evidence);
  const status = new StatusComputer(db);
  return async (events: readonly DomainEvent[]): Promise<void> => {
    const touched = new Map<string, Set<string>>();
    const touch = (tenantId: string, assetId: string) => (touched.get(tenantId) ?? touched.set(tenantId, new Set()).get(tenantId)!).add(assetId);
    for (const event of events) {
      if (event.type === ASSET_UPSERTED) {
        const a = assetUpsertedData.parse(event.data);
        const changed = await upsertIfNewer(assets, {
          _id: a.id,
          tenantId: event.tenantId,
          version: a.version,
          type: a.type,
          name: a.name,
          parentId: a.parentId,
          status: a.status,
          regulation: a.regulation,
          classLocation: a.classLocation,
          inHca: a.inHca,
          couldAffectHca: a.couldAffectHca,
          cathodicallyProtected: a.cathodicallyProtected,
          atmosphericExposure: a.atmosphericExposure,
          offshore: a.offshore,
          gasOdorized: a.gasOdorized,
          crossing: a.crossing,
          sourceEventId: event.id,
        });
        if (changed) touch(event.tenantId, a.id);
      } else if (event.type === MEASUREMENT_RECORDED) {
        const m = measurementRecordedData.parse(event.data);
        if (!evidenceTypes.has(m.type)) continue;
        await evidence.updateOne(
          { _id: m.id, tenantId: event.tenantId },
          { $setOnInsert: { assetId: m.assetId, type: m.type, observedAt: m.observedAt, sourceEventId: event.id } },
          { upsert: true },
        );
        touch(event.tenantId, m.assetId);
      }
    }
    for (const [tenantId, assetIds] of touched) await status.refresh(tenantId, [...assetIds]);
  };
}

/** Drops a tenant's (or every tenant's) projections and status rows, before a replay rebuilds them. */
export async function dropComplianceProjections(db: Db, tenantId: string | null): Promise<void> {
  const filter = tenantId ? { tenantId } : {};
  for (const name of Object.values(COMPLIANCE_COLLECTIONS)) await db.collection(name).deleteMany(filter);
}
