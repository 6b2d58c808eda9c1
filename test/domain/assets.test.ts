import type { CommandStartedEvent } from 'mongodb';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken } from '@linepack/lib/identity';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';
import { mongoUriThrough, startTcpProxy } from '../support/tcp-proxy';

let stack: TestStack;
let key: string;
let tenantId: string;

beforeAll(async () => {
  stack = await startTestStack({ monitorCommands: true });
  ({ apiKey: key, tenantId } = await stack.tenantWithKey());
});
afterAll(async () => {
  await stack?.stop();
});

type Err = { message: string; extensions?: Record<string, unknown> };
const call = (query: string, variables: Record<string, unknown> = {}) => graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey: key, variables });
const create = (input: Record<string, unknown>) => call('mutation($i: CreateAssetInput!) { createAsset(input: $i) { id version status } }', { i: input });
const update = (id: string, version: number, input: Record<string, unknown>) =>
  call('mutation($id: ID!, $v: Int!, $i: UpdateAssetInput!) { updateAsset(id: $id, version: $v, input: $i) { id version status name } }', {
    id,
    v: version,
    i: input,
  });
const firstError = (res: { body: { errors?: Err[] } }) => res.body.errors?.[0];

describe('createAsset', () => {
  it('stores every field of the model in SI units and derives the length', async () => {
    const system = await createAsset(stack.gatewayUrl, key, { type: 'SYSTEM', name: 'North System' });
    const input = {
      type: 'PIPELINE',
      name: 'Line 300',
      parentId: system.id,
      status: 'ACTIVE',
      product: 'CRUDE_OIL',
      regulation: 'CFR_195',
      beginStationM: 1000,
      endStationM: 26_500,
      outsideDiameterMm: 406.4,
      wallThicknessMm: 7.14,
      smysMpa: 359,
      maopKpa: 8_500,
      classLocation: 2,
      inHca: true,
      location: {
        type: 'LineString',
        coordinates: [
          [-101.1, 35.2],
          [-101.4, 35.5],
        ],
      },
      installedAt: '1994-05-01T00:00:00Z',
    };
    const created = await create(input);
    expect(created.body.errors).toBeUndefined();
    const read = await call(
      `{ asset(id: "${created.body.data!['createAsset'].id}") { type name parent { name } status product regulation beginStationM endStationM lengthM
         outsideDiameterMm wallThicknessMm smysMpa maopKpa classLocation inHca location installedAt version createdAt updatedAt } }`,
    );
    const asset = read.body.data!['asset'];
    const { parentId: _parentId, ...stored } = input;
    expect(asset).toMatchObject({ ...stored, parent: { name: 'North System' }, lengthM: 25_500, version: 1, installedAt: '1994-05-01T00:00:00.000Z' });
    expect(Date.parse(asset.createdAt)).toBeGreaterThan(Date.now() - 60_000);
  });

  it('starts new assets PLANNED', async () => {
    expect((await create({ type: 'SYSTEM', name: 'Planned system' })).body.data!['createAsset'].status).toBe('PLANNED');
  });

  it.each([
    [{ wallThicknessMm: 300, outsideDiameterMm: 500 }, 'input.wallThicknessMm', 'half the outside diameter'],
    [{ wallThicknessMm: 0 }, 'input.wallThicknessMm', '> 0'],
    [{ smysMpa: 50 }, 'input.smysMpa', '100 to 1000'],
    [{ classLocation: 5 }, 'input.classLocation', '1, 2, 3 or 4'],
    [{ name: '   ' }, 'input.name', 'empty'],
    [{ beginStationM: 500, endStationM: 100 }, 'input.endStationM', 'beginStationM'],
    [{ location: { type: 'Point', coordinates: [200, 10] } }, undefined, 'longitude'],
  ])('rejects %j naming the field and the rule', async (bad, field, rule) => {
    const before = (await call('{ assets { totalCount } }')).body.data!['assets'].totalCount;
    const res = await create({ type: 'PIPELINE', name: 'Bad line', ...bad });
    const error = firstError(res)!;
    expect(error.extensions?.['code']).toBe('BAD_USER_INPUT');
    if (field) expect(error.extensions?.['field']).toBe(field);
    expect(error.message).toContain(rule);
    expect((await call('{ assets { totalCount } }')).body.data!['assets'].totalCount).toBe(before);
  });

  it('enforces the hierarchy system › pipeline › segment › component', async () => {
    const system = await createAsset(stack.gatewayUrl, key, { type: 'SYSTEM', name: 'Hierarchy system' });
    const res = await create({ type: 'SEGMENT', name: 'Orphan segment', parentId: system.id });
    expect(firstError(res)?.extensions?.['field']).toBe('input.parentId');
    expect(firstError(res)?.message).toContain('a SEGMENT cannot belong to a SYSTEM');
  });

  it('does not accept another tenant’s asset as parent', async () => {
    const other = await stack.tenantWithKey();
    const foreign = await createAsset(stack.gatewayUrl, other.apiKey, { type: 'SYSTEM', name: 'Foreign system' });
    const res = await create({ type: 'PIPELINE', name: 'Line X', parentId: foreign.id });
    expect(firstError(res)?.extensions?.['field']).toBe('input.parentId');
  });
});

