/**
 * `npm run bench:isolation`: can one tenant's abuse slow down another's? (issue 16)
 *
 * A victim tenant (enterprise, so it can sample often) reads a 50-asset page in a loop, first alone (baseline), then while an attacker with a valid
 * pro key sends the abusive requests of issue 16 from 4 connections (on a thread of its own, as another client
 * would be) as fast as its rate limit lets it, then
 * alone again (recovery). Prints the victim's p50/p99 per phase against the baseline, its 5xx count, and what
 * the attacker's requests were answered with.
 *
 *   npm run bench:isolation [-- --seconds 20]     (embedded in-memory MongoDB, or MONGODB_URI when set)
 * Target: victim p99 within 3× baseline while under abuse, no 5xx, recovered within 5 s of the abuse stopping.
 */
import { parseArgs } from 'node:util';
import { Worker } from 'node:worker_threads';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { createAsset, startTestStack } from '../test/support/stack';

interface Sample {
  ms: number;
  status: number;
  /** When the request started, ms since the phase began. */
  at?: number;
}

function percentile(sorted: number[], p: number): number {
  return sorted.length === 0 ? NaN : sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))]!;
}

async function post(url: string, key: string, body: string): Promise<Sample> {
  const started = performance.now();
  try {
    const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: `Bearer ${key}` }, body });
    await res.arrayBuffer();
    return { ms: performance.now() - started, status: res.status };
  } catch {
    return { ms: performance.now() - started, status: 0 };
  }
}

/** The requests of issue 16, each as a JSON body. */
function abusiveBodies(assetId: string): string[] {
  const aliases = (field: (i: number) => string) => Array.from({ length: 30 }, (_, i) => `a${i}: ${field(i)}`).join(' ');
  const items = Array.from({ length: 10_000 }, (_, i) => ({
    idempotencyKey: `abuse-${i}`,
    assetId,
    type: 'PRESSURE',
    value: 1,
    unit: 'KPA',
    observedAt: '2026-01-01T00:00:00Z',
    source: 'SCADA',
  }));
  return [
    // 1. the cost limit side-stepped with a variable
    JSON.stringify({
      query: `query($n: Int) { ${aliases(() => 'assets(first: $n) { edges { node { id measurements(first: $n) { edges { node { id value } } } } } }')} }`,
      variables: { n: 500 },
    }),
    // 2. a 60,000-character filter
    JSON.stringify({ query: 'query($s: String) { assets(filter: { nameContains: $s }) { totalCount } }', variables: { s: 'a'.repeat(60_000) } }),
    // 3. aliased batch mutations sharing one 10,000-item variable
    JSON.stringify({
      query: `mutation($i: [MeasurementInput!]!) { ${aliases(() => 'recordMeasurements(input: $i) { insertedCount }')} }`,
      variables: { i: items },
    }),
    // 4. client mistakes that used to be 500s
    JSON.stringify({ query: '{ me { id ' }),
    JSON.stringify({ query: '{ a '.repeat(5_000) + '}'.repeat(5_000) }),
    JSON.stringify({ query: 'mutation { createAsset(input: { type: PIPELINE, name: "x", maopKpa: 1e309 }) { id } }' }),
    // 5. unbounded inputs
    JSON.stringify({ query: 'query($id: ID!) { asset(id: $id) { id } }', variables: { id: 'x'.repeat(1_000_000) } }),
  ];
}

