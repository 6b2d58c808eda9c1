/**
 * `npm run bench:gateway`: the Linepack gateway as it ships against a bare @apollo/gateway and Hive Gateway, on the
 * same supergraph and subgraphs, with a subgraph called directly as the ceiling. See bench/README.md.
 *
 * Starts the real stack once (embedded MongoDB or MONGODB_URI, a real Redis — REDIS_URL or a redis-server of its
 * own), seeds a tenant through the Linepack gateway, then for each query warms every contender up and runs R
 * rounds; a round runs every contender (in an order rotated per round) at C connections for D seconds and then at
 * one connection. Every contender and every subgraph is its own OS process, on this same Node; each run reads the
 * contender's CPU from /proc. Last, measurement ingest: one 10,000-item batch through the gateway against the driver's
 * insertMany of the same documents.
 *
 *   npm run bench:gateway [-- --rounds 3 --seconds 5 --connections 32 --latency-seconds 3 --warmup 2]
 *                          [--identical] [--queries Q0,Q1,Q2,Q3] [--workers2] [--no-ingest] [--json] [--short]
 *
 * Q0 `{ __typename }` reaches no subgraph: the gateway answers it after authentication, rate limiting and scope
 * checks, so it measures the gateway's own cost per request (issue 13's first target). Q1 `asset(id)` is its
 * one-subgraph counterpart; Q2 a two-subgraph list; Q3 a mutation batch. See bench/contenders/workload.ts.
 *
 * --identical sends the same request over and over (shows in-flight de-duplication); --short (or BENCH_SHORT=1) is
 * the CI check that the harness runs: 1 round, ~1 s runs, 4 connections, a small seed. Exit status 1 when any
 * request failed (the tables are printed anyway), 130/143 when interrupted. Every process it started is stopped on
 * exit, also on failure and Ctrl-C.
 */
import os from 'node:os';
import { parseArgs } from 'node:util';
import { tierLimits } from '@linepack/gateway/rate-limit';
import { median, printColumns } from './harness';
import { runLoad, validatePlan, type LoadMeasurement } from './contenders/load';
import { Cleanup, stopOnSignals, type ManagedProcess } from '@linepack/lib/infra/child-process';
import { childPidsOf, cpuMsOf } from './contenders/processes';
import {
  deriveCeiling,
  overhead,
  printOverheadTable,
  printRatioTable,
  printRowTable,
  ratio,
  sectionTitle,
  summarizeRows,
  type OverheadSummary,
  type RatioSummary,
  type RowInfo,
  type Sample,
  type Section,
} from './contenders/report';
import type { TokenMode } from './contenders/contender-tokens';
import { PRO_KEYS, Q0_PRO_TENANTS, startBenchStack, type BenchStack } from './contenders/stack';
import {
  deleteQ3Writes,
  DirectTokens,
  ingestRound,
  keyCaller,
  q0Plan,
  q1Plan,
  q2Plan,
  QUERY_NAMES,
  q3Plan,
  seed,
  subgraphCaller,
  type Caller,
  type IngestRound,
  type QueryName,
  type RequestPlan,
  type WorkloadContext,
} from './contenders/workload';

interface Settings {
  short: boolean;
  json: boolean;
  identical: boolean;
  rounds: number;
  seconds: number;
  latencySeconds: number;
  warmupSeconds: number;
  connections: number;
  queries: QueryName[];
  assets: number;
  perAsset: number;
  ingest: boolean;
  ingestItems: number;
  ingestRounds: number;
  workers2: boolean;
  logLevel: string;
  tokenMode: TokenMode;
}

const log = (line: string) => process.stderr.write(`bench:gateway: ${line}\n`);
const sleep = (msDelay: number) => new Promise((r) => setTimeout(r, msDelay));

