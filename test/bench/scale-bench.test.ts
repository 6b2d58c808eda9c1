/**
 * `npm run bench:scale` runs: the harness at two small sizes (--sizes 100,200), as a separate process like an operator
 * runs it — once on its default database (a file-backed embedded server of its own, as `npm start` runs it) and once
 * on the suite's MongoDB (MONGODB_URI). What it measures is not judged here (no performance thresholds in tests):
 * only that every answer it checked was right, that it printed each workload's table with a row per size and the
 * growth factor, and that it left nothing behind (its H2 file and server, its databases).
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { connectMongo } from '@linepack/lib/mongo';
import { repoRoot } from '@linepack/lib/repo-root';
import { processesWith, runEntry } from '../support/linepack-process';

jest.setTimeout(300_000);

const SIZES = [100, 200];
const WORKLOADS = ['analytics', 'listing', 'summary', 'register', 'status', 'ingest'];
/** Each workload's table title starts with this. */
const TITLES = ['analytics:', 'listing:', 'pipelineSummary:', 'riskRegister:', 'complianceStatus:', 'ingest:'];

interface ScaleJson {
  benchmark: string;
  mongo: 'embedded-h2' | 'external';
  sizes: number[];
  workloads: {
    name: string;
    growth: number | null;
    points: { size: number; items: number; ms: number; perItemUs: number; extra: Record<string, number | null> }[];
  }[];
  targets: { name: string; value: number | null; target: number; met: boolean | null }[];
  valid: boolean;
  problems: string[];
}

type Run = Awaited<ReturnType<typeof runEntry>> & { json: ScaleJson };

async function runScale(env: NodeJS.ProcessEnv): Promise<Run> {
  const run = await runEntry('bench/scale.ts', ['--sizes', SIZES.join(','), '--json'], env);
  const line = run.stdout
    .split('\n')
    .reverse()
    .find((l) => l.startsWith('BENCH_JSON '));
  if (!line) throw new Error(`bench:scale printed no BENCH_JSON line (exit ${run.code}):\n${run.stdout}\n${run.stderr}`);
  // The tables, for whoever reads the test output.
  process.stderr.write(`${run.stdout.split('\nBENCH_JSON')[0]}\n(${(run.ms / 1000).toFixed(0)} s)\n`);
  return { ...run, json: JSON.parse(line.slice('BENCH_JSON '.length)) as ScaleJson };
}

/** The lines under a table's title: header, rule, rows and notes, up to the blank line before the next table. */
function tableUnder(stdout: string, title: string): string[] {
  const lines = stdout.split('\n');
  const at = lines.findIndex((l) => l.startsWith(title));
  if (at < 0) return [];
  const end = lines.indexOf('', at);
  return lines.slice(at + 1, end < 0 ? undefined : end);
}

function expectValidRun(run: Run, mongo: ScaleJson['mongo']): void {
  expect({ code: run.code, valid: run.json.valid, problems: run.json.problems }).toEqual({ code: 0, valid: true, problems: [] });
  expect(run.stderr).not.toContain('FAILED');
  expect(run.stdout).toContain('Every answer checked');
  expect(run.json).toMatchObject({ benchmark: 'scale', mongo, sizes: SIZES });
}

