/**
 * `npm run bench:subgraphs`: what the subgraphs themselves cost per request (issue 13).
 *
 *   1. Q2 — `{ assets(first: 50) { edges { node { id name type status latestMeasurement { type observedAt } } } } }` —
 *      split into the two fetches the gateway makes, each sent straight to its subgraph with a minted identity
 *      token: the assets list, then the measurements subgraph's `_entities` with the 50 Asset representations.
 *      Baseline: the assets-only list. Target: Q2 (both fetches) within 2× of it.
 *   2. The same two queries through the gateway, for comparison.
 *   3. Ingest of one 10,000-item `recordMeasurements` batch, straight to the measurements subgraph and through the
 *      gateway, and the same batch sent again (every key stored: the retry path). Baseline: the driver's own
 *      insertMany of the same documents, as stored, into a scratch collection of the same database; a second row
 *      inserts them into a scratch collection with the measurements collection's indexes, to show what the unique
 *      idempotency index itself costs. Target: through the gateway ≥ 0.5× the baseline's throughput (≤ 2× its time).
 *
 * Every table is printed twice: wall clock, and the CPU time of the same runs (this process, which holds the
 * client, the gateway and the subgraphs, plus the embedded server's JVM), which load from elsewhere disturbs less.
 *
 *   npm run bench:subgraphs [-- --part q2|ingest|all] [--rounds N] [--background N] [--events]
 *     --rounds N      rounds of every table (default 3); each scenario's median round is printed
 *     --background N  first store N measurements of another tenant in the same collection (default 0): the embedded
 *                     server scans whole collections for most query shapes, so its costs grow with what others store
 *     --events        run a redis-server too, so asset ids are checked and the outbox relays publish (as `npm start`)
 *
 * Real servers: embedded MongoDB (or MONGODB_URI) and the in-process stack over loopback HTTP. The benchmark's own
 * client shares the process (and the 2 cores) with the stack, as in `npm run bench`: compare ratios, not times.
 */
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken, type Identity } from '@linepack/lib/identity';
import type { IndexDescription } from 'mongodb';
import { databaseName } from '@linepack/lib/mongo';
import { measurementDocument, MEASUREMENTS_COLLECTION } from '@linepack/subgraph-measurements/repository';
import type { Scope } from '@linepack/lib/scopes';
import { createAsset, graphql, startTestStack, type TestStack } from '../test/support/stack';
import { measure, printTable, type Result, type Scenario } from './harness';

const ASSETS = 50;
const TYPES = ['PRESSURE', 'TEMPERATURE', 'WALL_THICKNESS_UT'] as const;
const PER_TYPE = 4;
const REQUESTS_PER_RUN = 20;
const INGEST_BATCH = 10_000;

const ASSETS_ONLY = '{ assets(first: 50) { edges { node { id name type status } } } }';
const Q2 = '{ assets(first: 50) { edges { node { id name type status latestMeasurement { type observedAt } } } } }';
/** What the gateway sends each subgraph for Q2 (its query plan: a fetch from assets, then one _entities fetch). */
const Q2_ASSETS_FETCH = '{ assets(first: 50) { edges { node { __typename id name type status } } } }';
const Q2_ENTITIES_FETCH =
  'query($representations: [_Any!]!) { _entities(representations: $representations) { ... on Asset { latestMeasurement { type observedAt } } } }';
const RECORD = 'mutation($input: [MeasurementInput!]!) { recordMeasurements(input: $input) { insertedCount duplicateCount ids } }';

const units = { PRESSURE: ['KPA', 6_000], TEMPERATURE: ['CELSIUS', 12], WALL_THICKNESS_UT: ['MM', 9.5] } as const;

function reading(key: string, assetId: string, type: (typeof TYPES)[number], observedAt: Date) {
  return { idempotencyKey: key, assetId, type, value: units[type][1], unit: units[type][0], observedAt: observedAt.toISOString(), source: 'SCADA' as const };
}

/** Sends one operation straight to a subgraph, as the gateway would, and fails on any error. */
async function direct(url: string, token: string, query: string, variables: Record<string, unknown> = {}): Promise<Record<string, unknown>> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', [INTERNAL_IDENTITY_HEADER]: token },
    body: JSON.stringify({ query, variables }),
  });
  const body = (await res.json()) as { data?: Record<string, unknown>; errors?: unknown[] };
  if (!res.ok || body.errors) throw new Error(`direct call failed: ${res.status} ${JSON.stringify(body.errors)}`);
  return body.data!;
}