function settingsFromArgs(): Settings {
  const { values } = parseArgs({
    options: {
      short: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      identical: { type: 'boolean', default: false },
      rounds: { type: 'string' },
      seconds: { type: 'string' },
      'latency-seconds': { type: 'string' },
      warmup: { type: 'string' },
      connections: { type: 'string' },
      queries: { type: 'string' },
      assets: { type: 'string' },
      'per-asset': { type: 'string' },
      'no-ingest': { type: 'boolean', default: false },
      'ingest-items': { type: 'string' },
      workers2: { type: 'boolean', default: false },
      'log-level': { type: 'string' },
      tokens: { type: 'string' },
    },
  });
  const short = values.short || process.env['BENCH_SHORT'] === '1';
  const num = (v: string | undefined, fallback: number) => (v === undefined ? fallback : Number(v));
  const queries = (values.queries ?? QUERY_NAMES.join(',')).split(',').map((q) => q.trim().toUpperCase()) as QueryName[];
  const settings: Settings = {
    short,
    json: values.json ?? false,
    identical: values.identical ?? false,
    rounds: num(values.rounds, short ? 1 : 3),
    seconds: num(values.seconds, short ? 1 : 5),
    latencySeconds: num(values['latency-seconds'], short ? 0.5 : 3),
    warmupSeconds: num(values.warmup, short ? 0.5 : 2),
    connections: num(values.connections, short ? 4 : 32),
    queries,
    assets: num(values.assets, short ? 60 : 200),
    perAsset: num(values['per-asset'], short ? 2 : 5),
    ingest: !values['no-ingest'],
    ingestItems: num(values['ingest-items'], short ? 1_000 : 10_000),
    ingestRounds: short ? 1 : num(values.rounds, 3),
    workers2: values.workers2 ?? false,
    logLevel: values['log-level'] ?? 'info',
    tokenMode: (values.tokens ?? 'per-credential') as TokenMode,
  };
  const bad =
    !(settings.rounds >= 1) ||
    !(settings.seconds > 0) ||
    !(settings.latencySeconds >= 0) ||
    !(settings.warmupSeconds >= 0) ||
    !(settings.connections >= 1) ||
    !(settings.assets >= 55) ||
    !(settings.perAsset >= 1) ||
    !(settings.ingestItems >= 1 && settings.ingestItems <= 10_000) ||
    !['per-credential', 'per-request'].includes(settings.tokenMode) ||
    !queries.length ||
    queries.some((q) => !QUERY_NAMES.includes(q));
  if (bad) {
    console.error(
      'usage: bench:gateway [--short] [--json] [--identical] [--rounds N] [--seconds S] [--latency-seconds S] [--warmup S] [--connections C]\n' +
        '                     [--queries Q0,Q1,Q2,Q3 (default: all; Q0 { __typename } reaches no subgraph)] [--assets N ≥ 55] [--per-asset N] [--no-ingest] [--ingest-items N ≤ 10000] [--workers2] [--log-level L]\n' +
        '                     [--tokens per-credential|per-request]',
    );
    process.exit(2);
  }
  return settings;
}

// ───────────────────────────── contenders ─────────────────────────────

interface Row extends RowInfo {
  queries: QueryName[];
  contender: ManagedProcess | null;
  /** Sends pro keys: its requests count against the pro keys' minute windows. */
  pro: boolean;
  plan(query: QueryName): RequestPlan;
}

