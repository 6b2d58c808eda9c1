import { randomUUID } from 'node:crypto';
import type { AnyBulkWriteOperation, Collection, Db } from 'mongodb';
import { BACKGROUND_WORK_REST_RATIO, FairShare } from '@linepack/lib/fair-share';
import { isDatabaseUnavailable } from '@linepack/lib/errors';
import { errorSummary, type Logger } from '@linepack/lib/logger';
import { IdleBackoff } from '@linepack/lib/idle-backoff';
import { findInIdPages } from '@linepack/lib/mongo';
import { Analyzer, type BatchContext } from './compute';
import { ANALYTICS_COLLECTIONS, type AssetProjection } from './documents';
import {
  isComparable,
  dueComparisonRequests,
  requestsOf,
  runsOf,
  type IliRunProjection,
  type RunAnomalyProjection,
  type RunComparisonRecord,
  type ComparisonRequest,
  type RunFeatureGrowth,
  type Supersession,
} from './ili-runs';
import { clustersOf } from './clusters';
import type { AlignableRun } from './model/alignment';
import { compareRuns, DEFAULT_RUN_COMPARISON_SETTINGS, pairGrowth, type MatchableRow, type RunComparisonSettings } from './model/matching';

/**
 * Comparing a segment's imported ILI runs, each with the run before it by run date: girth-weld alignment and one-to-one
 * feature matching (model/alignment.ts, model/matching.ts `compareRuns`), then the growth of every feature of the newer
 * run written on its projection and the run's features assessed again with it.
 *
 * The work is asked for per segment (a request document, so a crash or restart loses nothing) and done by a worker
 * on a thread of its own (threads.ts), not inside the event consumer: a 100,000-feature run takes minutes to reassess,
 * and the consumer and the subgraph's loop must go on serving the other tenants meanwhile. The worker writes and reassesses in chunks, each in a heavyWork slot
 * (lib/fair-share.ts), so other tenants' heavy work gets turns in between; it holds one segment's runs in memory at a
 * time (the two being compared). Whatever order the runs arrive in, every comparable run is compared with its
 * predecessor, and a run whose predecessor, settings or wall thickness changed is compared again: an older run loaded
 * after a newer one re-evaluates the newer.
 */

/**
 * The comparisons' slot for heavy work (lib/fair-share.ts): on their thread (threads.ts) they have it to themselves,
 * and nobody waits for their answer, so each piece rests three times as long as it took (BACKGROUND_WORK_REST_RATIO).
 */
const heavyWork = new FairShare(1, 1_000, { restRatio: BACKGROUND_WORK_REST_RATIO });

/** Features written or reassessed per heavyWork slot: a few tens of milliseconds of database work. */
const CHUNK = 1_000;
/** A request leased this long and not finished is taken over (the worker holding it probably died). */
const LEASE_MS = 10 * 60_000;
/** After a failure the segment is tried again this much later. */
const RETRY_MS = 5_000;

/** The request index is cross-tenant by design (the worker serves every tenant), like the outbox relay's. */
export async function ensureRunComparisonIndexes(db: Db): Promise<void> {
  await requestsOf(db).createIndex({ leasedUntil: 1 }, { name: 'leased_until' });
  await runsOf(db).createIndex({ tenantId: 1, assetId: 1, runDate: 1 }, { name: 'tenant_asset_run_date' });
}

const ymd = (d: Date) => d.toISOString().slice(0, 10);
const round = (x: number, digits: number) => Number(x.toFixed(digits));

/** Compares a segment's runs (see the file comment). */
export class RunComparer {
  private readonly analyzer: Analyzer;
  private readonly runs: Collection<IliRunProjection>;
  private readonly anomalies: Collection<RunAnomalyProjection>;

  constructor(db: Db) {
    this.analyzer = new Analyzer(db);
    this.runs = runsOf(db);
    this.anomalies = db.collection(ANALYTICS_COLLECTIONS.anomalies);
  }