describe('createAsset with an idempotencyKey', () => {
  const stored = (name: string) => stack.mongo.db(`${stack.dbPrefix}_assets`).collection('assets').find({ tenantId, name }).toArray();

  it('answers a repeated call with the asset the first made and stores one asset with one event', async () => {
    const idempotencyKey = `retry-${Date.now()}`;
    const first = await create({ type: 'VALVE', name: 'Retried valve', maopKpa: 7_000, idempotencyKey });
    expect(first.body.errors).toBeUndefined();
    // The same input in another order, with the default status sent rather than left out: the same input.
    const again = await create({ idempotencyKey, status: 'PLANNED', maopKpa: 7_000, name: 'Retried valve', type: 'VALVE' });
    expect(again.body).toEqual(first.body);
    const docs = await stored('Retried valve');
    expect(docs).toHaveLength(1);
    // This stack runs without Redis: the asset's events wait in its outbox, one asset.upserted, without the key.
    const outbox = docs[0]!['outbox'] as { type: string; data: Record<string, unknown> }[];
    expect(outbox.map((event) => event.type)).toEqual(['asset.upserted']);
    expect(JSON.stringify(outbox)).not.toContain(idempotencyKey);
  });

  it('answers the asset as it is now after it changed, and without the key creates a second asset', async () => {
    const idempotencyKey = `changed-${Date.now()}`;
    const input = { type: 'FITTING', name: 'Renamed fitting', idempotencyKey };
    const first = (await create(input)).body.data!['createAsset'] as { id: string };
    expect((await update(first.id, 1, { status: 'ACTIVE' })).body.errors).toBeUndefined();
    expect((await create(input)).body.data!['createAsset']).toEqual({ id: first.id, version: 2, status: 'ACTIVE' });
    const unkeyed = (await create({ type: 'FITTING', name: 'Renamed fitting' })).body.data!['createAsset'] as { id: string };
    expect(unkeyed.id).not.toBe(first.id);
    expect(await stored('Renamed fitting')).toHaveLength(2);
  });

  it('refuses the same key with a different input, naming the asset it made, and creates nothing', async () => {
    const idempotencyKey = `reused-${Date.now()}`;
    const first = (await create({ type: 'VALVE', name: 'Keyed valve', idempotencyKey })).body.data!['createAsset'] as { id: string };
    const reused = await create({ type: 'VALVE', name: 'Another valve', idempotencyKey });
    expect(reused.body.data).toBeNull();
    expect(firstError(reused)).toEqual({
      message: `idempotencyKey "${idempotencyKey}" already created asset ${first.id} from a different input: nothing was created; send a new key to create another asset`,
      path: ['createAsset'],
      extensions: { code: 'CONFLICT', field: 'input.idempotencyKey', assetId: first.id, serviceName: 'assets' },
    });
    expect(await stored('Another valve')).toHaveLength(0);
  });

  it('keeps keys per tenant: another tenant’s same key creates its own asset', async () => {
    const idempotencyKey = `shared-${Date.now()}`;
    const other = await stack.tenantWithKey();
    const mine = (await create({ type: 'SYSTEM', name: 'Per-tenant system', idempotencyKey })).body.data!['createAsset'] as { id: string };
    const theirs = await graphql<{ createAsset: { id: string } }>(stack.gatewayUrl, 'mutation($i: CreateAssetInput!) { createAsset(input: $i) { id } }', {
      apiKey: other.apiKey,
      variables: { i: { type: 'SYSTEM', name: 'Per-tenant system', idempotencyKey } },
    });
    expect(theirs.body.errors).toBeUndefined();
    expect(theirs.body.data!.createAsset.id).not.toBe(mine.id);
    // And a tenant cannot reach the other's asset through the key: a different input is its own CONFLICT or asset.
    const probe = await graphql(stack.gatewayUrl, 'mutation($i: CreateAssetInput!) { createAsset(input: $i) { id } }', {
      apiKey: other.apiKey,
      variables: { i: { type: 'SYSTEM', name: 'Probe', idempotencyKey } },
    });
    expect(JSON.stringify(probe.body)).not.toContain(mine.id);
  });

  it('creates one asset when the same call arrives twice at once: both inserts reach the database, one answers the other’s asset', async () => {
    // Both calls look the key up before either asset is stored: the proxy holds each asset's insert (the only
    // command that carries its name) until both have been sent, so the unique index decides.
    const mongo = new URL(process.env['MONGODB_URI']!);
    const proxy = await startTcpProxy({ host: mongo.hostname, port: Number(mongo.port) }, { holdWhen: 'Raced valve' });
    const raced = await startTestStack({ mongoUri: mongoUriThrough(proxy.port) });
    try {
      const { apiKey, tenantId: racer } = await raced.tenantWithKey();
      const input = { type: 'VALVE', name: 'Raced valve', idempotencyKey: 'raced' };
      const send = () =>
        graphql<{ createAsset: { id: string } }>(raced.gatewayUrl, 'mutation($i: CreateAssetInput!) { createAsset(input: $i) { id } }', {
          apiKey,
          variables: { i: input },
        });
      const answers = Promise.all([send(), send()]);
      await proxy.held(2);
      proxy.release();
      const [first, second] = await answers;
      expect([first.body.errors, second.body.errors]).toEqual([undefined, undefined]);
      expect(second.body.data!.createAsset.id).toBe(first.body.data!.createAsset.id);
      expect(await raced.mongo.db(`${raced.dbPrefix}_assets`).collection('assets').countDocuments({ tenantId: racer, name: 'Raced valve' })).toBe(1);
    } finally {
      await raced.stop();
      await proxy.close();
    }
  });

  it('validates the key like every key: 1–200 characters, no control characters', async () => {
    for (const idempotencyKey of ['k'.repeat(201), 'two\nlines', '']) {
      const res = await create({ type: 'VALVE', name: 'Badly keyed valve', idempotencyKey });
      expect([firstError(res)?.extensions?.['code'], firstError(res)?.extensions?.['field']]).toEqual(['BAD_USER_INPUT', 'input.idempotencyKey']);
    }
    expect(await stored('Badly keyed valve')).toHaveLength(0);
  });
});

