/**
 * The tenant-wide reads over the materialised status rows — the `complianceStatus` list and the summary's counts
 * by state — against the per-asset evaluation (Asset.compliance, computed from the evidence), and what they ask
 * the database: pages cut by the database after the cursor, counts counted there, no read of every row.
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import type { CommandStartedEvent, CommandSucceededEvent, Document, MongoClient } from 'mongodb';
import { publishEvent } from '@linepack/lib/testing/publish-event';
import { startSubgraphHarness, type HarnessResponse, type SubgraphHarness } from '@linepack/lib/testing/subgraph-harness';
import { waitFor } from '@linepack/lib/testing/until';
import { subgraph } from '../src';
import type { ComplianceState } from '../src/documents';
import { ComplianceRepository } from '../src/repository';

let harness: SubgraphHarness;
let redis: Redis;
const tenantId: string = randomUUID();
const stranger: string = randomUUID();
let version = 0;

const AUDIT = '2025-06-01T00:00:00.000Z';
const LATER = '2026-06-01T00:00:00.000Z';
const NO_DUE = '9999-12-31T00:00:00.000Z';
const DAY_MS = 86_400_000;

/** Valves (one row each) by their inspections; V9 and V10 were inspected after AUDIT, so an audit evaluates them. */
const valves: Record<string, string[]> = {
  V0: ['2025-02-01T09:00:00.000Z'],
  V1: ['2025-02-01T10:00:00.000Z'],
  V2: ['2025-02-01T11:00:00.000Z'],
  V3: ['2024-01-10T00:00:00.000Z'],
  V4: ['2025-06-15T00:00:00.000Z'],
  V5: ['2026-03-01T00:00:00.000Z'],
  V6: [],
  V7: [],
  V8: [],
  V9: ['2025-01-10T00:00:00.000Z', '2026-02-01T00:00:00.000Z'],
  V10: ['2026-02-01T00:00:00.000Z'],
  // About 14½ months ago: due within the next weeks whenever the test runs (DUE_SOON now).
  V11: [new Date(Date.now() - 440 * DAY_MS).toISOString()],
};
/** Pipelines (several rows each, mostly without a record): P0 patrolled and leak-surveyed, P1 nothing. */
const pipelineEvidence: Record<string, { type: string; at: string }[]> = {
  P0: [
    { type: 'PATROL', at: '2025-03-01T00:00:00.000Z' },
    { type: 'LEAK_SURVEY', at: '2025-03-01T00:00:00.000Z' },
  ],
  P1: [],
};
const ids = new Map([...Object.keys(valves), ...Object.keys(pipelineEvidence)].map((name) => [name, randomUUID()]));
const idOf = (name: string) => ids.get(name)!;

const publish = (producer: 'assets' | 'measurements', type: string, data: Record<string, unknown>, tenant = tenantId) =>
  publishEvent(redis, harness.dbPrefix, producer, type, tenant, data);
const upsertAsset = (id: string, fields: Record<string, unknown>, tenant = tenantId) =>
  publish('assets', 'asset.upserted', { id, name: id, parentId: null, status: 'ACTIVE', inHca: false, version: ++version, ...fields }, tenant);
const record = (assetId: string, type: string, observedAt: string, tenant = tenantId) =>
  publish('measurements', 'measurement.recorded', { id: randomUUID(), assetId, type, observedAt, source: 'FIELD' }, tenant);

