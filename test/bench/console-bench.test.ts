/**
 * `npm run bench:console -- --short` (a 43-asset tenant with a 2,000-feature run beside the small baseline, one visit
 * each) as a separate process, in Chromium, on the suite's MongoDB (MONGODB_URI) and Redis. What it measures is not
 * judged here (no times in tests): only that it completes, that it timed every milestone of both tenants, printed its
 * tables (pages against the budget with ratios, the plot's API reads, compression levels and the gateway by encoding)
 * and dropped every database it created.
 */
import { connectMongo } from '@linepack/lib/mongo';
import { runEntry } from '../support/linepack-process';

jest.setTimeout(900_000);

interface ConsoleBenchJson {
  benchmark: string;
  small: { totalAssets: number; features: number };
  large: { totalAssets: number; located: number; features: number };
  pages: { small: Record<string, number>; large: Record<string, number>; budgetMs: Record<string, number> };
  compression: { wire: { encoding: string; wireBytes: number }[] };
}

const ours = async () => {
  const mongo = await connectMongo(process.env['MONGODB_URI']!);
  try {
    const { databases } = await mongo.db('admin').admin().listDatabases({ nameOnly: true });
    return databases.map((d) => d.name).filter((name) => /^cb[0-9a-f]{8}_/.test(name));
  } finally {
    await mongo.close();
  }
};

let run: Awaited<ReturnType<typeof runEntry>>;
let json: ConsoleBenchJson;
let before: string[];

beforeAll(async () => {
  before = await ours();
  run = await runEntry('bench/console.ts', ['--short', '--json']);
  process.stderr.write(`${run.stdout.split('\nBENCH_JSON')[0]}\n(${(run.ms / 1000).toFixed(0)} s)\n`);
  const line = run.stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '));
  if (!line) throw new Error(`bench:console printed no BENCH_JSON line (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  json = JSON.parse(line.slice('BENCH_JSON '.length)) as ConsoleBenchJson;
});

it('seeds both tenants and times every milestone of every page for each', () => {
  expect(run.code).toBe(0);
  expect(json.benchmark).toBe('console');
  expect(json.small.totalAssets).toBe(8);
  expect(json.large).toMatchObject({ totalAssets: 43, located: 42, features: 2_000 });
  const milestones = Object.keys(json.pages.budgetMs);
  expect(milestones).toEqual(expect.arrayContaining(['Assets: first rows', 'Map: every asset drawn', 'Along the line: plot drawn']));
  for (const tenant of [json.pages.small, json.pages.large]) for (const m of milestones) expect(tenant[m]).toBeGreaterThan(0);
});

it('prints the pages against the budget with ratios, the plot reads, the compression levels and the gateway by encoding', () => {
  expect(run.stdout).toMatch(/milestone\s+small tenant\s+large tenant\s+large vs small\s+budget \(large\)\s+large vs budget/);
  expect(run.stdout).toMatch(/^Along the line: plot drawn\s+[\d,]+\s+[\d,]+\s+[\d.]+×\s+5,000\s+(within|over by [\d,]+)$/m);
  expect(run.stdout).toMatch(/^features with assessment\s+1\s+[\d,]+\s+4\s+[\d,]+/m);
  expect(run.stdout).toMatch(/answer\s+bytes\s+gzip 1\s+gzip 6\s+gzip 9\s+br 1\s+br 4/);
  // Brotli and gzip really were sent by the gateway, and smaller than the answer itself.
  const [identity, gzip, br] = json.compression.wire;
  expect([identity!.encoding, gzip!.encoding, br!.encoding]).toEqual(['identity', 'gzip', 'br']);
  expect(gzip!.wireBytes).toBeLessThan(identity!.wireBytes / 4);
  expect(br!.wireBytes).toBeLessThan(gzip!.wireBytes);
});

it('drops every database it created', async () => {
  expect(await ours()).toEqual(before);
});
