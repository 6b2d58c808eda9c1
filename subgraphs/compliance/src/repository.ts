import type { Db, Filter } from 'mongodb';
import { z } from 'zod';
import { decodeCursor, encodeCursor, toConnection, type Connection } from '@linepack/lib/pagination';
import { TenantCollection } from '@linepack/lib/tenant-collection';
import { COMPLIANCE_COLLECTIONS, type AssetProjection, type ComplianceState, type RegulationCode, type StatusRow } from './documents';
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
  dueAt: Date | null;
}

const DAY_MS = 86_400_000;
/** Rows with no record sort after every due date. */
const NO_DUE = new Date('9999-12-31T00:00:00.000Z');
const statusCursor = z.tuple([z.string().datetime(), z.string()]);
const sortKey = (n: StatusNode) => [(n.dueAt ?? NO_DUE).toISOString(), `${n.assetId}:${n.obligation}`] as const;

/** One tenant's compliance, read from the projections and the materialised status rows. */
export class ComplianceRepository {
  private readonly rows: TenantCollection<StatusRow>;
  private readonly assets: TenantCollection<AssetProjection>;

  constructor(
    db: Db,
    readonly tenantId: string,
    private readonly computer = new StatusComputer(db),
    deadline?: number,
  ) {
    this.rows = new TenantCollection(db.collection<StatusRow>(COMPLIANCE_COLLECTIONS.status), tenantId, deadline);
    this.assets = new TenantCollection(db.collection<AssetProjection>(COMPLIANCE_COLLECTIONS.assets), tenantId, deadline);
  }

  assetCompliance(assetId: string, asOf: Date, dueSoonDays: number): Promise<AssetComplianceResult> {
    return this.computer.assetCompliance(this.tenantId, assetId, asOf, dueSoonDays);
  }

  /**
   * A row's stored due date depends on its evidence alone, so it holds for any `asOf` from its newest
   * evidence on; for an earlier `asOf` (an audit) some of that evidence does not count yet, and the
   * row is evaluated from the evidence.
   */
  private async nodeAt(row: StatusRow, asOf: Date, dueSoonDays: number): Promise<StatusNode> {
    const valid = !row.lastEvidenceAt || row.lastEvidenceAt <= asOf;
    if (valid) {
      return { ...row, state: stateAt(row.dueAt, asOf, dueSoonDays) };
    }
    const fresh = await this.computer.assetCompliance(this.tenantId, row.assetId, asOf, dueSoonDays);
    const status = fresh.obligations.find((o) => o.obligation.obligation === row.obligation);
    if (!status) return { ...row, state: stateAt(row.dueAt, asOf, dueSoonDays) };
    return {
      assetId: row.assetId,
      obligation: row.obligation,
      regulation: row.regulation,
      state: status.state,
      lastCompletedAt: status.lastCompletedAt,
      dueAt: status.dueAt,
    };
  }

  /**
   * Rows whose stored evaluation holds at `asOf` are filtered by state in the database (a due-date range);
   * the others — an audit of an earlier year, evidence after `asOf` — are evaluated here. Sorted by due date.
   */
  private async nodesAt(filter: StatusFilter, asOf: Date, dueSoonDays: number): Promise<StatusNode[]> {
    const base: Filter<StatusRow> = {};
    if (filter.obligation) base.obligation = filter.obligation;
    if (filter.regulation) base.regulation = filter.regulation;
    if (filter.assetId) base.assetId = filter.assetId;
    const validNow: Filter<StatusRow> = { $or: [{ lastEvidenceAt: null }, { lastEvidenceAt: { $lte: asOf } }] };
    const stateRange = dueRangeFor(filter.state ?? null, asOf, dueSoonDays);
    const [fast, slow] = await Promise.all([
      this.rows.find({ ...base, ...validNow, ...stateRange } as Filter<StatusRow>).toArray(),
      this.rows.find({ ...base, $nor: [validNow] } as Filter<StatusRow>).toArray(),
    ]);
    const nodes: StatusNode[] = fast.map((row) => ({ ...row, state: stateAt(row.dueAt, asOf, dueSoonDays) }));
    for (const row of slow) {
      const node = await this.nodeAt(row, asOf, dueSoonDays);
      if (!filter.state || node.state === filter.state) nodes.push(node);
    }
    return nodes.sort((a, b) => (sortKey(a)[0] === sortKey(b)[0] ? sortKey(a)[1].localeCompare(sortKey(b)[1]) : sortKey(a)[0] < sortKey(b)[0] ? -1 : 1));
  }

  async statusPage(filter: StatusFilter, asOf: Date, dueSoonDays: number, size: number, after: string | null | undefined): Promise<Connection<StatusNode>> {
    const nodes = await this.nodesAt(filter, asOf, dueSoonDays);
    const key = sortKey;
    const cursor = decodeCursor(after, statusCursor);
    const start = cursor ? nodes.findIndex((n) => key(n)[0] > cursor[0] || (key(n)[0] === cursor[0] && key(n)[1] > cursor[1])) : 0;
    const rest = start < 0 ? [] : nodes.slice(start);
    return toConnection(rest.slice(0, size + 1), size, nodes.length, (n) => encodeCursor(key(n)));
  }

  async countsByState(asOf: Date, dueSoonDays: number): Promise<{ state: ComplianceState; count: number }[]> {
    const counts: Record<ComplianceState, number> = { OK: 0, DUE_SOON: 0, OVERDUE: 0, NO_RECORD: 0 };
    for (const node of await this.nodesAt({}, asOf, dueSoonDays)) counts[node.state]++;
    return (Object.keys(counts) as ComplianceState[]).map((state) => ({ state, count: counts[state] }));
  }

  async nextDueAt(asOf: Date): Promise<Date | null> {
    const row = await this.rows.findOne({ dueAt: { $ne: null, $gte: asOf } }, { sort: { dueAt: 1 } });
    return row?.dueAt ?? null;
  }

  knowsAsset(assetId: string): Promise<boolean> {
    return this.assets.countDocuments({ _id: assetId }).then((n) => n > 0);
  }
}

/** The due-date range that puts a row in `state` at `asOf` (see stateAt). */
function dueRangeFor(state: ComplianceState | null, asOf: Date, dueSoonDays: number): Filter<StatusRow> {
  const today = Date.UTC(asOf.getUTCFullYear(), asOf.getUTCMonth(), asOf.getUTCDate());
  const soonLimit = new Date(today + dueSoonDays * DAY_MS);
  switch (state) {
    case null:
      return {};
    case 'NO_RECORD':
      return { dueAt: null };
    case 'OVERDUE':
      return { dueAt: { $ne: null, $lt: new Date(today) } };
    case 'DUE_SOON':
      return { dueAt: { $gte: new Date(today), $lte: soonLimit } };
    case 'OK':
      return { dueAt: { $gt: soonLimit } };
  }
}