  /** Compares every comparable run of the segment whose comparison is missing or stale; returns how many it compared. */
  async refreshSegment(tenantId: string, assetId: string, now = new Date(), signal?: AbortSignal): Promise<number> {
    const context = await this.analyzer.context(tenantId, [assetId]);
    const asset = context.assets.get(assetId);
    // Without the asset nothing is assessable; its asset.upserted reassesses the segment and asks again.
    if (!asset) return 0;
    const comparable = (await this.runs.find({ tenantId, assetId }, { projection: { tally: 0 } }).toArray())
      .filter(isComparable)
      .sort((a, b) => a.runDate!.getTime() - b.runDate!.getTime() || (a._id < b._id ? -1 : 1));
    let compared = 0;
    for (let i = 0; i < comparable.length; i++) {
      const run = comparable[i]!;
      const older = comparable[i - 1] ?? null;
      const inputsKey = this.inputsKey(context, asset, run, older);
      if (run.comparison?.state === 'COMPLETE' && run.comparison.inputsKey === inputsKey) continue;
      await this.compare(context, asset, run, older, inputsKey, now, signal);
      compared++;
    }
    // From a read after the reassessments (the segment may have changed since `context`): see Analyzer.refreshRisk.
    if (compared > 0) await this.analyzer.refreshRisk(await this.analyzer.riskContext(tenantId, [assetId]), assetId);
    return compared;
  }

  private inputsKey(context: BatchContext, asset: AssetProjection, run: IliRunProjection, older: IliRunProjection | null): string {
    const { odometerToleranceM, clockToleranceDeg, floorRateMmPerYear, toolTolerancePctWt } = context.settings;
    const { interaction } = context.settings;
    return JSON.stringify([
      older?._id ?? null,
      odometerToleranceM,
      clockToleranceDeg,
      floorRateMmPerYear,
      toolTolerancePctWt,
      asset.wallThicknessMm,
      asset.outsideDiameterMm,
      interaction,
    ]);
  }

  private comparisonSettings(context: BatchContext, asset: AssetProjection, run: IliRunProjection): RunComparisonSettings {
    const { settings } = context;
    return {
      ...DEFAULT_RUN_COMPARISON_SETTINGS,
      odometerToleranceM: settings.odometerToleranceM,
      clockToleranceDeg: settings.clockToleranceDeg,
      // The run's own tool where the vendor stated it, else the tenant's setting.
      toolTolerancePctWt: run.toolTolerancePctWt ?? settings.toolTolerancePctWt,
      toolCertainty: run.certaintyPct != null ? run.certaintyPct / 100 : DEFAULT_RUN_COMPARISON_SETTINGS.toolCertainty,
      floorRateMmPerYear: settings.floorRateMmPerYear,
      nominalWallThicknessMm: asset.wallThicknessMm,
    };
  }

