/**
 * An asset's page of readings (Asset.measurements) reads only the stored fields its nodes select, plus the sort keys
 * its cursors are made of (subgraphs/measurements/src/selection.ts selectedConnectionNodeFields): the most expensive
 * legal query (500 assets' pages of 240) deserialised some thirty fields of 120,000 documents to answer three
 * (issue 31). What a client relies on: every selected field is answered, through fragments too, and pages still join
 * up by their cursors.
 */
import { createAsset, graphql, mongoCommandsDuring, startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let apiKey: string;
let assetId: string;

const RECORD = 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount } }';

beforeAll(async () => {
  stack = await startTestStack({ monitorCommands: true });
  ({ apiKey } = await stack.tenantWithKey());
  assetId = (await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Paged line' })).id;
  const items = Array.from({ length: 7 }, (_, i) => ({
    idempotencyKey: `page-${i}`,
    assetId,
    type: i % 2 ? 'PRESSURE' : 'TEMPERATURE',
    value: 100 + i,
    unit: i % 2 ? 'KPA' : 'CELSIUS',
    // Two readings at one instant: the cursor's id breaks the tie.
    observedAt: `2026-05-0${Math.min(i, 5) + 1}T00:00:00Z`,
    stationM: 10 * i,
    source: 'SCADA',
  }));
  expect((await graphql(stack.gatewayUrl, RECORD, { apiKey, variables: { i: items } })).body.errors).toBeUndefined();
});

afterAll(async () => {
  await stack?.stop();
});

/** The projection of each `find` on the measurements collection while `work` runs. */
async function projections(work: () => Promise<unknown>): Promise<unknown[]> {
  const commands = await mongoCommandsDuring(stack.subgraphs.measurements.mongo!, work);
  return commands.filter((c) => c.commandName === 'find' && c.command['find'] === 'measurements').map((c) => c.command['projection']);
}

type Page = { edges: { cursor: string; node: Record<string, unknown> }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } };

async function page(selection: string, after: string | null = null, fragments = ''): Promise<Page> {
  const res = await graphql<{ asset: { measurements: Page } }>(
    stack.gatewayUrl,
    `query($id: ID!, $after: String) { asset(id: $id) { measurements(first: 3, after: $after) { pageInfo { hasNextPage endCursor } edges { cursor node { ${selection} } } } } } ${fragments}`,
    { apiKey, variables: { id: assetId, after } },
  );
  expect(res.body.errors).toBeUndefined();
  return res.body.data!.asset.measurements;
}

test('a page reads the fields its nodes select and the sort keys, and answers each of them', async () => {
  let first: Page | undefined;
  expect(await projections(async () => (first = await page('id value')))).toEqual([{ _id: 1, observedAt: 1, value: 1 }]);
  expect(first!.edges.map((e) => e.node['value'])).toEqual([106, 105, 104]);
  expect(Object.keys(first!.edges[0]!.node).sort()).toEqual(['id', 'value']);
  // Through a named fragment and an inline one, a field mapped to another stored name (asset → assetId).
  let full: Page | undefined;
  expect(
    await projections(
      async () =>
        (full = await page('...Reading ... on Measurement { stationM asset { id } }', null, 'fragment Reading on Measurement { type unit observedAt }')),
    ),
  ).toEqual([{ _id: 1, assetId: 1, observedAt: 1, stationM: 1, type: 1, unit: 1 }]);
  expect(full!.edges[0]!.node).toEqual({ type: 'TEMPERATURE', unit: 'CELSIUS', observedAt: '2026-05-06T00:00:00.000Z', stationM: 60, asset: { id: assetId } });
});

test('pages read with a projection still join up by their cursors, ties on the instant included', async () => {
  const values: unknown[] = [];
  let after: string | null = null;
  for (let n = 0; n < 4; n++) {
    const p: Page = await page('value', after);
    values.push(...p.edges.map((e) => e.node['value']));
    if (!p.pageInfo.hasNextPage) break;
    after = p.pageInfo.endCursor;
  }
  expect(values).toEqual([106, 105, 104, 103, 102, 101, 100]);
});
