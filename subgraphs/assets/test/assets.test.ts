/**
 * The assets team's own tests: this subgraph alone, in-process, against its own database, with
 * identities minted as the gateway mints them. The gateway path is covered in test/domain/assets.test.ts.
 */
import { assetUpsertedData } from '../src/events';
import { startSubgraphHarness, type SubgraphHarness } from '@linepack/lib/testing/subgraph-harness';
import { subgraph } from '../src';
import { assetEventData, type AssetDocument } from '../src/documents';
import { ASSETS_COLLECTION } from '../src/repository';

let harness: SubgraphHarness;
beforeAll(async () => {
  harness = await startSubgraphHarness(subgraph, { defaultScopes: ['assets:read', 'assets:write'] });
});
afterAll(() => harness?.stop());

const create = `mutation($input: CreateAssetInput!) { createAsset(input: $input) { id status version parent { id } } }`;

it('creates a hierarchy and resolves it through _entities', async () => {
  const line = (await harness.request(create, { variables: { input: { type: 'PIPELINE', name: 'Line 9' } } })).data!['createAsset'];
  expect(line).toMatchObject({ status: 'PLANNED', version: 1, parent: null });
  const seg = (await harness.request(create, { variables: { input: { type: 'SEGMENT', name: 'Line 9 · MP 0–2', parentId: line.id, classLocation: 3 } } }))
    .data!['createAsset'];
  const res = await harness.request(`query($r: [_Any!]!) { _entities(representations: $r) { ... on Asset { id name classLocation parent { name } } } }`, {
    variables: { r: [{ __typename: 'Asset', id: seg.id }] },
  });
  expect(res.data?.['_entities']).toEqual([{ id: seg.id, name: 'Line 9 · MP 0–2', classLocation: 3, parent: { name: 'Line 9' } }]);
});

it('records the attributes the compliance rules read, null clears them, and the asset.upserted event carries them', async () => {
  const fields = 'id version offshore gasOdorized atmosphericExposure cathodicallyProtected';
  const line = (
    await harness.request(`mutation($input: CreateAssetInput!) { createAsset(input: $input) { ${fields} } }`, {
      variables: { input: { type: 'PIPELINE', name: 'Line 12', offshore: true, gasOdorized: false, atmosphericExposure: true } },
    })
  ).data!['createAsset'];
  expect(line).toEqual({ id: line.id, version: 1, offshore: true, gasOdorized: false, atmosphericExposure: true, cathodicallyProtected: null });
  const stored = await harness.db.collection<AssetDocument>(ASSETS_COLLECTION).findOne({ _id: line.id });
  expect(assetUpsertedData.parse(assetEventData(stored!))).toMatchObject({ offshore: true, gasOdorized: false, atmosphericExposure: true });

  const cleared = await harness.request(`mutation($id: ID!) { updateAsset(id: $id, version: 1, input: { offshore: null, gasOdorized: true }) { ${fields} } }`, {
    variables: { id: line.id },
  });
  expect(cleared.data?.['updateAsset']).toMatchObject({ version: 2, offshore: null, gasOdorized: true, atmosphericExposure: true });
  const wrong = await harness.request(`mutation($input: CreateAssetInput!) { createAsset(input: $input) { id } }`, {
    variables: { input: { type: 'VALVE', name: 'MLV 12', offshore: 'yes' } },
  });
  expect(wrong.errors?.[0]?.message).toMatch(/input\.offshore.*Boolean/);
});

it('refuses a status transition the lifecycle does not allow, and a stale version', async () => {
  const a = (await harness.request(create, { variables: { input: { type: 'VALVE', name: 'MLV 3', status: 'ACTIVE' } } })).data!['createAsset'];
  const back = await harness.request(`mutation($id: ID!) { updateAsset(id: $id, version: 1, input: { status: PLANNED }) { id } }`, { variables: { id: a.id } });
  expect(back.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  expect(back.errors?.[0]?.message).toMatch(/cannot change status from ACTIVE to PLANNED/);
  await harness.request(`mutation($id: ID!) { updateAsset(id: $id, version: 1, input: { name: "MLV 3A" }) { id } }`, { variables: { id: a.id } });
  const stale = await harness.request(`mutation($id: ID!) { updateAsset(id: $id, version: 1, input: { name: "MLV 3B" }) { id } }`, { variables: { id: a.id } });
  expect(stale.errors?.[0]?.extensions?.['code']).toBe('CONFLICT');
});

it("keeps each tenant's assets to itself", async () => {
  const mine = (await harness.request(create, { variables: { input: { type: 'STATION', name: 'CS 1' } } })).data!['createAsset'];
  const other = harness.identity(['assets:read']);
  const byId = await harness.request(`query($id: ID!) { asset(id: $id) { id } }`, { identity: other, variables: { id: mine.id } });
  expect(byId.data?.['asset']).toBeNull();
  const list = await harness.request(`{ assets(first: 50) { totalCount } }`, { identity: other });
  expect(list.data?.['assets'].totalCount).toBe(0);
});
