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
