/**
 * Asset.latestMeasurement for a page of assets, and Measurement entity references, resolved in batches
 * (subgraphs/measurements/src/loaders.ts): one query per request instead of one per asset — and still each asset's
 * own latest, of the asked type, of the caller's tenant only, with every field the selection asks for.
 */
import { randomUUID } from 'node:crypto';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken, type Identity } from '@linepack/lib/identity';
import { latestMeasurementStages } from '@linepack/subgraph-measurements/repository';
import { createAsset, graphql, mongoCommandsDuring, startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
beforeAll(async () => {
  stack = await startTestStack({ monitorCommands: true });
});
afterAll(async () => {
  await stack?.stop();
});

const RECORD = 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount ids } }';
const ENTITIES = `query($r: [_Any!]!) { _entities(representations: $r) { ... on Asset { id
  latestMeasurement { id type value observedAt }
  pressure: latestMeasurement(type: PRESSURE) { id value observedAt } } } }`;

interface Stored {
  id: string;
  assetId: string;
  type: 'PRESSURE' | 'TEMPERATURE';
  value: number;
  observedAt: string;
}

const reading = (key: string, assetId: string, type: Stored['type'], observedAt: string, value: number) => ({
  idempotencyKey: key,
  assetId,
  type,
  value,
  unit: type === 'PRESSURE' ? 'KPA' : 'CELSIUS',
  observedAt,
  source: 'SCADA',
});

async function record(apiKey: string, items: ReturnType<typeof reading>[]): Promise<Stored[]> {
  const res = await graphql<{ recordMeasurements: { insertedCount: number; ids: string[] } }>(stack.gatewayUrl, RECORD, { apiKey, variables: { i: items } });
  expect(res.body.errors).toBeUndefined();
  const ids = res.body.data!.recordMeasurements.ids;
  return items.map((item, i) => ({
    id: ids[i]!,
    assetId: item.assetId,
    type: item.type,
    value: item.value,
    observedAt: new Date(item.observedAt).toISOString(),
  }));
}

/** The latest of `stored` by observedAt, ties by the highest id (ids are UUIDs: string order is the database's). */
function latestOf(stored: readonly Stored[]): Stored | null {
  return [...stored].sort((a, b) => b.observedAt.localeCompare(a.observedAt) || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0))[0] ?? null;
}

/** Straight to the measurements subgraph as the gateway calls it, as `tenantId`. */
async function measurementsSubgraph<T>(tenantId: string, query: string, variables: Record<string, unknown>): Promise<T> {
  const identity: Identity = { subject: 'test', kind: 'api_key', tenantId, scopes: ['measurements:read'], requestId: randomUUID() };
  const res = await fetch(stack.subgraphs.measurements.url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [INTERNAL_IDENTITY_HEADER]: mintInternalToken(identity, 'measurements', stack.internalKeys.privateKeyPem) },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data: T; errors?: unknown[] };
  expect(body.errors).toBeUndefined();
  return body.data;
}

/** The MongoDB commands the measurements subgraph sends while `work` runs. */
const measurementsCommandsDuring = (work: () => Promise<unknown>) => mongoCommandsDuring(stack.subgraphs.measurements.mongo!, work);

