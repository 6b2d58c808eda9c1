/**
 * What `npm run bench:gateway` sends: the seed data, the four queries in the form each contender takes them, and
 * the check that an answer is a real one (a benchmark of error responses is worthless).
 *
 *   Q0  trivial, authenticated, no subgraph:   { __typename } — the gateway answers it itself, after authentication,
 *       rate limiting and scope checks: the gateway's own cost per request, as issue 13's first target measures it
 *   Q1  trivial, authenticated, one subgraph:  query Q1($id: ID!) { asset(id: $id) { id name } }
 *   Q2  a two-subgraph federated list: 50 assets (assets) and each one's latest measurement (measurements)
 *   Q3  a mutation batch: recordMeasurements with 100 new items
 *
 * Varied (the default): no two subgraph requests in flight are the same — Q1 walks the seeded ids, Q2 the pages of 50 (every
 * `after` cursor that still leaves a full page), Q3 has fresh idempotency keys — so in-flight de-duplication cannot
 * fake throughput. Identical (--identical): every request of a run is the same, to show what de-duplication does.
 * Q0 is the same request either way: it makes no subgraph request, so there is nothing to de-duplicate.
 */
import { randomUUID } from 'node:crypto';
import type { MongoClient } from 'mongodb';
import { measurementDocument } from '@linepack/subgraph-measurements/repository';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken } from '@linepack/lib/identity';
import { databaseName } from '@linepack/lib/mongo';
import { knownScopes } from '@linepack/lib/scopes';
import type { SubgraphName } from '@linepack/schema/subgraphs';
import { benchScopes } from './stack';

export type QueryName = 'Q0' | 'Q1' | 'Q2' | 'Q3';

export const QUERY_NAMES: readonly QueryName[] = ['Q0', 'Q1', 'Q2', 'Q3'];

export const queryTitles: Record<QueryName, string> = {
  Q0: 'Q0 trivial authenticated, no subgraph: { __typename } (answered by the gateway itself)',
  Q1: 'Q1 trivial authenticated: asset(id) { id name }',
  Q2: 'Q2 federated list: assets(first: 50, after) { … latestMeasurement { type observedAt } }',
  Q3: 'Q3 mutation batch: recordMeasurements(100 items)',
};

const Q0 = '{ __typename }';
const Q1 = 'query Q1($id: ID!) { asset(id: $id) { id name } }';
const Q2 = `query Q2($after: String) { assets(first: 50, after: $after) { edges { node { id name type status latestMeasurement { type observedAt } } } } }`;
/** The assets subgraph's part of Q2, as the query plan sends it (what "assets part only" measures). */
const Q2_ASSETS = `query Q2($after: String) { assets(first: 50, after: $after) { edges { node { id name type status } } } }`;
/** The measurements subgraph's part of Q2, as the query plan sends it. */
const Q2_MEASUREMENTS = `query Q2__measurements__1($representations: [_Any!]!) { _entities(representations: $representations) { ... on Asset { latestMeasurement { type observedAt } } } }`;
const Q3 = 'mutation Q3($input: [MeasurementInput!]!) { recordMeasurements(input: $input) { insertedCount duplicateCount } }';
export const Q3_ITEMS = 100;
/** Every Q3 item's idempotency key starts with this: the runs' writes are deleted after each run (see deleteQ3Writes). */
export const Q3_KEY_PREFIX = 'gwbench-q3-';

/** One request as autocannon sends it. */
export interface BenchRequest {
  headers: Record<string, string>;
  body: string;
}

/** A contender's form of one query: where it goes, the next request to send, and what a right answer looks like. */
export interface RequestPlan {
  url: string;
  next(): BenchRequest;
  /** null when the parsed answer is right; otherwise what is wrong with it. */
  check(answer: { data?: any; errors?: unknown[] }): string | null;
}

export interface SeedData {
  /** Asset ids in the order `assets` lists them. */
  assetIds: string[];
  /** cursors[i]: the cursor of assetIds[i]. */
  cursors: string[];
  /** Q2's pages: `after` and the ids of the 50 assets that follow it. */
  pages: Array<{ after: string | null; ids: string[] }>;
  measurements: number;
}

