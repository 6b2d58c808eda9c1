/**
 * The assets list reads only what its selection asks for (subgraphs/assets/src/selection.ts) and counts the total
 * only when `totalCount` is selected (resolvers/AssetConnection.ts). What must not change for a client: every field
 * asked for is there, however the selection is written, pages still join up, and totalCount is still right.
 */
import { createAsset, graphql, mongoCommandsDuring, startTestStack, type GraphQLResponse, type TestStack } from '../support/stack';

/** The MongoDB command names a subgraph sends on `client` while `work` runs. */
const commandNamesDuring = async (client: Parameters<typeof mongoCommandsDuring>[0], work: () => Promise<unknown>) =>
  (await mongoCommandsDuring(client, work)).map((e) => e.commandName);

let stack: TestStack;
let apiKey: string;
let lineId: string;

type Loose = Record<string, any>;
const call = <T = Loose>(query: string, variables: Record<string, unknown> = {}) => graphql<T>(stack.gatewayUrl, query, { apiKey, variables });

/** Every field the assets subgraph serves for an Asset. */
const ALL_FIELDS = `id type name parent { id name } status product regulation beginStationM endStationM lengthM outsideDiameterMm
  wallThicknessMm smysMpa maopKpa classLocation inHca smtsMpa couldAffectHca cathodicallyProtected atmosphericExposure offshore
  gasOdorized crossing location installedAt version createdAt updatedAt`;

beforeAll(async () => {
  stack = await startTestStack({ monitorCommands: true });
  ({ apiKey } = await stack.tenantWithKey());
  const system = await createAsset(stack.gatewayUrl, apiKey, { type: 'SYSTEM', name: 'List system' });
  lineId = (
    await createAsset(stack.gatewayUrl, apiKey, {
      type: 'PIPELINE',
      name: 'List line',
      parentId: system.id,
      status: 'ACTIVE',
      product: 'NATURAL_GAS',
      regulation: 'CFR_192',
      beginStationM: 100,
      endStationM: 2_600,
      outsideDiameterMm: 508,
      wallThicknessMm: 9.5,
      smysMpa: 448,
      maopKpa: 7_000,
      classLocation: 3,
      inHca: true,
      location: { type: 'Point', coordinates: [4.5, 52.1] },
      installedAt: '2001-06-01T00:00:00Z',
    })
  ).id;
  for (const name of ['Seg C', 'Seg A', 'Seg E', 'Seg B', 'Seg D']) await createAsset(stack.gatewayUrl, apiKey, { type: 'SEGMENT', name, parentId: lineId });
});
afterAll(async () => {
  await stack?.stop();
});

it('answers a page with every field asked for, written through fragments and aliases, as the asset itself has it', async () => {
  const page = await call<{ assets: { edges: { node: Record<string, unknown> & { id: string } }[] } }>(
    `{ assets(first: 10) { edges { ...E } } }
     fragment E on AssetEdge { node { ... on Asset { ${ALL_FIELDS.split(/\s+/).slice(0, 12).join(' ')} } ...Rest alias: name } }
     fragment Rest on Asset { ${ALL_FIELDS.split(/\s+/).slice(12).join(' ')} }`,
  );
  expect(page.body.errors).toBeUndefined();
  const nodes = page.body.data!.assets.edges.map((e) => e.node);
  expect(nodes).toHaveLength(7);
  for (const node of nodes) {
    const whole = await call<{ asset: Record<string, unknown> }>(`query($id: ID!) { asset(id: $id) { ${ALL_FIELDS} alias: name } }`, { id: node.id });
    expect(node).toEqual(whole.body.data!.asset);
  }
  const line = nodes.find((n) => n.id === lineId)!;
  expect(line).toMatchObject({ lengthM: 2_500, parent: { name: 'List system' }, location: { type: 'Point', coordinates: [4.5, 52.1] }, maopKpa: 7_000 });
});