/** Plain JavaScript for the attacker's thread: `connections` loops sending the bodies round-robin until told to stop. */
const ATTACKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { url, key, bodies, connections } = workerData;
let running = true;
const answers = {};
parentPort.on('message', () => { running = false; });
async function loop(offset) {
  for (let n = offset; running; n++) {
    let status = 0;
    try {
      const res = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/json', authorization: 'Bearer ' + key }, body: bodies[n % bodies.length] });
      await res.arrayBuffer();
      status = res.status;
    } catch {}
    answers[status] = (answers[status] || 0) + 1;
  }
}
Promise.all(Array.from({ length: connections }, (_, i) => loop(i * 2))).then(() => parentPort.postMessage(answers));
`;

async function main(): Promise<void> {
  const { values } = parseArgs({ options: { seconds: { type: 'string', default: '20' } } });
  const seconds = Number(values.seconds);
  let mongo: EmbeddedMongo | null = null;
  let redis: RedisServerProcess | null = null;
  if (!process.env['MONGODB_URI']) {
    mongo = await startEmbeddedMongo();
    process.env['MONGODB_URI'] = mongo.uri;
  }
  if (!process.env['REDIS_URL']) {
    redis = await startRedisServer();
    process.env['REDIS_URL'] = redis.url;
  }
  const stack = await startTestStack({ redisUrl: process.env['REDIS_URL'], credentialCacheTtlSeconds: 30 });
  try {
    // Enterprise (uncounted), so it can sample 20 times a second: a p99 of ~100 samples would just be the maximum.
    const victim = await stack.tenantWithKey({ tier: 'ENTERPRISE', name: 'victim' });
    const attacker = await stack.tenantWithKey({ tier: 'PRO', name: 'attacker' });
    const victimLine = await createAsset(stack.gatewayUrl, victim.apiKey, { type: 'PIPELINE', name: 'Victim line' });
    for (let i = 0; i < 50; i++) await createAsset(stack.gatewayUrl, victim.apiKey, { type: 'SEGMENT', name: `Segment ${i}`, parentId: victimLine.id });
    const attackerAsset = (await createAsset(stack.gatewayUrl, attacker.apiKey, { type: 'PIPELINE', name: 'Attacker line' })).id;
    const read = JSON.stringify({ query: '{ assets(first: 50) { totalCount edges { node { id name type status } } } }' });

    /** The victim's steady read, one request at a time with a 50 ms pause, for `ms`. */
    const victimFor = async (ms: number): Promise<Sample[]> => {
      const samples: Sample[] = [];
      const begin = performance.now();
      const end = begin + ms;
      while (performance.now() < end) {
        const at = performance.now() - begin;
        samples.push({ ...(await post(stack.gatewayUrl, victim.apiKey, read)), at });
        await new Promise((r) => setTimeout(r, 50));
      }
      return samples;
    };

    // Warm-up: first requests compile code paths and fill caches; they are not part of any phase.
    await victimFor(3_000);
    console.log(`Baseline: the victim alone for ${seconds} s…`);
    const baseline = await victimFor(seconds * 1000);

    console.log(`Abuse: the attacker's requests from 4 connections for ${seconds} s…`);
    // The attacker is another client, so it runs on its own thread: its sending must not be billed to the server.
    const attackerThread = new Worker(ATTACKER_SOURCE, {
      eval: true,
      workerData: { url: stack.gatewayUrl, key: attacker.apiKey, bodies: abusiveBodies(attackerAsset), connections: 4 },
    });
    const answered = new Promise<Record<string, number>>((resolve, reject) => {
      attackerThread.once('message', resolve);
      attackerThread.once('error', reject);
    });
    await new Promise((r) => setTimeout(r, 200));
    const underAbuse = await victimFor(seconds * 1000);
    attackerThread.postMessage('stop');
    const answers = new Map(Object.entries(await answered).map(([status, n]) => [Number(status), n]));
    await attackerThread.terminate();

    console.log('Recovery: the victim alone again for 5 s…');
    const recovery = await victimFor(5_000);

    const base = baseline.map((s) => s.ms).sort((a, b) => a - b);
    const baseP50 = percentile(base, 0.5);
    const baseP99 = percentile(base, 0.99);
    const rows = [
      ['victim alone (baseline)', baseline],
      ['victim under abuse', underAbuse],
      ['victim, 5 s after the abuse', recovery],
    ] as const;
    const header = ['phase', 'requests', 'p50 ms', 'p99 ms', 'p50 vs base', 'p99 vs base', '5xx'];
    const table = rows.map(([name, samples]) => {
      const sorted = samples.map((s) => s.ms).sort((a, b) => a - b);
      const p50 = percentile(sorted, 0.5);
      const p99 = percentile(sorted, 0.99);
      return [
        name,
        String(samples.length),
        p50.toFixed(1),
        p99.toFixed(1),
        `${(p50 / baseP50).toFixed(2)}×`,
        `${(p99 / baseP99).toFixed(2)}×`,
        String(samples.filter((s) => s.status >= 500 || s.status === 0).length),
      ];
    });
    const widths = header.map((h, i) => Math.max(h.length, ...table.map((r) => r[i]!.length)));
    const line = (cells: readonly string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
    console.log(`\nIsolation: a second tenant's steady read while one tenant abuses the API\n${line(header)}\n${widths.map((w) => '-'.repeat(w)).join('  ')}`);
    for (const row of table) console.log(line(row));
    const perSecond = new Map<number, number>();
    for (const s of underAbuse) perSecond.set(Math.floor(s.at! / 1000), Math.max(perSecond.get(Math.floor(s.at! / 1000)) ?? 0, s.ms));
    console.log(`\nThe victim's slowest request in each second of the abuse (ms): ${[...perSecond.values()].map((v) => v.toFixed(0)).join(' ')}`);
    console.log(
      `The attacker's ${[...answers.values()].reduce((a, b) => a + b, 0)} requests were answered: ${[...answers.entries()]
        .sort(([a], [b]) => a - b)
        .map(([status, n]) => `${n}× ${status}`)
        .join(', ')}.`,
    );
    console.log('Ratios compare phases of this run only. Target: p99 under abuse ≤ 3× baseline, no 5xx, recovery p99 ≤ 3× baseline.');
  } finally {
    await stack.stop();
    await mongo?.stop();
    await redis?.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
