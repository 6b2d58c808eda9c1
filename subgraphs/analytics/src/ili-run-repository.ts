import type { Db, Filter } from 'mongodb';
import { z } from 'zod';
import { decodeCursor, encodeCursor, toConnection, type Connection } from '@linepack/lib/pagination';
import { TenantCollection } from '@linepack/lib/tenant-collection';
import { ANALYTICS_COLLECTIONS } from './documents';
import { runsOf, type IliRunProjection, type RunAnomalyProjection, type RunComparisonView, type UnityPlotPointView } from './ili-runs';

const unityCursor = z.tuple([z.string()]);

/** One tenant's ILI run comparisons (tenant from the verified identity only). */
export class IliRunRepository {
  private readonly runs: TenantCollection<IliRunProjection>;
  private readonly anomalies: TenantCollection<RunAnomalyProjection>;

  constructor(db: Db, tenantId: string, deadline?: number) {
    this.runs = new TenantCollection(runsOf(db), tenantId, deadline);
    this.anomalies = new TenantCollection(db.collection<RunAnomalyProjection>(ANALYTICS_COLLECTIONS.anomalies), tenantId, deadline);
  }

  /** Null until analytics has heard of the run itself (features alone do not make it known). */
  async comparison(runId: string): Promise<RunComparisonView | null> {
    const run = await this.runs.findOne({ _id: runId, status: { $exists: true } }, { projection: { tally: 0 } });
    if (!run?.comparison) return null;
    return { ...run.comparison, runId: run._id, assetId: run.assetId };
  }

  /** The run's matched pairs with both depths, by newer measurement id (the tenant_run_id index). */
  async unityPlot(comparison: RunComparisonView, size: number, after: string | null | undefined): Promise<Connection<UnityPlotPointView>> {
    const base: Filter<RunAnomalyProjection> = {
      runId: comparison.runId,
      'fromRun.olderRunId': comparison.olderRunId,
      'fromRun.matchedMeasurementId': { $ne: null },
      'fromRun.olderDepthPctWt': { $ne: null },
      depthPctWt: { $ne: null },
    };
    // No older run: no pairs (a first run's features all carry a null older run).
    if (comparison.olderRunId == null) return toConnection([], size, 0, () => '');
    const cursor = decodeCursor(after, unityCursor);
    const page = cursor ? { ...base, _id: { $gt: cursor[0] } } : base;
    const [rows, totalCount] = await Promise.all([
      this.anomalies.find(page, { sort: { _id: 1 }, limit: size + 1, projection: { _id: 1, depthPctWt: 1, fromRun: 1 } }).toArray(),
      this.anomalies.countDocuments(base),
    ]);
    const points = rows.map((row) => ({
      olderMeasurementId: row.fromRun!.matchedMeasurementId!,
      newerMeasurementId: row._id,
      olderDepthPctWt: row.fromRun!.olderDepthPctWt!,
      newerDepthPctWt: row.depthPctWt!,
      growthRateMmPerYear: row.fromRun!.measuredRateMmPerYear,
    }));
    return toConnection(points, size, totalCount, (p) => encodeCursor([p.newerMeasurementId]), cursor == null);
  }
}