it('pages by name with only the selected fields read, every asset exactly once', async () => {
  const names: string[] = [];
  let after: string | null = null;
  for (;;) {
    const res: GraphQLResponse<Loose> = await call(
      'query($after: String) { assets(first: 2, after: $after, filter: { type: SEGMENT }) { edges { node { name } } pageInfo { hasNextPage endCursor } } }',
      { after },
    );
    names.push(...res.body.data!['assets'].edges.map((e: { node: { name: string } }) => e.node.name));
    if (!res.body.data!['assets'].pageInfo.hasNextPage) break;
    after = res.body.data!['assets'].pageInfo.endCursor;
  }
  expect(names).toEqual(['Seg A', 'Seg B', 'Seg C', 'Seg D', 'Seg E']);
});

it('counts the total only when totalCount is asked for, and then counts it right', async () => {
  const rowsOnly = await commandNamesDuring(stack.subgraphs.assets.mongo!, () => call('{ assets(first: 3) { edges { node { id name } } } }'));
  expect(rowsOnly).toEqual(['find']);

  let res: GraphQLResponse<Loose> | undefined;
  const withTotal = await commandNamesDuring(stack.subgraphs.assets.mongo!, async () => {
    res = await call('{ assets(first: 3, filter: { type: SEGMENT }) { totalCount a: totalCount edges { node { id } } } }');
  });
  // One count however often the field is asked for (countDocuments is an aggregate).
  expect(withTotal.sort()).toEqual(['aggregate', 'find']);
  expect(res!.body.data!['assets']).toMatchObject({ totalCount: 5, a: 5 });
  expect(res!.body.data!['assets'].edges).toHaveLength(3);
});

it("counts an asset's measurements only when totalCount is asked for, and then counts it right", async () => {
  const items = Array.from({ length: 4 }, (_, i) => ({
    idempotencyKey: `list-${i}`,
    assetId: lineId,
    type: 'PRESSURE',
    value: 6_000,
    unit: 'KPA',
    observedAt: new Date(Date.UTC(2026, 0, 1 + i)).toISOString(),
    source: 'SCADA',
  }));
  const recorded = await call('mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount } }', { i: items });
  expect(recorded.body.errors).toBeUndefined();
  const query = (fields: string) => `query($id: ID!) { asset(id: $id) { measurements(first: 2) { ${fields} } } }`;
  const client = stack.subgraphs.measurements.mongo!;
  let rows!: GraphQLResponse<Loose>;
  let counted!: GraphQLResponse<Loose>;
  const rowsCommands = await commandNamesDuring(client, async () => (rows = await call(query('edges { node { observedAt } }'), { id: lineId })));
  const countedCommands = await commandNamesDuring(
    client,
    async () => (counted = await call(query('totalCount edges { node { observedAt } }'), { id: lineId })),
  );
  expect(rows.body.data!['asset'].measurements.edges.map((e: { node: { observedAt: string } }) => e.node.observedAt)).toEqual([
    '2026-01-04T00:00:00.000Z',
    '2026-01-03T00:00:00.000Z',
  ]);
  expect(rowsCommands).toEqual(['find']);
  expect(counted.body.data!['asset'].measurements.totalCount).toBe(4);
  expect(countedCommands.sort()).toEqual(['aggregate', 'find']);
});