describe('updateAsset and the status lifecycle', () => {
  it('allows PLANNED → ACTIVE → IDLE → ACTIVE, and refuses an illegal transition naming both states', async () => {
    const a = await createAsset(stack.gatewayUrl, key, { type: 'SYSTEM', name: 'Lifecycle' });
    const illegal = await update(a.id, 1, { status: 'IDLE' });
    expect(firstError(illegal)?.extensions?.['code']).toBe('BAD_USER_INPUT');
    expect(firstError(illegal)?.message).toMatch(/PLANNED to IDLE/);
    let v = 1;
    for (const status of ['ACTIVE', 'IDLE', 'ACTIVE']) {
      const res = await update(a.id, v, { status });
      expect(res.body.errors).toBeUndefined();
      expect(res.body.data!['updateAsset']).toMatchObject({ status, version: v + 1 });
      v++;
    }
  });

  it('decommissions to ABANDONED, which is final', async () => {
    const a = await createAsset(stack.gatewayUrl, key, { type: 'SYSTEM', name: 'To abandon', status: 'ACTIVE' });
    const res = await call(`mutation { decommissionAsset(id: "${a.id}", version: 1) { status version } }`);
    expect(res.body.data!['decommissionAsset']).toEqual({ status: 'ABANDONED', version: 2 });
    const revive = await update(a.id, 2, { status: 'ACTIVE' });
    expect(firstError(revive)?.message).toMatch(/ABANDONED to ACTIVE.*final/);
  });

  it('answers a stale version with CONFLICT and keeps the newer write', async () => {
    const a = await createAsset(stack.gatewayUrl, key, { type: 'SYSTEM', name: 'Contended' });
    expect((await update(a.id, 1, { name: 'First writer' })).body.errors).toBeUndefined();
    const stale = await update(a.id, 1, { name: 'Second writer' });
    expect(firstError(stale)?.extensions?.['code']).toBe('CONFLICT');
    expect((await call(`{ asset(id: "${a.id}") { name version } }`)).body.data!['asset']).toEqual({ name: 'First writer', version: 2 });
  });

  it('answers an unknown id with NOT_FOUND', async () => {
    expect(firstError(await update('00000000-0000-4000-8000-000000000000', 1, { name: 'x' }))?.extensions?.['code']).toBe('NOT_FOUND');
  });
});

