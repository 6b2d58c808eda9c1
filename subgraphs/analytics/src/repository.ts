import type { Db, Filter } from 'mongodb';
import { z } from 'zod';
import { decodeCursor, encodeCursor, toConnection, type Connection } from '@linepack/lib/pagination';
import { TenantCollection } from '@linepack/lib/tenant-collection';
import { checkIdArgument } from '@linepack/lib/validation';
import { ANALYTICS_COLLECTIONS, type AssessmentDocument, type AssetProjection, type RiskDocument } from './documents';
import { digLoaders, type DigLoaders } from './integrity/loaders';
import { DigRecordStore } from './integrity/records';
import type { AssessmentField } from './selection';
import { RISK_BANDS, type RiskBand } from './model/risk';
import type { ResponseCategory } from './model/response-category';
import { NO_DUE_DATE, RESPONSE_CATEGORIES } from './compute';

const assessmentCursor = z.tuple([z.number().int(), z.string().datetime(), z.string()]);
const riskCursor = z.tuple([z.number().int(), z.string()]);
const digCursor = z.tuple([z.string().datetime(), z.string()]);

/** The categories with a repair due date: the dig list's default. */
export const DUE_CATEGORIES: readonly ResponseCategory[] = ['IMMEDIATE', 'SIXTY_DAY', 'ONE_HUNDRED_EIGHTY_DAY', 'ONE_YEAR', 'TWO_YEAR'];
/** How deep below a pipeline the dig list looks for its segments (system → pipeline → segment → sub-segment is 4). */
const MAX_ASSET_DEPTH = 10;

export interface DigListFilter {
  responseCategories?: readonly ResponseCategory[] | null;
  dueBefore?: Date | null;
  pipelineId?: string | null;
  inHca?: boolean | null;
  includeRepaired?: boolean | null;
  includeSuperseded?: boolean | null;
}

const ANOMALY_STATUSES = ['OPEN', 'REPAIRED', 'SUPERSEDED'] as const;

export interface AssessmentFilter {
  responseCategory?: ResponseCategory | null;
  assessable?: boolean | null;
  statuses?: readonly (typeof ANOMALY_STATUSES)[number][] | null;
}

export interface RiskFilter {
  band?: RiskBand | null;
  minScore?: number | null;
  regulation?: 'CFR_192' | 'CFR_195' | null;
  pipelineId?: string | null;
  inHca?: boolean | null;
}

/** One tenant's analytics results (tenant from the verified identity only). */
export class AnalyticsRepository {
  private readonly assessments: TenantCollection<AssessmentDocument>;
  private readonly risks: TenantCollection<RiskDocument>;
  private readonly assets: TenantCollection<AssetProjection>;
  /** The tenant's field results, repairs and pressure reductions. */
  readonly digs: DigRecordStore;
  /** This request's batching of what a page of assessments asks per row. */
  readonly loaders: DigLoaders;

  constructor(db: Db, tenantId: string, deadline?: number) {
    this.assessments = new TenantCollection(db.collection<AssessmentDocument>(ANALYTICS_COLLECTIONS.assessments), tenantId, deadline);
    this.risks = new TenantCollection(db.collection<RiskDocument>(ANALYTICS_COLLECTIONS.risks), tenantId, deadline);
    this.assets = new TenantCollection(db.collection<AssetProjection>(ANALYTICS_COLLECTIONS.assets), tenantId, deadline);
    this.digs = new DigRecordStore(db, tenantId, deadline);
    this.loaders = digLoaders(this.digs);
  }

  /**
   * Batched per request (the loader): the gateway resolves a page of measurements' assessments as one `_entities` call
   * of up to 500 references, which costs one `_id $in` query, not one findOne per feature. `fields` (selection.ts):
   * only what the selection reads travels; null reads whole assessments.
   */
  assessment(measurementId: string, fields: readonly AssessmentField[] | null = null): Promise<AssessmentDocument | null> {
    return this.loaders.assessmentWith(fields).load(measurementId);
  }

  risk(assetId: string): Promise<RiskDocument | null> {
    return this.risks.findOne({ _id: assetId });
  }