beforeAll(async () => {
  harness = await startSubgraphHarness(subgraph, { defaultScopes: ['compliance:read'], start: { monitorCommands: true } });
  redis = new Redis(process.env['REDIS_URL']!);
  for (const name of Object.keys(valves)) await upsertAsset(idOf(name), { type: 'VALVE', regulation: 'CFR_192' });
  for (const name of Object.keys(pipelineEvidence)) await upsertAsset(idOf(name), { type: 'PIPELINE', regulation: 'CFR_192', classLocation: 1 });
  // Another tenant's valve, due on the same day as V0–V2: it must never show in this tenant's list or counts.
  const foreign = randomUUID();
  await upsertAsset(foreign, { type: 'VALVE', regulation: 'CFR_192' }, stranger);
  await record(foreign, 'VALVE_INSPECTION', '2025-02-01T12:00:00.000Z', stranger);
  for (const [name, dates] of Object.entries(valves)) for (const at of dates) await record(idOf(name), 'VALVE_INSPECTION', at);
  for (const [name, evidence] of Object.entries(pipelineEvidence)) for (const e of evidence) await record(idOf(name), e.type, e.at);

  const status = harness.db.collection('status');
  const newest = (dates: string[]) => (dates.length ? new Date(Math.max(...dates.map((d) => Date.parse(d)))) : null);
  await waitFor(
    async () => {
      for (const [name, dates] of Object.entries(valves)) {
        const row = await status.findOne({ tenantId, _id: `${idOf(name)}:VALVE_INSPECTION` } as Document);
        if (!row || (row['lastEvidenceAt'] as Date | null)?.getTime() !== newest(dates)?.getTime()) return false;
      }
      for (const [name, evidence] of Object.entries(pipelineEvidence)) {
        if ((await status.countDocuments({ tenantId, assetId: idOf(name) })) === 0) return false;
        for (const e of evidence)
          if (!(await status.findOne({ tenantId, _id: `${idOf(name)}:${e.type}`, lastEvidenceAt: new Date(e.at) } as Document))) return false;
      }
      return (await status.countDocuments({ tenantId: stranger })) > 0;
    },
    20_000,
    'the status rows of every asset',
  );
});
afterAll(async () => {
  redis?.disconnect();
  await harness?.stop();
});

const me = () => harness.identity(['compliance:read'], tenantId);

interface Row {
  assetId: string;
  obligation: string;
  state: ComplianceState;
  lastCompletedAt: string | null;
  dueAt: string | null;
}

/** Code-unit order of the ids, as MongoDB orders strings. */
const byListOrder = (a: Row, b: Row) => {
  const ka = [a.dueAt ?? NO_DUE, `${a.assetId}:${a.obligation}`];
  const kb = [b.dueAt ?? NO_DUE, `${b.assetId}:${b.obligation}`];
  return ka[0]! < kb[0]! ? -1 : ka[0]! > kb[0]! ? 1 : ka[1]! < kb[1]! ? -1 : ka[1]! > kb[1]! ? 1 : 0;
};

/** Every obligation of every asset of the tenant, evaluated per asset from the evidence (not from the status rows), in list order. */
async function expectedRows(asOf: string | null): Promise<Row[]> {
  const res = await harness.request(
    `query($r: [_Any!]!, $asOf: DateTime) { _entities(representations: $r) { ... on Asset { id compliance(asOf: $asOf) { obligations { obligation state lastCompletedAt dueAt } } } } }`,
    { identity: me(), variables: { r: [...ids.values()].map((id) => ({ __typename: 'Asset', id })), asOf } },
  );
  expect(res.errors).toBeUndefined();
  const assets = res.data!['_entities'] as { id: string; compliance: { obligations: Omit<Row, 'assetId'>[] } }[];
  return assets.flatMap((a) => a.compliance.obligations.map((o) => ({ assetId: a.id, ...o }))).sort(byListOrder);
}

interface Page {
  totalCount?: number;
  edges: {
    cursor: string;
    node: { asset: { id: string }; obligation: string; state: ComplianceState; lastCompletedAt: string | null; dueAt: string | null };
  }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
}

/** Every page of `complianceStatus`, `first` rows at a time. */
async function walk(args: { asOf?: string; state?: ComplianceState; first: number; totalCount?: boolean }): Promise<Page[]> {
  const pages: Page[] = [];
  let after: string | null = null;
  do {
    const res: HarnessResponse<{ complianceStatus: Page }> = await harness.request<{ complianceStatus: Page }>(
      `query($asOf: DateTime, $filter: ComplianceStatusFilter, $first: Int, $after: String) {
        complianceStatus(asOf: $asOf, filter: $filter, first: $first, after: $after) {
          ${args.totalCount === false ? '' : 'totalCount'} edges { cursor node { asset { id } obligation state lastCompletedAt dueAt } } pageInfo { hasNextPage endCursor } } }`,
      { identity: me(), variables: { asOf: args.asOf ?? null, filter: args.state ? { state: args.state } : null, first: args.first, after } },
    );
    expect(res.errors).toBeUndefined();
    const page: Page = res.data!.complianceStatus;
    pages.push(page);
    after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
    if (pages.length > 100) throw new Error('the pages do not end');
  } while (after);
  return pages;
}
const rowsOf = (pages: Page[]): Row[] => pages.flatMap((p) => p.edges.map(({ node: { asset, ...rest } }) => ({ assetId: asset.id, ...rest })));