// ───────────────────────────── seeding ─────────────────────────────

interface GraphQLAnswer {
  data?: any;
  errors?: Array<{ message: string; extensions?: Record<string, unknown> }>;
}

export async function postGraphQL(
  url: string,
  body: unknown,
  headers: Record<string, string>,
  timeoutMs = 120_000,
): Promise<{ status: number; answer: GraphQLAnswer; text: string }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  const text = await res.text();
  let answer: GraphQLAnswer;
  try {
    answer = JSON.parse(text) as GraphQLAnswer;
  } catch {
    throw new Error(`${url} answered ${res.status} with non-JSON: ${text.slice(0, 300)}`);
  }
  return { status: res.status, answer, text };
}

async function gql(url: string, apiKey: string, query: string, variables: Record<string, unknown>): Promise<any> {
  const { status, answer } = await postGraphQL(url, { query, variables }, { authorization: `Bearer ${apiKey}` });
  if (status !== 200 || answer.errors?.length || !answer.data)
    throw new Error(`seeding: HTTP ${status} ${JSON.stringify(answer.errors ?? answer).slice(0, 500)}`);
  return answer.data;
}

async function pool<T>(items: readonly T[], concurrency: number, work: (item: T, index: number) => Promise<void>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, items.length) }, async () => {
      while (next < items.length) {
        const index = next++;
        await work(items[index]!, index);
      }
    }),
  );
}

const CREATE = 'mutation Seed($input: CreateAssetInput!) { createAsset(input: $input) { id } }';
const RECORD = 'mutation SeedMeasurements($input: [MeasurementInput!]!) { recordMeasurements(input: $input) { insertedCount } }';
const LIST = 'query SeedList($after: String) { assets(first: 500, after: $after) { pageInfo { hasNextPage endCursor } edges { cursor node { id } } } }';

/**
 * A pipeline system of `assetCount` assets (a system, four pipelines, segments under them) and `perAsset`
 * measurements per asset, written through the Linepack gateway as a client would.
 */
export async function seed(
  gatewayUrl: string,
  apiKey: string,
  mongo: MongoClient,
  dbPrefix: string,
  tenantId: string,
  options: { assets: number; perAsset: number },
  log: (line: string) => void,
): Promise<SeedData> {
  const gas = { status: 'ACTIVE', product: 'NATURAL_GAS', regulation: 'CFR_192' };
  const create = async (input: Record<string, unknown>) => String((await gql(gatewayUrl, apiKey, CREATE, { input })).createAsset.id);
  const system = await create({ type: 'SYSTEM', name: 'Bench system', ...gas });
  const pipelines: string[] = [];
  for (let p = 0; p < 4; p++) {
    pipelines.push(await create({ type: 'PIPELINE', name: `Bench line ${p + 1}`, parentId: system, ...gas, beginStationM: 0, endStationM: 1_000_000 }));
  }
  const segments = Array.from({ length: Math.max(0, options.assets - 5) }, (_, i) => i);
  await pool(segments, 8, async (i) => {
    await create({
      type: 'SEGMENT',
      name: `Bench segment ${String(i).padStart(4, '0')}`,
      parentId: pipelines[i % pipelines.length],
      ...gas,
      beginStationM: i * 100,
      endStationM: i * 100 + 100,
      outsideDiameterMm: 508,
      wallThicknessMm: 7.9,
      smysMpa: 359,
      maopKpa: 6_200,
      classLocation: 1 + (i % 4),
      inHca: i % 3 === 0,
    });
  });
  // Listed in the API's order (name, then id): Q2's pages follow it.
  const assetIds: string[] = [];
  const cursors: string[] = [];
  let after: string | null = null;
  for (;;) {
    const page: any = (await gql(gatewayUrl, apiKey, LIST, { after })).assets;
    for (const edge of page.edges) {
      assetIds.push(edge.node.id);
      cursors.push(edge.cursor);
    }
    if (!page.pageInfo.hasNextPage) break;
    after = page.pageInfo.endCursor;
  }
  // The measurements subgraph accepts measurements of assets it has heard of (asset.upserted events).
  const refs = mongo.db(databaseName(dbPrefix, 'measurements')).collection('asset_refs');
  const deadline = Date.now() + 60_000;
  while ((await refs.countDocuments({ tenantId })) < assetIds.length) {
    if (Date.now() > deadline)
      throw new Error('seeding: the measurements subgraph did not hear of every asset within 60 s (are events flowing through Redis?)');
    await new Promise((r) => setTimeout(r, 200));
  }
  const items = assetIds.flatMap((assetId, a) =>
    Array.from({ length: options.perAsset }, (_, k) => ({
      idempotencyKey: `gwbench-seed-${a}-${k}`,
      assetId,
      type: k % 2 === 0 ? 'PRESSURE' : 'TEMPERATURE',
      value: k % 2 === 0 ? 6_000 - k : 15 + k,
      unit: k % 2 === 0 ? 'KPA' : 'CELSIUS',
      source: 'SCADA',
      observedAt: new Date(Date.UTC(2026, 0, 1) + (a * options.perAsset + k) * 60_000).toISOString(),
    })),
  );
  for (let i = 0; i < items.length; i += 500) await gql(gatewayUrl, apiKey, RECORD, { input: items.slice(i, i + 500) });
  const pages: SeedData['pages'] = [];
  for (let k = 0; k + 50 <= assetIds.length; k++) pages.push({ after: k === 0 ? null : cursors[k - 1]!, ids: assetIds.slice(k, k + 50) });
  if (pages.length === 0) throw new Error(`seeding: Q2 needs at least 50 assets, there are ${assetIds.length}`);
  log(`seeded ${assetIds.length} assets and ${items.length} measurements through the Linepack gateway; ${pages.length} distinct Q2 pages`);
  return { assetIds, cursors, pages, measurements: items.length };
}

