/**
 * `npm run bench:ili -- --short` (10,000 features) as a separate process, on the suite's MongoDB (MONGODB_URI) and
 * Redis. What it measures is not judged here (no times in tests): only that it completes, that every count it checked
 * was right (features, tally items, measurements stored, features assessed), that it printed its table with the
 * baseline and the import, assessment and total rows, and that it dropped every database it created.
 */
import { connectMongo } from '@linepack/lib/mongo';
import { runEntry } from '../support/linepack-process';

jest.setTimeout(600_000);

interface IliBenchJson {
  benchmark: string;
  features: number;
  tallyItems: number;
  phases: { name: string; items: number; ms: number }[];
  valid: boolean;
  problems: string[];
}

const ours = async () => {
  const mongo = await connectMongo(process.env['MONGODB_URI']!);
  try {
    const { databases } = await mongo.db('admin').admin().listDatabases({ nameOnly: true });
    return databases.map((d) => d.name).filter((name) => /^ili[0-9a-f]{8}_/.test(name));
  } finally {
    await mongo.close();
  }
};

let run: Awaited<ReturnType<typeof runEntry>>;
let json: IliBenchJson;
let before: string[];

beforeAll(async () => {
  before = await ours();
  run = await runEntry('bench/ili.ts', ['--short', '--json', '--timeout-s', '500']);
  process.stderr.write(`${run.stdout.split('\nBENCH_JSON')[0]}\n(${(run.ms / 1000).toFixed(0)} s)\n`);
  const line = run.stdout.split('\n').find((l) => l.startsWith('BENCH_JSON '));
  if (!line) throw new Error(`bench:ili printed no BENCH_JSON line (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  json = JSON.parse(line.slice('BENCH_JSON '.length)) as IliBenchJson;
});

it('completes with every count right: 10,000 features imported, stored and assessed', () => {
  expect({ code: run.code, valid: json.valid, problems: json.problems }).toEqual({ code: 0, valid: true, problems: [] });
  expect(run.stderr).not.toContain('FAILED');
  expect(json).toMatchObject({ benchmark: 'ili', features: 10_000 });
  expect(json.tallyItems).toBeGreaterThan(0);
  expect(run.stdout).toContain('Every count checked');
});

it('prints the baseline, the import, the assessment and the total, each with items/s and its ratio to the baseline', () => {
  const names = json.phases.map((p) => p.name);
  expect(names[0]).toMatch(/insertMany.*baseline/);
  expect(names).toEqual(expect.arrayContaining([expect.stringMatching(/^import through the gateway/), 'import + align + assess']));
  expect(names.some((n) => /comparison\.state COMPLETE/.test(n))).toBe(true);
  for (const p of json.phases) expect(p.ms).toBeGreaterThan(0);
  expect(run.stdout).toMatch(/scenario\s+features\s+seconds\s+features\/s\s+time vs baseline/);
  expect(run.stdout).toMatch(/^import \+ align \+ assess\s+10,000\s+[\d.]+\s+[\d,]+\s+[\d.]+×/m);
});

it('drops every database it created', async () => {
  expect(await ours()).toEqual(before);
});
