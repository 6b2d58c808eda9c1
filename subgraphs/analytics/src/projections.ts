import type { Collection, Db, OptionalUnlessRequiredId } from 'mongodb';
import { insertKeepingDuplicates } from '@linepack/lib/mongo';
import type { DomainEvent } from '@linepack/lib/events/consumer';
import { ASSET_UPSERTED, assetUpsertedData } from '@linepack/subgraph-assets/events';
import {
  ILI_RUN_FAILED,
  ILI_RUN_IMPORTED,
  ILI_RUN_STARTED,
  iliRunFailedData,
  iliRunImportedData,
  iliRunStartedData,
  MEASUREMENT_RECORDED,
  measurementRecordedData,
} from '@linepack/subgraph-measurements/events';
import { upsertIfNewer } from '@linepack/lib/events/projection';
import { Analyzer } from './compute';
import { ANALYTICS_COLLECTIONS, type AnomalyProjection, type AssetProjection, type CpReadingProjection } from './documents';
import {
  countProjectedFeatures,
  HELD_RUN_STATUSES,
  ILI_RUN_COLLECTIONS,
  isComparable,
  projectRunFailed,
  projectRunImported,
  projectRunStarted,
  requestRunComparison,
  runsOf,
} from './ili-runs';
import { ensureRunComparisonIndexes } from './run-comparison';

/** Every index starts with tenantId. */
export async function ensureAnalyticsIndexes(db: Db): Promise<void> {
  await db.collection(ANALYTICS_COLLECTIONS.anomalies).createIndexes([
    { key: { tenantId: 1, assetId: 1, observedAt: -1 }, name: 'tenant_asset_time' },
    { key: { tenantId: 1, assetId: 1, runId: 1 }, name: 'tenant_asset_run' },
    // A run's unity plot, page by page.
    { key: { tenantId: 1, runId: 1, _id: 1 }, name: 'tenant_run_id' },
  ]);
  await ensureRunComparisonIndexes(db);
  await db.collection(ANALYTICS_COLLECTIONS.assessments).createIndexes([
    { key: { tenantId: 1, assetId: 1, urgency: 1, dueSort: 1, _id: 1 }, name: 'tenant_asset_urgency' },
    { key: { tenantId: 1, responseCategory: 1 }, name: 'tenant_category' },
  ]);
  await db.collection(ANALYTICS_COLLECTIONS.risks).createIndexes([{ key: { tenantId: 1, score: -1, _id: 1 }, name: 'tenant_score' }]);
  // Digs (integrity/records.ts): the dig list in due order, a pipeline's segments, each record once per client key.
  await db.collection(ANALYTICS_COLLECTIONS.assessments).createIndex({ tenantId: 1, dueSort: 1, _id: 1 }, { name: 'tenant_due' });
  await db.collection(ANALYTICS_COLLECTIONS.assets).createIndex({ tenantId: 1, parentId: 1 }, { name: 'tenant_parent' });
  for (const name of [ANALYTICS_COLLECTIONS.fieldResults, ANALYTICS_COLLECTIONS.repairs, ANALYTICS_COLLECTIONS.pressureReductions])
    await db.collection(name).createIndexes([
      { key: { tenantId: 1, idempotencyKey: 1 }, name: 'tenant_idempotency_key', unique: true },
      { key: { tenantId: 1, assetId: 1 }, name: 'tenant_asset' },
    ]);
  await db.collection(ANALYTICS_COLLECTIONS.pressureReductions).createIndex({ tenantId: 1, measurementIds: 1 }, { name: 'tenant_anomaly' });
}

/**
 * Applies a batch of domain events: projects assets (by version), ILI anomalies and the latest
 * pipe-to-soil potential (each measurement once, by id), then assesses the batch's new anomalies per
 * asset, reassesses every anomaly of an asset whose own record changed, and recomputes the risk of every
 * asset the batch touched — once each.
 */
/**
 * Stores the anomalies not projected yet and answers the indexes of those it stored; one already stored (a replayed
 * event, or a run comparison that wrote it first) is left as it is. Inserted, not upserted: the embedded server applies
 * an upsert's fields one by one, which during a 100,000-feature import was a fifth of its CPU. A stored anomaly of another
 * tenant under the same id is refused, as the upsert's insert was.
 */
export async function insertNewAnomalies(anomalies: Collection<AnomalyProjection>, docs: readonly AnomalyProjection[]): Promise<number[]> {
  // In slices: the driver serialises a whole insert on the loop, and 1,000 anomalies of a backlog batch held the
  // analytics loop about 100 ms (bench:fairness --cpu-prof, during an import).
  const duplicates = await insertKeepingDuplicates(anomalies, docs as OptionalUnlessRequiredId<AnomalyProjection>[], { size: ANOMALY_INSERT_SLICE });
  if (duplicates.length > 0) {
    const ids = duplicates.map((i) => docs[i]!._id);
    const stored = new Map((await anomalies.find({ _id: { $in: ids } }, { projection: { tenantId: 1 } }).toArray()).map((a) => [a._id, a.tenantId]));
    const foreign = duplicates.find((i) => stored.get(docs[i]!._id) !== docs[i]!.tenantId);
    if (foreign !== undefined) throw new Error(`anomaly ${docs[foreign]!._id} is stored for another tenant; not projected again`);
  }
  const skipped = new Set(duplicates);
  return docs.flatMap((_, i) => (skipped.has(i) ? [] : [i]));
}