function contenderRows(stack: BenchStack, ctx: WorkloadContext): Row[] {
  const tokens = new DirectTokens(stack.tenantId, stack.keys.privateKeyPem);
  const url = (s: ManagedProcess) => `${s.origin}/graphql`;
  /** `q0Caller`: who sends Q0 when not `caller` (the pro rows: keys of tenants of their own, stack.ts Q0_PRO_TENANTS). */
  const gatewayPlans = (caller: Caller, q0Caller: Caller = caller) => {
    const plans = new Map<QueryName, RequestPlan>();
    return (q: QueryName) => {
      let plan = plans.get(q);
      if (!plan) {
        plan = q === 'Q0' ? q0Plan(q0Caller) : q === 'Q1' ? q1Plan(caller, ctx) : q === 'Q2' ? q2Plan(caller, ctx) : q3Plan(caller, ctx);
        plans.set(q, plan);
      }
      return plan;
    };
  };
  const all: QueryName[] = [...QUERY_NAMES];
  const rows: Row[] = [
    {
      id: 'linepack-pro',
      label: `Linepack, pro keys (${stack.proKeys.length}, counted)`,
      gateway: true,
      queries: all,
      contender: stack.linepack,
      pro: true,
      plan: gatewayPlans(keyCaller(url(stack.linepack), stack.proKeys), keyCaller(url(stack.linepack), stack.q0ProKeys)),
    },
    {
      id: 'linepack-enterprise',
      label: 'Linepack, enterprise key',
      gateway: true,
      queries: all,
      contender: stack.linepack,
      pro: false,
      plan: gatewayPlans(keyCaller(url(stack.linepack), [stack.enterpriseKey])),
    },
  ];
  if (stack.linepack2) {
    const honoured = childPidsOf(stack.linepack2).length > 0;
    rows.push({
      id: 'linepack-workers2',
      label: `Linepack, GATEWAY_WORKERS=2, pro keys${honoured ? '' : ' (NOT honoured: one process)'}`,
      gateway: true,
      queries: all,
      contender: stack.linepack2,
      pro: true,
      plan: gatewayPlans(keyCaller(url(stack.linepack2), stack.proKeys), keyCaller(url(stack.linepack2), stack.q0ProKeys)),
    });
  }
  rows.push({
    id: 'bare',
    label: 'bare @apollo/gateway 2.14',
    gateway: true,
    queries: all,
    contender: stack.bare,
    pro: false,
    plan: gatewayPlans(keyCaller(url(stack.bare), [stack.enterpriseKey])),
  });
  if (stack.hive) {
    rows.push({
      id: 'hive',
      label: `Hive Gateway ${stack.hiveVersion}`,
      gateway: true,
      queries: all,
      contender: stack.hive,
      pro: false,
      plan: gatewayPlans(keyCaller(url(stack.hive), [stack.enterpriseKey])),
    });
  }
  const assets = subgraphCaller(stack.subgraphUrl('assets'), 'assets', tokens);
  const measurements = subgraphCaller(stack.subgraphUrl('measurements'), 'measurements', tokens);
  const q1Direct = q1Plan(assets, ctx);
  const q3Direct = q3Plan(measurements, ctx);
  const q2Assets = q2Plan(assets, ctx, 'assets');
  const q2Measurements = q2Plan(measurements, ctx, 'measurements');
  rows.push(
    { id: 'direct-q1', label: 'assets subgraph directly (ceiling)', gateway: false, queries: ['Q1'], contender: null, pro: false, plan: () => q1Direct },
    {
      id: 'direct-q2-assets',
      label: 'assets subgraph directly (assets part)',
      gateway: false,
      queries: ['Q2'],
      contender: null,
      pro: false,
      plan: () => q2Assets,
    },
    {
      id: 'direct-q2-measurements',
      label: 'measurements subgraph directly (_entities part)',
      gateway: false,
      queries: ['Q2'],
      contender: null,
      pro: false,
      plan: () => q2Measurements,
    },
    { id: 'direct-q3', label: 'measurements subgraph directly (ceiling)', gateway: false, queries: ['Q3'], contender: null, pro: false, plan: () => q3Direct },
  );
  return rows;
}

/** The subgraph ceiling of each query; Q0 has none (no subgraph answers it). */
const CEILING: Partial<Record<QueryName, string>> = { Q1: 'direct-q1', Q2: 'ceiling-q2', Q3: 'direct-q3' };

// ───────────────────────────── the pro keys' budget ─────────────────────────────

/**
 * The pro contender sends production pro keys (300 requests a minute and 10,000 a day each, counted in Redis) in
 * turn. Before each of its runs, this waits until the requests of the last minute plus the run's expected ones fit in
 * 80 % of the keys' combined minute budget, so no request is refused (a refusal would count as a failed request).
 */