describe('filtered by regulation and class location, and ordered', () => {
  /** Its own tenant: a register with repeated names, repeated keys and keys not recorded, so ties and nulls are paged. */
  let orderKey: string;
  interface Row {
    id: string;
    name: string;
    type: string;
    status: string;
    classLocation: number | null;
    regulation: string | null;
  }
  const ROW = 'id name type status classLocation regulation';
  const read = <T = Loose>(query: string, variables: Record<string, unknown> = {}) => graphql<T>(stack.gatewayUrl, query, { apiKey: orderKey, variables });

  beforeAll(async () => {
    ({ apiKey: orderKey } = await stack.tenantWithKey());
    const system = await createAsset(stack.gatewayUrl, orderKey, { type: 'SYSTEM', name: 'Order system', regulation: 'CFR_195' });
    const gasLine = await createAsset(stack.gatewayUrl, orderKey, {
      type: 'PIPELINE',
      name: 'Gas line',
      parentId: system.id,
      regulation: 'CFR_192',
      status: 'ACTIVE',
    });
    const oilLine = await createAsset(stack.gatewayUrl, orderKey, { type: 'PIPELINE', name: 'oil line', parentId: system.id, regulation: 'CFR_195' });
    const segments: [string, string, number | null, string | null, string][] = [
      // name, parent, class, regulation, status
      ['Seg 1', gasLine.id, 1, 'CFR_192', 'ACTIVE'],
      ['seg 1', gasLine.id, 3, 'CFR_192', 'IDLE'],
      ['Seg 2', gasLine.id, 3, null, 'ACTIVE'],
      ['Seg 3', gasLine.id, null, 'CFR_192', 'PLANNED'],
      ['Seg 4', gasLine.id, 4, 'CFR_192', 'ACTIVE'],
      ['Seg 5', oilLine.id, 2, 'CFR_195', 'ABANDONED'],
      ['Seg 6', oilLine.id, null, null, 'ACTIVE'],
      ['Seg 7', oilLine.id, 3, 'CFR_195', 'ACTIVE'],
    ];
    for (const [name, parentId, classLocation, regulation, status] of segments) {
      await createAsset(stack.gatewayUrl, orderKey, { type: 'SEGMENT', name, parentId, classLocation, regulation, status });
    }
    await createAsset(stack.gatewayUrl, orderKey, { type: 'VALVE', name: 'MLV 1', parentId: gasLine.id, status: 'ACTIVE' });
    await createAsset(stack.gatewayUrl, orderKey, { type: 'RECTIFIER', name: 'Seg 1', parentId: oilLine.id, status: 'ACTIVE' });
  });

  /** Every row of the list in the given order, read `size` at a time. */
  async function everyPage(orderBy: Record<string, unknown> | null, size: number, filter: Record<string, unknown> | null = null): Promise<Row[]> {
    const rows: Row[] = [];
    let after: string | null = null;
    for (let pages = 0; pages < 50; pages++) {
      const res: GraphQLResponse<{ assets: { edges: { node: Row }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } }> = await read(
        `query($o: AssetOrderInput, $f: AssetFilter, $first: Int, $after: String) {
           assets(orderBy: $o, filter: $f, first: $first, after: $after) { edges { node { ${ROW} } } pageInfo { hasNextPage endCursor } }
         }`,
        { o: orderBy, f: filter, first: size, after },
      );
      expect(res.body.errors).toBeUndefined();
      rows.push(...res.body.data!.assets.edges.map((e) => e.node));
      if (!res.body.data!.assets.pageInfo.hasNextPage) return rows;
      after = res.body.data!.assets.pageInfo.endCursor;
    }
    throw new Error('more than 50 pages');
  }

  /** What the order means, written out: the key (null lowest), then the lower-cased name, then the id. */
  function expectedOrder(rows: Row[], key: keyof Row | null, direction: 'ASC' | 'DESC'): string[] {
    const compare = (a: string | number | null, b: string | number | null) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a < b ? -1 : 1);
    const sorted = [...rows].sort((a, b) => (key ? compare(a[key], b[key]) : 0) || compare(a.name.toLowerCase(), b.name.toLowerCase()) || compare(a.id, b.id));
    return (direction === 'ASC' ? sorted : sorted.reverse()).map((r) => r.id);
  }

  it('filters by the regulation and the class location recorded on each asset, and refuses a class that does not exist', async () => {
    const gas = await everyPage(null, 50, { regulation: 'CFR_192' });
    // "Seg 1" and "seg 1" are the same name to the order: their ids decide which comes first.
    expect(gas.map((r) => r.name.toLowerCase())).toEqual(['gas line', 'seg 1', 'seg 1', 'seg 3', 'seg 4']);
    expect(gas.map((r) => r.id)).toEqual(expectedOrder(gas, null, 'ASC'));
    const class3 = await everyPage(null, 50, { classLocation: 3, type: 'SEGMENT' });
    expect(class3.map((r) => r.name)).toEqual(['seg 1', 'Seg 2', 'Seg 7'].sort((a, b) => a.toLowerCase().localeCompare(b.toLowerCase())));
    const both = await everyPage(null, 50, { classLocation: 3, regulation: 'CFR_195' });
    expect(both.map((r) => r.name)).toEqual(['Seg 7']);
    const counted = await read<{ assets: { totalCount: number } }>('{ assets(filter: { regulation: CFR_195 }) { totalCount } }');
    expect(counted.body.data!.assets.totalCount).toBe(4);

    for (const bad of [0, 5, -1]) {
      const res = await read(`{ assets(filter: { classLocation: ${bad} }) { totalCount } }`);
      expect(res.body.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
      expect(res.body.errors?.[0]?.message).toMatch(/filter\.classLocation: a class location is 1, 2, 3 or 4/);
    }
    const wrong = await read('{ assets(filter: { regulation: CFR_193 }) { totalCount } }');
    expect(wrong.body.errors?.[0]?.message).toMatch(/CFR_193/);
  });

  const orders: [string, keyof Row | null][] = [
    ['NAME', null],
    ['TYPE', 'type'],
    ['STATUS', 'status'],
    ['CLASS_LOCATION', 'classLocation'],
    ['REGULATION', 'regulation'],
  ];
  it.each(orders)('orders by %s both ways, and pages of any size join up to exactly that order', async (field, key) => {
    const all = await everyPage(null, 500);
    expect(all).toHaveLength(13);
    for (const direction of ['ASC', 'DESC'] as const) {
      const expected = expectedOrder(all, key, direction);
      for (const size of [1, 2, 3, 500]) {
        const paged = await everyPage({ field, direction }, size);
        expect({ field, direction, size, ids: paged.map((r) => r.id) }).toEqual({ field, direction, size, ids: expected });
      }
    }
    // ASC is the default direction.
    expect((await everyPage({ field }, 4)).map((r) => r.id)).toEqual(expectedOrder(all, key, 'ASC'));
  });

  it('pages an order within a filter, and refuses a cursor of another order instead of skipping rows', async () => {
    const filter = { type: 'SEGMENT' };
    const segments = await everyPage(null, 500, filter);
    const paged = await everyPage({ field: 'CLASS_LOCATION', direction: 'DESC' }, 2, filter);
    expect(paged.map((r) => r.id)).toEqual(expectedOrder(segments, 'classLocation', 'DESC'));
    expect(paged.map((r) => r.classLocation)).toEqual([4, 3, 3, 3, 2, 1, null, null]);

    const first = await read<{ assets: { pageInfo: { endCursor: string } } }>('{ assets(first: 2, orderBy: { field: TYPE }) { pageInfo { endCursor } } }');
    const cursor = first.body.data!.assets.pageInfo.endCursor;
    for (const orderBy of ['{ field: STATUS }', '{ field: TYPE, direction: DESC }', 'null']) {
      const res = await read(`query($after: String) { assets(first: 2, after: $after, orderBy: ${orderBy}) { totalCount } }`, { after: cursor });
      expect(res.body.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
      expect(res.body.errors?.[0]?.message).toMatch(/after is a cursor of another orderBy/);
    }
    // A cursor of the default order (by name) still continues it.
    const byName = await read<{ assets: { pageInfo: { endCursor: string } } }>('{ assets(first: 2) { pageInfo { endCursor } } }');
    const next = await read<{ assets: { edges: { node: { name: string } }[] } }>(
      'query($after: String) { assets(first: 1, after: $after, orderBy: { field: NAME, direction: ASC }) { edges { node { name } } } }',
      { after: byName.body.data!.assets.pageInfo.endCursor },
    );
    expect(next.body.errors).toBeUndefined();
    expect(next.body.data!.assets.edges).toHaveLength(1);
  });
});