describe('a page of 50 assets', () => {
  let apiKey: string;
  let tenantId: string;
  let assetIds: string[];
  let stored: Stored[];

  beforeAll(async () => {
    ({ apiKey, tenantId } = await stack.tenantWithKey());
    const line = await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Latest line' });
    assetIds = [line.id];
    for (let i = 0; i < 49; i++) assetIds.push((await createAsset(stack.gatewayUrl, apiKey, { type: 'SEGMENT', name: `Latest ${i}`, parentId: line.id })).id);
    // Assets 0–39 have both types; 40–44 only TEMPERATURE; 45–49 nothing. Each asset's readings are spread so that
    // its latest, and its latest PRESSURE, are at different times from its neighbours' (a mixed-up batch shows).
    const items: ReturnType<typeof reading>[] = [];
    assetIds.slice(0, 45).forEach((assetId, a) => {
      for (let k = 0; k < 4; k++) {
        const day = 1 + ((a * 7 + k * 11) % 28);
        items.push(reading(`t-${a}-${k}`, assetId, 'TEMPERATURE', `2026-03-${String(day).padStart(2, '0')}T0${k}:00:00Z`, 10 + a + k));
        if (a < 40) items.push(reading(`p-${a}-${k}`, assetId, 'PRESSURE', `2026-03-${String(day).padStart(2, '0')}T1${k}:00:00Z`, 5_000 + a * 10 + k));
      }
    });
    // A tie on observedAt: the higher id wins, as it did with one query per asset.
    items.push(reading('tie-0', assetIds[0]!, 'PRESSURE', '2026-04-01T00:00:00Z', 6_001));
    items.push(reading('tie-1', assetIds[0]!, 'PRESSURE', '2026-04-01T00:00:00Z', 6_002));
    stored = await record(apiKey, items);
  });

  const expected = (assetId: string) => {
    const own = stored.filter((m) => m.assetId === assetId);
    const pick = (m: Stored | null, withType: boolean) => m && { id: m.id, value: m.value, observedAt: m.observedAt, ...(withType ? { type: m.type } : {}) };
    return { latest: pick(latestOf(own), true), pressure: pick(latestOf(own.filter((m) => m.type === 'PRESSURE')), false) };
  };

  it('answers every asset with its own latest, its own latest of a type, and null where it has none (Q2 through the gateway)', async () => {
    const res = await graphql<{ assets: { edges: { node: { id: string; latestMeasurement: unknown; pressure: unknown } }[] } }>(
      stack.gatewayUrl,
      '{ assets(first: 50) { edges { node { id latestMeasurement { id type value observedAt } pressure: latestMeasurement(type: PRESSURE) { id value observedAt } } } } }',
      { apiKey },
    );
    expect(res.body.errors).toBeUndefined();
    const nodes = res.body.data!.assets.edges.map((e) => e.node);
    expect(nodes.map((n) => n.id).sort()).toEqual([...assetIds].sort());
    for (const node of nodes) {
      const { latest, pressure } = expected(node.id);
      expect({ id: node.id, latest: node.latestMeasurement, pressure: node.pressure }).toEqual({ id: node.id, latest, pressure });
    }
    const first = nodes.find((n) => n.id === assetIds[0]);
    expect(first?.pressure).toMatchObject({ observedAt: '2026-04-01T00:00:00.000Z' });
    expect(nodes.filter((n) => n.latestMeasurement === null)).toHaveLength(5);
    expect(nodes.filter((n) => n.pressure === null)).toHaveLength(10);
  });

  it('costs the measurements subgraph one query per latestMeasurement selection, not one per asset', async () => {
    let data: { _entities: { id: string; latestMeasurement: unknown; pressure: unknown }[] } | undefined;
    const representations = assetIds.map((id) => ({ __typename: 'Asset', id }));
    const commands = await measurementsCommandsDuring(async () => {
      data = await measurementsSubgraph(tenantId, ENTITIES, { r: representations });
    });
    // Two selections (all types, PRESSURE): two aggregations for the 50 assets, and nothing else.
    expect(commands.map((c) => c.commandName)).toEqual(['aggregate', 'aggregate']);
    // In the order asked, each its own.
    expect(data!._entities.map((e) => e.id)).toEqual(assetIds);
    for (const entity of data!._entities) {
      const { latest, pressure } = expected(entity.id);
      expect(entity.latestMeasurement).toEqual(latest);
      expect(entity.pressure).toEqual(pressure);
    }

    // Through the gateway, the whole Q2 costs the measurements subgraph one query.
    const viaGateway = await measurementsCommandsDuring(() =>
      graphql(stack.gatewayUrl, '{ assets(first: 50) { edges { node { id name latestMeasurement { type observedAt } } } } }', { apiKey }),
    );
    expect(viaGateway.map((c) => c.commandName)).toEqual(['aggregate']);
  });

  it('reads every field a selection asks for, through fragments, as the measurement itself has it', async () => {
    const fields =
      'id type observedAt stationM value unit source idempotencyKey runId featureType surface odometerM clockDeg depthPctWt lengthMm widthMm recordedAt';
    const data = await measurementsSubgraph<{ _entities: { latestMeasurement: Record<string, unknown> & { id: string } }[] }>(
      tenantId,
      `query($r: [_Any!]!) { _entities(representations: $r) { ... on Asset { latestMeasurement { ...M asset { id } } } } }
       fragment M on Measurement { ... on Measurement { ${fields.split(' ').slice(0, 8).join(' ')} } ${fields.split(' ').slice(8).join(' ')} }`,
      { r: assetIds.slice(0, 3).map((id) => ({ __typename: 'Asset', id })) },
    );
    for (const [i, entity] of data._entities.entries()) {
      const whole = await measurementsSubgraph<{ measurement: Record<string, unknown> }>(
        tenantId,
        `query($id: ID!) { measurement(id: $id) { ${fields} asset { id } } }`,
        { id: entity.latestMeasurement.id },
      );
      expect(entity.latestMeasurement).toEqual(whole.measurement);
      expect(entity.latestMeasurement['asset']).toEqual({ id: assetIds[i] });
    }
  });

  it('resolves many Measurement references with one query, null for an unknown id', async () => {
    const wanted = [...stored.slice(0, 20).map((m) => m.id), randomUUID()];
    let data: { _entities: ({ id: string; value: number } | null)[] } | undefined;
    const commands = await measurementsCommandsDuring(async () => {
      data = await measurementsSubgraph(tenantId, 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Measurement { id value } } }', {
        r: wanted.map((id) => ({ __typename: 'Measurement', id })),
      });
    });
    expect(commands.map((c) => c.commandName)).toEqual(['find']);
    expect(data!._entities).toEqual([...stored.slice(0, 20).map((m) => ({ id: m.id, value: m.value })), null]);
  });
});