class ProBudget {
  private readonly runs: Array<{ endedAt: number; requests: number }> = [];
  private total = 0;
  readonly perMinute: number;
  readonly perDay: number;
  waitedMs = 0;

  constructor(keys: number) {
    this.perMinute = Math.floor(keys * tierLimits.pro.minute * 0.8);
    this.perDay = Math.floor(keys * tierLimits.pro.day * 0.9);
  }

  async reserve(expected: number): Promise<void> {
    const want = Math.min(expected, this.perMinute);
    if (this.total + want > this.perDay) throw new Error(`the pro keys' daily budget (${this.perDay} requests) would be exceeded: run fewer or shorter rounds`);
    for (;;) {
      const now = Date.now();
      const recent = this.runs.filter((r) => now - r.endedAt < 61_000);
      const used = recent.reduce((sum, r) => sum + r.requests, 0);
      if (used + want <= this.perMinute || recent.length === 0) return;
      const waitMs = Math.max(250, 61_000 - (now - recent[0]!.endedAt));
      log(`waiting ${(waitMs / 1000).toFixed(0)} s for the pro keys' minute windows (${used} requests in the last minute, ${want} expected)`);
      this.waitedMs += waitMs;
      await sleep(waitMs);
    }
  }

  record(requests: number): void {
    this.total += requests;
    this.runs.push({ endedAt: Date.now(), requests });
    while (this.runs.length && Date.now() - this.runs[0]!.endedAt > 120_000) this.runs.shift();
  }
}

// ───────────────────────────── the run ─────────────────────────────

interface BenchResult {
  samples: Sample[];
  ingest: IngestRound[];
  proWaitedMs: number;
  seeded: { assets: number; measurements: number; q2Pages: number };
  contenderProcesses: Record<string, number>;
}