describe('assets query', () => {
  let parentId: string;
  beforeAll(async () => {
    const t = await stack.tenantWithKey();
    key = t.apiKey;
    const system = await createAsset(stack.gatewayUrl, key, { type: 'SYSTEM', name: 'Paging system', status: 'ACTIVE' });
    const line = await createAsset(stack.gatewayUrl, key, {
      type: 'PIPELINE',
      name: 'Paging line',
      parentId: system.id,
      status: 'ACTIVE',
      beginStationM: 0,
      endStationM: 1_000,
    });
    parentId = line.id;
    for (let i = 0; i < 7; i++) {
      await createAsset(stack.gatewayUrl, key, { type: 'SEGMENT', name: `Segment ${i % 2 ? 'odd' : 'even'} (${i})`, parentId, inHca: i < 3, status: 'ACTIVE' });
    }
  });

  it('pages through every asset exactly once with stable cursors', async () => {
    const seen: string[] = [];
    let after: string | null = null;
    let pages = 0;
    do {
      const res: Awaited<ReturnType<typeof call>> = await call(
        'query($after: String) { assets(first: 3, after: $after) { totalCount edges { cursor node { id } } pageInfo { hasNextPage endCursor } } }',
        { after },
      );
      const page = res.body.data!['assets'];
      expect(page.totalCount).toBe(9);
      seen.push(...page.edges.map((e: { node: { id: string } }) => e.node.id));
      after = page.pageInfo.hasNextPage ? page.pageInfo.endCursor : null;
      pages++;
    } while (after);
    expect(pages).toBe(3);
    expect(new Set(seen).size).toBe(9);
  });

  it('filters by type, status, parent, HCA and name', async () => {
    const count = async (filter: string) => (await call(`{ assets(filter: ${filter}) { totalCount } }`)).body.data!['assets'].totalCount;
    expect(await count('{ type: SEGMENT }')).toBe(7);
    expect(await count(`{ parentId: "${parentId}" }`)).toBe(7);
    expect(await count('{ inHca: true }')).toBe(3);
    expect(await count('{ nameContains: "ODD" }')).toBe(3);
    expect(await count('{ nameContains: "(1)" }')).toBe(1); // regex characters are literal
    expect(await count('{ status: PLANNED }')).toBe(0);
  });

  it('rejects a forged cursor and an oversized page', async () => {
    expect(firstError(await call('{ assets(after: "bm90LWEtY3Vyc29y") { totalCount } }'))?.extensions?.['code']).toBe('BAD_USER_INPUT');
    expect(firstError(await call('{ assets(first: 501) { totalCount } }'))?.extensions?.['field']).toBe('first');
  });

  it('summarises counts by type and status and the pipeline length', async () => {
    const res = await call('{ pipelineSummary { totalAssets totalPipelineLengthM assetsByType { type count } assetsByStatus { status count } } }');
    expect(res.body.data!['pipelineSummary']).toEqual({
      totalAssets: 9,
      totalPipelineLengthM: 1_000,
      assetsByType: [
        { type: 'PIPELINE', count: 1 },
        { type: 'SEGMENT', count: 7 },
        { type: 'SYSTEM', count: 1 },
      ],
      assetsByStatus: [{ status: 'ACTIVE', count: 9 }],
    });
  });
});