/** Anomalies per insert command (insertNewAnomalies). */
const ANOMALY_INSERT_SLICE = 200;
/** Events checked and projected between two turns of the loop (the handler's loop gives other work a turn). */
const EVENTS_PER_TURN = 200;

export function analyticsEventHandler(db: Db, onComparisonRequested: () => void = () => undefined) {
  const assets = db.collection<AssetProjection>(ANALYTICS_COLLECTIONS.assets);
  const anomalies = db.collection<AnomalyProjection>(ANALYTICS_COLLECTIONS.anomalies);
  const cp = db.collection<CpReadingProjection>(ANALYTICS_COLLECTIONS.cpReadings);
  const analyzer = new Analyzer(db);
  const runs = runsOf(db);
  return async (events: readonly DomainEvent[]): Promise<void> => {
    /** Segments whose runs may now be comparable: a run completed, or the last of a run's features arrived. */
    const comparisons = new Map<string, Set<string>>();
    const changedAssets = new Map<string, Set<string>>();
    const newAnomalies = new Map<string, Map<string, string[]>>();
    const riskTouched = new Map<string, Set<string>>();
    /** Assets whose risk inputs other than new anomalies changed (the asset itself, a CP reading): their risk is always recomputed. */
    const riskInputChanged = new Map<string, Set<string>>();
    const add = (m: Map<string, Set<string>>, tenant: string, id: string) => (m.get(tenant) ?? m.set(tenant, new Set()).get(tenant)!).add(id);
    const anomalyInserts: AnomalyProjection[] = [];
    /** Per insert: its tenant, run and asset, to count each run's newly projected features. */
    const anomalyInsertRuns: { tenantId: string; runId: string | null; assetId: string }[] = [];
    for (const [n, event] of events.entries()) {
      // A backlog batch is up to 1,000 events, each checked against its contract: other requests get a turn between.
      if (n > 0 && n % EVENTS_PER_TURN === 0) await new Promise((resolve) => setImmediate(resolve));
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
          product: a.product,
          regulation: a.regulation,
          outsideDiameterMm: a.outsideDiameterMm,
          wallThicknessMm: a.wallThicknessMm,
          smysMpa: a.smysMpa,
          smtsMpa: a.smtsMpa,
          maopKpa: a.maopKpa,
          classLocation: a.classLocation,
          inHca: a.inHca,
          couldAffectHca: a.couldAffectHca,
          sourceEventId: event.id,
        });
        if (changed) {
          add(changedAssets, event.tenantId, a.id);
          add(riskTouched, event.tenantId, a.id);
          add(riskInputChanged, event.tenantId, a.id);
        }
      } else if (event.type === ILI_RUN_STARTED) {
        await projectRunStarted(runs, event.tenantId, iliRunStartedData.parse(event.data), event.id);
      } else if (event.type === ILI_RUN_IMPORTED) {
        const run = iliRunImportedData.parse(event.data);
        await projectRunImported(runs, event.tenantId, run, event.id);
        add(comparisons, event.tenantId, run.assetId);
      } else if (event.type === ILI_RUN_FAILED) {
        // The features it wrote were held for a comparison that will not come: assess the segment's anomalies again,
        // which now takes them one by one (a resumed import holds the rest again with ili.run.started).
        const run = iliRunFailedData.parse(event.data);
        if (await projectRunFailed(runs, event.tenantId, run)) {
          add(changedAssets, event.tenantId, run.assetId);
          add(riskTouched, event.tenantId, run.assetId);
          add(riskInputChanged, event.tenantId, run.assetId);
        }
      } else if (event.type === MEASUREMENT_RECORDED) {
        const m = measurementRecordedData.parse(event.data);
        if (m.type === 'ILI_ANOMALY') {
          anomalyInserts.push({
            _id: m.id,
            tenantId: event.tenantId,
            assetId: m.assetId,
            runId: m.runId,
            observedAt: m.observedAt,
            featureType: m.featureType,
            surface: m.surface,
            odometerM: m.odometerM,
            stationM: m.stationM,
            clockDeg: m.clockDeg,
            depthPctWt: m.depthPctWt,
            lengthMm: m.lengthMm,
            widthMm: m.widthMm,
            dentDepthPctOd: m.dentDepthPctOd,
            dentHasMetalLoss: m.dentHasMetalLoss,
            dentHasCracking: m.dentHasCracking,
            dentHasStressRiser: m.dentHasStressRiser,
            interactsWithGirthWeld: m.interactsWithGirthWeld,
            interactsWithSeamWeld: m.interactsWithSeamWeld,
            atPipelineCrossing: m.atPipelineCrossing,
            metalLossKind: m.metalLossKind,
            sourceEventId: event.id,
          });
          anomalyInsertRuns.push({ tenantId: event.tenantId, runId: m.runId, assetId: m.assetId });
          const byAsset = newAnomalies.get(event.tenantId) ?? newAnomalies.set(event.tenantId, new Map()).get(event.tenantId)!;
          (byAsset.get(m.assetId) ?? byAsset.set(m.assetId, []).get(m.assetId)!).push(m.id);
          add(riskTouched, event.tenantId, m.assetId);
        } else if (m.type === 'CP_PIPE_TO_SOIL' && m.value != null) {
          // Only a newer reading replaces the stored one, so replays and late arrivals change nothing.
          await cp
            .updateOne(
              { _id: m.assetId, tenantId: event.tenantId, $or: [{ observedAt: { $lt: m.observedAt } }, { observedAt: { $exists: false } }] } as never,
              { $set: { assetId: m.assetId, observedAt: m.observedAt, potentialMv: m.value, sourceEventId: event.id } },
              { upsert: true },
            )
            .catch((err: unknown) => {
              if ((err as { code?: number }).code !== 11000) throw err;
            });
          add(riskTouched, event.tenantId, m.assetId);
          add(riskInputChanged, event.tenantId, m.assetId);
        }
      }
    }
    if (anomalyInserts.length > 0) {
      const inserted = await insertNewAnomalies(anomalies, anomalyInserts);
      // Features counted once each, when first projected: a run is compared once all featureCount of them are in.
      const added = new Map<string, Map<string, { assetId: string; count: number }>>();
      for (const index of inserted) {
        const { tenantId, runId, assetId } = anomalyInsertRuns[index]!;
        if (!runId) continue;
        const byRun = added.get(tenantId) ?? added.set(tenantId, new Map()).get(tenantId)!;
        const entry = byRun.get(runId) ?? byRun.set(runId, { assetId, count: 0 }).get(runId)!;
        entry.count++;
      }
      const heardOfRuns = new Set<string>();
      for (const [tenantId, byRun] of added)
        for (const run of await countProjectedFeatures(runs, tenantId, byRun)) {
          if ((HELD_RUN_STATUSES as readonly string[]).includes(run.status ?? '')) heardOfRuns.add(`${tenantId}:${run._id}`);
          if (isComparable(run) && run.comparison?.state !== 'COMPLETE') add(comparisons, tenantId, run.assetId);
        }
      // A feature just projected for the first time, of a run already heard of, waits for its run comparison (assessNew
      // would skip it): leaving it out here spares an importing run's every batch the re-read of its features and runs,
      // and the risk recomputation of a segment whose assessments did not change.
      const waitingForComparison = new Set<string>();
      for (const index of inserted) {
        const { tenantId, runId } = anomalyInsertRuns[index]!;
        if (runId && heardOfRuns.has(`${tenantId}:${runId}`)) waitingForComparison.add(anomalyInserts[index]!._id);
      }
      for (const [tenantId, byAsset] of newAnomalies)
        for (const [assetId, ids] of byAsset) {
          const assessable = ids.filter((id) => !waitingForComparison.has(id));
          if (assessable.length > 0) byAsset.set(assetId, assessable);
          else {
            byAsset.delete(assetId);
            if (!riskInputChanged.get(tenantId)?.has(assetId)) riskTouched.get(tenantId)?.delete(assetId);
          }
        }
    }
    // Every asset the batch touched is in riskTouched: one read of them (and of the settings) per tenant.
    for (const [tenantId, touched] of riskTouched) {
      if (touched.size === 0) continue;
      const context = await analyzer.context(tenantId, touched);
      for (const id of changedAssets.get(tenantId) ?? []) await analyzer.assessAll(context, id);
      for (const [assetId, ids] of newAnomalies.get(tenantId) ?? [])
        if (!changedAssets.get(tenantId)?.has(assetId)) await analyzer.assessNew(context, assetId, ids);
      // The risks from a read after this batch's assessments are written, not from the batch's context: a risk carries
      // when its inputs were read, and the batch's own reassessments are among them (Analyzer.refreshRisk).
      const risks = await analyzer.riskContext(tenantId, touched);
      for (const id of touched) await analyzer.refreshRisk(risks, id);
    }
    for (const [tenantId, assetIds] of comparisons) for (const assetId of assetIds) await requestRunComparison(db, tenantId, assetId);
    if (comparisons.size > 0) onComparisonRequested();
  };
}

/** Drops a tenant's (or every tenant's) projections and results before a replay rebuilds them; settings stay. */
export async function dropAnalyticsProjections(db: Db, tenantId: string | null): Promise<void> {
  const filter = tenantId ? { tenantId } : {};
  for (const name of [
    ANALYTICS_COLLECTIONS.assets,
    ANALYTICS_COLLECTIONS.anomalies,
    ANALYTICS_COLLECTIONS.cpReadings,
    ANALYTICS_COLLECTIONS.assessments,
    ANALYTICS_COLLECTIONS.risks,
    ILI_RUN_COLLECTIONS.runs,
    ILI_RUN_COLLECTIONS.comparisonRequests,
  ]) {
    await db.collection(name).deleteMany(filter);
  }
}