async function runBench(stack: BenchStack, settings: Settings, rows: Row[], ctx: WorkloadContext): Promise<Omit<BenchResult, 'seeded'>> {
  const samples: Sample[] = [];
  const budgets = { q0: new ProBudget(stack.q0ProKeys.length), other: new ProBudget(stack.proKeys.length) };
  const lastRps = new Map<string, number>();
  const subgraphCpu = () => Object.values(stack.subgraphs).reduce((sum, s) => sum + cpuMsOf(s), 0);

  const run = async (row: Row, query: QueryName, section: Section, connections: number, seconds: number): Promise<LoadMeasurement> => {
    const key = `${row.id}|${query}|${section}`;
    const budget = query === 'Q0' ? budgets.q0 : budgets.other;
    if (row.pro) await budget.reserve(Math.ceil((lastRps.get(key) ?? 1_000) * seconds * 1.3) + 50);
    const contender = row.contender;
    const m = await runLoad(row.plan(query), { connections, seconds }, { contender: contender ? () => cpuMsOf(contender) : null, subgraphs: subgraphCpu });
    lastRps.set(key, m.rps);
    if (row.pro) budget.record(m.ok + m.failed + 1);
    if (query === 'Q3') await deleteQ3Writes(stack.mongo, stack.dbPrefix, stack.tenantId);
    if (contender && !contender.alive()) throw new Error(`${contender.name} died during the run:\n${contender.logTail()}`);
    if (m.failed) log(`  ${row.label}: ${m.failed} failed request(s), e.g. ${m.firstFailure}`);
    await sleep(200);
    return m;
  };

  for (const query of settings.queries) {
    const queryRows = rows.filter((r) => r.queries.includes(query));
    for (const row of queryRows) await validatePlan(row.plan(query), `${row.label}, ${query}`);
    if (settings.warmupSeconds > 0) {
      log(`${query}: warm-up, ${settings.warmupSeconds} s per contender at ${settings.connections} connections`);
      for (const row of queryRows) await run(row, query, 'throughput', settings.connections, settings.warmupSeconds);
    }
    for (let round = 0; round < settings.rounds; round++) {
      const shift = round % queryRows.length;
      const order = [...queryRows.slice(shift), ...queryRows.slice(0, shift)];
      for (const row of order) {
        await validatePlan(row.plan(query), `${row.label}, ${query}`);
        const t = await run(row, query, 'throughput', settings.connections, settings.seconds);
        samples.push({ round, section: 'throughput', query, row: row.id, m: t });
        let line = `${query} round ${round + 1}/${settings.rounds} ${row.label}: ${Math.round(t.rps)} RPS at ${settings.connections} conn`;
        if (settings.latencySeconds > 0) {
          const l = await run(row, query, 'latency', 1, settings.latencySeconds);
          samples.push({ round, section: 'latency', query, row: row.id, m: l });
          line += `, p50 ${l.p50Ms.toFixed(2)} ms at 1 conn`;
        }
        log(line);
      }
    }
  }

  const ingest: IngestRound[] = [];
  if (settings.ingest) {
    for (let round = 0; round < settings.ingestRounds; round++) {
      const r = await ingestRound(
        `${stack.linepack.origin}/graphql`,
        stack.enterpriseKey,
        subgraphCaller(stack.subgraphUrl('measurements'), 'measurements', new DirectTokens(stack.tenantId, stack.keys.privateKeyPem)),
        stack.mongo,
        stack.dbPrefix,
        stack.tenantId,
        ctx.seed.assetIds,
        settings.ingestItems,
        round,
      );
      log(
        `ingest round ${round + 1}/${settings.ingestRounds}: gateway ${r.gatewayMs.toFixed(0)} ms, subgraph ${r.subgraphMs.toFixed(0)} ms, insertMany ${r.insertManyMs.toFixed(0)} ms`,
      );
      ingest.push(r);
    }
  }
  const contenderProcesses = Object.fromEntries(
    [stack.linepack, stack.linepack2, stack.bare, stack.hive].filter((s): s is ManagedProcess => s !== null).map((s) => [s.name, 1 + childPidsOf(s).length]),
  );
  return { samples, ingest, proWaitedMs: budgets.q0.waitedMs + budgets.other.waitedMs, contenderProcesses };
}

// ───────────────────────────── the report ─────────────────────────────

