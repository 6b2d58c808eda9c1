import type { Db, Filter } from 'mongodb';
import { z } from 'zod';
import { fieldError } from '@linepack/lib/errors';
import { decodeCursor, encodeCursor, toConnection, type Connection } from '@linepack/lib/pagination';
import { TenantCollection } from '@linepack/lib/tenant-collection';
import { COMPLIANCE_COLLECTIONS, ROW_STATES, type AssetProjection, type ComplianceState, type RegulationCode, type StatusRow } from './documents';
import { localDay } from './domain/calendar';
import { stateAt } from './rules';
import { StatusComputer, type AssetComplianceResult } from './status';

export interface StatusFilter {
  state?: ComplianceState | null;
  obligation?: string | null;
  regulation?: RegulationCode | null;
  assetId?: string | null;
}

export interface StatusNode {
  assetId: string;
  obligation: string;
  regulation: RegulationCode;
  state: ComplianceState;
  lastCompletedAt: Date | null;
  /** The last on-time calendar day in `timeZone` (00:00Z of that date). */
  dueAt: Date | null;
  timeZone: string;
}

/**
 * A page of `complianceStatus` as the resolvers see it: the total is counted only when the selection reads
 * `totalCount` (resolvers/ComplianceStatusConnection.ts) — a count is another query, over every matching row.
 */
export interface StatusPage extends Omit<Connection<StatusNode>, 'totalCount'> {
  count(): Promise<number>;
}

const DAY_MS = 86_400_000;
/** Rows with no record sort after every due date. */
const NO_DUE = new Date('9999-12-31T00:00:00.000Z');
const NO_DUE_ISO = NO_DUE.toISOString();
const statusCursor = z.tuple([z.string().datetime(), z.string()]);
/** The list order, and the cursor: [due date (NO_DUE without one) as an ISO string, `<assetId>:<obligation>`]. */
type SortKey = readonly [due: string, id: string];
const sortKey = (n: StatusNode): SortKey => [(n.dueAt ?? NO_DUE).toISOString(), `${n.assetId}:${n.obligation}`];
/**
 * Code-unit order, as MongoDB orders the `_id` strings (binary, no collation): rows ordered by the database and
 * rows evaluated here interleave consistently, and a cursor means the same on both sides.
 */
const compareKeys = (a: SortKey, b: SortKey): number => (a[0] !== b[0] ? (a[0] < b[0] ? -1 : 1) : a[1] < b[1] ? -1 : a[1] > b[1] ? 1 : 0);
/** What a list row shows; the bookkeeping (tenant, evidence time, computedAt) stays in the database. */
const nodeFields = { _id: 1, assetId: 1, obligation: 1, regulation: 1, lastCompletedAt: 1, dueAt: 1 } as const;
type NodeFields = Pick<StatusRow, keyof typeof nodeFields>;

/**
 * Rows whose stored evaluation holds at `asOf`: a row's stored due date depends on its evidence alone, so it
 * holds for any `asOf` from its newest evidence on — always the case for `asOf` = now.
 */
const validAt = (asOf: Date): Filter<StatusRow> => ({ $or: [{ lastEvidenceAt: null }, { lastEvidenceAt: { $lte: asOf } }] });
/**
 * The other rows (lastEvidenceAt is a date or null, so this is exactly the complement of validAt): an audit of an
 * earlier instant, where some of the evidence does not count yet. Few, and none for `asOf` = now: a range on the
 * `tenant_evidence` index, so learning that there are none reads no row.
 */
const staleAt = (asOf: Date): Filter<StatusRow> => ({ lastEvidenceAt: { $gt: asOf } });

function baseFilter(filter: StatusFilter): Filter<StatusRow> {
  const base: Filter<StatusRow> = {};
  if (filter.obligation) base.obligation = filter.obligation;
  if (filter.regulation) base.regulation = filter.regulation;
  if (filter.assetId) base.assetId = filter.assetId;
  return base;
}

/** The cursor's key with its date written as sortKey writes it: the key is compared here and in the database. */
function cursorKey(after: string | null | undefined): SortKey | null {
  const cursor = decodeCursor(after, statusCursor);
  if (!cursor) return null;
  const due = new Date(cursor[0]);
  if (Number.isNaN(due.getTime())) throw fieldError('BAD_USER_INPUT', 'after is not a cursor returned by this field', { field: 'after' });
  return [due.toISOString(), cursor[1]];
}

/** One tenant's compliance, read from the projections and the materialised status rows. */
export class ComplianceRepository {
  private readonly rows: TenantCollection<StatusRow>;
  private readonly assets: TenantCollection<AssetProjection>;
  /** Read once per repository (one request). */
  private zone: Promise<string> | undefined;

