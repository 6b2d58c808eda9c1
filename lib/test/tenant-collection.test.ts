/**
 * TenantCollection's reads take their tenant's read slots (lib/fair-share.ts databaseReads, issue 31): while one
 * tenant holds all of its slots — a request fanned out into hundreds of reads — its next read waits behind its own,
 * another tenant's read runs at once, and a read whose request's deadline passed while it waited is never sent.
 * The slots are held by the test itself, so every state is observed, not timed.
 */
import { randomUUID } from 'node:crypto';
import type { MongoClient } from 'mongodb';
import { databaseReadLimits, databaseReads } from '../fair-share';
import { connectMongo } from '../mongo';
import { TenantCollection, type TenantDocument } from '../tenant-collection';

let mongo: MongoClient;
/** The commands this client sent to the server, by name (command monitoring). */
const sent: string[] = [];
const collectionName = `tenant_collection_${randomUUID().slice(0, 8)}`;

beforeAll(async () => {
  mongo = await connectMongo(process.env['MONGODB_URI']!, { monitorCommands: true });
  mongo.on('commandStarted', (event) => void sent.push(event.commandName));
  await mongo
    .db('lib_tests')
    .collection<TenantDocument & { _id: string; n: number }>(collectionName)
    .insertMany([
      { _id: 'a1', tenantId: 'A', n: 1 },
      { _id: 'b1', tenantId: 'B', n: 1 },
    ]);
});

afterAll(async () => {
  await mongo?.db('lib_tests').dropCollection(collectionName);
  await mongo?.close();
});

const of = (tenantId: string, deadline?: number) =>
  new TenantCollection(mongo.db('lib_tests').collection<TenantDocument & { _id: string; n: number }>(collectionName), tenantId, deadline);

/** Holds every read slot of `tenantId` until the returned function is called. */
function holdSlots(tenantId: string): () => Promise<void> {
  let open!: () => void;
  const opened = new Promise<void>((resolve) => (open = resolve));
  const held = Array.from({ length: databaseReadLimits.perTenant }, () => databaseReads.run(tenantId, () => opened));
  return async () => {
    open();
    await Promise.all(held);
  };
}

test("a tenant's read waits while its own reads fill its slots; another tenant's runs meanwhile, each seeing its own documents only", async () => {
  const release = holdSlots('A');
  const mine = Promise.all([of('A').findOne({ _id: 'a1' }), of('A').find({}).toArray(), of('A').countDocuments(), of('A').aggregate([]).toArray()]);
  expect(databaseReads.queuedFor('A')).toBe(4);
  expect(await of('B').find({}).toArray()).toEqual([{ _id: 'b1', tenantId: 'B', n: 1 }]);
  expect(await of('B').findOne({ _id: 'a1' })).toBeNull();
  expect(databaseReads.queuedFor('A')).toBe(4);
  await release();
  const [one, all, count, aggregated] = await mine;
  expect(one).toEqual({ _id: 'a1', tenantId: 'A', n: 1 });
  expect(all).toEqual([one]);
  expect(count).toBe(1);
  expect(aggregated).toEqual([one]);
  expect(databaseReads.queued).toBe(0);
});

test("a read whose request's deadline passed while it waited is refused with TIMEOUT and never reaches the database", async () => {
  const release = holdSlots('A');
  const late = of('A', Date.now() + 20).countDocuments();
  await new Promise((r) => setTimeout(r, 50));
  sent.length = 0;
  await release();
  await expect(late).rejects.toMatchObject({ extensions: { code: 'TIMEOUT' } });
  await expect(of('A', Date.now() - 1).findOne({ _id: 'a1' })).rejects.toMatchObject({ extensions: { code: 'TIMEOUT' } });
  expect(sent).toEqual([]);
  expect(await of('A', Date.now() + 60_000).findOne({ _id: 'a1' })).toMatchObject({ _id: 'a1' });
  expect(sent).toEqual(['find']);
});