function report(stack: BenchStack, settings: Settings, rows: Row[], result: BenchResult): { failed: number; json: Record<string, unknown> } {
  const { samples } = result;
  const derived = settings.queries.includes('Q2') ? deriveCeiling(samples, 'Q2', 'direct-q2-assets', 'direct-q2-measurements', 'ceiling-q2') : [];
  const all = [...samples, ...derived];
  const infos = new Map<string, RowInfo & { derived?: boolean }>(rows.map((r) => [r.id, r]));
  infos.set('ceiling-q2', { id: 'ceiling-q2', label: 'subgraphs directly, both parts (ceiling, derived)', gateway: false, derived: true });
  const summaries = summarizeRows(all, infos);
  const order = [...rows.map((r) => r.id), 'ceiling-q2'];
  const sections: Section[] = settings.latencySeconds > 0 ? ['throughput', 'latency'] : ['throughput'];
  const ratios: RatioSummary[] = [];
  const overheads: OverheadSummary[] = [];

  console.log(
    [
      `\nLinepack gateway benchmark (npm run bench:gateway${settings.short ? ' --short' : ''}${settings.identical ? ' --identical' : ''})`,
      `Node ${process.version} for every contender and subgraph; ${os.cpus().length} × ${os.cpus()[0]?.model ?? 'CPU'}, shared by the load generator, the contender, five subgraphs, MongoDB and Redis`,
      `MongoDB: ${stack.mongoLabel}; Redis: ${stack.redisLabel}; LOG_LEVEL=${settings.logLevel}; seed: ${result.seeded.assets} assets, ${result.seeded.measurements} measurements`,
      ...(stack.hive ? [] : ['Hive Gateway: not installed, so not compared (npm run bench:contenders installs it; npm run bench:gateway does)']),
      `Identity tokens of bare and Hive: ${settings.tokenMode === 'per-credential' ? 'one per client credential and subgraph, reused 15 s (as Linepack reuses its own)' : 'a fresh one per subgraph request'} (--tokens)`,
      `Requests: ${settings.identical ? 'IDENTICAL (every request of a run the same: in-flight de-duplication can help)' : 'varied (no two in flight the same: in-flight de-duplication cannot help)'}`,
    ].join('\n'),
  );
  for (const query of settings.queries) {
    for (const section of sections) {
      const rowsOf = summaries.filter((s) => s.query === query && s.section === section).sort((a, b) => order.indexOf(a.row) - order.indexOf(b.row));
      const seconds = section === 'throughput' ? settings.seconds : settings.latencySeconds;
      printRowTable(sectionTitle(query, section, settings.connections, seconds, settings.rounds, settings.identical), rowsOf);
      const sectionRatios = [
        ...['linepack-pro', 'linepack-enterprise', ...(stack.linepack2 ? ['linepack-workers2'] : [])].flatMap((lp) => {
          const name = lp === 'linepack-pro' ? 'Linepack pro' : lp === 'linepack-enterprise' ? 'Linepack enterprise' : 'Linepack ×2 workers';
          const headline = lp === 'linepack-pro';
          const target = (t: number | null) => (headline ? t : null);
          // Issue 13's trivial-query targets are on Q0 (no subgraph); Q1 is subgraph-bound and keeps its ratios without targets.
          const ceiling = CEILING[query];
          return [
            ratio(all, section, query, lp, 'bare', `RPS ${name} / bare @apollo/gateway`, target(query === 'Q0' && section === 'throughput' ? 0.7 : null)),
            ratio(
              all,
              section,
              query,
              lp,
              'hive',
              `RPS ${name} / Hive`,
              target(query === 'Q0' && section === 'throughput' ? 1.3 : query === 'Q2' && !settings.identical ? 1.0 : null),
            ),
            ceiling ? ratio(all, section, query, lp, ceiling, `RPS ${name} / subgraph ceiling`, target(query === 'Q2' ? 0.9 : null)) : null,
          ];
        }),
        ...(query === 'Q2' ? [ratio(all, section, query, 'linepack-pro', 'direct-q2-assets', 'RPS Linepack pro / assets part only (as in the issue)')] : []),
        ...['linepack-pro', 'linepack-enterprise'].flatMap((lp) => {
          const name = lp === 'linepack-pro' ? 'Linepack pro' : 'Linepack enterprise';
          return [
            ratio(all, section, query, lp, 'bare', `gateway CPU/req ${name} / bare (lower is better)`, null, 'cpu'),
            ratio(all, section, query, lp, 'hive', `gateway CPU/req ${name} / Hive (lower is better)`, null, 'cpu'),
          ];
        }),
      ].filter((r): r is RatioSummary => r !== null);
      printRatioTable(`  ratios, ${section === 'throughput' ? `${settings.connections} connections` : '1 connection'}:`, sectionRatios);
      ratios.push(...sectionRatios);
    }
    if (settings.latencySeconds > 0) {
      const o = [
        overhead(
          all,
          query,
          'linepack-pro',
          'bare',
          'Linepack pro − bare (authentication, rate limit, scopes, cost, logs)',
          // Issue 13: authentication + rate-limit overhead ≤ 0.25 ms p50 at one connection, on the trivial query.
          query === 'Q0' ? 0.25 : null,
        ),
        overhead(all, query, 'linepack-enterprise', 'bare', 'Linepack enterprise − bare (the same without counting)'),
        overhead(all, query, 'linepack-pro', 'linepack-enterprise', 'Linepack pro − enterprise (rate-limit counting in Redis)'),
        overhead(all, query, 'hive', 'bare', 'Hive − bare'),
      ].filter((x): x is OverheadSummary => x !== null);
      printOverheadTable(`  ${query} p50 overhead at 1 connection:`, o);
      overheads.push(...o);
    }
  }

  let ingestJson: Record<string, unknown> | null = null;
  if (result.ingest.length) {
    const rounds = result.ingest;
    const line = (label: string, key: keyof IngestRound) => {
      const values = rounds.map((r) => r[key]);
      const mid = median(values);
      return [
        label,
        mid.toFixed(0),
        `${Math.min(...values).toFixed(0)}–${Math.max(...values).toFixed(0)}`,
        Math.round((settings.ingestItems * 1000) / mid).toLocaleString('en-US'),
      ];
    };
    const perRound = rounds.map((r) => r.insertManyMs / r.gatewayMs);
    const subgraphPerRound = rounds.map((r) => r.insertManyMs / r.subgraphMs);
    const ratioMedian = median(perRound);
    printColumns(
      `Ingest: one ${settings.ingestItems.toLocaleString('en-US')}-item recordMeasurements batch, ${rounds.length} round(s): through Linepack (enterprise key), to the measurements subgraph directly, and the driver's insertMany of the same documents into a scratch collection of the measurements database`,
      ['path', 'median ms', 'min–max ms', 'items/s'],
      [
        line('through the Linepack gateway', 'gatewayMs'),
        line('measurements subgraph directly', 'subgraphMs'),
        line('driver insertMany (scratch collection)', 'insertManyMs'),
      ],
      [
        `ratio gateway ÷ insertMany (items/s, round by round): median ${ratioMedian.toFixed(2)}× (${Math.min(...perRound).toFixed(2)}–${Math.max(...perRound).toFixed(2)}); target ≥ 0.5×: ${ratioMedian >= 0.5 ? 'met' : 'not met'}`,
        `ratio subgraph directly ÷ insertMany: median ${median(subgraphPerRound).toFixed(2)}× (what the gateway cannot do better than)`,
      ],
    );
    ingestJson = {
      items: settings.ingestItems,
      rounds,
      gatewayMsMedian: median(rounds.map((r) => r.gatewayMs)),
      subgraphMsMedian: median(rounds.map((r) => r.subgraphMs)),
      insertManyMsMedian: median(rounds.map((r) => r.insertManyMs)),
      ratio: ratioMedian,
      subgraphRatio: median(subgraphPerRound),
      target: 0.5,
    };
  }

  const failed = summaries.filter((s) => !s.derived).reduce((sum, s) => sum + s.failed, 0);
  const notes = [
    `\nHow to read it: RPS counts answers that were 2xx without GraphQL errors; p50/p99 are exact per-request latencies seen by the load generator (autocannon, in the benchmark's process);`,
    `gateway CPU ms/req is the contender's user+system CPU (its process and any children, /proc/<pid>/stat) over the run divided by the answers; subgraphs CPU ms/req is the same for the five subgraph processes.`,
    `The Q2 ceiling is derived from the two subgraph parts called directly in the same round: RPS 1/(1/assets + 1/measurements), latency the sum (the two calls one after the other, no gateway).`,
    `Linepack pro sends ${stack.proKeys.length} production pro keys in turn (300/min and 10,000/day each, counted in Redis; Q0, which reads no data, ${stack.q0ProKeys.length} pro keys of ${Q0_PRO_TENANTS} more tenants)${result.proWaitedMs ? `; the run waited ${(result.proWaitedMs / 1000).toFixed(0)} s for their minute windows` : ''}; the enterprise key is not counted.`,
    `Contender processes at the end: ${Object.entries(result.contenderProcesses)
      .map(([k, v]) => `${k} ${v}`)
      .join(', ')}. Noisy machine: compare ratios within one run, not absolute numbers across machines.`,
  ];
  for (const note of notes) console.log(note);
  if (failed) {
    console.log(`\nFAILED REQUESTS: ${failed}. A benchmark of error responses is worthless; the first failure of each row:`);
    for (const s of summaries.filter((x) => x.failed && !x.derived)) console.log(`  ${s.query} ${s.section} ${s.label}: ${s.failed} × ${s.firstFailure}`);
  }

  const json = {
    benchmark: 'gateway',
    runId: stack.runId,
    node: process.version,
    cpus: os.cpus().length,
    mode: settings.identical ? 'identical' : 'varied',
    short: settings.short,
    settings: {
      rounds: settings.rounds,
      seconds: settings.seconds,
      latencySeconds: settings.latencySeconds,
      warmupSeconds: settings.warmupSeconds,
      connections: settings.connections,
      queries: settings.queries,
      logLevel: settings.logLevel,
      tokenMode: settings.tokenMode,
    },
    mongo: stack.mongoLabel,
    redis: stack.redisLabel,
    hiveVersion: stack.hiveVersion,
    seeded: result.seeded,
    proKeys: stack.proKeys.length,
    proWaitedMs: result.proWaitedMs,
    contenderProcesses: result.contenderProcesses,
    rows: summaries.sort((a, b) => a.query.localeCompare(b.query) || a.section.localeCompare(b.section) || order.indexOf(a.row) - order.indexOf(b.row)),
    ratios,
    overheads,
    ingest: ingestJson,
    failed,
  };
  return { failed, json };
}