describe('Asset entity resolution', () => {
  it('resolves N references with one database round trip (DataLoader)', async () => {
    const t = await stack.tenantWithKey();
    const ids: string[] = [];
    for (let i = 0; i < 20; i++) ids.push((await createAsset(stack.gatewayUrl, t.apiKey, { type: 'SYSTEM', name: `Entity ${i}` })).id);
    const finds: CommandStartedEvent[] = [];
    const listener = (e: CommandStartedEvent) => {
      if (e.commandName === 'find') finds.push(e);
    };
    stack.subgraphs.assets.mongo!.on('commandStarted', listener);
    const token = mintInternalToken(
      { subject: 's', kind: 'api_key', tenantId: t.tenantId, scopes: ['assets:read'], requestId: 'r' },
      'assets',
      stack.internalKeys.privateKeyPem,
    );
    const res = await fetch(stack.subgraphs.assets.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [INTERNAL_IDENTITY_HEADER]: token },
      body: JSON.stringify({
        query: 'query($r: [_Any!]!) { _entities(representations: $r) { ... on Asset { id name } } }',
        variables: { r: ids.map((id) => ({ __typename: 'Asset', id })) },
      }),
    });
    stack.subgraphs.assets.mongo!.off('commandStarted', listener);
    const body = (await res.json()) as { data: { _entities: { id: string }[] } };
    expect(body.data._entities.map((e) => e.id)).toEqual(ids);
    expect(finds).toHaveLength(1);
  });
});

/** A real MongoDB and the embedded server (its QueryPlanner) both explain their plans. */
it('serves time-range queries by asset from an index', async () => {
  const measurements = stack.mongo.db(`${stack.dbPrefix}_measurements`).collection('measurements');
  const plan = await measurements
    .find({ tenantId, assetId: 'a', observedAt: { $gte: new Date('2026-01-01'), $lt: new Date('2026-02-01') } })
    .sort({ observedAt: -1, _id: -1 })
    .explain('queryPlanner');
  const text = JSON.stringify(plan);
  expect(text).toContain('IXSCAN');
  expect(text).toContain('tenant_asset_time');
  expect(text).not.toContain('COLLSCAN');
});

it('creates indexes that all start with tenantId (the outbox relay index aside, and the idempotency keys’ whose value does)', async () => {
  for (const [db, collection, expected] of [
    ['assets', 'assets', ['tenant_name', 'tenant_parent', 'tenant_type_status', 'tenant_idempotency_key']],
    ['measurements', 'measurements', ['tenant_idempotency_key', 'tenant_asset_time', 'tenant_asset_type_time', 'tenant_type_time']],
  ] as const) {
    const indexes = await stack.mongo.db(`${stack.dbPrefix}_${db}`).collection(collection).listIndexes().toArray();
    const names = indexes.map((i) => i.name as string);
    expect(names).toEqual(expect.arrayContaining([...expected, 'outbox_pending']));
    for (const index of indexes) {
      if (index.name === '_id_' || index.name === 'outbox_pending') continue;
      if (db === 'assets' && index.name === 'tenant_idempotency_key') {
        expect([index.key, index.unique, index.sparse]).toEqual([{ 'idempotency.scope': 1 }, true, true]);
        continue;
      }
      expect(Object.keys(index.key as object)[0]).toBe('tenantId');
    }
  }
});