async function viaGateway(stack: TestStack, apiKey: string, query: string, variables?: Record<string, unknown>): Promise<void> {
  const res = await graphql(stack.gatewayUrl, query, { apiKey, ...(variables ? { variables } : {}) });
  if (res.status !== 200 || res.body.errors) throw new Error(`gateway call failed: ${res.status} ${JSON.stringify(res.body.errors)}`);
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      part: { type: 'string', default: 'all' },
      background: { type: 'string', default: '0' },
      events: { type: 'boolean', default: false },
      rounds: { type: 'string', default: '3' },
    },
  });
  const part = values.part;
  if (!['q2', 'ingest', 'all'].includes(part)) throw new Error('--part is q2, ingest or all');
  let embedded: EmbeddedMongo | null = null;
  let redis: RedisServerProcess | null = null;
  if (!process.env['MONGODB_URI']) {
    embedded = await startEmbeddedMongo();
    process.env['MONGODB_URI'] = embedded.uri;
    serverPid = embedded.pid;
  }
  if (values.events && !process.env['REDIS_URL']) {
    redis = await startRedisServer();
    process.env['REDIS_URL'] = redis.url;
  }
  const stack = await startTestStack({ credentialCacheTtlSeconds: 30, ...(values.events ? { redisUrl: process.env['REDIS_URL'] } : {}) });
  try {
    const { apiKey, tenantId } = await stack.tenantWithKey({ tier: 'ENTERPRISE' });
    /** A token as the gateway mints it for one subgraph (with a deadline, so reads carry maxTimeMS as they do behind the gateway). */
    const tokenFor = (audience: string, scopes: Scope[]) => {
      const identity: Identity = { subject: 'bench', kind: 'api_key', tenantId, scopes, requestId: randomUUID(), deadline: Date.now() + 30_000 };
      return mintInternalToken(identity, audience, stack.internalKeys.privateKeyPem);
    };

    const line = await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Bench line' });
    const assetIds: string[] = [];
    for (let i = 0; i < ASSETS - 1; i++) {
      assetIds.push((await createAsset(stack.gatewayUrl, apiKey, { type: 'SEGMENT', name: `Bench segment ${i}`, parentId: line.id })).id);
    }
    assetIds.push(line.id);
    // Several measurements of a few types per asset; the newest of each asset is known for the check below.
    const seed = assetIds.flatMap((assetId, a) =>
      TYPES.flatMap((type, t) =>
        Array.from({ length: PER_TYPE }, (_, k) => reading(`seed-${a}-${type}-${k}`, assetId, type, new Date(Date.UTC(2025, 0, 1 + k * 7 + t, a)))),
      ),
    );
    await viaGateway(stack, apiKey, RECORD, { input: seed });
    const background = Number(values.background);
    if (background > 0) {
      const other = await stack.tenantWithKey({ tier: 'ENTERPRISE', name: 'background' });
      const otherAsset = await createAsset(stack.gatewayUrl, other.apiKey, { type: 'PIPELINE', name: 'Other line' });
      for (let done = 0; done < background; done += INGEST_BATCH) {
        const n = Math.min(INGEST_BATCH, background - done);
        const batch = Array.from({ length: n }, (_, i) =>
          reading(`bg-${done + i}`, otherAsset.id, 'PRESSURE', new Date(Date.UTC(2024, 0, 1) + (done + i) * 60_000)),
        );
        await viaGateway(stack, other.apiKey, RECORD, { input: batch });
      }
    }
    console.log(
      `Seeded ${ASSETS} assets with ${seed.length} measurements (${TYPES.length} types × ${PER_TYPE} each)` +
        `${background > 0 ? `, and ${background} measurements of another tenant` : ''}; events ${values.events ? 'on' : 'off'}.`,
    );

    const rounds = Number(values.rounds);
    if (part !== 'ingest') await q2(stack, apiKey, assetIds, tokenFor, rounds);
    if (part !== 'q2') await ingest(stack, apiKey, tenantId, assetIds, tokenFor, rounds);
  } catch (err) {
    // Said before stopping: a stop that waits on a stuck request must not swallow why the run failed.
    console.error(err);
    process.exitCode = 1;
  } finally {
    await stack.stop();
    await embedded?.stop();
    await redis?.stop();
  }
}

type TokenFor = (audience: string, scopes: Scope[]) => string;

/** The embedded server's process, whose CPU time counts with ours (null with MONGODB_URI: ours alone). */
let serverPid: number | null = null;