  constructor(
    db: Db,
    readonly tenantId: string,
    private readonly computer = new StatusComputer(db),
    deadline?: number,
  ) {
    this.rows = new TenantCollection(db.collection<StatusRow>(COMPLIANCE_COLLECTIONS.status), tenantId, deadline);
    this.assets = new TenantCollection(db.collection<AssetProjection>(COMPLIANCE_COLLECTIONS.assets), tenantId, deadline);
  }

  /** The tenant's time zone: the calendar days of every evaluation and due date. */
  timeZone(): Promise<string> {
    return (this.zone ??= this.computer.timeZoneOf(this.tenantId));
  }

  async assetCompliance(assetId: string, asOf: Date, dueSoonDays: number): Promise<AssetComplianceResult> {
    return this.computer.assetCompliance(this.tenantId, assetId, asOf, dueSoonDays, await this.timeZone());
  }

  /** The rows valid at `asOf` that are in `state` (any: null) there — for a valid row, a due-date range. */
  private validFilter(base: Filter<StatusRow>, state: ComplianceState | null, asOf: Date, dueSoonDays: number, timeZone: string): Filter<StatusRow> {
    return { ...base, ...dueRangeFor(state, asOf, dueSoonDays, timeZone), ...validAt(asOf) } as Filter<StatusRow>;
  }

  /**
   * The first `limit` rows matching `match` after `after` in list order, ordered and cut by the database. The
   * `tenant_due` index {tenantId, dueAt, _id} puts a null dueAt first but the list puts "no record" last, so the
   * dated rows are read first (keyset on (dueAt, _id)) and then, while the page is not full, the undated ones
   * by _id (the same index: tenantId, dueAt = null, _id). The state filter may rule either part out.
   */
  private async validRowsAfter(
    match: Filter<StatusRow>,
    after: SortKey | null,
    limit: number,
    parts: { dated: boolean; undated: boolean },
  ): Promise<NodeFields[]> {
    const rows: NodeFields[] = [];
    const pastDated = after !== null && after[0] >= NO_DUE_ISO;
    if (parts.dated && !pastDated) {
      // The range on dueAt bounds the index scan; the $or only skips the ids up to the cursor on its own due date.
      const keyset: Filter<StatusRow>[] = after
        ? [{ dueAt: { $gte: new Date(after[0]) } }, { $or: [{ dueAt: { $gt: new Date(after[0]) } }, { _id: { $gt: after[1] } }] }]
        : [];
      const filter = { $and: [match, { dueAt: { $ne: null } }, ...keyset] } as Filter<StatusRow>;
      rows.push(...(await this.rows.find(filter, { sort: { dueAt: 1, _id: 1 }, limit, projection: nodeFields }).toArray()));
    }
    if (parts.undated && rows.length < limit) {
      const keyset: Filter<StatusRow>[] = pastDated ? [{ _id: { $gt: after[1] } }] : [];
      const filter = { $and: [match, { dueAt: null }, ...keyset] } as Filter<StatusRow>;
      rows.push(...(await this.rows.find(filter, { sort: { _id: 1 }, limit: limit - rows.length, projection: nodeFields }).toArray()));
    }
    return rows;
  }

  /**
   * The rows not valid at `asOf` (staleAt: an audit), each evaluated from the evidence at `asOf` — one evaluation
   * per asset — and kept when in `state` (any: null). Unordered.
   */
  private async staleNodes(base: Filter<StatusRow>, state: ComplianceState | null, asOf: Date, dueSoonDays: number, timeZone: string): Promise<StatusNode[]> {
    const rows = await this.rows.find({ ...base, ...staleAt(asOf) }, { projection: nodeFields }).toArray();
    const byAsset = new Map<string, NodeFields[]>();
    for (const row of rows) (byAsset.get(row.assetId) ?? byAsset.set(row.assetId, []).get(row.assetId)!).push(row);
    const nodes: StatusNode[] = [];
    // One asset after another: an audit of many assets should not take every connection of the pool.
    for (const [assetId, assetRows] of byAsset) {
      const fresh = await this.computer.assetCompliance(this.tenantId, assetId, asOf, dueSoonDays, timeZone);
      for (const row of assetRows) {
        const status = fresh.obligations.find((o) => o.obligation.obligation === row.obligation);
        // An obligation that no longer applies keeps its stored evaluation until the row is refreshed away.
        const node: StatusNode = status
          ? { ...nodeOf(row, asOf, dueSoonDays, timeZone), state: status.state, lastCompletedAt: status.lastCompletedAt, dueAt: status.dueAt }
          : nodeOf(row, asOf, dueSoonDays, timeZone);
        if (!state || node.state === state) nodes.push(node);
      }
    }
    return nodes;
  }