// ───────────────────────────── main ─────────────────────────────

async function main(): Promise<void> {
  const settings = settingsFromArgs();
  const cleanup = new Cleanup();
  let stack: BenchStack | null = null;
  const { interrupted } = stopOnSignals(cleanup, log);

  let exitCode = 0;
  let json: Record<string, unknown> | null = null;
  try {
    const t0 = performance.now();
    stack = await startBenchStack({ log, workers2: settings.workers2, logLevel: settings.logLevel, proKeys: PRO_KEYS, tokenMode: settings.tokenMode }, cleanup);
    log(`up after ${(stack.startupMs / 1000).toFixed(1)} s (${stack.dir})`);
    const seedData = await seed(
      `${stack.linepack.origin}/graphql`,
      stack.enterpriseKey,
      stack.mongo,
      stack.dbPrefix,
      stack.tenantId,
      { assets: settings.assets, perAsset: settings.perAsset },
      log,
    );
    const ctx: WorkloadContext = { seed: seedData, identical: settings.identical, runId: stack.runId, q3Sequence: { value: 0 } };
    const rows = contenderRows(stack, ctx);
    const result = await runBench(stack, settings, rows, ctx);
    const reported = report(stack, settings, rows, {
      ...result,
      seeded: { assets: seedData.assetIds.length, measurements: seedData.measurements, q2Pages: seedData.pages.length },
    });
    json = { ...reported.json, totalSeconds: Math.round((performance.now() - t0) / 1000) };
    if (reported.failed) exitCode = 1;
  } catch (err) {
    if (interrupted()) return;
    console.error(`bench:gateway: FAILED: ${(err as Error).stack ?? String(err)}`);
    exitCode = 1;
    json = { benchmark: 'gateway', failed: true, error: (err as Error).message };
  }
  if (interrupted()) return;
  const problems = await cleanup.run();
  for (const p of problems) log(`clean-up: ${p}`);
  await sleep(200);
  const leftovers = stack?.processes.leftovers() ?? [];
  if (leftovers.length) {
    log(`processes still running after clean-up: ${leftovers.join(', ')} (killing them)`);
    cleanup.lastResortNow();
    exitCode = 1;
  }
  // Three decimals are plenty for every number in it (ms, RPS, ratios).
  const rounded = (_key: string, value: unknown) => (typeof value === 'number' && !Number.isInteger(value) ? Math.round(value * 1000) / 1000 : value);
  if (settings.json && json) console.log(`BENCH_JSON ${JSON.stringify({ ...json, leftoverProcesses: leftovers }, rounded)}`);
  process.exit(exitCode);
}

void main();