describe('complianceStatus, 7 rows a page', () => {
  it.each([
    ['now', undefined],
    ['after all the evidence', LATER],
    ['in an audit before some of the evidence (those rows evaluated from the evidence)', AUDIT],
  ])('returns every row once, soonest due first and no record last, %s', async (_when, asOf) => {
    const expected = await expectedRows(asOf ?? null);
    expect(expected.length).toBeGreaterThan(14);
    const pages = await walk({ asOf, first: 7 });
    expect(rowsOf(pages)).toEqual(expected);
    expect(pages).toHaveLength(Math.ceil(expected.length / 7));
    for (const page of pages) expect(page.totalCount).toBe(expected.length);
    // No record last, ties in id order: V6–V8 and P1's rows (and, in the audit, V10's, evaluated from the evidence).
    expect(expected.at(-1)!.dueAt).toBeNull();
    expect(rowsOf(pages).some((r) => r.assetId === idOf('V10') && r.state === 'NO_RECORD')).toBe(asOf === AUDIT);
    // The cursor keeps its format: [due date (9999-12-31 without one), "<assetId>:<obligation>"] of the last row.
    const last = expected.at(-1)!;
    expect(JSON.parse(Buffer.from(pages.at(-1)!.pageInfo.endCursor!, 'base64url').toString('utf8'))).toEqual([NO_DUE, `${last.assetId}:${last.obligation}`]);
  });

  it.each(['OK', 'DUE_SOON', 'OVERDUE', 'NO_RECORD'] as const)('filters by state %s in an audit and after all the evidence, page by page', async (state) => {
    for (const asOf of [AUDIT, LATER]) {
      const expected = (await expectedRows(asOf)).filter((r) => r.state === state);
      const pages = await walk({ asOf, state, first: 7 });
      expect(rowsOf(pages)).toEqual(expected);
      for (const page of pages) expect(page.totalCount).toBe(expected.length);
    }
  });

  it('goes on from a cursor in the format pages have always given: [due date, "<assetId>:<obligation>"]', async () => {
    const expected = await expectedRows(LATER);
    const cut = expected.findIndex((r) => r.dueAt === null);
    const before = expected[cut - 1]!;
    const cursor = Buffer.from(JSON.stringify([before.dueAt, `${before.assetId}:${before.obligation}`])).toString('base64url');
    const res = await harness.request(
      `query($after: String) { complianceStatus(asOf: "${LATER}", first: 2, after: $after) { edges { node { asset { id } obligation } } } }`,
      {
        identity: me(),
        variables: { after: cursor },
      },
    );
    expect(
      res.data?.['complianceStatus'].edges.map((e: { node: { asset: { id: string }; obligation: string } }) => [e.node.asset.id, e.node.obligation]),
    ).toEqual(expected.slice(cut, cut + 2).map((r) => [r.assetId, r.obligation]));
  });
});

describe('the counts by state', () => {
  const straightforward = (rows: Row[]) =>
    (['OK', 'DUE_SOON', 'OVERDUE', 'NO_RECORD'] as const).map((state) => ({ state, count: rows.filter((r) => r.state === state).length }));

  it("equal the states of the tenant's rows, now (pipelineSummary)", async () => {
    const res = await harness.request(
      `query($r: [_Any!]!) { _entities(representations: $r) { ... on PipelineSummary { complianceByState { state count } } } }`,
      {
        identity: me(),
        variables: { r: [{ __typename: 'PipelineSummary', tenantId }] },
      },
    );
    expect(res.errors).toBeUndefined();
    expect(res.data!['_entities'][0].complianceByState).toEqual(straightforward(await expectedRows(null)));
  });

  it('equal the states of the rows at an earlier instant, the rows with newer evidence evaluated from it', async () => {
    const repository = new ComplianceRepository(harness.db, tenantId);
    for (const asOf of [AUDIT, LATER]) {
      expect(await repository.countsByState(new Date(asOf), 30)).toEqual(straightforward(await expectedRows(asOf)));
    }
  });
});