  /**
   * Rows valid at `asOf` (all of them for `asOf` = now) are filtered by state (a due-date range), ordered and
   * cut to the page by the database after the cursor (validRowsAfter); the others are evaluated here and merged
   * in. Sorted by due date, no record last, then by `<assetId>:<obligation>`.
   */
  async statusPage(filter: StatusFilter, asOf: Date, dueSoonDays: number, size: number, after: string | null | undefined): Promise<StatusPage> {
    const cursor = cursorKey(after);
    const base = baseFilter(filter);
    const state = filter.state ?? null;
    const timeZone = await this.timeZone();
    const valid = this.validFilter(base, state, asOf, dueSoonDays, timeZone);
    const parts = { dated: state !== 'NO_RECORD', undated: state === null || state === 'NO_RECORD' };
    const [rows, stale] = await Promise.all([this.validRowsAfter(valid, cursor, size + 1, parts), this.staleNodes(base, state, asOf, dueSoonDays, timeZone)]);
    const later = cursor ? stale.filter((n) => compareKeys(sortKey(n), cursor) > 0) : stale;
    // Both lists are complete up to the first size + 1 rows after the cursor: so is their merge.
    const nodes = [...rows.map((row) => nodeOf(row, asOf, dueSoonDays, timeZone)), ...later].sort((a, b) => compareKeys(sortKey(a), sortKey(b)));
    const { edges, pageInfo } = toConnection(nodes.slice(0, size + 1), size, 0, (n) => encodeCursor(sortKey(n)));
    let total: Promise<number> | undefined;
    return { edges, pageInfo, count: () => (total ??= this.rows.countDocuments(valid).then((n) => n + stale.length)) };
  }

  /**
   * The rows in each state at `asOf`: the valid ones counted by the database (a due-date range per state), the
   * others (an audit) evaluated here. No row of the list is read for `asOf` = now.
   */
  async countsByState(asOf: Date, dueSoonDays: number): Promise<{ state: ComplianceState; count: number }[]> {
    const timeZone = await this.timeZone();
    const [counts, stale] = await Promise.all([
      Promise.all(ROW_STATES.map((state) => this.rows.countDocuments(this.validFilter({}, state, asOf, dueSoonDays, timeZone)))),
      this.staleNodes({}, null, asOf, dueSoonDays, timeZone),
    ]);
    return ROW_STATES.map((state, i) => ({ state, count: (counts[i] ?? 0) + stale.filter((n) => n.state === state).length }));
  }

  /** The earliest due day on or after asOf's day in the tenant's zone (rows store days, not instants). */
  async nextDueAt(asOf: Date): Promise<Date | null> {
    const row = await this.rows.findOne({ dueAt: { $ne: null, $gte: localDay(asOf, await this.timeZone()) } }, { sort: { dueAt: 1 } });
    return row?.dueAt ?? null;
  }

  knowsAsset(assetId: string): Promise<boolean> {
    return this.assets.countDocuments({ _id: assetId }).then((n) => n > 0);
  }
}

/** A row valid at `asOf` as the list shows it: its state follows from the stored due date. */
function nodeOf(row: NodeFields, asOf: Date, dueSoonDays: number, timeZone: string): StatusNode {
  return {
    assetId: row.assetId,
    obligation: row.obligation,
    regulation: row.regulation,
    state: stateAt(row.dueAt, asOf, dueSoonDays, timeZone),
    lastCompletedAt: row.lastCompletedAt,
    dueAt: row.dueAt,
    timeZone,
  };
}

/**
 * The due-date range that puts a row in `state` at `asOf`: exactly stateAt, whose day count compares calendar days of
 * the tenant's zone — a due date on the last DUE_SOON day is DUE_SOON at any hour of it there.
 */
function dueRangeFor(state: ComplianceState | null, asOf: Date, dueSoonDays: number, timeZone: string): Filter<StatusRow> {
  const today = localDay(asOf, timeZone).getTime();
  const okFrom = new Date(today + (dueSoonDays + 1) * DAY_MS);
  switch (state) {
    case null:
      return {};
    case 'NO_RECORD':
      return { dueAt: null };
    case 'OVERDUE':
      return { dueAt: { $ne: null, $lt: new Date(today) } };
    case 'DUE_SOON':
      return { dueAt: { $gte: new Date(today), $lt: okFrom } };
    case 'OK':
      return { dueAt: { $gte: okFrom } };
    case 'NOT_EVALUATED':
    case 'NOT_IN_SERVICE':
      // Asset-level states only: no row is ever in them.
      return { _id: { $in: [] } };
  }
}
