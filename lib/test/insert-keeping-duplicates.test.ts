/**
 * insertKeepingDuplicates (lib/mongo.ts), which every bulk insert uses (a retried batch, a resumed import, analytics'
 * anomalies): against the suite's real server, it stores every new document and answers exactly the indexes of those
 * whose unique key was stored already — counted over the whole list when it is sent in slices — and any other
 * failure throws.
 */
import { randomUUID } from 'node:crypto';
import type { Collection, MongoClient } from 'mongodb';
import { connectMongo, insertKeepingDuplicates } from '../mongo';

interface Doc {
  _id: string;
  key: string;
}

let mongo: MongoClient;
let docs: Collection<Doc>;

beforeAll(async () => {
  mongo = await connectMongo(process.env['MONGODB_URI']!);
  docs = mongo.db('lib_tests').collection<Doc>(`insert_keeping_duplicates_${randomUUID().slice(0, 8)}`);
  await docs.createIndex({ key: 1 }, { unique: true });
});

afterAll(async () => {
  await docs?.drop();
  await mongo?.close();
});

const list = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => ({ _id: `d${from + i}`, key: `k${from + i}` }));

it('stores the new documents and answers the indexes of those already stored, across slices', async () => {
  await docs.insertMany(list(3, 5).concat(list(11, 12)));
  const slicesSent: number[] = [];
  const refused = await insertKeepingDuplicates(docs, list(0, 13), {
    size: 4,
    each: async (insert) => {
      slicesSent.push(slicesSent.length);
      await insert();
    },
  });
  // d3, d4 in the first slice of four, d11 in the third: indexes in the whole list, not in their slice.
  expect(refused.sort((a, b) => a - b)).toEqual([3, 4, 11]);
  expect(slicesSent).toEqual([0, 1, 2, 3]);
  expect(await docs.countDocuments()).toBe(13);
});

it('answers the same in one insert, and nothing when every document is new', async () => {
  expect((await insertKeepingDuplicates(docs, list(10, 15))).sort((a, b) => a - b)).toEqual([0, 1, 2]);
  expect(await insertKeepingDuplicates(docs, list(20, 22))).toEqual([]);
  expect(await docs.countDocuments()).toBe(17);
});

it('throws a failure that is not a stored key, with the slices before it stored', async () => {
  const tooBig = { _id: 'big', key: 'x'.repeat(17 * 1024 * 1024) };
  await expect(insertKeepingDuplicates(docs, [...list(30, 32), tooBig], { size: 2 })).rejects.toThrow();
  expect(await docs.countDocuments({ _id: { $in: ['d30', 'd31'] } })).toBe(2);
  expect(await docs.countDocuments({ _id: 'big' })).toBe(0);
});