  /** Most urgent first, then by repair due date (none last), then id; read page by page from tenant_asset_urgency. */
  async assessmentsOf(assetId: string, filter: AssessmentFilter, size: number, after: string | null | undefined): Promise<Connection<AssessmentDocument>> {
    const base: Filter<AssessmentDocument> = { assetId };
    if (filter.responseCategory) base.responseCategory = filter.responseCategory;
    if (filter.assessable != null) base.assessable = filter.assessable;
    if (filter.statuses) {
      // Assessments stored before statuses existed have none: they are OPEN ($nin null leaves them out with it).
      const left = ANOMALY_STATUSES.filter((s) => !filter.statuses!.includes(s));
      base.status = { $nin: left.includes('OPEN') ? [...left, null] : left } as Filter<AssessmentDocument>['status'];
    }
    const cursor = decodeCursor(after, assessmentCursor);
    // The range on urgency bounds the index scan to the cursor onwards (an $or alone does not); the $or skips the rest.
    const page: Filter<AssessmentDocument> = cursor
      ? {
          urgency: { $gte: cursor[0] },
          $or: [
            { urgency: { $gt: cursor[0] } },
            { urgency: cursor[0], dueSort: { $gt: new Date(cursor[1]) } },
            { urgency: cursor[0], dueSort: new Date(cursor[1]), _id: { $gt: cursor[2] } },
          ],
        }
      : {};
    const [rows, totalCount] = await Promise.all([
      this.assessments.find({ $and: [base, page] } as Filter<AssessmentDocument>, { sort: { urgency: 1, dueSort: 1, _id: 1 }, limit: size + 1 }).toArray(),
      this.assessments.countDocuments(base),
    ]);
    return toConnection(rows, size, totalCount, (r) => encodeCursor([r.urgency, r.dueSort.toISOString(), r._id]), cursor == null);
  }

  /**
   * The dig list: soonest repair due date first, then measurement id. Read page by page in the order of the
   * tenant_due index (tenantId, dueSort, _id): tenantId is an equality, dueSort bounded above (by dueBefore, or by
   * the "no due date" sentinel when only due categories are asked for) and the sort is the index's own order, so a
   * page stops after `first + 1` matching entries; category, status and asset are checked on the documents the scan
   * reaches. (The embedded test server cannot explain a plan; this is reasoned from the index prefix.)
   */
  async digList(filter: DigListFilter, size: number, after: string | null | undefined): Promise<Connection<AssessmentDocument>> {
    const categories = filter.responseCategories ?? DUE_CATEGORIES;
    const base: Filter<AssessmentDocument> = { responseCategory: { $in: [...categories] } };
    const dueBounds: Record<string, Date> = {};
    if (categories.every((c) => DUE_CATEGORIES.includes(c))) dueBounds['$lt'] = NO_DUE_DATE;
    if (filter.dueBefore) dueBounds['$lt'] = filter.dueBefore < NO_DUE_DATE ? filter.dueBefore : NO_DUE_DATE;
    if (Object.keys(dueBounds).length > 0) base.dueSort = dueBounds;
    const hidden = [...(filter.includeRepaired ? [] : ['REPAIRED' as const]), ...(filter.includeSuperseded ? [] : ['SUPERSEDED' as const])];
    if (hidden.length > 0) base.status = { $nin: hidden };
    // A cluster is one dig: listed once, by its lead (the deepest member); the others are on its dig sheet.
    base.clusterMember = { $ne: true };
    const assetIds = await this.assetScope(filter.pipelineId ?? null, filter.inHca ?? null);
    if (assetIds) base.assetId = { $in: assetIds };
    const cursor = decodeCursor(after, digCursor);
    // The range on dueSort bounds the index scan to the cursor onwards; the $or skips the rest of its due date.
    const page: Filter<AssessmentDocument> = cursor
      ? {
          dueSort: { $gte: new Date(cursor[0]) },
          $or: [{ dueSort: { $gt: new Date(cursor[0]) } }, { dueSort: new Date(cursor[0]), _id: { $gt: cursor[1] } }],
        }
      : {};
    const [rows, totalCount] = await Promise.all([
      this.assessments.find({ $and: [base, page] } as Filter<AssessmentDocument>, { sort: { dueSort: 1, _id: 1 }, limit: size + 1 }).toArray(),
      this.assessments.countDocuments(base),
    ]);
    return toConnection(rows, size, totalCount, (r) => encodeCursor([r.dueSort.toISOString(), r._id]), cursor == null);
  }

