/**
 * The measurements team's own tests: this subgraph alone, in-process, against its own database, with
 * identities minted as the gateway mints them. The end-to-end path through the gateway is covered in
 * test/domain/measurements.test.ts.
 */
import { randomUUID } from 'node:crypto';
import Redis from 'ioredis';
import { ASSET_UPSERTED } from '@linepack/subgraph-assets/events';
import { consumedAll, publishEvent } from '@linepack/lib/testing/publish-event';
import { waitFor } from '@linepack/lib/testing/until';
import { startSubgraphHarness, type SubgraphHarness } from '@linepack/lib/testing/subgraph-harness';
import type { Identity } from '@linepack/lib/identity';
import { MEASUREMENTS_CONSUMER_GROUP, subgraph } from '../src';
import { ensureMeasurementIndexes } from '../src/repository';
import { ASSET_REFS_COLLECTION } from '../src/asset-refs';
import type { CommandStartedEvent, CommandSucceededEvent } from 'mongodb';

let harness: SubgraphHarness;
let redis: Redis;
/** The tenant these tests record in; its assets are announced on the assets stream as the assets subgraph would. */
let caller: Identity;
beforeAll(async () => {
  // Command monitoring: a test sees when the subgraph has looked an asset up.
  harness = await startSubgraphHarness(subgraph, { defaultScopes: ['measurements:read', 'measurements:write'], start: { monitorCommands: true } });
  redis = new Redis(process.env['REDIS_URL']!);
  caller = harness.identity(['measurements:read', 'measurements:write'], randomUUID());
  for (const id of ['asset-1', 'asset-2', 'asset-3', 'asset-4']) await announceAsset(caller.tenantId, id);
});
afterAll(async () => {
  await harness?.stop();
  await redis?.quit();
});

function announceAsset(tenantId: string, id: string) {
  return publishEvent(redis, harness.dbPrefix, 'assets', ASSET_UPSERTED, tenantId, { id, type: 'SEGMENT', name: id, status: 'ACTIVE', version: 1 });
}

/** Resolves when the subgraph's database has answered a lookup of `assetId` in its asset projection. */
function assetLookupAnswered(assetId: string): Promise<void> {
  const mongo = harness.service.mongo!;
  const lookups = new Set<number>();
  return new Promise((resolve) => {
    const started = (event: CommandStartedEvent) => {
      if (event.commandName === 'find' && event.command['find'] === ASSET_REFS_COLLECTION && JSON.stringify(event.command['filter']).includes(assetId))
        lookups.add(event.requestId);
    };
    const succeeded = (event: CommandSucceededEvent) => {
      if (!lookups.has(event.requestId)) return;
      mongo.off('commandStarted', started).off('commandSucceeded', succeeded);
      resolve();
    };
    mongo.on('commandStarted', started).on('commandSucceeded', succeeded);
  });
}