// ───────────────────────────── the requests ─────────────────────────────

/** Identity tokens for calling a subgraph directly, minted in the load generator and reused for 15 s (they live 30 s). */
export class DirectTokens {
  private readonly cached = new Map<string, { token: string; until: number }>();

  constructor(
    private readonly tenantId: string,
    private readonly privateKeyPem: string,
  ) {}

  get(subgraph: SubgraphName): string {
    const now = Date.now();
    let entry = this.cached.get(subgraph);
    if (!entry || entry.until <= now) {
      const identity = {
        subject: 'gateway-bench-direct',
        kind: 'api_key' as const,
        tenantId: this.tenantId,
        scopes: knownScopes(benchScopes),
        requestId: randomUUID(),
      };
      entry = { token: mintInternalToken(identity, subgraph, this.privateKeyPem), until: now + 15_000 };
      this.cached.set(subgraph, entry);
    }
    return entry.token;
  }
}

/** How a contender is called: its URL and the headers of each request. */
export interface Caller {
  /** GraphQL URL (a gateway's, or a subgraph's for the direct rows). */
  url: string;
  headers(): Record<string, string>;
}

/** A gateway called with one API key, or with a list of keys in turn (request i uses key i mod n). */
export function keyCaller(url: string, keys: readonly string[], extra: Record<string, string> = {}): Caller {
  let i = 0;
  const bearer = keys.map((k) => `Bearer ${k}`);
  return { url, headers: () => ({ 'content-type': 'application/json', authorization: bearer[i++ % bearer.length]!, ...extra }) };
}

export function subgraphCaller(url: string, subgraph: SubgraphName, tokens: DirectTokens): Caller {
  return { url, headers: () => ({ 'content-type': 'application/json', [INTERNAL_IDENTITY_HEADER]: tokens.get(subgraph) }) };
}

export interface WorkloadContext {
  seed: SeedData;
  identical: boolean;
  /** Distinguishes this invocation's Q3 keys from any earlier run's. */
  runId: string;
  /** The next Q3 item number, shared by every contender's plan: no two Q3 items of a run share a key. */
  q3Sequence: { value: number };
}

function cycle<T>(items: readonly T[], identical: boolean): () => T {
  let i = 0;
  return () => items[identical ? 0 : i++ % items.length]!;
}

const body = (query: string, variables: Record<string, unknown>) => JSON.stringify({ query, variables });