  /** The run's tally and features in the listing's shape; features without a log distance cannot be placed and are left out. */
  private async loadRun(tenantId: string, run: IliRunProjection): Promise<{ rows: MatchableRow[]; unplaced: RunAnomalyProjection[] }> {
    const { tally } = (await this.runs.findOne({ _id: run._id, tenantId }, { projection: { tally: 1 } })) ?? {};
    const walls = (tally ?? []).filter((t) => t.wallThicknessMm != null).sort((a, b) => a.logDistanceM - b.logDistanceM);
    const wallAt = (x: number): number | null => {
      let lo = 0;
      let hi = walls.length;
      while (lo < hi) {
        const mid = (lo + hi) >> 1;
        if (walls[mid]!.logDistanceM <= x) lo = mid + 1;
        else hi = mid;
      }
      return lo > 0 ? walls[lo - 1]!.wallThicknessMm : null;
    };
    const rows: MatchableRow[] = (tally ?? []).map((t) => ({
      rowNumber: t.rowNumber,
      kind: t.kind,
      logDistanceM: t.logDistanceM,
      jointNumber: t.jointNumber,
      jointLengthM: t.jointLengthM,
      markerName: t.name,
      vendorFeatureId: null,
      clockDeg: null,
      depthPctWt: null,
      lengthMm: null,
      widthMm: null,
      wallThicknessMm: t.wallThicknessMm,
      surface: null,
    }));
    const unplaced: RunAnomalyProjection[] = [];
    // A page at a time (a run holds up to hundreds of thousands of features): the run's own features, by its id.
    const features = findInIdPages(
      this.anomalies,
      { tenantId, runId: run._id },
      { projection: { _id: 1, odometerM: 1, featureType: 1, clockDeg: 1, depthPctWt: 1, lengthMm: 1, widthMm: 1, surface: 1 } },
    );
    for await (const f of features) {
      if (f.odometerM == null) {
        unplaced.push(f);
        continue;
      }
      rows.push({
        // Features follow the tally's row numbers; only welds are ordered by them.
        rowNumber: rows.length + 1,
        kind: f.featureType ?? 'METAL_LOSS',
        logDistanceM: f.odometerM,
        jointNumber: null,
        jointLengthM: null,
        markerName: null,
        // The measurement id identifies the feature across runs (the unity plot and the matches name it).
        vendorFeatureId: f._id,
        clockDeg: f.clockDeg,
        depthPctWt: f.depthPctWt,
        lengthMm: f.lengthMm,
        widthMm: f.widthMm,
        wallThicknessMm: wallAt(f.odometerM),
        surface: f.surface,
      });
    }
    return { rows, unplaced };
  }