function expectTables(run: Run): void {
  for (const title of TITLES) {
    const [header, rule, ...rest] = tableUnder(run.stdout, title);
    expect({ title, header }).toEqual({ title, header: expect.stringMatching(/^size\s+\w+\s+seconds\s+µs\/item\s.*growth$/) });
    expect(rule).toMatch(/^[- ]+$/);
    expect(rest).toEqual([
      expect.stringMatching(/^100\s.*\s1\.00×$/),
      expect.stringMatching(/^200\s.*\s[\d.]+× [✓✗]$/),
      expect.stringMatching(/^growth factor \(µs\/item at 200 ÷ at 100\): [\d.]+× [✓✗] target ≤ 2$/),
    ]);
  }
  expect(run.json.workloads.map((w) => w.name)).toEqual(WORKLOADS);
  for (const w of run.json.workloads) {
    expect({ workload: w.name, sizes: w.points.map((p) => p.size) }).toEqual({ workload: w.name, sizes: SIZES });
    for (const p of w.points) {
      expect(p.items).toBeGreaterThan(0);
      expect(p.ms).toBeGreaterThan(0);
    }
    expect(w.growth).toBeGreaterThan(0);
  }
  // What the issue asks of each workload beyond its growth: scaled as it says, checked against their own targets.
  const items = (name: string) => run.json.workloads.find((w) => w.name === name)?.points.map((p) => p.items);
  expect(items('analytics')).toEqual([100, 200]);
  expect(items('listing')).toEqual([100, 200]);
  expect(items('summary')).toEqual([10, 20]);
  expect(items('ingest')).toEqual([1_000, 2_000]);
  const targets = Object.fromEntries(run.json.targets.map((t) => [t.name, t.target]));
  expect(targets).toMatchObject({
    'analytics ÷ insertMany at 200': 20,
    'listing: first page at 200 ÷ at 100': 2,
    'listing: last page ÷ first page at 200': 2,
    'ingest: growth factor': 2,
  });
}

describe('npm run bench:scale on its own embedded server (file-backed H2, as npm start)', () => {
  let run: Run;
  let before: string[];
  const benchDirs = () =>
    existsSync(path.join(repoRoot, '.linepack')) ? readdirSync(path.join(repoRoot, '.linepack')).filter((d) => d.startsWith('bench-scale-')) : [];

  beforeAll(async () => {
    before = benchDirs();
    const { MONGODB_URI: _suiteMongo, ...env } = process.env;
    run = await runScale(env);
  });

  it('exits 0 with every answer checked, on the file-backed embedded server', () => {
    expectValidRun(run, 'embedded-h2');
    expect(run.stdout).toMatch(/mongo embedded mongo-java-server, file-backed \(H2, as npm start\): \.linepack\/bench-scale-\w+\/mongo\.h2/);
  });

  it('prints every workload with a row per size and its growth factor', () => expectTables(run));

  it('states the embedded server’s resident size after the ingest', () => {
    expect(run.stdout).toMatch(/Embedded server after the 2,000-reading ingest: resident set \d+ MB \(peak \d+ MB\); H2 file \d+ MB, the whole run so far\./);
    const ingest = run.json.workloads.find((w) => w.name === 'ingest')!;
    for (const p of ingest.points) expect(p.extra['rssKb']).toBeGreaterThan(0);
  });

  it('removes its H2 file and stops its server', () => {
    const dir = /\.linepack\/(bench-scale-\w+)\/mongo\.h2/.exec(run.stdout)![1]!;
    expect(benchDirs()).toEqual(before);
    expect(processesWith(dir)).toEqual([]);
  });
});

describe('npm run bench:scale with MONGODB_URI', () => {
  let run: Run;
  let databasesBefore: string[];
  const ours = async () => {
    const mongo = await connectMongo(process.env['MONGODB_URI']!);
    try {
      const { databases } = await mongo.db('admin').admin().listDatabases({ nameOnly: true });
      // Its databases and the analytics workload's (bench/analytics-workload.ts).
      return databases.map((d) => d.name).filter((name) => /^(scale|bench)[0-9a-f]{8}_/.test(name));
    } finally {
      await mongo.close();
    }
  };

  beforeAll(async () => {
    databasesBefore = await ours();
    run = await runScale(process.env);
  });

  it('exits 0 with every answer checked, on the given server', () => {
    expectValidRun(run, 'external');
    expect(run.stdout).toContain('Resident set size: not measured (MONGODB_URI');
  });

  it('prints every workload with a row per size and its growth factor', () => expectTables(run));

  it('drops every database it created', async () => {
    expect(await ours()).toEqual(databasesBefore);
  });
});
