import type { Collection, Db, Document, Filter, UpdateFilter } from 'mongodb';
import type { IliRunFailedData, IliRunImportedData, IliRunStartedData, IliTallyRowData } from '@linepack/subgraph-measurements/events';
import { isDuplicateKeyError } from '@linepack/lib/mongo';
import type { TenantDocument } from '@linepack/lib/tenant-collection';
import type { ClusterMembership } from './clusters';
import type { AnomalyProjection } from './documents';

/**
 * What analytics keeps of imported ILI runs (measurements' `ili.run.*` events) to compare a segment's runs with each
 * other: the run, the tally rows alignment reads, how many of its features have been projected, and the comparison of
 * the run with the one before it. The comparison's per-feature results are written on the features' own projections
 * (`fromRun`), so an anomaly is assessed from one document.
 */
export const ILI_RUN_COLLECTIONS = {
  runs: 'ili_runs',
  /** Segments whose runs need comparing again; the comparison worker (run-comparison.ts) leases and clears them. */
  comparisonRequests: 'ili_comparison_requests',
} as const;

export type RunComparisonState = 'PENDING' | 'COMPLETE';

/** A run's comparison with the run before it on its segment (none for the segment's first run). */
export interface RunComparisonRecord {
  state: RunComparisonState;
  olderRunId: string | null;
  years: number | null;
  matchedCount: number;
  newFeatureCount: number;
  unmatchedOlderCount: number;
  weldPairCount: number;
  unmatchedOlderWeldCount: number;
  unmatchedNewerWeldCount: number;
  /** Features of the run assessed with this comparison applied: the run's featureCount once COMPLETE. */
  assessedFeatureCount: number;
  computedAt: Date | null;
  /** What it was computed from (older run, settings, wall): a comparison whose inputs changed is computed again. */
  inputsKey: string | null;
}

/**
 * One run (`_id` = the run id). A feature event can arrive before the run's own events (separate relays): it creates
 * the document with its count only, and `status` stays absent until the run is heard of.
 */
export interface IliRunProjection extends TenantDocument {
  _id: string;
  assetId: string;
  /**
   * IMPORTING from ili.run.started, IMPORTED from ili.run.imported, FAILED from ili.run.failed (its features are then
   * assessed one by one, not held for a comparison); absent while only features were heard of.
   */
  status?: 'IMPORTING' | 'IMPORTED' | 'FAILED';
  runDate?: Date;
  discoveredAt?: Date;
  toolTolerancePctWt?: number | null;
  certaintyPct?: number | null;
  featureCount?: number;
  /** Distinct features projected so far (counted on first insert, so replays do not count twice). */
  projectedFeatureCount?: number;
  tally?: IliTallyRowData[];
  comparison?: RunComparisonRecord;
  sourceEventId?: string;
}

/** What the run comparison found for one feature of the newer run; the assessment reads its growth from here. */
export interface RunFeatureGrowth {
  olderRunId: string | null;
  /** The run's discovery date (§192.933(b)): the assessment's discoveredAt and the start of its repair due date. */
  discoveredAt: Date;
  /** The run's tool tolerance, % of wall; null: the tenant's setting. */
  toolTolerancePctWt: number | null;
  /** The certainty the run's tolerance is stated at, %; null (or absent on older results): 80. */
  certaintyPct?: number | null;
  matchedMeasurementId: string | null;
  olderDepthPctWt: number | null;
  /** Rate for remaining life, mm/year; null when the feature has no depth to grow (a dent). */
  rateMmPerYear: number | null;
  basis: 'MATCHED' | 'FLOOR' | null;
  /** The depth change over the interval as measured (what the unity plot shows), mm/year. */
  measuredRateMmPerYear: number | null;
  lengthRateMmPerYear: number | null;
  years: number | null;
  /** Why this rate, in words (a new feature says it is new): added to the assessment's methodNotes. */
  note: string;
  /** The cluster of interacting metal loss of its run it belongs to, under the tenant's rule; null when alone. */
  cluster?: ClusterMembership | null;
}

/** The newer run's report of the same feature, written on the older run's feature by the comparison of the two. */
export interface Supersession {
  measurementId: string;
  runId: string;
}

/**
 * An anomaly projection with the run comparison's result, once its run has been compared, and the newer run's report of
 * the same feature once a newer run has been compared with its run.
 */
export type RunAnomalyProjection = AnomalyProjection & { fromRun?: RunFeatureGrowth | null; supersededBy?: Supersession | null };

export interface ComparisonRequest {
  _id: string;
  tenantId: string;
  assetId: string;
  /** Bumped by every request: a segment asked for again while it was being compared is compared again. */
  generation: number;
  leasedUntil: Date;
  leasedBy?: string;
}

export const requestsOf = (db: Db): Collection<ComparisonRequest> => db.collection(ILI_RUN_COLLECTIONS.comparisonRequests);

/** Requests a worker may lease at `now`: never leased, or their lease ran out (the worker serving them stopped). */
export function dueComparisonRequests(now: Date): Filter<ComparisonRequest> {
  return { leasedUntil: { $lte: now } };
}

/** Whether a run comparison worker would find a request to serve now (one indexed question). */
export async function hasDueComparison(db: Db): Promise<boolean> {
  return (await requestsOf(db).findOne(dueComparisonRequests(new Date()), { projection: { _id: 1 } })) !== null;
}