  /** Compares `run` with `older` (none: the segment's first run), writes each feature's growth and reassesses the run. */
  private async compare(
    context: BatchContext,
    asset: AssetProjection,
    run: IliRunProjection,
    older: IliRunProjection | null,
    inputsKey: string,
    now: Date,
    signal?: AbortSignal,
  ): Promise<void> {
    const { tenantId } = context;
    await this.runs.updateOne({ _id: run._id, tenantId }, { $set: { 'comparison.state': 'PENDING', 'comparison.assessedFeatureCount': 0 } });
    const settings = this.comparisonSettings(context, asset, run);
    const olderTolerance = older?.toolTolerancePctWt ?? context.settings.toolTolerancePctWt;
    const base = {
      olderRunId: older?._id ?? null,
      discoveredAt: run.discoveredAt ?? run.runDate!,
      toolTolerancePctWt: run.toolTolerancePctWt ?? null,
      certaintyPct: run.certaintyPct ?? null,
    };
    const floor = settings.floorRateMmPerYear;
    const growth = new Map<string, RunFeatureGrowth>();
    const record: Omit<RunComparisonRecord, 'state' | 'assessedFeatureCount' | 'computedAt' | 'inputsKey'> = {
      olderRunId: base.olderRunId,
      years: null,
      matchedCount: 0,
      newFeatureCount: 0,
      unmatchedOlderCount: 0,
      weldPairCount: 0,
      unmatchedOlderWeldCount: 0,
      unmatchedNewerWeldCount: 0,
    };
    const floorGrowth = (note: string): Omit<RunFeatureGrowth, keyof typeof base> => ({
      matchedMeasurementId: null,
      olderDepthPctWt: null,
      rateMmPerYear: floor,
      basis: 'FLOOR',
      measuredRateMmPerYear: null,
      lengthRateMmPerYear: null,
      years: null,
      note,
    });
    const newer = await this.loadRun(tenantId, run);
    /** The older run's features this run reported again: older measurement id → this run's. */
    const reportedAgain = new Map<string, string>();
    if (!older) {
      const note = `no earlier imported ILI run of this segment to compare with: the floor rate ${floor} mm/year applies`;
      for (const row of newer.rows) if (row.vendorFeatureId) growth.set(row.vendorFeatureId, { ...base, ...floorGrowth(note) });
    } else {
      const previous = await this.loadRun(tenantId, older);
      const runA: AlignableRun<MatchableRow> = { runId: older._id, runDate: ymd(older.runDate!), rows: previous.rows };
      const runB: AlignableRun<MatchableRow> = { runId: run._id, runDate: ymd(run.runDate!), rows: newer.rows };
      const comparison = compareRuns(runA, runB, settings);
      const olderDate = ymd(older.runDate!);
      record.years = comparison.years;
      record.matchedCount = comparison.matched.length;
      record.newFeatureCount = comparison.newFeatures.length;
      record.unmatchedOlderCount = comparison.unmatchedOlder.length;
      record.weldPairCount = comparison.alignment.weldPairs.length;
      record.unmatchedOlderWeldCount = comparison.alignment.unmatchedOlderWelds.length;
      record.unmatchedNewerWeldCount = comparison.alignment.unmatchedNewerWelds.length;
      for (const pair of comparison.matched) {
        const o = pair.older.row;
        const n = pair.newer.row;
        const wall = n.wallThicknessMm ?? o.wallThicknessMm ?? asset.wallThicknessMm;
        reportedAgain.set(o.vendorFeatureId!, n.vendorFeatureId!);
        const matched = { matchedMeasurementId: o.vendorFeatureId, olderDepthPctWt: o.depthPctWt, years: comparison.years };
        if (o.depthPctWt == null || n.depthPctWt == null || wall == null || !(comparison.years > 0)) {
          growth.set(n.vendorFeatureId!, {
            ...base,
            ...matched,
            rateMmPerYear: null,
            basis: null,
            measuredRateMmPerYear: null,
            lengthRateMmPerYear: null,
            note: `matched to feature ${o.vendorFeatureId} of the run of ${olderDate}; no depth to grow from`,
          });
          continue;
        }
        // Each run's own tool tolerance: the older run's tool may differ from the newer's.
        const g = pairGrowth(
          { depthPctWt: o.depthPctWt, lengthMm: o.lengthMm },
          { depthPctWt: n.depthPctWt, lengthMm: n.lengthMm },
          comparison.years,
          wall,
          settings,
          olderTolerance,
        );
        const measured = `depth ${round(o.depthPctWt, 1)} → ${round(n.depthPctWt, 1)} % of wall over ${round(comparison.years, 2)} years, measured ${round(g.measuredDepthRateMmPerYear, 3)} mm/year`;
        growth.set(n.vendorFeatureId!, {
          ...base,
          ...matched,
          rateMmPerYear: g.rateMmPerYear,
          basis: g.basis,
          measuredRateMmPerYear: g.measuredDepthRateMmPerYear,
          lengthRateMmPerYear: g.lengthRateMmPerYear,
          note:
            g.basis === 'MATCHED'
              ? `matched to feature ${o.vendorFeatureId} of the run of ${olderDate}: ${measured}; the rate used is its ${settings.rateConfidence * 100} % upper bound with both tools' tolerance`
              : `matched to feature ${o.vendorFeatureId} of the run of ${olderDate}: ${measured}; the upper bound ${round(g.upperBoundDepthRateMmPerYear, 3)} mm/year is below the floor rate ${floor} mm/year, which applies`,
        });
      }
      const newNote = `new feature: no match in the run of ${olderDate} (new since, or below that run's reporting threshold): the floor rate ${floor} mm/year applies`;
      for (const f of comparison.newFeatures) growth.set(f.newer.row.vendorFeatureId!, { ...base, ...floorGrowth(newNote) });
    }
    const unplacedNote = `no log distance to place it by, so it cannot be matched: the floor rate ${floor} mm/year applies`;
    for (const f of newer.unplaced) growth.set(f._id, { ...base, ...floorGrowth(unplacedNote) });
    // Interacting metal loss of this run, under the tenant's rule: each member is assessed as its cluster's box.
    const clusterable = newer.rows
      .filter((row) => row.vendorFeatureId != null)
      .map((row) => ({
        _id: row.vendorFeatureId!,
        runId: run._id,
        observedAt: run.runDate!,
        featureType: row.kind,
        odometerM: row.logDistanceM,
        stationM: null,
        clockDeg: row.clockDeg,
        depthPctWt: row.depthPctWt,
        lengthMm: row.lengthMm,
        widthMm: row.widthMm,
      }));
    for (const [id, membership] of clustersOf(asset, clusterable, context.settings.interaction)) {
      const g = growth.get(id);
      if (g) g.cluster = membership;
    }

    // The rows are no longer needed: only the growth per feature is kept while writing and reassessing.
    const ids = [...growth.keys()].sort();
    for (let i = 0; i < ids.length; i += CHUNK) {
      signal?.throwIfAborted();
      const ops: AnyBulkWriteOperation<RunAnomalyProjection>[] = ids
        .slice(i, i + CHUNK)
        .map((id) => ({ updateOne: { filter: { _id: id, tenantId }, update: { $set: { fromRun: growth.get(id)! } } } }));
      await heavyWork.run(tenantId, () => this.anomalies.bulkWrite(ops, { ordered: false }));
    }
    growth.clear();
    // The older run's calls this run reported again are marked first: a repair recorded against one of them reaches
    // this run's call through the mark (integrity/anomaly-records.ts carryRepairs) when this run is assessed below.
    if (older) await this.supersede(tenantId, asset._id, older._id, run._id, reportedAgain, signal);
    let assessed = 0;
    for (let i = 0; i < ids.length; i += CHUNK) {
      signal?.throwIfAborted();
      const chunk = ids.slice(i, i + CHUNK);
      // A fresh read per chunk: a field result or repair recorded while the run is compared is in the next chunk's
      // inputs, and the chunk's assessments are stamped with when they were read (Analyzer.write keeps the newer).
      await heavyWork.run(tenantId, async () => this.analyzer.assessNew(await this.analyzer.context(tenantId, [asset._id]), asset._id, chunk));
      assessed += chunk.length;
      await this.runs.updateOne({ _id: run._id, tenantId }, { $set: { 'comparison.assessedFeatureCount': assessed } });
    }
    const complete: RunComparisonRecord = { ...record, state: 'COMPLETE', assessedFeatureCount: assessed, computedAt: now, inputsKey };
    await this.runs.updateOne({ _id: run._id, tenantId }, { $set: { comparison: complete } });
  }

