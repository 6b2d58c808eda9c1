/**
 * `npm run bench:ili [-- --features N] [--short] [--json]`: one ILI run through the real stack, as issue 25 asks.
 *   Import: a generated listing (lib/ili/generator.ts, run A, N features with its pipe tally) written as CSV and
 *     imported through the gateway as the CLI does (lib/ili/client.ts: upload in parts, the durable import job's check
 *     pass and write pass), timed from the first byte sent to the job's SUCCEEDED.
 *   Baseline: the same documents the import stored (the run's measurements and tally items, read back) inserted with
 *     the driver's insertMany (batches of 1,000, unordered) into fresh collections, in the same invocation.
 *   Align + assess: from the import's end until `iliRun(id) { comparison { state } }` reads COMPLETE (every feature
 *     assessed with the run comparison applied).
 * The CPU seconds of the embedded server's process and of this one (the whole stack runs in it) during each phase
 * say which side bounds it. Every count is checked; exit 1 when one is wrong. Times are printed, never judged.
 * MONGODB_URI / REDIS_URL are used when set (its databases are dropped at the end); otherwise it runs the embedded
 * MongoDB (in memory) and a redis-server of its own. --short: 10,000 features (the CI smoke run).
 */
import { randomBytes } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import type { Document } from 'mongodb';
import { importListing } from '@linepack/lib/ili/client';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { TALLY_KINDS } from '@linepack/lib/ili/listing';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { startRedisServer, type RedisServerProcess } from '@linepack/lib/infra/redis-server';
import { connectMongo, databaseName } from '@linepack/lib/mongo';
import { until } from '@linepack/lib/testing/until';
import { ILI_COLLECTIONS } from '@linepack/subgraph-measurements/ili/documents';
import { MEASUREMENTS_COLLECTION } from '@linepack/subgraph-measurements/repository';
import { createAsset, graphql, startTestStack, type TestStack } from '../test/support/stack';
import { processCpuMs } from './contenders/processes';
import { printColumns } from './harness';

const SEED = 2025;
const int = (n: number) => Math.round(n).toLocaleString('en-US');

/** CPU seconds (user + system) the embedded server's process has used so far; null when there is none (MONGODB_URI). */
const serverCpuSeconds = (pid: number | null): number | null => (pid === null ? null : processCpuMs(pid) / 1000);

interface Phase {
  name: string;
  items: number;
  ms: number;
  serverCpuS: number | null;
  stackCpuS: number;
}

/** Times `work` and the CPU both processes spend in it. */
async function phase<T>(name: string, items: number, serverPid: number | null, work: () => Promise<T>): Promise<{ phase: Phase; value: T }> {
  const server0 = serverCpuSeconds(serverPid);
  const stack0 = process.cpuUsage();
  const t0 = performance.now();
  const value = await work();
  const ms = performance.now() - t0;
  const stack = process.cpuUsage(stack0);
  const server1 = serverCpuSeconds(serverPid);
  const done: Phase = {
    name,
    items,
    ms,
    serverCpuS: server0 === null || server1 === null ? null : server1 - server0,
    stackCpuS: (stack.user + stack.system) / 1e6,
  };
  // As each phase ends (on stderr), so a later phase that fails does not take the earlier figures with it.
  process.stderr.write(
    `  ${name}: ${(ms / 1000).toFixed(1)} s, ${int(items / (ms / 1000))} items/s, server CPU ${done.serverCpuS?.toFixed(1) ?? '–'} s, stack CPU ${done.stackCpuS.toFixed(1)} s\n`,
  );
  return { phase: done, value };
}