/** CPU ms spent so far by this process (client, gateway and subgraphs alike) and the embedded server. */
function cpuMs(): number {
  const own = process.cpuUsage();
  let server = 0;
  if (serverPid !== null) {
    // /proc/<pid>/stat fields 14 and 15 (after the command name): user and system time in clock ticks (USER_HZ, 100).
    const fields = readFileSync(`/proc/${serverPid}/stat`, 'utf8').split(') ')[1]!.split(' ');
    server = (Number(fields[11]) + Number(fields[12])) * 10;
  }
  return (own.user + own.system) / 1000 + server;
}

/**
 * Measures every scenario in `rounds` rounds, the scenarios one after another within a round, and keeps each one's
 * median round: on a shared 2-core machine, load from elsewhere then falls on every scenario alike rather than on
 * whichever happened to run during it. Prints that wall-clock table, then the same runs' CPU time (this process and
 * the embedded server), which other load on the machine disturbs far less.
 */
async function report(title: string, scenarios: Scenario[], options: { rounds: number; repetitions: number; warmup: number }): Promise<void> {
  const wall: Result[][] = scenarios.map(() => []);
  const cpu: Result[][] = scenarios.map(() => []);
  for (let round = 0; round < options.rounds; round++) {
    for (const [i, scenario] of scenarios.entries()) {
      const samples: number[] = [];
      const counted: Scenario = {
        ...scenario,
        run: async (iteration) => {
          const before = cpuMs();
          await scenario.run(iteration);
          if (iteration >= 0) samples.push(cpuMs() - before);
        },
      };
      wall[i]!.push(await measure(counted, options.repetitions, round === 0 ? options.warmup : 0));
      samples.sort((a, b) => a - b);
      const median = samples[Math.floor(samples.length / 2)]!;
      cpu[i]!.push({
        name: scenario.name,
        items: scenario.items,
        medianMs: median,
        p90Ms: samples[Math.min(samples.length - 1, Math.floor(0.9 * samples.length))]!,
        perItemUs: (median * 1000) / scenario.items,
      });
    }
  }
  const medianRound = (results: Result[]) => [...results].sort((a, b) => a.medianMs - b.medianMs)[Math.floor(results.length / 2)]!;
  printTable(`${title} — wall clock`, wall.map(medianRound));
  printTable(`${title} — CPU ms per run (${serverPid === null ? 'this process' : 'this process + the embedded server'})`, cpu.map(medianRound));
}

async function q2(stack: TestStack, apiKey: string, assetIds: string[], tokenFor: TokenFor, rounds: number): Promise<void> {
  const assetsUrl = stack.subgraphs.assets.url;
  const measurementsUrl = stack.subgraphs.measurements.url;
  const representations = (data: Record<string, unknown>) =>
    (data['assets'] as { edges: { node: { __typename: string; id: string } }[] }).edges.map(({ node }) => ({ __typename: node.__typename, id: node.id }));

  // Correctness first: every asset's latest is the newest of its own seed (type WALL_THICKNESS_UT, the last week).
  const check = await direct(measurementsUrl, tokenFor('measurements', ['measurements:read']), Q2_ENTITIES_FETCH, {
    representations: representations(await direct(assetsUrl, tokenFor('assets', ['assets:read']), Q2_ASSETS_FETCH)),
  });
  const latest = check['_entities'] as { latestMeasurement: { type: string } | null }[];
  if (latest.length !== ASSETS || latest.some((e) => e.latestMeasurement?.type !== 'WALL_THICKNESS_UT')) {
    throw new Error(`unexpected latestMeasurement answers: ${JSON.stringify(latest.slice(0, 3))}`);
  }

  const repeat = (name: string, once: (assets: string, measurements: string) => Promise<unknown>) => ({
    name,
    items: REQUESTS_PER_RUN,
    run: async () => {
      // One token per run (valid 30 s), as the gateway mints one per request: the bench measures the subgraphs, not ES256.
      const assets = tokenFor('assets', ['assets:read']);
      const measurements = tokenFor('measurements', ['measurements:read']);
      for (let i = 0; i < REQUESTS_PER_RUN; i++) await once(assets, measurements);
    },
  });
  const fixedRepresentations = assetIds.map((id) => ({ __typename: 'Asset', id }));
  await report(
    `Q2 straight to the subgraphs: ${ASSETS} assets, ${REQUESTS_PER_RUN} sequential requests per run`,
    [
      repeat('assets-only list (assets subgraph)', (a) => direct(assetsUrl, a, ASSETS_ONLY)),
      repeat('Q2 assets fetch (assets subgraph)', (a) => direct(assetsUrl, a, Q2_ASSETS_FETCH)),
      repeat(`Q2 _entities, ${ASSETS} refs (measurements subgraph)`, (_a, m) =>
        direct(measurementsUrl, m, Q2_ENTITIES_FETCH, { representations: fixedRepresentations }),
      ),
      repeat('Q2 = assets fetch, then _entities', async (a, m) =>
        direct(measurementsUrl, m, Q2_ENTITIES_FETCH, { representations: representations(await direct(assetsUrl, a, Q2_ASSETS_FETCH)) }),
      ),
    ],
    { rounds, repetitions: 5, warmup: 10 },
  );
  await report(
    `Q2 through the gateway: ${ASSETS} assets, ${REQUESTS_PER_RUN} sequential requests per run`,
    [repeat('assets-only list', () => viaGateway(stack, apiKey, ASSETS_ONLY)), repeat('Q2', () => viaGateway(stack, apiKey, Q2))],
    { rounds, repetitions: 5, warmup: 10 },
  );
}

