/**
 * findInIdPages (lib/mongo.ts), how a run comparison reads a run's features: against the suite's real server, every
 * matching document once, in _id order, a page per query — each page read from the index in order and stopped at its
 * limit, never the whole run collected at once by the server.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, CommandStartedEvent, Document, MongoClient } from 'mongodb';
import { connectMongo, findInIdPages } from '../mongo';

interface Feature {
  _id: string;
  tenantId: string;
  runId: string;
  depth: number;
}

let mongo: MongoClient;
let features: Collection<Feature>;
const finds: CommandStartedEvent[] = [];

/** Ids in no order: the pages must come back sorted whatever the insertion order. */
const shuffledIds = (prefix: string, n: number) => Array.from({ length: n }, (_, i) => `${prefix}-${String((i * 7919) % n).padStart(5, '0')}`);

beforeAll(async () => {
  mongo = await connectMongo(process.env['MONGODB_URI']!, { monitorCommands: true });
  features = mongo.db('lib_tests').collection<Feature>(`find_in_id_pages_${randomUUID().slice(0, 8)}`);
  mongo.on('commandStarted', (event) => {
    if (event.commandName === 'find' && event.command['find'] === features.collectionName) finds.push(event);
  });
  await features.createIndex({ tenantId: 1, runId: 1, _id: 1 }, { name: 'tenant_run_id' });
  const docs = (tenantId: string, runId: string, ids: string[]) => ids.map((_id, i) => ({ _id, tenantId, runId, depth: i % 80 }));
  await features.insertMany([
    ...docs('t1', 'r1', shuffledIds('a', 2_345)),
    ...docs('t1', 'r2', shuffledIds('b', 50)),
    // Another tenant's features under the same run id, interleaved with t1's ids.
    ...docs('t2', 'r1', shuffledIds('a0', 50)),
    ...docs('t1', 'r3', shuffledIds('c', 2_000)),
  ]);
});

afterAll(async () => {
  await features?.drop();
  await mongo?.close();
});

async function readAll(filter: { tenantId: string; runId: string }, pageSize: number): Promise<Document[]> {
  const read: Document[] = [];
  for await (const doc of findInIdPages(features, filter, { projection: { _id: 1, depth: 1 }, pageSize })) read.push(doc);
  return read;
}

it('reads every matching document once, in _id order, a page per query', async () => {
  const expected = (await features.find({ tenantId: 't1', runId: 'r1' }, { projection: { _id: 1 } }).toArray()).map((d) => d._id).sort();
  finds.length = 0;
  const read = await readAll({ tenantId: 't1', runId: 'r1' }, 1_000);
  expect(read.map((d) => d['_id'])).toEqual(expected);
  expect(expected).toHaveLength(2_345);
  // Only the fields asked for.
  expect(Object.keys(read[0]!).sort()).toEqual(['_id', 'depth']);
  // Three pages: 1,000 + 1,000 + 345, each its own query resuming after the last id of the one before.
  expect(finds.map((f) => f.command['limit'])).toEqual([1_000, 1_000, 1_000]);
  // (The driver sends a sort as a Map.)
  expect(finds.map((f) => Object.fromEntries(f.command['sort'] as Map<string, number>))).toEqual([{ _id: 1 }, { _id: 1 }, { _id: 1 }]);
  expect(finds[0]!.command['filter']).toEqual({ tenantId: 't1', runId: 'r1' });
  expect(finds[1]!.command['filter']).toEqual({ tenantId: 't1', runId: 'r1', _id: { $gt: expected[999] } });
  expect(finds[2]!.command['filter']).toEqual({ tenantId: 't1', runId: 'r1', _id: { $gt: expected[1_999] } });
});

it('ends after a last page that is exactly full with one empty query', async () => {
  finds.length = 0;
  const read = await readAll({ tenantId: 't1', runId: 'r3' }, 1_000);
  expect(new Set(read.map((d) => d['_id'])).size).toBe(2_000);
  expect(finds).toHaveLength(3);
});

it('reads each page from the index in _id order and stops at its limit (no sort of the whole run on the server)', async () => {
  const plan = JSON.stringify(
    (
      (await features
        .find({ tenantId: 't1', runId: 'r1', _id: { $gt: 'a-00999' } })
        .sort({ _id: 1 })
        .limit(1_000)
        .explain('queryPlanner')) as Document
    )['queryPlanner']['winningPlan'],
  );
  expect(plan).toContain('"indexName":"tenant_run_id"');
  expect(plan).not.toContain('SORT');
  expect(plan).not.toContain('COLLSCAN');
});