/** Q0: answered by the gateway itself (after authentication, rate limiting, scopes and cost), no subgraph request. */
export function q0Plan(caller: Caller): RequestPlan {
  const payload = JSON.stringify({ query: Q0 });
  return {
    url: caller.url,
    next: () => ({ headers: caller.headers(), body: payload }),
    check: (a) => (a.data?.__typename === 'Query' && !a.errors?.length ? null : `expected { "__typename": "Query" }, got ${JSON.stringify(a.data)}`),
  };
}

export function q1Plan(caller: Caller, ctx: WorkloadContext): RequestPlan {
  const nextId = cycle(ctx.seed.assetIds, ctx.identical);
  const names = new Set(ctx.seed.assetIds);
  return {
    url: caller.url,
    next: () => ({ headers: caller.headers(), body: body(Q1, { id: nextId() }) }),
    check: (a) => (a.data?.asset?.id && names.has(a.data.asset.id) && typeof a.data.asset.name === 'string' ? null : 'no asset in the answer'),
  };
}

/** Q2 through a gateway, or one subgraph's part of it (`part`). */
export function q2Plan(caller: Caller, ctx: WorkloadContext, part: 'whole' | 'assets' | 'measurements' = 'whole'): RequestPlan {
  const nextPage = cycle(ctx.seed.pages, ctx.identical);
  const next = (): BenchRequest => {
    const page = nextPage();
    const payload =
      part === 'measurements'
        ? body(Q2_MEASUREMENTS, { representations: page.ids.map((id) => ({ __typename: 'Asset', id })) })
        : body(part === 'assets' ? Q2_ASSETS : Q2, { after: page.after });
    return { headers: caller.headers(), body: payload };
  };
  return {
    url: caller.url,
    next,
    check: (a) => {
      if (part === 'measurements') {
        const entities = a.data?._entities as Array<{ latestMeasurement: unknown }> | undefined;
        return entities?.length === 50 && entities.every((e) => e.latestMeasurement) ? null : 'expected 50 entities, each with a latest measurement';
      }
      const edges = a.data?.assets?.edges as Array<{ node: { id: string; latestMeasurement?: unknown } }> | undefined;
      if (edges?.length !== 50) return `expected a page of 50 assets, got ${edges?.length ?? 'none'}`;
      if (part === 'whole' && !edges.every((e) => e.node.latestMeasurement)) return 'an asset without its latest measurement';
      return null;
    },
  };
}

export function q3Plan(caller: Caller, ctx: WorkloadContext): RequestPlan {
  const ids = ctx.seed.assetIds;
  const start = Date.UTC(2026, 1, 1);
  const item = (n: number, key: string) => ({
    idempotencyKey: key,
    assetId: ids[n % ids.length],
    type: 'PRESSURE',
    value: 5_000 + (n % 1_000),
    unit: 'KPA',
    source: 'SCADA',
    observedAt: new Date(start + n * 1_000).toISOString(),
  });
  const identicalBody = body(Q3, { input: Array.from({ length: Q3_ITEMS }, (_, j) => item(j, `${Q3_KEY_PREFIX}${ctx.runId}-identical-${j}`)) });
  const next = (): BenchRequest => {
    if (ctx.identical) return { headers: caller.headers(), body: identicalBody };
    const first = ctx.q3Sequence.value;
    ctx.q3Sequence.value += Q3_ITEMS;
    return {
      headers: caller.headers(),
      body: body(Q3, { input: Array.from({ length: Q3_ITEMS }, (_, j) => item(first + j, `${Q3_KEY_PREFIX}${ctx.runId}-${first + j}`)) }),
    };
  };
  return {
    url: caller.url,
    next,
    check: (a) => {
      const r = a.data?.recordMeasurements as { insertedCount: number; duplicateCount: number } | undefined;
      if (!r || r.insertedCount + r.duplicateCount !== Q3_ITEMS) return `expected ${Q3_ITEMS} items recorded, got ${JSON.stringify(r)}`;
      if (!ctx.identical && r.insertedCount !== Q3_ITEMS) return `expected ${Q3_ITEMS} new items, ${r.duplicateCount} were duplicates`;
      return null;
    },
  };
}