interface Command {
  name: string;
  command: Document;
  /** How many documents the reply carried (a find's first batch). */
  returned: number | undefined;
}

/**
 * The commands the subgraph's own client sends to the status collection while `work` runs, with how many rows
 * each returned (test/support/stack.ts's mongoCommandsDuring, for the whole stack, sees only the commands).
 */
async function statusCommandsDuring(client: MongoClient, work: () => Promise<unknown>): Promise<Command[]> {
  const started = new Map<number, CommandStartedEvent>();
  const commands: Command[] = [];
  const onStart = (e: CommandStartedEvent) => started.set(e.requestId, e);
  const onSuccess = (e: CommandSucceededEvent) => {
    const start = started.get(e.requestId);
    if (!start || start.command[start.commandName] !== 'status') return;
    const batch = (e.reply as { cursor?: { firstBatch?: unknown[] } }).cursor?.firstBatch;
    commands.push({ name: start.commandName, command: start.command, returned: batch?.length });
  };
  client.on('commandStarted', onStart);
  client.on('commandSucceeded', onSuccess);
  try {
    await work();
  } finally {
    client.off('commandStarted', onStart);
    client.off('commandSucceeded', onSuccess);
  }
  return commands;
}

describe('what the database is asked', () => {
  it('counts by state with counts, reading only the rows with evidence after now (none)', async () => {
    const commands = await statusCommandsDuring(harness.service.mongo!, () =>
      harness.request(`query($r: [_Any!]!) { _entities(representations: $r) { ... on PipelineSummary { complianceByState { state count } } } }`, {
        identity: me(),
        variables: { r: [{ __typename: 'PipelineSummary', tenantId }] },
      }),
    );
    expect(commands.map((c) => c.name).sort()).toEqual(['aggregate', 'aggregate', 'aggregate', 'aggregate', 'find']);
    for (const count of commands.filter((c) => c.name === 'aggregate')) {
      // countDocuments: the tenant's rows in one state, counted by $group; nothing comes back but the number.
      expect(count.command['pipeline'][0].$match).toMatchObject({ tenantId });
      expect(Object.keys(count.command['pipeline'].at(-1))).toEqual(['$group']);
    }
    const find = commands.find((c) => c.name === 'find')!;
    expect(find.command['filter']).toEqual({ tenantId, lastEvidenceAt: { $gt: expect.any(Date) } });
    expect(find.returned).toBe(0);
  });

  it('reads a page of 7 as at most 8 rows ordered and cut by the database, and counts only when totalCount is asked for', async () => {
    const total = (await expectedRows(null)).length;
    for (const totalCount of [false, true]) {
      const commands = await statusCommandsDuring(harness.service.mongo!, () => walk({ first: 7, totalCount }));
      const finds = commands.filter((c) => c.name === 'find');
      const pages = Math.ceil(total / 7);
      expect(commands.filter((c) => c.name === 'aggregate')).toHaveLength(totalCount ? pages : 0);
      expect(commands.filter((c) => c.name !== 'aggregate' && c.name !== 'find')).toEqual([]);
      for (const find of finds) {
        expect(find.command['filter'].tenantId).toBe(tenantId);
        if ('lastEvidenceAt' in find.command['filter']) {
          expect(find.returned).toBe(0); // the rows to evaluate here: none now
        } else {
          expect(find.command['limit']).toBeLessThanOrEqual(8);
          expect(find.returned).toBeLessThanOrEqual(8);
        }
      }
      const rowsRead = finds.reduce((n, f) => n + (f.returned ?? 0), 0);
      expect(rowsRead).toBeLessThanOrEqual(total + pages);
    }
  });
});