/** Waits until the run's comparison is COMPLETE (or the time is up); returns how many features it had assessed. */
async function untilAssessed(stack: TestStack, apiKey: string, runId: string, timeoutMs: number) {
  const comparison = await until(
    async () => {
      const res = await graphql<{ iliRun: { comparison: { state: string; assessedFeatureCount: number } | null } }>(
        stack.gatewayUrl,
        'query($id: ID!) { iliRun(id: $id) { comparison { state assessedFeatureCount } } }',
        { apiKey, variables: { id: runId } },
      );
      return res.body.data?.iliRun.comparison ?? null;
    },
    (c) => c?.state === 'COMPLETE',
    timeoutMs,
    250,
  );
  return { assessed: comparison?.assessedFeatureCount ?? 0, done: comparison?.state === 'COMPLETE' };
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      features: { type: 'string' },
      short: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'timeout-s': { type: 'string', default: '3600' },
    },
  });
  const features = Number(values.features ?? (values.short ? 10_000 : 100_000));
  if (!Number.isInteger(features) || features < 100) throw new Error(`--features must be a whole number ≥ 100 (got ${values.features})`);
  const timeoutMs = Number(values['timeout-s']) * 1000;

  let embedded: EmbeddedMongo | null = null;
  let redisServer: RedisServerProcess | null = null;
  let stack: TestStack | null = null;
  let mongoUri: string | null = null;
  const dir = await mkdtemp(path.join(os.tmpdir(), 'linepack-bench-ili-'));
  const dbPrefix = `ili${randomBytes(4).toString('hex')}`;
  let cleaning: Promise<void> | null = null;
  // Once, from the finally below or from Ctrl-C: on a shared server, everything this run created goes.
  const cleanup = () =>
    (cleaning ??= (async () => {
      if (stack) {
        // The stack first: its consumers, relays and job runner would write (and so create) a database dropped under them.
        await stack.stop();
        const mongo = await connectMongo(mongoUri!);
        try {
          const { databases } = await mongo.db('admin').admin().listDatabases({ nameOnly: true });
          for (const { name } of databases.filter((d) => d.name.startsWith(`${dbPrefix}_`))) await mongo.db(name).dropDatabase();
        } finally {
          await mongo.close();
        }
      }
      await Promise.allSettled([embedded?.stop(), redisServer?.stop()]);
      await rm(dir, { recursive: true, force: true });
    })());
  for (const signal of ['SIGINT', 'SIGTERM'] as const) process.once(signal, () => void cleanup().finally(() => process.exit(130)));

  try {
    [embedded, redisServer] = await Promise.all([
      process.env['MONGODB_URI'] ? null : startEmbeddedMongo(),
      process.env['REDIS_URL'] ? null : startRedisServer(),
    ]);
    mongoUri = process.env['MONGODB_URI'] ?? embedded!.uri;
    const mongoLabel = embedded ? 'embedded mongo-java-server, in memory' : mongoUri.replace(/\/\/[^@]*@/, '//');
    stack = await startTestStack({ mongoUri, redisUrl: process.env['REDIS_URL'] ?? redisServer!.url, dbPrefix, credentialCacheTtlSeconds: 30 });
    const serverPid = embedded?.pid ?? null;

    const listing = generateTwoRunListing({ features, seed: SEED }).runA.rows;
    const featureCount = listing.filter((row) => !TALLY_KINDS.has(row.kind)).length;
    const tallyCount = listing.length - featureCount;
    const file = path.join(dir, 'run-a.csv');
    await writePofListingCsv(listing, file);
    console.log(`bench:ili — ${int(featureCount)} features and ${int(tallyCount)} tally items (${int(listing.length)} rows, CSV); mongo ${mongoLabel}`);

    const { apiKey, tenantId } = await stack.tenantWithKey({ tier: 'ENTERPRISE' });
    const pipe = { status: 'ACTIVE', regulation: 'CFR_192', product: 'NATURAL_GAS' };
    const line = await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Bench line', ...pipe });
    const segment = await createAsset(stack.gatewayUrl, apiKey, {
      type: 'SEGMENT',
      name: 'Bench line · whole run',
      parentId: line.id,
      ...pipe,
      outsideDiameterMm: 609.6,
      wallThicknessMm: 9.5,
      smysMpa: 359,
      maopKpa: 6900,
      classLocation: 3,
      inHca: true,
    });
    // The import refuses a segment measurements has not projected yet (its asset.upserted is still on the way).
    await stack.knownToMeasurements(segment.id);

    // The import, split where the client sees the job's phase change (upload, row check, write).
    const phaseStarts = new Map<string, number>();
    const imported = await phase('import through the gateway (upload, check, write)', featureCount, serverPid, () =>
      importListing({
        gatewayUrl: stack!.gatewayUrl,
        apiKey,
        file,
        assetId: segment.id,
        run: { vendor: 'Bench ILI Co.', toolTechnologies: ['MFL'], runDate: '2026-06-01T00:00:00Z' },
        pollMs: 200,
        onProgress: (p) => {
          if (!phaseStarts.has(p.phase)) phaseStarts.set(p.phase, performance.now());
        },
      }),
    );
    const result = imported.value;
    const importEnd = performance.now();
    const assessed = await phase('align + assess (after the import)', featureCount, serverPid, () => untilAssessed(stack!, apiKey, result.run.id, timeoutMs));

    // The baseline: the documents the import stored, inserted again with the driver into fresh collections.
    const measurementsDb = stack.mongo.db(databaseName(dbPrefix, 'measurements'));
    const docs = await measurementsDb.collection(MEASUREMENTS_COLLECTION).find({ tenantId, runId: result.run.id }).toArray();
    const tally = await measurementsDb.collection(ILI_COLLECTIONS.tally).find({ tenantId, runId: result.run.id }).toArray();
    const scratch = stack.mongo.db(databaseName(dbPrefix, 'baseline'));
    const insertAll = async (collection: string, all: Document[]) => {
      for (let i = 0; i < all.length; i += 1_000) await scratch.collection(collection).insertMany(all.slice(i, i + 1_000), { ordered: false });
    };
    const baseline = await phase('driver insertMany ×1,000 of the same documents (baseline)', featureCount, serverPid, async () => {
      await insertAll('measurements', docs);
      await insertAll('tally', tally);
    });

    const problems: string[] = [];
    const expect = (what: string, got: unknown, want: unknown) => {
      if (got !== want) problems.push(`${what}: ${String(got)}, expected ${String(want)}`);
    };
    expect('import state', result.state, 'SUCCEEDED');
    expect('features imported', result.counts.features, featureCount);
    expect('tally items imported', result.counts.tallyItems, tallyCount);
    expect('measurements stored', docs.length, featureCount);
    expect('tally items stored', tally.length, tallyCount);
    expect('comparison COMPLETE', assessed.value.done, true);
    expect('features assessed', assessed.value.assessed, featureCount);

    const at = (name: string) => phaseStarts.get(name);
    const split = (name: string, from: number | undefined, to: number | undefined): Phase[] =>
      from === undefined || to === undefined ? [] : [{ name, items: featureCount, ms: to - from, serverCpuS: null, stackCpuS: Number.NaN }];
    const importStart = importEnd - imported.phase.ms;
    const phases: Phase[] = [
      baseline.phase,
      imported.phase,
      ...split('   of which upload (4 MiB parts)', importStart, at('checking rows') ?? at('writing')),
      ...split('   of which the row check (pass 1)', at('checking rows'), at('writing')),
      ...split('   of which the write (pass 2)', at('writing'), importEnd),
      { ...assessed.phase, name: 'align + assess, until iliRun.comparison.state COMPLETE' },
      {
        name: 'import + align + assess',
        items: featureCount,
        ms: imported.phase.ms + assessed.phase.ms,
        serverCpuS: imported.phase.serverCpuS === null || assessed.phase.serverCpuS === null ? null : imported.phase.serverCpuS + assessed.phase.serverCpuS,
        stackCpuS: imported.phase.stackCpuS + assessed.phase.stackCpuS,
      },
    ];
    const cpu = (s: number | null) => (s === null || Number.isNaN(s) ? '—' : s.toFixed(1));
    printColumns(
      'ILI run: import and assessment through the stack vs. inserting the same documents with the driver',
      ['scenario', 'features', 'seconds', 'features/s', 'time vs baseline', 'server CPU s', 'stack CPU s'],
      phases.map((p) => [
        p.name,
        int(p.items),
        (p.ms / 1000).toFixed(2),
        int((p.items * 1000) / p.ms),
        `${(p.ms / baseline.phase.ms).toFixed(1)}×`,
        cpu(p.serverCpuS),
        cpu(p.stackCpuS),
      ]),
      [
        `baseline: ${int(docs.length)} measurements + ${int(tally.length)} tally items. server CPU: the embedded MongoDB's process` +
          (serverPid === null ? ' (not measured: MONGODB_URI)' : '') +
          '; stack CPU: this process (gateway, subgraphs and job runner run in it).',
        'Ratios compare runs of this invocation only; absolute times depend on the machine.',
      ],
    );
    console.log(problems.length === 0 ? '\nEvery count checked: features, tally items, measurements stored, features assessed.' : '');
    for (const problem of problems) console.error(`FAILED: ${problem}`);
    if (values.json) {
      console.log(
        `BENCH_JSON ${JSON.stringify({
          benchmark: 'ili',
          mongo: embedded ? 'embedded' : 'external',
          features: featureCount,
          tallyItems: tallyCount,
          phases,
          valid: problems.length === 0,
          problems,
        })}`,
      );
    }
    return problems.length === 0 ? 0 : 1;
  } finally {
    await cleanup();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