describe('tenant isolation', () => {
  it("never answers with another tenant's measurement of an asset with the same id", async () => {
    const a = await stack.tenantWithKey();
    const b = await stack.tenantWithKey();
    const c = await stack.tenantWithKey();
    // The same asset id in two tenants (this stack runs without events, so asset ids are not checked): B's is newer.
    const shared = `shared-${randomUUID()}`;
    const onlyA = `only-a-${randomUUID()}`;
    const [fromA] = await record(a.apiKey, [reading('s-1', shared, 'PRESSURE', '2026-01-01T00:00:00Z', 1_000)]);
    const [fromB] = await record(b.apiKey, [reading('s-1', shared, 'PRESSURE', '2026-06-01T00:00:00Z', 2_000)]);
    await record(a.apiKey, [reading('s-2', onlyA, 'TEMPERATURE', '2026-02-01T00:00:00Z', 20)]);
    const representations = [shared, onlyA].map((id) => ({ __typename: 'Asset', id }));
    type Answer = { _entities: { id: string; latestMeasurement: { id: string; value: number } | null; pressure: { id: string } | null }[] };

    const asA = await measurementsSubgraph<Answer>(a.tenantId, ENTITIES, { r: representations });
    expect(asA._entities[0]).toMatchObject({ id: shared, latestMeasurement: { id: fromA!.id, value: 1_000 }, pressure: { id: fromA!.id } });
    expect(asA._entities[1]).toMatchObject({ id: onlyA, latestMeasurement: { value: 20 }, pressure: null });

    const asB = await measurementsSubgraph<Answer>(b.tenantId, ENTITIES, { r: representations });
    expect(asB._entities[0]).toMatchObject({ id: shared, latestMeasurement: { id: fromB!.id, value: 2_000 }, pressure: { id: fromB!.id } });
    expect(asB._entities[1]).toMatchObject({ id: onlyA, latestMeasurement: null, pressure: null });

    const asC = await measurementsSubgraph<Answer>(c.tenantId, ENTITIES, { r: representations });
    expect(asC._entities.map((e) => [e.latestMeasurement, e.pressure])).toEqual([
      [null, null],
      [null, null],
    ]);

    // And by Measurement reference: B cannot read A's measurement by its id.
    const byRef = await measurementsSubgraph<{ _entities: unknown[] }>(
      b.tenantId,
      'query($r: [_Any!]!) { _entities(representations: $r) { ... on Measurement { id } } }',
      {
        r: [{ __typename: 'Measurement', id: fromA!.id }],
      },
    );
    expect(byRef._entities).toEqual([null]);
  });
});

/** Only a real MongoDB has `explain`; the embedded server reads the collection for any aggregation. */
const realMongo = process.env['LINEPACK_TEST_MONGO'] === 'external';
(realMongo ? it : it.skip)('answers the latest of each asset with one index seek per asset: a DISTINCT_SCAN (real MongoDB only)', async () => {
  const measurements = stack.mongo.db(`${stack.dbPrefix}_measurements`).collection('measurements');
  for (const type of [null, 'PRESSURE'] as const) {
    const plan = await measurements
      .aggregate([{ $match: { tenantId: randomUUID() } }, ...latestMeasurementStages(['a', 'b', 'c'], type, ['type', 'observedAt'])])
      .explain();
    const text = JSON.stringify(plan);
    expect(text).toContain('DISTINCT_SCAN');
    expect(text).toContain(type ? 'tenant_asset_type_time' : 'tenant_asset_time');
    expect(text).not.toContain('COLLSCAN');
  }
});
