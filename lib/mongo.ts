import {
  MongoBulkWriteError,
  MongoClient,
  type Collection,
  type Document,
  type Filter,
  type MongoClientOptions,
  type OptionalUnlessRequiredId,
  type WithId,
} from 'mongodb';
import { mongoTimeoutsFromEnv } from './config';

/**
 * Each subgraph owns one database. Names carry a prefix so several stacks (tests,
 * parallel developers) can share one MongoDB server without seeing each other's data.
 */
export function databaseName(prefix: string, subgraph: string): string {
  return `${prefix}_${subgraph}`;
}

/**
 * `beforeConnect` sees the client before its first connection (pool metrics must count that one too). The timeouts
 * for a database that is down come from MONGODB_SERVER_SELECTION_TIMEOUT_MS and MONGODB_CONNECT_TIMEOUT_MS (lib/config.ts)
 * unless `options` name them.
 */
export async function connectMongo(uri: string, options: MongoClientOptions = {}, beforeConnect?: (client: MongoClient) => void): Promise<MongoClient> {
  const client = new MongoClient(uri, {
    // The embedded mongo-java-server speaks wire version 8 (MongoDB 5.0 level) and has no
    // sessions or transactions: nothing here may rely on them.
    ...mongoTimeoutsFromEnv(process.env),
    appName: 'linepack',
    // An acknowledged write is journaled on a majority, so a crash or failover cannot take it back after its
    // client (or the outbox relay, reading with readConcern majority) has seen it. The embedded server commits
    // and fsyncs every write before answering (tools/mongo DurableH2Backend).
    writeConcern: { w: 'majority', journal: true },
    ...options,
  });
  beforeConnect?.(client);
  await client.connect();
  return client;
}

/** Documents per query of findInIdPages. */
const ID_PAGE_SIZE = 1_000;

/**
 * Every document `filter` matches, in `_id` order, read a page at a time: each page is a query of its own that resumes
 * after the last `_id` read. One find of a whole ILI run is one query to the embedded server, which collects every
 * match while holding its collection's lock before it answers the first batch: behind a run comparison's 100,000
 * features read at once, another tenant's read of the same collection waited up to 0.4–0.7 s (`npm run
 * bench:run-reads`). An index on the filter's equalities followed by `_id` reads each page in order and stops at its
 * end. `filter` must not name `_id`.
 */
export async function* findInIdPages<T extends { _id: string }>(
  collection: Collection<T>,
  filter: Filter<T>,
  options: { projection?: Document; pageSize?: number } = {},
): AsyncGenerator<WithId<T>> {
  const pageSize = options.pageSize ?? ID_PAGE_SIZE;
  let after: string | null = null;
  for (;;) {
    const page: Filter<T> = after === null ? filter : ({ ...filter, _id: { $gt: after } } as Filter<T>);
    const docs = await collection
      .find(page, { sort: { _id: 1 }, limit: pageSize, ...(options.projection ? { projection: options.projection } : {}) })
      .toArray();
    yield* docs;
    if (docs.length < pageSize) return;
    after = docs[docs.length - 1]!._id;
  }
}

/** MongoDB's duplicate-key error (E11000). */
export function isDuplicateKeyError(err: unknown): boolean {
  return typeof err === 'object' && err !== null && (err as { code?: unknown }).code === 11000;
}

/** How insertKeepingDuplicates sends a long list. */
export interface InsertSlices {
  /** Documents per insert command: the driver serialises a whole command on the loop, and the server may hold a lock for it. */
  size: number;
  /** Runs each slice's insert (e.g. in its tenant's turn for heavy work, lib/fair-share.ts); by default, as it is. */
  each?: (insert: () => Promise<void>) => Promise<void>;
}

/**
 * Inserts `docs` unordered and answers the indexes of those refused because their unique key is stored already (a
 * retried batch, a resumed import): every other document is stored. Any other failure — a write error of another
 * kind, or a write concern not met — throws. With `slices`, one insert per slice, one after another.
 */
export async function insertKeepingDuplicates<T extends Document>(
  collection: Collection<T>,
  docs: readonly OptionalUnlessRequiredId<T>[],
  slices?: InsertSlices,
): Promise<number[]> {
  if (!slices) return insertOnce(collection, docs);
  const { size, each = (insert) => insert() } = slices;
  const refused: number[] = [];
  for (let start = 0; start < docs.length; start += size) {
    await each(async () => {
      for (const index of await insertOnce(collection, docs.slice(start, start + size))) refused.push(start + index);
    });
  }
  return refused;
}

async function insertOnce<T extends Document>(collection: Collection<T>, docs: readonly OptionalUnlessRequiredId<T>[]): Promise<number[]> {
  try {
    await collection.insertMany([...docs], { ordered: false });
    return [];
  } catch (err) {
    const duplicates = duplicateKeyIndexes(err);
    if (!duplicates) throw err;
    return duplicates;
  }
}

/**
 * The indexes of an unordered bulk write's operations refused only because their unique key is stored already, or null
 * when the failure is anything else (another write error, a write concern not met): then the caller rethrows.
 */
export function duplicateKeyIndexes(err: unknown): number[] | null {
  if (!(err instanceof MongoBulkWriteError) || err.result.getWriteConcernError()) return null;
  const writeErrors = Array.isArray(err.writeErrors) ? err.writeErrors : [err.writeErrors];
  if (writeErrors.length === 0 || writeErrors.some((e) => e.code !== 11000)) return null;
  return writeErrors.map((e) => e.index);
}