  /**
   * The older run's features the newer run reported again are superseded by the newer calls (off the dig list and out
   * of the risk, kept for the audit trail); marks an earlier comparison made and this one does not (a run loaded in
   * between, a changed setting) are cleared. Only the features whose mark changed are reassessed.
   */
  private async supersede(
    tenantId: string,
    assetId: string,
    olderRunId: string,
    newerRunId: string,
    reportedAgain: ReadonlyMap<string, string>,
    signal?: AbortSignal,
  ): Promise<void> {
    const changed: { id: string; supersededBy: Supersession | null }[] = [];
    const features = findInIdPages(this.anomalies, { tenantId, runId: olderRunId }, { projection: { _id: 1, supersededBy: 1 } });
    for await (const f of features) {
      const by = reportedAgain.get(f._id);
      const next = by ? { measurementId: by, runId: newerRunId } : null;
      if (next?.measurementId !== f.supersededBy?.measurementId || next?.runId !== f.supersededBy?.runId) changed.push({ id: f._id, supersededBy: next });
    }
    for (let i = 0; i < changed.length; i += CHUNK) {
      signal?.throwIfAborted();
      const chunk = changed.slice(i, i + CHUNK);
      const ops: AnyBulkWriteOperation<RunAnomalyProjection>[] = chunk.map(({ id, supersededBy }) => ({
        updateOne: { filter: { _id: id, tenantId }, update: { $set: { supersededBy } } },
      }));
      await heavyWork.run(tenantId, () => this.anomalies.bulkWrite(ops, { ordered: false }));
      const ids = chunk.map((c) => c.id);
      await heavyWork.run(tenantId, async () => this.analyzer.assessNew(await this.analyzer.context(tenantId, [assetId]), assetId, ids));
    }
  }
}