/** Asks for the segment's runs to be compared (again); cheap and idempotent, so callers ask whenever a run may have changed. */
export async function requestRunComparison(db: Db, tenantId: string, assetId: string): Promise<void> {
  const filter = { _id: `${tenantId}:${assetId}` };
  const update = { $inc: { generation: 1 }, $setOnInsert: { tenantId, assetId, leasedUntil: new Date(0) } };
  await upsertOne(requestsOf(db), filter, update);
}

/**
 * updateOne with upsert. Two writers upserting the same new document at once: the loser's insert collides on the key,
 * and the document exists now, so the loser applies its update to it without upsert.
 */
async function upsertOne<T extends Document>(collection: Collection<T>, filter: Filter<T>, update: UpdateFilter<T>): Promise<void> {
  try {
    await collection.updateOne(filter, update, { upsert: true });
  } catch (err) {
    if (!isDuplicateKeyError(err)) throw err;
    await collection.updateOne(filter, update);
  }
}

export const runsOf = (db: Db): Collection<IliRunProjection> => db.collection(ILI_RUN_COLLECTIONS.runs);

/** The run heard of with its import complete and every one of its features projected: it can be compared. */
export function isComparable(run: IliRunProjection): boolean {
  return run.status === 'IMPORTED' && run.featureCount != null && (run.projectedFeatureCount ?? 0) >= run.featureCount;
}

const PENDING_COMPARISON: RunComparisonRecord = {
  state: 'PENDING',
  olderRunId: null,
  years: null,
  matchedCount: 0,
  newFeatureCount: 0,
  unmatchedOlderCount: 0,
  weldPairCount: 0,
  unmatchedOlderWeldCount: 0,
  unmatchedNewerWeldCount: 0,
  assessedFeatureCount: 0,
  computedAt: null,
  inputsKey: null,
};

/** Runs whose features wait for the run's comparison rather than being assessed as they arrive. */
export const HELD_RUN_STATUSES = ['IMPORTING', 'IMPORTED'] as const;

/** Projects ili.run.started (again, when a failed import is resumed): never moves an IMPORTED run back. */
export async function projectRunStarted(runs: Collection<IliRunProjection>, tenantId: string, run: IliRunStartedData, eventId: string): Promise<void> {
  const { id, ...fields } = run;
  await upsertOne(runs, { _id: id, tenantId }, { $set: { ...fields, sourceEventId: eventId } });
  await runs.updateOne({ _id: id, tenantId, status: { $ne: 'IMPORTED' } }, { $set: { status: 'IMPORTING' } });
  await runs.updateOne({ _id: id, tenantId, comparison: { $exists: false } }, { $set: { comparison: PENDING_COMPARISON } });
}

/** Projects ili.run.imported (the run, its featureCount and tally); the same event again changes nothing. */
export async function projectRunImported(runs: Collection<IliRunProjection>, tenantId: string, run: IliRunImportedData, eventId: string): Promise<void> {
  const { id, ...fields } = run;
  await upsertOne(runs, { _id: id, tenantId }, { $set: { ...fields, status: 'IMPORTED', sourceEventId: eventId } });
  await runs.updateOne({ _id: id, tenantId, comparison: { $exists: false } }, { $set: { comparison: PENDING_COMPARISON } });
}

/**
 * Projects ili.run.failed: the run will not complete (unless its import is resumed), so the features it wrote are no
 * longer held for a comparison. Never moves an IMPORTED run back. Whether it changed anything.
 */
export async function projectRunFailed(runs: Collection<IliRunProjection>, tenantId: string, run: IliRunFailedData): Promise<boolean> {
  const changed = await runs.updateOne(
    { _id: run.id, tenantId, status: { $nin: ['IMPORTED', 'FAILED'] } },
    { $set: { status: 'FAILED', assetId: run.assetId } },
    { upsert: false },
  );
  return changed.modifiedCount > 0;
}

/** Counts newly projected features per run (documents created by the batch), creating a run heard of by features only. */
export async function countProjectedFeatures(
  runs: Collection<IliRunProjection>,
  tenantId: string,
  added: ReadonlyMap<string, { assetId: string; count: number }>,
): Promise<IliRunProjection[]> {
  const updated: IliRunProjection[] = [];
  for (const [runId, { assetId, count }] of added) {
    const filter = { _id: runId, tenantId };
    const update = { $inc: { projectedFeatureCount: count }, $setOnInsert: { assetId } };
    let doc: IliRunProjection | null;
    try {
      doc = await runs.findOneAndUpdate(filter, update, { upsert: true, returnDocument: 'after', projection: { tally: 0 } });
    } catch (err) {
      if (!isDuplicateKeyError(err)) throw err;
      doc = await runs.findOneAndUpdate(filter, update, { returnDocument: 'after', projection: { tally: 0 } });
    }
    if (doc) updated.push(doc);
  }
  return updated;
}

/** IliRun is owned by measurements; here it is only its key. */
export interface IliRunReference {
  id: string;
}

/** A run's comparison as the API reads it: the record and the run it belongs to. */
export interface RunComparisonView extends RunComparisonRecord {
  runId: string;
  assetId: string;
}

/** One matched pair with both depths: a point of the run's unity plot. */
export interface UnityPlotPointView {
  olderMeasurementId: string;
  newerMeasurementId: string;
  olderDepthPctWt: number;
  newerDepthPctWt: number;
  growthRateMmPerYear: number | null;
}