  /**
   * The assets a dig-list or risk-register filter allows, or null for every asset: a pipeline and every asset below it (by the
   * parentId analytics projects, one tenant_parent read per level), narrowed to those in (or out of) an HCA.
   */
  private async assetScope(pipelineId: string | null, inHca: boolean | null): Promise<string[] | null> {
    let scope: Set<string> | null = null;
    if (pipelineId != null) {
      scope = new Set([checkIdArgument(pipelineId, 'filter.pipelineId')]);
      let frontier = [pipelineId];
      for (let depth = 0; depth < MAX_ASSET_DEPTH && frontier.length > 0; depth++) {
        const children = await this.assets.find({ parentId: { $in: frontier } }, { projection: { _id: 1 } }).toArray();
        frontier = children.map((c) => c._id).filter((id) => !scope!.has(id));
        for (const id of frontier) scope.add(id);
      }
    }
    if (inHca == null) return scope ? [...scope] : null;
    const hca = await this.assets.find({ inHca, ...(scope ? { _id: { $in: [...scope] } } : {}) }, { projection: { _id: 1 } }).toArray();
    return hca.map((a) => a._id);
  }

  /** Highest score first, then asset id; read page by page from the tenant_score index. */
  async register(filter: RiskFilter, size: number, after: string | null | undefined): Promise<Connection<RiskDocument>> {
    const base: Filter<RiskDocument> = {};
    const band = filter.band ? RISK_BANDS.find((b) => b.band === filter.band)! : null;
    const min = Math.max(filter.minScore ?? 1, band?.minScore ?? 1);
    const max = band?.maxScore ?? 25;
    base.score = { $gte: min, $lte: max };
    if (filter.regulation) base.regulation = filter.regulation;
    // A risk result is keyed by its asset's id: the same scope as the dig list's (a pipeline and what is below it, HCA).
    const assetIds = await this.assetScope(filter.pipelineId ?? null, filter.inHca ?? null);
    if (assetIds) base._id = { $in: assetIds };
    const cursor = decodeCursor(after, riskCursor);
    // The range on score bounds the index scan to the cursor onwards; the $or skips the rest of its score.
    const page: Filter<RiskDocument> = cursor
      ? { score: { $lte: cursor[0] }, $or: [{ score: { $lt: cursor[0] } }, { score: cursor[0], _id: { $gt: cursor[1] } }] }
      : {};
    const [rows, totalCount] = await Promise.all([
      this.risks.find({ $and: [base, page] } as Filter<RiskDocument>, { sort: { score: -1, _id: 1 }, limit: size + 1 }).toArray(),
      this.risks.countDocuments(base),
    ]);
    return toConnection(rows, size, totalCount, (r) => encodeCursor([r.score, r._id]), cursor == null);
  }

  async countsByCategory(): Promise<{ responseCategory: ResponseCategory; count: number }[]> {
    const groups = await this.assessments
      .aggregate<{ _id: ResponseCategory | null; count: number }>([
        { $match: { assessable: true } },
        { $group: { _id: '$responseCategory', count: { $sum: 1 } } },
      ])
      .toArray();
    return RESPONSE_CATEGORIES.map((c) => ({ responseCategory: c, count: groups.find((g) => g._id === c)?.count ?? 0 }));
  }

  async countsByBand(): Promise<{ band: RiskBand; count: number }[]> {
    const groups = await this.risks.aggregate<{ _id: RiskBand; count: number }>([{ $group: { _id: '$band', count: { $sum: 1 } } }]).toArray();
    return RISK_BANDS.map(({ band }) => ({ band, count: groups.find((g) => g._id === band)?.count ?? 0 }));
  }

  async maxErf(): Promise<number | null> {
    const top = await this.assessments.findOne({ erf: { $ne: null } }, { sort: { erf: -1 }, projection: { erf: 1 } });
    return top?.erf ?? null;
  }

  async oldestComputedAt(): Promise<Date | null> {
    const [a, r] = await Promise.all([
      this.assessments.findOne({}, { sort: { computedAt: 1 }, projection: { computedAt: 1 } }),
      this.risks.findOne({}, { sort: { computedAt: 1 }, projection: { computedAt: 1 } }),
    ]);
    const dates = [a?.computedAt, r?.computedAt].filter((d): d is Date => d instanceof Date);
    return dates.length ? new Date(Math.min(...dates.map((d) => d.getTime()))) : null;
  }
}
