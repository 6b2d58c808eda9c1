/**
 * Linepack's secondary indexes on the embedded server (tools/mongo: OrderedIndex, QueryPlanner) change how queries
 * read, never what they answer: the same documents, indexes, queries and writes on a server with them and on one
 * without (`plain`, mongo-java-server's own path) give the same answers — in memory and file-backed (H2), and after
 * the H2 server restarts on its file. `explain` shows the plans Linepack's query shapes get.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { Double, MongoClient, type Db, type Document, type Filter, type Sort } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';

jest.setTimeout(300_000);

/** Seeded, so a failure names a query that fails again. */
function prng(seed: number): () => number {
  return () => {
    seed = (seed + 0x6d2b79f5) | 0;
    let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Ids are strings here, as in Linepack. */
interface Doc extends Document {
  _id: string;
}

const TENANTS = ['t-1', 't-2', 't-3'];
const ASSETS = Array.from({ length: 8 }, (_, i) => `asset-${i}`);
const TYPES = ['PRESSURE', 'CP_PIPE_TO_SOIL', 'ILI_ANOMALY'];
const DAY = 86_400_000;
const T0 = Date.UTC(2026, 0, 1);

/** Linepack's index shapes (measurements, analytics risks, compliance status rows, the outbox relay's sparse index). */
async function createIndexes(db: Db): Promise<void> {
  const measurements = db.collection('measurements');
  await measurements.createIndex({ 'outbox.id': 1 }, { name: 'outbox_pending', sparse: true });
  await measurements.createIndexes([
    { key: { tenantId: 1, idempotencyKey: 1 }, name: 'tenant_idempotency_key', unique: true },
    { key: { tenantId: 1, assetId: 1, observedAt: -1, _id: -1 }, name: 'tenant_asset_time' },
    { key: { tenantId: 1, assetId: 1, type: 1, observedAt: -1, _id: -1 }, name: 'tenant_asset_type_time' },
    { key: { tenantId: 1, type: 1, observedAt: -1 }, name: 'tenant_type_time' },
  ]);
  await db.collection('risks').createIndexes([{ key: { tenantId: 1, score: -1, _id: 1 }, name: 'tenant_score' }]);
  // Arrays (a multikey index) and fields some documents lack (a sparse index): where an index holds less than a scan sees.
  await db.collection('tags').createIndexes([
    { key: { v: 1 }, name: 'v' },
    { key: { s: 1 }, name: 's', sparse: true },
  ]);
  await db.collection('status').createIndexes([
    { key: { tenantId: 1, dueAt: 1, _id: 1 }, name: 'tenant_due' },
    { key: { tenantId: 1, assetId: 1 }, name: 'tenant_asset' },
  ]);
}

function seedDocuments(random: () => number) {
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
  const measurements = Array.from({ length: 1_500 }, (_, i) => {
    const doc: Doc = {
      _id: `m-${String(i).padStart(5, '0')}-${Math.floor(random() * 1e6)}`,
      tenantId: pick(TENANTS),
      assetId: pick(ASSETS),
      // Few distinct instants, so sorts meet many ties broken by _id.
      observedAt: new Date(T0 + Math.floor(random() * 40) * DAY),
      value: Math.round(random() * 1000) / 10,
      idempotencyKey: `k-${i}`,
      outbox: random() < 0.2 ? [{ id: `o-${i}-a` }, ...(random() < 0.5 ? [{ id: `o-${i}-b` }] : [])] : [],
    };
    // Some without a type at all, some with null: both sort and match as null.
    const r = random();
    if (r < 0.9) doc['type'] = pick(TYPES);
    else if (r < 0.95) doc['type'] = null;
    return doc;
  });
  const risks = Array.from({ length: 300 }, (_, i) => ({
    _id: `seg-${i}`,
    tenantId: pick(TENANTS),
    score: 1 + Math.floor(random() * 25),
    band: pick(['LOW', 'HIGH']),
  }));
  const status = Array.from({ length: 600 }, (_, i) => ({
    _id: `${pick(ASSETS)}:${i}`,
    tenantId: pick(TENANTS),
    assetId: pick(ASSETS),
    dueAt: random() < 0.2 ? null : new Date(T0 + Math.floor(random() * 400) * DAY),
  }));
  const tags = Array.from({ length: 200 }, (_, i) => {
    const doc: Doc = { _id: `tag-${i}`, v: i % 3 === 0 ? [i % 10, 10 + (i % 7)] : i % 12 };
    if (i % 4 === 1) doc['s'] = null;
    else if (i % 4 === 2) doc['s'] = i % 5;
    return doc;
  });
  return { measurements, risks, status, tags };
}

type Query =
  | { kind: 'find'; collection: string; filter: Filter<Doc>; sort?: Sort; limit?: number; skip?: number }
  | { kind: 'count'; collection: string; filter: Filter<Doc> }
  | { kind: 'aggregate'; collection: string; pipeline: Document[] };

/** Linepack's query shapes (equality prefixes, $in, ranges, keyset pages, $and, sorts both ways) and others around them. */
function queries(random: () => number): Query[] {
  const pick = <T>(values: readonly T[]) => values[Math.floor(random() * values.length)]!;
  const date = () => new Date(T0 + Math.floor(random() * 42) * DAY);
  const out: Query[] = [];
  for (let i = 0; i < 30; i++) {
    const tenantId = pick(TENANTS);
    const assetId = pick(ASSETS);
    const type = pick([...TYPES, null]);
    const limit = pick([1, 5, 20, 0]);
    out.push({ kind: 'find', collection: 'measurements', filter: { tenantId, assetId }, sort: { observedAt: -1, _id: -1 }, limit });
    out.push({ kind: 'find', collection: 'measurements', filter: { tenantId, assetId }, sort: { observedAt: 1, _id: 1 }, limit, skip: pick([0, 3]) });
    out.push({ kind: 'find', collection: 'measurements', filter: { tenantId, assetId, type }, sort: { observedAt: -1, _id: -1 }, limit });
    out.push({
      kind: 'find',
      collection: 'measurements',
      filter: { tenantId, assetId, observedAt: { $gte: date(), $lt: date() } },
      sort: { observedAt: -1, _id: -1 },
      limit,
    });
    out.push({ kind: 'find', collection: 'measurements', filter: { tenantId, type: { $in: [type, pick(TYPES)] } }, sort: { _id: 1 }, limit });
    out.push({
      kind: 'find',
      collection: 'measurements',
      filter: { tenantId, assetId: { $in: [assetId, pick(ASSETS)] }, value: { $gt: 50 } },
      sort: { value: 1, _id: 1 },
    });
    out.push({
      kind: 'find',
      collection: 'measurements',
      filter: { $and: [{ tenantId }, { assetId }, { $or: [{ value: { $lt: 10 } }, { value: { $gt: 90 } }] }] },
      sort: { _id: -1 },
    });
    out.push({ kind: 'find', collection: 'measurements', filter: { tenantId, type: { $eq: type } }, sort: { observedAt: -1, _id: 1 }, limit });
    out.push({ kind: 'find', collection: 'measurements', filter: { 'outbox.id': { $exists: true } }, sort: { _id: 1 }, limit: pick([3, 50]) });
    out.push({ kind: 'count', collection: 'measurements', filter: { tenantId, assetId, observedAt: { $lte: date() } } });
    out.push({ kind: 'count', collection: 'measurements', filter: { tenantId, type } });
    // Counted from the index alone when it answers the filter exactly: equalities, $in, a range with both ends.
    out.push({ kind: 'count', collection: 'measurements', filter: { tenantId, assetId, observedAt: { $gte: date(), $lt: date() } } });
    out.push({ kind: 'count', collection: 'measurements', filter: { tenantId, assetId: { $in: [assetId, pick(ASSETS)] } } });
    out.push({ kind: 'count', collection: 'measurements', filter: { $and: [{ tenantId }, { assetId }] } });
    // Several $in prefixes, each in the sort's order: merged, stopped at the limit.
    out.push({ kind: 'find', collection: 'measurements', filter: { tenantId, type: { $in: [type, pick(TYPES)] } }, sort: { observedAt: -1, _id: 1 }, limit });
    out.push({
      kind: 'find',
      collection: 'measurements',
      filter: { tenantId, assetId: { $in: [assetId, pick(ASSETS), pick(ASSETS)] } },
      sort: { observedAt: -1, _id: -1 },
      limit,
    });
    out.push({
      kind: 'aggregate',
      collection: 'measurements',
      pipeline: [
        { $match: { tenantId, assetId: { $in: [assetId, pick(ASSETS)] } } },
        { $group: { _id: '$assetId', n: { $sum: 1 }, max: { $max: '$value' } } },
        { $sort: { _id: 1 } },
      ],
    });
    const min = 1 + Math.floor(random() * 20);
    out.push({ kind: 'find', collection: 'risks', filter: { tenantId, score: { $gte: min, $lte: min + 5 } }, sort: { score: -1, _id: 1 }, limit });
    out.push({
      kind: 'aggregate',
      collection: 'risks',
      pipeline: [{ $match: { tenantId } }, { $group: { _id: '$band', count: { $sum: 1 } } }, { $sort: { _id: 1 } }],
    });
    out.push({ kind: 'find', collection: 'status', filter: { tenantId, dueAt: { $ne: null, $lt: date() } }, sort: { dueAt: 1, _id: 1 }, limit });
    out.push({ kind: 'find', collection: 'status', filter: { tenantId, dueAt: null }, sort: { _id: 1 } });
    // The compliance list's keyset page: several conditions on dueAt in $and conjuncts.
    const due = date();
    out.push({
      kind: 'find',
      collection: 'status',
      filter: {
        tenantId,
        $and: [{ dueAt: { $ne: null } }, { dueAt: { $gte: due } }, { $or: [{ dueAt: { $gt: due } }, { _id: { $gt: `${pick(ASSETS)}:3` } }] }],
      },
      sort: { dueAt: 1, _id: 1 },
      limit,
    });
    out.push({ kind: 'count', collection: 'status', filter: { tenantId, dueAt: { $gt: date() } } });
    // {v: [1, 10]} is in v >= 2 and in v <= 8 (each by another element); {s: null} includes documents without s.
    const low = Math.floor(random() * 9);
    out.push({ kind: 'find', collection: 'tags', filter: { $and: [{ v: { $gte: low } }, { v: { $lte: low + 3 } }] }, sort: { _id: 1 } });
    out.push({ kind: 'find', collection: 'tags', filter: { v: { $gt: low, $lt: low + 2 } }, sort: { _id: 1 } });
    out.push({ kind: 'count', collection: 'tags', filter: { v: { $gte: low, $lte: low + 1 } } });
    out.push({ kind: 'find', collection: 'tags', filter: { s: null }, sort: { _id: 1 } });
    out.push({ kind: 'count', collection: 'tags', filter: { s: { $in: [null, low % 5] } } });
    // A page of entities or a loader's batch, looked up by id within the tenant: some ids another tenant's, some no one's.
    const ids = Array.from({ length: 1 + Math.floor(random() * 40) }, () => `seg-${Math.floor(random() * 320)}`);
    out.push({ kind: 'find', collection: 'risks', filter: { tenantId, _id: { $in: ids } }, sort: { _id: 1 } });
    out.push({ kind: 'find', collection: 'risks', filter: { _id: { $in: ids }, tenantId, score: { $gte: min } }, sort: { score: -1, _id: 1 }, limit });
    out.push({ kind: 'find', collection: 'risks', filter: { tenantId, _id: ids[0]! } });
    out.push({ kind: 'find', collection: 'risks', filter: { tenantId, $and: [{ _id: { $in: ids } }, { _id: { $ne: ids[0]! } }] }, sort: { _id: 1 } });
    out.push({ kind: 'find', collection: 'tags', filter: { _id: { $in: [`tag-${low}`, `tag-${low + 12}`, 'tag-none'] }, v: { $gte: low } }, sort: { _id: 1 } });
  }
  return out;
}

async function run(db: Db, q: Query): Promise<unknown> {
  const collection = db.collection<Doc>(q.collection);
  if (q.kind === 'count') return collection.countDocuments(q.filter);
  if (q.kind === 'aggregate') return collection.aggregate(q.pipeline).toArray();
  let cursor = collection.find(q.filter);
  if (q.sort) cursor = cursor.sort(q.sort);
  if (q.skip) cursor = cursor.skip(q.skip);
  if (q.limit) cursor = cursor.limit(q.limit);
  return cursor.toArray();
}

/** Every page of one asset's measurements by keyset (the MeasurementRepository.list shape), as ids. */
async function walk(db: Db, tenantId: string, assetId: string): Promise<string[]> {
  const measurements = db.collection<Doc>('measurements');
  const ids: string[] = [];
  let after: Doc | null = null;
  for (;;) {
    const filter: Filter<Doc> = after
      ? {
          tenantId,
          assetId,
          observedAt: { $lte: after['observedAt'] },
          $or: [{ observedAt: { $lt: after['observedAt'] } }, { observedAt: after['observedAt'], _id: { $lt: after['_id'] } }],
        }
      : { tenantId, assetId };
    const page = await measurements.find(filter).sort({ observedAt: -1, _id: -1 }).limit(7).toArray();
    ids.push(...page.map((d) => d._id));
    if (page.length < 7) return ids;
    after = page[page.length - 1]!;
  }
}

async function writes(db: Db): Promise<void> {
  const measurements = db.collection<Doc>('measurements');
  // Indexed fields change (the entries must move), documents go, outbox entries drain as the relay drains them.
  await measurements.updateMany({ tenantId: 't-1', assetId: 'asset-1' }, { $set: { assetId: 'asset-7' } });
  await measurements.updateMany({ tenantId: 't-2', type: 'PRESSURE' }, { $set: { observedAt: new Date(T0 + 3 * DAY) } });
  await measurements.deleteMany({ tenantId: 't-3', assetId: 'asset-2' });
  const pending = await measurements
    .find({ 'outbox.id': { $exists: true } })
    .sort({ _id: 1 })
    .limit(100)
    .toArray();
  for (const doc of pending)
    await measurements.updateOne({ _id: doc._id }, { $pull: { outbox: { id: { $in: (doc['outbox'] as { id: string }[]).map((e) => e.id) } } } } as never);
  // Fields no index reads change: the server leaves the documents' index entries alone (IndexedFields), and they must
  // still be found by them; a value equal to the old one but of another type (an integer for a double) is moved.
  await measurements.updateMany({ tenantId: 't-2' }, { $set: { reviewed: true }, $inc: { value: 1 } });
  await measurements.updateMany({ tenantId: 't-3', value: { $lt: 20 } }, { $set: { observedAt: new Date(T0 + 5 * DAY), note: 'moved' } });
  await db.collection('risks').updateMany({ tenantId: 't-2', score: { $lt: 5 } }, { $inc: { score: 10 } });
  await db.collection('risks').updateMany({ tenantId: 't-1', score: { $gte: 20 } }, { $mul: { score: new Double(1) } });
  await db.collection<Doc>('status').updateOne({ _id: 'upserted:1', tenantId: 't-1' }, { $set: { assetId: 'asset-0', dueAt: null } }, { upsert: true });
  await db.collection<Doc>('status').replaceOne({ _id: 'upserted:2', tenantId: 't-1' }, { assetId: 'asset-0', dueAt: new Date(T0) }, { upsert: true });
}

describe.each([
  ['in memory', false],
  ['file-backed (H2)', true],
])('secondary indexes of the embedded server, %s', (_name, fileBacked) => {
  let tmpDir: string;
  let indexed: EmbeddedMongo;
  let plain: EmbeddedMongo;
  let indexedClient: MongoClient;
  let plainClient: MongoClient;
  const dataFile = () => path.join(tmpDir, 'indexed.h2');

  /** The same documents into every database: half before the indexes exist (they are built from the collection), half after. */
  async function seed(db: Db): Promise<void> {
    const documents = seedDocuments(prng(7));
    for (const [name, docs] of Object.entries(documents)) await db.collection<Doc>(name).insertMany(docs.slice(0, docs.length / 2));
    await createIndexes(db);
    for (const [name, docs] of Object.entries(documents)) await db.collection<Doc>(name).insertMany(docs.slice(docs.length / 2));
  }

  beforeAll(async () => {
    tmpDir = await mkdtemp(path.join(os.tmpdir(), 'linepack-indexes-'));
    [indexed, plain] = await Promise.all([startEmbeddedMongo(fileBacked ? { dataFile: dataFile() } : {}), startEmbeddedMongo({ plain: true })]);
    [indexedClient, plainClient] = await Promise.all([MongoClient.connect(indexed.uri), MongoClient.connect(plain.uri)]);
    for (const client of [indexedClient, plainClient]) await seed(client.db('linepack'));
  });

  afterAll(async () => {
    await Promise.allSettled([indexedClient?.close(), plainClient?.close()]);
    await Promise.allSettled([indexed?.stop(), plain?.stop()]);
    await rm(tmpDir, { recursive: true, force: true });
  });

  async function expectSameAnswers(seed: number): Promise<void> {
    const list = queries(prng(seed));
    for (const q of list) {
      const [mine, theirs] = await Promise.all([run(indexedClient.db('linepack'), q), run(plainClient.db('linepack'), q)]);
      // The query in the message names the case that differs.
      expect({ q, answer: mine }).toEqual({ q, answer: theirs });
    }
    for (const tenantId of TENANTS) {
      for (const assetId of ASSETS.slice(0, 4)) {
        const [mine, theirs] = await Promise.all([walk(indexedClient.db('linepack'), tenantId, assetId), walk(plainClient.db('linepack'), tenantId, assetId)]);
        expect(new Set(mine).size).toBe(mine.length);
        expect(mine).toEqual(theirs);
      }
    }
  }

  it('answers every query as mongo-java-server does without them', async () => {
    await expectSameAnswers(11);
  });

  it('still does after updates that move indexed values, deletes, upserts and drained outbox entries', async () => {
    for (const client of [indexedClient, plainClient]) await writes(client.db('linepack'));
    await expectSameAnswers(12);
  });

  it('refuses an update that repeats a unique key, and accepts one that leaves it alone', async () => {
    for (const client of [indexedClient, plainClient]) {
      const measurements = client.db('linepack').collection<Doc>('measurements');
      const [first, second] = await measurements.find({ tenantId: 't-3' }).sort({ _id: 1 }).limit(2).toArray();
      await expect(measurements.updateOne({ _id: first!._id }, { $set: { idempotencyKey: second!['idempotencyKey'] } })).rejects.toMatchObject({ code: 11000 });
      expect(await measurements.updateOne({ _id: first!._id }, { $set: { checkedBy: 'this test' } })).toMatchObject({ modifiedCount: 1 });
      expect(await measurements.countDocuments({ tenantId: 't-3', idempotencyKey: first!['idempotencyKey'] })).toBe(1);
      expect(await measurements.countDocuments({ tenantId: 't-3', idempotencyKey: second!['idempotencyKey'] })).toBe(1);
      // As it was: the H2 test below compares with a file written by seed() and writes() alone.
      await measurements.updateOne({ _id: first!._id }, { $unset: { checkedBy: '' } });
    }
  });

  it('serves Linepack query shapes from indexes, as explain shows', async () => {
    const measurements = indexedClient.db('linepack').collection<Doc>('measurements');
    const plan = async (filter: Filter<Doc>, sort?: Sort, limit?: number) => {
      let cursor = measurements.find(filter);
      if (sort) cursor = cursor.sort(sort);
      if (limit) cursor = cursor.limit(limit);
      return JSON.stringify(((await cursor.explain('queryPlanner')) as Document)['queryPlanner']['winningPlan']);
    };
    // A page of one asset's readings: read in index order and stopped at the limit (no SORT stage).
    const page = await plan({ tenantId: 't-1', assetId: 'asset-0', observedAt: { $lte: new Date(T0 + 5 * DAY) } }, { observedAt: -1, _id: -1 }, 101);
    expect(page).toContain('"indexName":"tenant_asset_time"');
    expect(page).not.toContain('SORT');
    expect(page).not.toContain('COLLSCAN');
    // With a type: the longer equality prefix wins.
    expect(await plan({ tenantId: 't-1', assetId: 'asset-0', type: 'PRESSURE' }, { observedAt: -1, _id: -1 }, 10)).toContain('tenant_asset_type_time');
    // _id with the tenant beside it is an _id lookup, as on MongoDB.
    expect(await plan({ _id: 'm-1', tenantId: 't-1' })).toContain('"indexName":"_id_"');
    // An exact unique key stays with mongo-java-server's unique index.
    expect(await plan({ tenantId: 't-1', idempotencyKey: 'k-1' })).toContain('"indexName":"tenant_idempotency_key"');
    // $in values of one key, each read in the sort's order, merged: no sort stage.
    const merged = await plan({ tenantId: 't-1', type: { $in: ['PRESSURE', 'CP_PIPE_TO_SOIL'] } }, { observedAt: -1 }, 10);
    expect(merged).toContain('tenant_type_time');
    expect(merged).not.toContain('SORT');
    // countDocuments' shape, answered from the index without reading a document when it matches the filter exactly.
    const countPlan = async (filter: Filter<Doc>) =>
      JSON.stringify(await measurements.aggregate([{ $match: filter }, { $group: { _id: 1, n: { $sum: 1 } } }]).explain());
    expect(await countPlan({ tenantId: 't-1', assetId: 'asset-0' })).toContain('COUNT_SCAN');
    expect(await countPlan({ tenantId: 't-1', assetId: 'asset-0', observedAt: { $gte: new Date(T0), $lt: new Date(T0 + DAY) } })).toContain('COUNT_SCAN');
    // A condition the index does not answer (value), or a range open at one end: the documents are read.
    expect(await countPlan({ tenantId: 't-1', assetId: 'asset-0', value: { $gt: 1 } })).not.toContain('COUNT_SCAN');
    expect(await countPlan({ tenantId: 't-1', assetId: 'asset-0', observedAt: { $gte: new Date(T0) } })).not.toContain('COUNT_SCAN');
    // A range holding most of the collection, read whole: in the H2 file a scan in page order beats a lookup per
    // document (the range is counted from the index first); in memory a lookup costs little and the index stays.
    const wide = await plan({ tenantId: { $in: TENANTS } });
    expect(wide).toContain(fileBacked ? 'COLLSCAN' : 'IXSCAN');
    // The outbox relay's query reads the sparse index only.
    expect(await plan({ 'outbox.id': { $exists: true } }, undefined, 500)).toContain('outbox_pending');
    // No usable index: a scan, said plainly.
    expect(await plan({ value: { $gt: 3 } })).toContain('COLLSCAN');
    const risks = indexedClient.db('linepack').collection<Doc>('risks');
    const riskPlan = JSON.stringify(
      await risks
        .find({ tenantId: 't-1', score: { $gte: 3 } })
        .sort({ score: -1, _id: 1 })
        .limit(25)
        .explain('queryPlanner'),
    );
    expect(riskPlan).toContain('tenant_score');
    expect(riskPlan).not.toContain('SORT');
    const statusPlan = JSON.stringify(
      await indexedClient
        .db('linepack')
        .collection<Doc>('status')
        .find({ tenantId: 't-1', $and: [{ dueAt: { $ne: null } }, { dueAt: { $gte: new Date(T0) } }] })
        .sort({ dueAt: 1, _id: 1 })
        .limit(8)
        .explain('queryPlanner'),
    );
    expect(statusPlan).toContain('"indexName":"tenant_due"');
    expect(statusPlan).toContain('"linepackRange":true');
    expect(statusPlan).not.toContain('SORT');
    const aggregatePlan = JSON.stringify(
      await risks.aggregate([{ $match: { tenantId: 't-1', score: { $gte: 20 } } }, { $group: { _id: '$band', n: { $sum: 1 } } }]).explain(),
    );
    expect(aggregatePlan).toContain('tenant_score');
  });

  (fileBacked ? it : it.skip)('opens a file written before (Java-serialized documents, no index entries): same answers', async () => {
    // Written by mongo-java-server's own H2 backend, as files of earlier versions were.
    const pastFile = path.join(tmpDir, 'past.h2');
    const past = await startEmbeddedMongo({ dataFile: pastFile, plain: true });
    const pastClient = await MongoClient.connect(past.uri);
    await seed(pastClient.db('linepack'));
    await writes(pastClient.db('linepack'));
    await pastClient.close();
    await past.stop();
    await indexedClient.close();
    await indexed.stop();
    indexed = await startEmbeddedMongo({ dataFile: pastFile });
    indexedClient = await MongoClient.connect(indexed.uri);
    const stats = (await indexedClient.db('linepack').command({ validate: 'measurements' })) as { keysPerIndex: Record<string, number>; nrecords: number };
    // Every document moved over, and indexed.
    expect(stats.nrecords).toBe(await plainClient.db('linepack').collection('measurements').countDocuments({}));
    expect(stats.keysPerIndex['tenant_asset_time']).toBe(stats.nrecords);
    await expectSameAnswers(14);
    // And a file written with the indexes is not for a server without them, which would read its collections empty.
    await indexedClient.close();
    await indexed.stop();
    await expect(startEmbeddedMongo({ dataFile: pastFile, plain: true })).rejects.toThrow(/--plain needs a file of its own/);
  });

  (fileBacked ? it : it.skip)('keeps its indexes in the H2 file: the same answers after a restart', async () => {
    await indexedClient.close();
    await indexed.stop();
    indexed = await startEmbeddedMongo({ dataFile: dataFile() });
    indexedClient = await MongoClient.connect(indexed.uri);
    const stats = (await indexedClient.db('linepack').command({ validate: 'measurements' })) as { keysPerIndex: Record<string, number>; nrecords: number };
    // One entry per document, read back from the file rather than rebuilt.
    expect(stats.keysPerIndex['tenant_asset_time']).toBe(stats.nrecords);
    await expectSameAnswers(13);
  });
});