const record = `mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount duplicateCount ids } }`;
const reading = (key: string, assetId: string, observedAt: string) => ({
  idempotencyKey: key,
  assetId,
  type: 'CP_PIPE_TO_SOIL',
  source: 'FIELD',
  observedAt,
  value: -910,
  unit: 'MV',
});
const entities = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Asset { id latestMeasurement { type value observedAt } measurements(first: 10) { totalCount } } } }`;

it("keeps an asset's newer dimensions when an older version of the asset is applied after it", async () => {
  // Replicas split the assets stream (and take over each other's pending entries): version 1 can be applied after
  // version 2. The dimensions convert an ILI listing's depths, so the older wall thickness would size every feature wrong.
  const tenantId = randomUUID();
  const announce = (version: number, wallThicknessMm: number) =>
    publishEvent(redis, harness.dbPrefix, 'assets', ASSET_UPSERTED, tenantId, {
      id: 'pipe',
      type: 'SEGMENT',
      name: 'pipe',
      status: 'ACTIVE',
      outsideDiameterMm: 610,
      wallThicknessMm,
      version,
    });
  await announce(2, 9.5);
  await announce(1, 7.9);
  await waitFor(
    () => consumedAll(redis, harness.dbPrefix, ['assets'], tenantId, MEASUREMENTS_CONSUMER_GROUP),
    60_000,
    'measurements to handle both asset events',
  );
  const ref = await harness.db.collection(ASSET_REFS_COLLECTION).findOne({ _id: 'pipe' as never, tenantId });
  expect(ref).toMatchObject({ outsideDiameterMm: 610, wallThicknessMm: 9.5, version: 2 });
});

it('records a batch once and resolves it through Asset entities', async () => {
  const items = [reading('a-1', 'asset-1', '2026-01-01T00:00:00Z'), reading('a-2', 'asset-1', '2026-02-01T00:00:00Z')];
  const first = await harness.request(record, { identity: caller, variables: { i: items } });
  expect(first.data?.['recordMeasurements']).toMatchObject({ insertedCount: 2, duplicateCount: 0 });
  const again = await harness.request(record, { identity: caller, variables: { i: items } });
  expect(again.data?.['recordMeasurements']).toMatchObject({ insertedCount: 0, duplicateCount: 2 });

  const res = await harness.request(entities, { identity: caller, variables: { r: [{ __typename: 'Asset', id: 'asset-1' }] } });
  expect(res.errors).toBeUndefined();
  expect(res.data?.['_entities'][0]).toEqual({
    id: 'asset-1',
    latestMeasurement: { type: 'CP_PIPE_TO_SOIL', value: -910, observedAt: '2026-02-01T00:00:00.000Z' },
    measurements: { totalCount: 2 },
  });
});

it('rejects an invalid batch whole, naming the item and field', async () => {
  const res = await harness.request(record, {
    identity: caller,
    variables: { i: [reading('b-1', 'asset-2', '2026-01-01T00:00:00Z'), { ...reading('b-2', 'asset-2', '2026-01-01T00:00:00Z'), unit: 'KPA' }] },
  });
  expect(res.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  expect(JSON.stringify(res.errors?.[0]?.extensions?.['violations'])).toContain('input[1]');
  const stored = await harness.request(entities, { identity: caller, variables: { r: [{ __typename: 'Asset', id: 'asset-2' }] } });
  expect(stored.data?.['_entities'][0].measurements.totalCount).toBe(0);
});

it("never shows one tenant's measurements to another, even by entity reference", async () => {
  const recorded = await harness.request(record, { identity: caller, variables: { i: [reading('c-1', 'asset-3', '2026-01-01T00:00:00Z')] } });
  expect(recorded.data?.['recordMeasurements']).toMatchObject({ insertedCount: 1 });
  const other = harness.identity(['measurements:read']);
  const res = await harness.request(entities, { identity: other, variables: { r: [{ __typename: 'Asset', id: 'asset-3' }] } });
  expect(res.data?.['_entities'][0]).toEqual({ id: 'asset-3', latestMeasurement: null, measurements: { totalCount: 0 } });
});

it("refuses measurements of an asset the caller's tenant does not have, naming each item, and stores none", async () => {
  const otherTenant = randomUUID();
  await announceAsset(otherTenant, 'their-asset');
  const res = await harness.request(record, {
    identity: caller,
    variables: {
      i: [
        reading('e-1', 'asset-4', '2026-01-01T00:00:00Z'),
        reading('e-2', 'their-asset', '2026-01-01T00:00:00Z'),
        reading('e-3', 'no-such-asset', '2026-01-01T00:00:00Z'),
      ],
    },
  });
  expect(res.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  expect(res.errors?.[0]?.extensions?.['violations']).toEqual([
    { field: 'input[1].assetId', message: 'no asset with this id in your tenant' },
    { field: 'input[2].assetId', message: 'no asset with this id in your tenant' },
  ]);
  const stored = await harness.request(entities, { identity: caller, variables: { r: [{ __typename: 'Asset', id: 'asset-4' }] } });
  expect(stored.data?.['_entities'][0].measurements.totalCount).toBe(0);

  // An asset announced a moment after the batch was sent is waited for, not refused: announced once the subgraph has
  // looked for it and not found it (not after a fixed sleep, which on a loaded machine could come before the lookup).
  const late = `late-${randomUUID()}`;
  const missed = assetLookupAnswered(late);
  const pending = harness.request(record, { identity: caller, variables: { i: [reading('e-4', late, '2026-01-01T00:00:00Z')] } });
  await missed;
  await announceAsset(caller.tenantId, late);
  expect((await pending).data?.['recordMeasurements']).toMatchObject({ insertedCount: 1 });
});

it('checks the scopes in its own SDL again', async () => {
  const readOnly = harness.identity(['measurements:read']);
  const res = await harness.request(record, { identity: readOnly, variables: { i: [reading('d-1', 'asset-4', '2026-01-01T00:00:00Z')] } });
  expect(res.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
});

it('answers 401 without an identity token', async () => {
  const res = await fetch(harness.url, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"query":"{ __typename }"}' });
  expect(res.status).toBe(401);
});

it("reads one ILI run's features of an asset by runId, page by page, and refuses a runId no run can have", async () => {
  await announceAsset(caller.tenantId, 'asset-5');
  await announceAsset(caller.tenantId, 'asset-6');
  const feature = (key: string, assetId: string, runId: string, observedAt: string, odometerM: number) => ({
    idempotencyKey: key,
    assetId,
    type: 'ILI_ANOMALY',
    source: 'ILI',
    observedAt,
    runId,
    featureType: 'METAL_LOSS',
    odometerM,
    depthPctWt: 20,
    lengthMm: 50,
  });
  const items = [
    ...[1, 2, 3].map((i) => feature(`r-a-${i}`, 'asset-5', 'run-A', '2024-05-01T00:00:00Z', i * 10)),
    ...[1, 2].map((i) => feature(`r-b-${i}`, 'asset-5', 'run-B', '2025-05-01T00:00:00Z', i * 10)),
    // The same run id on another asset (runIds recorded by clients are theirs to choose): not this asset's run.
    feature('r-a-other', 'asset-6', 'run-A', '2024-05-01T00:00:00Z', 5),
    reading('r-cp', 'asset-5', '2024-05-01T00:00:00Z'),
  ];
  const stored = await harness.request(record, { identity: caller, variables: { i: items } });
  expect(stored.data?.['recordMeasurements']).toMatchObject({ insertedCount: items.length });

  const byRun = `query($r: [_Any!]!, $run: String, $after: String) { _entities(representations: $r) { ... on Asset {
    measurements(runId: $run, first: 2, after: $after) { totalCount pageInfo { hasNextPage endCursor } edges { node { idempotencyKey runId } } } } } }`;
  const read = async (run: string | null, after: string | null = null) => {
    const res = await harness.request(byRun, { identity: caller, variables: { r: [{ __typename: 'Asset', id: 'asset-5' }], run, after } });
    expect(res.errors).toBeUndefined();
    return res.data?.['_entities'][0].measurements as {
      totalCount: number;
      pageInfo: { hasNextPage: boolean; endCursor: string };
      edges: { node: { idempotencyKey: string; runId: string | null } }[];
    };
  };
  const first = await read('run-A');
  expect(first.totalCount).toBe(3);
  expect(first.pageInfo.hasNextPage).toBe(true);
  const second = await read('run-A', first.pageInfo.endCursor);
  expect(second.pageInfo.hasNextPage).toBe(false);
  const keys = [...first.edges, ...second.edges].map((e) => e.node.idempotencyKey).sort();
  expect(keys).toEqual(['r-a-1', 'r-a-2', 'r-a-3']);
  expect((await read('run-B')).totalCount).toBe(2);
  expect((await read(' run-B ')).totalCount).toBe(2); // trimmed, as recording trims it
  expect((await read('run-C')).totalCount).toBe(0);
  expect((await read(null)).totalCount).toBe(6); // no filter: every measurement of the asset

  // Another tenant asking for the same run of the same asset id sees nothing.
  const other = harness.identity(['measurements:read']);
  const theirs = await harness.request(byRun, { identity: other, variables: { r: [{ __typename: 'Asset', id: 'asset-5' }], run: 'run-A' } });
  expect(theirs.data?.['_entities'][0].measurements.totalCount).toBe(0);

  const tooLong = await harness.request(byRun, { identity: caller, variables: { r: [{ __typename: 'Asset', id: 'asset-5' }], run: 'x'.repeat(101) } });
  expect(tooLong.errors?.[0]?.extensions?.['code']).toBe('BAD_USER_INPUT');
  expect(tooLong.errors?.[0]?.message).toBe('runId: at most 100 characters');
});

it('drops the run index the type-prefixed one superseded, and starts cleanly on a database that never had it', async () => {
  const measurements = harness.db.collection('measurements');
  // A database from before tenant_asset_type_run_time: the old index costs every write and serves no read.
  await measurements.createIndex({ tenantId: 1, assetId: 1, runId: 1, observedAt: -1, _id: -1 }, { name: 'tenant_asset_run_time' });
  await ensureMeasurementIndexes(harness.db);
  expect(await measurements.indexExists('tenant_asset_run_time')).toBe(false);
  expect(await measurements.indexExists('tenant_asset_type_run_time')).toBe(true);
  // Again, now without it: no drop is attempted, so no error.
  await expect(ensureMeasurementIndexes(harness.db)).resolves.toBeUndefined();
});