/**
 * Leases comparison requests and serves them, a few segments at a time, until stopped. Requests are documents, so a
 * request made by an event batch of any process (or by a rebuild) is served by whichever worker is running.
 */
export class RunComparisonWorker {
  private readonly id = randomUUID();
  private readonly requests: Collection<ComparisonRequest>;
  private readonly comparer: RunComparer;
  private running = false;
  private loops: Promise<void>[] = [];
  private wakers = new Set<() => void>();
  /** Aborts the comparison in progress at its next chunk when stopping: the request is served again after a restart. */
  private readonly stopping = new AbortController();

  constructor(
    db: Db,
    private readonly logger: Logger,
    /** pollMs: the wait after finding a request; while idle it doubles up to maxPollMs (a request made here wakes it at once). */
    private readonly options: { pollMs?: number; maxPollMs?: number; concurrency?: number } = {},
  ) {
    this.requests = requestsOf(db);
    this.comparer = new RunComparer(db);
  }

  /** Serves one request when one is due; false when there was none. */
  async serveOne(): Promise<boolean> {
    const now = new Date();
    const request = await this.requests.findOneAndUpdate(
      dueComparisonRequests(now),
      { $set: { leasedUntil: new Date(now.getTime() + LEASE_MS), leasedBy: this.id } },
      { sort: { leasedUntil: 1 }, returnDocument: 'after' },
    );
    if (!request) return false;
    try {
      await this.comparer.refreshSegment(request.tenantId, request.assetId, new Date(), this.stopping.signal);
    } catch (err) {
      if (!this.stopping.signal.aborted)
        this.logger.error({ err, tenantId: request.tenantId, assetId: request.assetId }, 'comparing the ILI runs of a segment failed; trying again');
      const retryAt = this.stopping.signal.aborted ? new Date(0) : new Date(Date.now() + RETRY_MS);
      await this.requests.updateOne({ _id: request._id, leasedBy: this.id }, { $set: { leasedUntil: retryAt } });
      return true;
    }
    // Asked for again meanwhile (a newer generation): serve it again rather than drop the newer request.
    const done = await this.requests.deleteOne({ _id: request._id, generation: request.generation });
    if (done.deletedCount === 0) await this.requests.updateOne({ _id: request._id, leasedBy: this.id }, { $set: { leasedUntil: new Date(0) } });
    return true;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    const { pollMs = 500, maxPollMs = 5_000, concurrency = 2 } = this.options;
    for (let n = 0; n < concurrency; n++) {
      const backoff = new IdleBackoff(pollMs, Math.max(pollMs, maxPollMs));
      this.loops.push(
        (async () => {
          while (this.running) {
            let served = false;
            try {
              served = await this.serveOne();
            } catch (err) {
              // An outage is retried by the next poll: one line without a stack, as the services log it.
              if (isDatabaseUnavailable(err)) this.logger.warn({ error: errorSummary(err) }, 'run comparison worker: database unavailable');
              else this.logger.error({ err }, 'run comparison worker: reading requests failed');
            }
            if (served) backoff.busy();
            else if (this.running) {
              const waitMs = backoff.idle();
              await new Promise<void>((resolve) => {
                const wake = (byRequest: boolean) => {
                  clearTimeout(timer);
                  this.wakers.delete(woken);
                  if (byRequest) backoff.busy();
                  resolve();
                };
                const woken = () => wake(true);
                const timer = setTimeout(() => wake(false), waitMs);
                this.wakers.add(woken);
              });
            }
          }
        })(),
      );
    }
  }

  /** A request was just made in this process: look now rather than at the next poll. */
  wake(): void {
    for (const wake of [...this.wakers]) wake();
  }

  async stop(): Promise<void> {
    this.running = false;
    this.stopping.abort();
    this.wake();
    await Promise.all(this.loops);
    this.loops = [];
  }
}