async function ingest(stack: TestStack, apiKey: string, tenantId: string, assetIds: string[], tokenFor: TokenFor, rounds: number): Promise<void> {
  let sequence = 0;
  const started = Date.UTC(2026, 0, 1);
  /** A fresh batch (new idempotency keys) spread over the assets; the gateway and the subgraph get the same shape. */
  const batch = () =>
    Array.from({ length: INGEST_BATCH }, () => {
      const n = sequence++;
      return reading(`ingest-${n}`, assetIds[n % assetIds.length]!, 'PRESSURE', new Date(started + n * 1000));
    });
  const db = stack.mongo.db(databaseName(stack.dbPrefix, 'measurements'));
  const scratch = db.collection<{ _id: string }>(`bench_scratch_${randomUUID().slice(0, 8)}`);
  // A second scratch collection with the measurements collection's own indexes: what the unique idempotency index costs.
  const indexed = db.collection<{ _id: string }>(`bench_scratch_indexed_${randomUUID().slice(0, 8)}`);
  const specs = await db.collection(MEASUREMENTS_COLLECTION).listIndexes().toArray();
  await indexed.createIndexes(
    specs
      .filter((spec) => spec['name'] !== '_id_')
      .map((spec) => ({
        key: spec['key'] as IndexDescription['key'],
        name: spec['name'] as string,
        unique: spec['unique'] === true,
        sparse: spec['sparse'] === true,
      })),
  );
  /** A fresh batch as the repository stores it, built inside the timed run as any writer would build it. */
  const storedDocuments = () => {
    const recordedAt = new Date();
    return batch().map((item) => measurementDocument({ ...item, observedAt: new Date(item.observedAt) }, tenantId, recordedAt));
  };
  let replay: ReturnType<typeof batch> = [];
  const record = async (result: Promise<unknown>, expectInserted: number) => {
    const data = (await result) as { recordMeasurements: { insertedCount: number; ids: string[] } };
    if (data.recordMeasurements.insertedCount !== expectInserted || data.recordMeasurements.ids.length !== INGEST_BATCH) {
      throw new Error(`recordMeasurements stored ${data.recordMeasurements.insertedCount}, expected ${expectInserted}`);
    }
  };
  const viaGatewayData = async (input: unknown[]) => {
    const res = await graphql(stack.gatewayUrl, RECORD, { apiKey, variables: { input } });
    if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
    return res.body.data;
  };
  try {
    await report(
      `Ingest: one batch of ${INGEST_BATCH.toLocaleString('en')} measurements per run`,
      [
        {
          name: 'driver insertMany, same documents (scratch collection)',
          items: INGEST_BATCH,
          run: () => scratch.insertMany(storedDocuments(), { ordered: false }).then(() => undefined),
        },
        {
          name: 'driver insertMany, same documents (scratch, measurements indexes)',
          items: INGEST_BATCH,
          run: () => indexed.insertMany(storedDocuments(), { ordered: false }).then(() => undefined),
        },
        {
          name: 'recordMeasurements, measurements subgraph directly',
          items: INGEST_BATCH,
          run: () =>
            record(direct(stack.subgraphs.measurements.url, tokenFor('measurements', ['measurements:write']), RECORD, { input: batch() }), INGEST_BATCH),
        },
        {
          name: 'recordMeasurements through the gateway',
          items: INGEST_BATCH,
          run: async () => {
            replay = batch();
            await record(viaGatewayData(replay), INGEST_BATCH);
          },
        },
        {
          name: 'the last batch again through the gateway (all duplicates)',
          items: INGEST_BATCH,
          run: () => record(viaGatewayData(replay), 0),
        },
      ],
      { rounds, repetitions: 3, warmup: 1 },
    );
  } finally {
    await Promise.all([scratch.drop().catch(() => undefined), indexed.drop().catch(() => undefined)]);
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