/**
 * Deletes what Q3 wrote (every Q3 key starts with Q3_KEY_PREFIX), so each run finds the measurements collection as
 * seeded: the embedded server scans a collection for every upsert, and a growing collection would slow each later
 * run down whichever contender it measures.
 */
export async function deleteQ3Writes(mongo: MongoClient, dbPrefix: string, tenantId: string): Promise<number> {
  const res = await mongo
    .db(databaseName(dbPrefix, 'measurements'))
    .collection('measurements')
    .deleteMany({ tenantId, idempotencyKey: { $regex: `^${Q3_KEY_PREFIX}` } });
  return res.deletedCount;
}

// ───────────────────────────── ingest: the gateway against insertMany ─────────────────────────────

export interface IngestRound {
  gatewayMs: number;
  /** The same batch sent to the measurements subgraph directly (what the subgraph alone costs). */
  subgraphMs: number;
  insertManyMs: number;
}

/**
 * One `items`-item recordMeasurements batch through the Linepack gateway, the same batch (other keys) to the
 * measurements subgraph directly, and the driver's insertMany of equivalent documents (as the measurements subgraph
 * stores them: every field, the outbox entry) into a scratch collection of the measurements database. Everything
 * written is deleted afterwards; the order of the three turns round by round.
 */
export async function ingestRound(
  gatewayUrl: string,
  apiKey: string,
  direct: Caller,
  mongo: MongoClient,
  dbPrefix: string,
  tenantId: string,
  assetIds: readonly string[],
  items: number,
  round: number,
): Promise<IngestRound> {
  const prefix = `gwbench-ingest-${round}-${randomUUID()}-`;
  const start = Date.UTC(2026, 2, 1);
  const inputs = (path: string) =>
    Array.from({ length: items }, (_, n) => ({
      idempotencyKey: `${prefix}${path}-${n}`,
      assetId: assetIds[n % assetIds.length]!,
      type: 'PRESSURE' as const,
      value: 5_000 + (n % 1_000),
      unit: 'KPA' as const,
      source: 'SCADA' as const,
      observedAt: new Date(start + n * 1_000).toISOString(),
    }));
  const mutation = 'mutation Ingest($input: [MeasurementInput!]!) { recordMeasurements(input: $input) { insertedCount } }';
  const gatewayBody = body(mutation, { input: inputs('gateway') });
  const subgraphBody = body(mutation, { input: inputs('subgraph') });
  const recordedAt = new Date();
  // What the measurements repository stores for each item, built the way it builds them.
  const documents = inputs('driver').map((m) => measurementDocument({ ...m, observedAt: new Date(m.observedAt) }, tenantId, recordedAt));
  const db = mongo.db(databaseName(dbPrefix, 'measurements'));
  const scratch = db.collection<{ _id: string } & Record<string, unknown>>('gateway_bench_insertmany');
  const timedPost = async (what: string, url: string, requestBody: string, headers: Record<string, string>) => {
    const t = performance.now();
    const { status, answer } = await postGraphQL(url, requestBody, headers, 300_000);
    const ms = performance.now() - t;
    if (status !== 200 || answer.errors?.length || answer.data?.recordMeasurements?.insertedCount !== items) {
      throw new Error(`ingest ${what}: HTTP ${status} ${JSON.stringify(answer).slice(0, 500)}`);
    }
    return ms;
  };
  const paths: Array<[keyof IngestRound, () => Promise<number>]> = [
    ['gatewayMs', () => timedPost('through the gateway', gatewayUrl, gatewayBody, { authorization: `Bearer ${apiKey}` })],
    ['subgraphMs', () => timedPost('to the measurements subgraph', direct.url, subgraphBody, direct.headers())],
    [
      'insertManyMs',
      async () => {
        const t = performance.now();
        await scratch.insertMany(documents);
        return performance.now() - t;
      },
    ],
  ];
  const result: IngestRound = { gatewayMs: 0, subgraphMs: 0, insertManyMs: 0 };
  for (let i = 0; i < paths.length; i++) {
    const [key, run] = paths[(round + i) % paths.length]!;
    result[key] = await run();
  }
  await scratch.drop().catch(() => undefined);
  await db.collection('measurements').deleteMany({ tenantId, idempotencyKey: { $regex: `^${prefix}` } });
  return result;
}
