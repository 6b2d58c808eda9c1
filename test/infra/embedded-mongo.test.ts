/**
 * The embedded mongo-java-server (lib/infra/embedded-mongo.ts) against the official `mongodb` driver 6: every driver
 * feature the project relies on, in memory and file-backed (H2), plus the launcher's lifecycle. Real servers only.
 */
import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { MongoBulkWriteError, MongoClient, MongoServerError, type CommandStartedEvent, type CommandSucceededEvent, type Db } from 'mongodb';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { repoRoot } from '@linepack/lib/repo-root';
import { canConnect, eventually } from '../support/wait';

jest.setTimeout(120_000);

const clientOptions = { serverSelectionTimeoutMS: 5_000 };

let tmpDir: string;
beforeAll(async () => {
  tmpDir = await mkdtemp(path.join(os.tmpdir(), 'linepack-embedded-mongo-'));
});
afterAll(async () => {
  await rm(tmpDir, { recursive: true, force: true });
});

describe.each([
  ['in memory', () => startEmbeddedMongo()],
  ['file-backed (H2)', () => startEmbeddedMongo({ dataFile: path.join(tmpDir, 'features', 'mongo.h2') })],
])('embedded MongoDB %s with mongodb driver 6', (_name, start) => {
  let server: EmbeddedMongo;
  let client: MongoClient;
  let db: Db;

  beforeAll(async () => {
    server = await start();
    client = new MongoClient(server.uri, clientOptions);
    await client.connect();
    db = client.db('features');
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  it('serves a mongodb:// URI on 127.0.0.1 at the reported port', async () => {
    expect(server.uri).toBe(`mongodb://127.0.0.1:${server.port}/`);
    expect(server.port).toBeGreaterThan(0);
    expect(await db.command({ ping: 1 })).toMatchObject({ ok: 1 });
  });

  it('creates compound unique indexes and lists them', async () => {
    const assets = db.collection('indexes');
    const name = await assets.createIndex({ tenantId: 1, code: 1 }, { unique: true, name: 'tenant_code' });
    expect(name).toBe('tenant_code');
    await assets.createIndex({ tenantId: 1, updatedAt: -1 });
    const indexes = await assets.listIndexes().toArray();
    const byName = new Map(indexes.map((index) => [index['name'] as string, index]));
    expect([...byName.keys()].sort()).toEqual(['_id_', 'tenantId_1_updatedAt_-1', 'tenant_code']);
    expect(byName.get('tenant_code')).toMatchObject({ key: { tenantId: 1, code: 1 }, unique: true });
    expect(byName.get('tenantId_1_updatedAt_-1')).toMatchObject({ key: { tenantId: 1, updatedAt: -1 } });
    expect(byName.get('tenantId_1_updatedAt_-1')?.['unique']).toBeFalsy();
  });

  it('reports a unique-index violation as MongoServerError code 11000', async () => {
    const coll = db.collection('dups');
    await coll.createIndex({ tenantId: 1, code: 1 }, { unique: true });
    await coll.insertOne({ tenantId: 't1', code: 'A' });
    await coll.insertOne({ tenantId: 't2', code: 'A' }); // other tenant: fine

    const insertErr = await coll.insertOne({ tenantId: 't1', code: 'A' }).catch((e: unknown) => e);
    expect(insertErr).toBeInstanceOf(MongoServerError);
    expect((insertErr as MongoServerError).code).toBe(11000);

    await coll.insertOne({ tenantId: 't1', code: 'B' });
    const updateErr = await coll.updateOne({ tenantId: 't1', code: 'B' }, { $set: { code: 'A' } }).catch((e: unknown) => e);
    expect(updateErr).toBeInstanceOf(MongoServerError);
    expect((updateErr as MongoServerError).code).toBe(11000);

    const bulkErr = await coll
      .insertMany(
        [
          { tenantId: 't3', code: 'X' },
          { tenantId: 't1', code: 'A' },
          { tenantId: 't3', code: 'Y' },
        ],
        { ordered: false },
      )
      .catch((e: unknown) => e);
    expect(bulkErr).toBeInstanceOf(MongoBulkWriteError);
    expect((bulkErr as MongoBulkWriteError).code).toBe(11000);
    expect(await coll.countDocuments({ tenantId: 't3' })).toBe(2);
    expect(await coll.countDocuments({ tenantId: 't1', code: 'A' })).toBe(1);
  });

  it('finds with filter, projection, sort, skip and limit', async () => {
    const coll = db.collection('paging');
    await coll.insertMany(Array.from({ length: 20 }, (_, n) => ({ n, group: n % 2 === 0 ? 'even' : 'odd', payload: 'x'.repeat(10) })));
    const page = await coll
      .find({ group: 'even' }, { projection: { _id: 0, n: 1 } })
      .sort({ n: -1 })
      .skip(2)
      .limit(3)
      .toArray();
    expect(page).toEqual([{ n: 14 }, { n: 12 }, { n: 10 }]);
    const compound = await coll
      .find({ n: { $gte: 15 } })
      .sort({ group: 1, n: -1 })
      .limit(4)
      .toArray();
    // 'even' sorts before 'odd'; within a group, n descending.
    expect(compound.map((d) => d['n'])).toEqual([18, 16, 19, 17]);
  });

  it('findOneAndUpdate upserts and returns the document after the update', async () => {
    const counters = db.collection<{ _id: string; seq: number; createdBy?: string }>('counters');
    const first = await counters.findOneAndUpdate(
      { _id: 'asset' },
      { $inc: { seq: 1 }, $setOnInsert: { createdBy: 'test' } },
      { upsert: true, returnDocument: 'after' },
    );
    expect(first).toEqual({ _id: 'asset', seq: 1, createdBy: 'test' });
    const second = await counters.findOneAndUpdate({ _id: 'asset' }, { $inc: { seq: 1 } }, { upsert: true, returnDocument: 'after' });
    expect(second).toEqual({ _id: 'asset', seq: 2, createdBy: 'test' });
    const before = await counters.findOneAndUpdate({ _id: 'asset' }, { $inc: { seq: 1 } }, { returnDocument: 'before' });
    expect(before?.seq).toBe(2);
    const missing = await counters.findOneAndUpdate({ _id: 'nope' }, { $inc: { seq: 1 } }, { returnDocument: 'after' });
    expect(missing).toBeNull();
  });

  it('updateOne with $inc and a version filter gives optimistic concurrency', async () => {
    const docs = db.collection<{ _id: string; name: string; version: number }>('versioned');
    await docs.insertOne({ _id: 'a1', name: 'first', version: 1 });
    const ok = await docs.updateOne({ _id: 'a1', version: 1 }, { $set: { name: 'second' }, $inc: { version: 1 } });
    expect(ok).toMatchObject({ matchedCount: 1, modifiedCount: 1 });
    const stale = await docs.updateOne({ _id: 'a1', version: 1 }, { $set: { name: 'lost update' }, $inc: { version: 1 } });
    expect(stale).toMatchObject({ matchedCount: 0, modifiedCount: 0 });
    expect(await docs.findOne({ _id: 'a1' })).toEqual({ _id: 'a1', name: 'second', version: 2 });
  });

  it('bulkWrite with updateOne upserts and $setOnInsert', async () => {
    const coll = db.collection<{ _id: string; value: number; createdAt?: Date; hits?: number }>('bulk');
    await coll.insertOne({ _id: 'existing', value: 0, hits: 5 });
    const createdAt = new Date('2024-02-29T12:34:56.789Z');
    const ops = ['existing', 'new1', 'new2'].map((id, i) => ({
      updateOne: {
        filter: { _id: id },
        update: { $set: { value: i + 1 }, $setOnInsert: { createdAt }, $inc: { hits: 1 } },
        upsert: true,
      },
    }));
    const result = await coll.bulkWrite(ops, { ordered: false });
    expect(result.matchedCount).toBe(1);
    expect(result.modifiedCount).toBe(1);
    expect(result.upsertedCount).toBe(2);
    expect(Object.values(result.upsertedIds).sort()).toEqual(['new1', 'new2']);
    const all = await coll.find().sort({ _id: 1 }).toArray();
    expect(all).toEqual([
      { _id: 'existing', value: 1, hits: 6 },
      { _id: 'new1', value: 2, hits: 1, createdAt },
      { _id: 'new2', value: 3, hits: 1, createdAt },
    ]);
  });

  it('aggregates with $match, $group, $sort, $facet and $count', async () => {
    const readings = db.collection('readings');
    await readings.insertMany([
      { site: 'A', kind: 'wall', value: 10 },
      { site: 'A', kind: 'wall', value: 20 },
      { site: 'A', kind: 'cp', value: 5 },
      { site: 'B', kind: 'wall', value: 7 },
      { site: 'C', kind: 'wall', value: 1 },
      { site: 'C', kind: 'cp', value: 100 },
    ]);
    const grouped = await readings
      .aggregate([
        { $match: { kind: 'wall' } },
        { $group: { _id: '$site', total: { $sum: '$value' }, n: { $sum: 1 }, max: { $max: '$value' }, avg: { $avg: '$value' } } },
        { $sort: { total: -1 } },
      ])
      .toArray();
    expect(grouped).toEqual([
      { _id: 'A', total: 30, n: 2, max: 20, avg: 15 },
      { _id: 'B', total: 7, n: 1, max: 7, avg: 7 },
      { _id: 'C', total: 1, n: 1, max: 1, avg: 1 },
    ]);

    const [faceted] = await readings
      .aggregate([
        { $match: { site: { $in: ['A', 'C'] } } },
        {
          $facet: {
            total: [{ $count: 'count' }],
            byKind: [{ $group: { _id: '$kind', n: { $sum: 1 } } }, { $sort: { _id: 1 } }],
            top: [{ $sort: { value: -1 } }, { $limit: 2 }, { $project: { _id: 0, site: 1, value: 1 } }],
          },
        },
      ])
      .toArray();
    expect(faceted).toEqual({
      total: [{ count: 5 }],
      byKind: [
        { _id: 'cp', n: 2 },
        { _id: 'wall', n: 3 },
      ],
      top: [
        { site: 'C', value: 100 },
        { site: 'A', value: 20 },
      ],
    });
  });

  it('countDocuments with and without a filter', async () => {
    const coll = db.collection('counting');
    expect(await coll.countDocuments()).toBe(0);
    await coll.insertMany([{ k: 1 }, { k: 2 }, { k: 3 }, { k: 4 }]);
    expect(await coll.countDocuments()).toBe(4);
    expect(await coll.countDocuments({ k: { $gt: 2 } })).toBe(2);
    expect(await coll.countDocuments({}, { skip: 1, limit: 2 })).toBe(2);
  });

  it('inserts 10,000 documents with insertMany', async () => {
    const coll = db.collection('many');
    const docs = Array.from({ length: 10_000 }, (_, i) => ({ i, tenantId: `t${i % 10}`, at: new Date(1_700_000_000_000 + i * 1000), tags: ['a', 'b'] }));
    const result = await coll.insertMany(docs);
    expect(result.insertedCount).toBe(10_000);
    expect(Object.keys(result.insertedIds)).toHaveLength(10_000);
    expect(await coll.countDocuments()).toBe(10_000);
    expect(await coll.countDocuments({ tenantId: 't3' })).toBe(1_000);
    const last = await coll.find().sort({ i: -1 }).limit(1).next();
    expect(last?.['i']).toBe(9_999);
  });

  it('round-trips Dates (millisecond precision) and queries by date range', async () => {
    const coll = db.collection<{ _id: number; at: Date }>('dates');
    const dates = [new Date('1999-12-31T23:59:59.999Z'), new Date('2024-02-29T12:34:56.789Z'), new Date(Date.UTC(2030, 0, 1, 0, 0, 0, 1))];
    await coll.insertMany(dates.map((at, i) => ({ _id: i, at })));
    const back = await coll.find().sort({ _id: 1 }).toArray();
    for (const [i, doc] of back.entries()) {
      expect(doc.at).toBeInstanceOf(Date);
      expect(doc.at.getTime()).toBe(dates[i]!.getTime());
    }
    const inRange = await coll.find({ at: { $gte: new Date('2000-01-01T00:00:00Z'), $lt: new Date('2030-01-01T00:00:00.001Z') } }).toArray();
    expect(inRange.map((d) => d._id)).toEqual([1]);
  });

  it('emits command monitoring events (monitorCommands: true)', async () => {
    const monitored = new MongoClient(server.uri, { ...clientOptions, monitorCommands: true });
    const started: CommandStartedEvent[] = [];
    const succeeded: CommandSucceededEvent[] = [];
    monitored.on('commandStarted', (event) => started.push(event));
    monitored.on('commandSucceeded', (event) => succeeded.push(event));
    try {
      const coll = monitored.db('monitoring').collection('things');
      await coll.insertOne({ x: 1 });
      await coll.find({ x: 1 }).toArray();
    } finally {
      await monitored.close();
    }
    const insert = started.find((e) => e.commandName === 'insert');
    const find = started.find((e) => e.commandName === 'find');
    expect(insert).toBeDefined();
    expect(insert?.databaseName).toBe('monitoring');
    expect(find?.command['filter']).toEqual({ x: 1 });
    expect(succeeded.map((e) => e.commandName)).toEqual(expect.arrayContaining(['insert', 'find']));
    expect(succeeded.every((e) => typeof e.duration === 'number')).toBe(true);
  });
});

describe('embedded MongoDB lifecycle', () => {
  it('keeps data and unique indexes in the H2 file across a stop and a restart', async () => {
    const dataFile = path.join(tmpDir, 'restart', 'nested', 'mongo.h2');
    const first = await startEmbeddedMongo({ dataFile });
    let client = new MongoClient(first.uri, clientOptions);
    try {
      const coll = client.db('persist').collection('assets');
      await coll.createIndex({ code: 1 }, { unique: true });
      await coll.insertMany([
        { code: 'P-1', at: new Date('2024-05-01T00:00:00.123Z') },
        { code: 'P-2', at: new Date('2024-05-02T00:00:00.456Z') },
      ]);
    } finally {
      await client.close();
    }
    await first.stop();
    expect(await canConnect(first.port)).toBe(false);

    const second = await startEmbeddedMongo({ dataFile });
    client = new MongoClient(second.uri, clientOptions);
    try {
      const coll = client.db('persist').collection('assets');
      const docs = await coll
        .find({}, { projection: { _id: 0 } })
        .sort({ code: 1 })
        .toArray();
      expect(docs).toEqual([
        { code: 'P-1', at: new Date('2024-05-01T00:00:00.123Z') },
        { code: 'P-2', at: new Date('2024-05-02T00:00:00.456Z') },
      ]);
      const dup = await coll.insertOne({ code: 'P-1' }).catch((e: unknown) => e);
      expect((dup as MongoServerError).code).toBe(11000);
      expect((await client.db('persist').listCollections().toArray()).map((c) => c.name)).toContain('assets');
    } finally {
      await client.close();
      await second.stop();
    }
  });

  it('starts on a requested port and frees it on stop; a busy port fails with the server stderr', async () => {
    const first = await startEmbeddedMongo();
    try {
      const again = startEmbeddedMongo({ port: first.port });
      await expect(again).rejects.toThrow(/exited before it was ready[\s\S]*(BindException|Address already in use)/);
    } finally {
      await first.stop();
    }
    await first.stop(); // idempotent
    expect(await canConnect(first.port)).toBe(false);

    const second = await startEmbeddedMongo({ port: first.port });
    try {
      expect(second.port).toBe(first.port);
      const client = new MongoClient(second.uri, clientOptions);
      await client.db('x').command({ ping: 1 });
      await client.close();
    } finally {
      await second.stop();
    }
  });

  it('exits when the Node process that started it dies without stopping it (stdin EOF)', async () => {
    const script = path.join(tmpDir, 'orphan.ts');
    await writeFile(
      script,
      `import { startEmbeddedMongo } from ${JSON.stringify(path.join(repoRoot, 'lib/infra/embedded-mongo'))};\n` +
        `startEmbeddedMongo().then((m) => { console.log('PORT ' + m.port); process.exit(0); });\n`,
    );
    const parent = spawn(process.execPath, ['--import', 'tsx', script], { cwd: repoRoot, stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    parent.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    const code = await new Promise<number | null>((resolve) => parent.once('close', resolve));
    expect(code).toBe(0);
    const port = Number(/PORT (\d+)/.exec(out)?.[1]);
    expect(port).toBeGreaterThan(0);
    expect(await eventually(async () => !(await canConnect(port)), 10_000)).toBe(true);
  });
});
