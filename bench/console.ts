/**
 * `npm run bench:console [-- --runs 3] [--features 20000] [--short] [--only pages|plot|compression] [--json]`: the console
 * with a large tenant, in Debian's Chromium (issue 27 item 7), and what compressing the API's answers costs.
 *
 * Pages. Two tenants in one stack (bench/console-stack.ts): a small one, the baseline (the demo pipeline: 8 assets, and a
 * 300-feature ILI run imported on its HCA segment), and a large one (337 assets on 12 pipelines, every one located,
 * and a 20,000-feature run from the ILI generator, lib/ili/generator.ts, imported on one segment and assessed). Each
 * is signed in once in its own browser context; every measured visit starts with the HTTP cache emptied (a first
 * visit, still signed in) and is timed in the page from its navigation start (performance.now()) to:
 *   Assets (/assets): the first rows of the list, and the "N of M assets" line under it;
 *   Map (/map): the first asset drawn, and every located asset drawn ("N of M assets drawn", N the located count);
 *   Along the line (the segment's page): every feature and tally item read (the plot's label names the count), and the
 *     plot drawn (ECharts' 'finished' event, which the console marks as `linepack:chart-drawn`).
 * The median of --runs visits is printed against the budget of each milestone (the large tenant's) and as a ratio to
 * the small tenant's. Nothing is judged: exit status 1 only when a visit or a seeding step failed.
 *
 * Compression. Three real answers of the large tenant (the map's page of 200 assets with their GeoJSON, a page of 500
 * ILI features as the plot reads them, the schema's introspection) compressed in this process at each gzip level and
 * Brotli quality considered (size, and CPU ms per answer, median of repetitions), then the same ILI page fetched
 * through the gateway 30 times with each Accept-Encoding (bytes on the wire, median ms, and this process's CPU: the
 * whole stack runs in it). gateway/src/compression.ts's levels are chosen from this table.
 *
 * --only plot: the along-the-line page and the plot's API reads alone, the large tenant with the short run's 43 assets
 * and the whole run (what the plot's time depends on), the small one as before.
 *
 * --short: 40 assets and a 2,000-feature run, one visit each (the CI smoke run). MONGODB_URI / REDIS_URL are used when
 * set (its databases are dropped at the end); otherwise the embedded MongoDB (in memory) and a redis-server of its own.
 */
import { mkdtemp, rm } from 'node:fs/promises';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { getIntrospectionQuery } from 'graphql';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { BROTLI_QUALITY, COMPRESSION_THRESHOLD_BYTES, GZIP_LEVEL } from '@linepack/gateway/compression';
import { importListing } from '@linepack/lib/ili/client';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { until } from '@linepack/lib/testing/until';
import { launchBrowser } from '../test/console/support/browser';
import { newPassword, seedTenant, signIn, type User } from '../test/console/support/console';
import { createAsset, graphql, type TestStack } from '../test/support/stack';
import { startConsoleStack } from './console-stack';
import { median, printColumns } from './harness';

const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');

/**
 * What the large tenant's pages should take at most on a developer's machine, in ms from navigation start (the
 * session is restored first on every visit): a list answers within a second (the limit for a reader's flow of
 * thought to stay uninterrupted); the map of every asset and the plot of a whole 20,000-feature run, which a reader
 * opens to study, within 3 and 5 seconds (well inside the 10 s that keeps attention on the task).
 */
const BUDGET_MS = {
  'Assets: first rows': 1_000,
  'Assets: "N of M assets"': 1_000,
  'Map: first asset drawn': 2_000,
  'Map: every asset drawn': 3_000,
  'Along the line: run read': 4_000,
  'Along the line: plot drawn': 5_000,
} as const;
type Milestone = keyof typeof BUDGET_MS;

interface Tenant {
  label: string;
  apiKey: string;
  user: User;
  totalAssets: number;
  located: number;
  segmentId: string;
  features: number;
}

const pipe = { status: 'ACTIVE', regulation: 'CFR_192', product: 'NATURAL_GAS', outsideDiameterMm: 609.6, wallThicknessMm: 9.5, smysMpa: 359, maopKpa: 6900 };

/** Creates assets a few at a time (the tenant's key is ENTERPRISE: no rate limit), returning their ids in order. */
async function createAll(stack: TestStack, apiKey: string, inputs: Record<string, unknown>[]): Promise<string[]> {
  const ids = new Array<string>(inputs.length);
  let next = 0;
  const worker = async () => {
    while (next < inputs.length) {
      const i = next++;
      ids[i] = (await createAsset(stack.gatewayUrl, apiKey, inputs[i]!)).id;
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  return ids;
}

/** An ILI run from the generator, imported on the segment as the CLI does, and assessed (comparison COMPLETE). */
async function importRun(stack: TestStack, apiKey: string, segmentId: string, features: number, dir: string): Promise<number> {
  const rows = generateTwoRunListing({ features, seed: 2027 }).runA.rows;
  const file = path.join(dir, `run-${segmentId}.csv`);
  await writePofListingCsv(rows, file);
  await stack.knownToMeasurements(segmentId);
  const result = await importListing({
    gatewayUrl: stack.gatewayUrl,
    apiKey,
    file,
    assetId: segmentId,
    run: { vendor: 'Bench ILI Co.', toolTechnologies: ['MFL'], runDate: '2026-05-01T00:00:00Z' },
    pollMs: 250,
  });
  if (result.state !== 'SUCCEEDED') throw new Error(`the ILI import failed: ${result.failure} ${JSON.stringify(result.errors.slice(0, 3))}`);
  const complete = await until(
    async () =>
      (
        await graphql<{ iliRun: { comparison: { state: string } | null } }>(stack.gatewayUrl, 'query($id: ID!) { iliRun(id: $id) { comparison { state } } }', {
          apiKey,
          variables: { id: result.run.id },
        })
      ).body.data?.iliRun.comparison?.state === 'COMPLETE',
    (done) => done,
    15 * 60_000,
    500,
  );
  if (!complete) throw new Error(`the run of ${result.counts.features} features was not assessed within 15 minutes`);
  return result.counts.features;
}

/** The small tenant: the demo pipeline, its users, and a 300-feature run on its HCA segment. */
async function smallTenant(stack: TestStack, dir: string): Promise<Tenant> {
  const seeded = await seedTenant(stack, 'bench-small');
  const found = await graphql<{ assets: { totalCount: number; edges: { node: { id: string; name: string; location: unknown } }[] } }>(
    stack.gatewayUrl,
    '{ assets(first: 100) { totalCount edges { node { id name location } } } }',
    { apiKey: seeded.apiKey },
  );
  const assets = found.body.data!.assets;
  const segmentId = assets.edges.find((e) => e.node.name.includes('(HCA)'))!.node.id;
  const features = await importRun(stack, seeded.apiKey, segmentId, 300, dir);
  return {
    label: 'small',
    apiKey: seeded.apiKey,
    user: seeded.viewer,
    totalAssets: assets.totalCount,
    located: assets.edges.filter((e) => e.node.location !== null).length,
    segmentId,
    features,
  };
}

/** The large tenant: a system, 12 pipelines of 24 routed segments each with a valve, a rectifier and a test point. */
async function largeTenant(stack: TestStack, dir: string, short: boolean, featureCount: number): Promise<Tenant> {
  const { tenantId, apiKey } = await stack.tenantWithKey({ tier: 'ENTERPRISE', name: `Bench large ${stack.dbPrefix}` });
  const user = { email: `viewer-large-${stack.dbPrefix}@example.com`, password: newPassword() };
  await stack.authStore.createUser({ tenantId, ...user, role: 'VIEWER' });
  const [pipelines, perPipeline] = short ? [3, 10] : [12, 24];
  const [system] = await createAll(stack, apiKey, [{ type: 'SYSTEM', name: 'Bench Gas System', status: 'ACTIVE' }]);
  const lines = await createAll(
    stack,
    apiKey,
    Array.from({ length: pipelines }, (_, p) => ({
      type: 'PIPELINE',
      name: `Line ${100 * (p + 1)}`,
      parentId: system,
      ...pipe,
      beginStationM: 0,
      endStationM: perPipeline * 1000,
      location: { type: 'LineString', coordinates: [0, perPipeline].map((k) => [-96 + k * 0.01, 29 + p * 0.05]) },
    })),
  );
  const segments = await createAll(
    stack,
    apiKey,
    lines.flatMap((line, p) =>
      Array.from({ length: perPipeline }, (_, s) => ({
        type: 'SEGMENT',
        name: `Line ${100 * (p + 1)} · MP ${s}–${s + 1}`,
        parentId: line,
        ...pipe,
        beginStationM: s * 1000,
        endStationM: (s + 1) * 1000,
        classLocation: (s % 4) + 1,
        inHca: s % 5 === 0,
        location: { type: 'LineString', coordinates: [s, s + 1].map((k) => [-96 + k * 0.01, 29 + p * 0.05]) },
      })),
    ),
  );
  await createAll(
    stack,
    apiKey,
    lines.flatMap((_, p) =>
      (['VALVE', 'RECTIFIER', 'CP_TEST_POINT'] as const).map((type, k) => ({
        type,
        name: `${type === 'VALVE' ? 'MLV' : type === 'RECTIFIER' ? 'RECT' : 'TP'}-${p + 1}`,
        parentId: segments[p * perPipeline + 2 + k * 3],
        status: 'ACTIVE',
        location: { type: 'Point', coordinates: [-96 + (2.5 + k * 3) * 0.01, 29 + p * 0.05 + 0.002] },
      })),
    ),
  );
  const totalAssets = 1 + pipelines + pipelines * perPipeline + pipelines * 3;
  const segmentId = segments[1]!;
  const features = await importRun(stack, apiKey, segmentId, featureCount, dir);
  return { label: 'large', apiKey, user, totalAssets, located: totalAssets - 1, segmentId, features };
}

/** The few browser globals the page functions below use, typed by hand (the project's tsconfig has no DOM lib). */
interface PageElement {
  textContent: string | null;
  getAttribute(name: string): string | null;
  querySelector(selector: string): PageElement | null;
  caption?: PageElement | null;
  tBodies?: PageElement[];
}
interface PageWindow {
  document: { body: { innerText: string }; querySelector(selector: string): PageElement | null; querySelectorAll(selector: string): ArrayLike<PageElement> };
  performance: { now(): number; getEntriesByName(name: string): { startTime: number; detail?: unknown }[] };
}

/**
 * Waits in the page until `check` (run in the page, every frame) returns a time — it returns performance.now() once
 * its condition holds, false before — and returns that time.
 */
async function timeUntil<A extends string | number | null>(
  page: Page,
  what: string,
  check: (arg: A) => number | false,
  arg: A,
  timeoutMs = 120_000,
): Promise<number> {
  try {
    const handle = await page.waitForFunction(check as (arg: unknown) => number | false, arg, { polling: 'raf', timeout: timeoutMs });
    return (await handle.jsonValue()) as number;
  } catch (err) {
    throw new Error(`${what} did not happen within ${timeoutMs / 1000} s (${page.url()}): ${(err as Error).message.split('\n')[0]}`);
  }
}

/** One first visit of each page (or of the plot's page alone); the milestones' times in ms from navigation start. */
async function visit(page: Page, clearCache: () => Promise<unknown>, tenant: Tenant, plotOnly: boolean): Promise<Partial<Record<Milestone, number>>> {
  const times: Partial<Record<Milestone, number>> = {};
  const open = async (url: string) => {
    await clearCache();
    await page.goto(url, { waitUntil: 'commit' });
  };
  if (!plotOnly) await visitListAndMap(page, open, tenant, times);
  await visitPlot(page, open, tenant, times);
  return times;
}

async function visitListAndMap(page: Page, open: (url: string) => Promise<void>, tenant: Tenant, times: Partial<Record<Milestone, number>>): Promise<void> {
  await open('/assets');
  times['Assets: first rows'] = await timeUntil(
    page,
    'the first rows of the asset list',
    () => {
      const w = globalThis as unknown as PageWindow;
      const tables = Array.from(w.document.querySelectorAll('table'));
      return tables.some((t) => t.caption?.textContent?.trim() === 'Assets' && t.tBodies?.[0]?.querySelector('a')) && w.performance.now();
    },
    null,
  );
  times['Assets: "N of M assets"'] = await timeUntil(
    page,
    '"N of M assets"',
    (pattern) => {
      const w = globalThis as unknown as PageWindow;
      return new RegExp(pattern).test(w.document.body.innerText.replace(/[\s\u00a0]+/g, ' ')) && w.performance.now();
    },
    `\\b\\d[\\d,]* of ${int(tenant.totalAssets)} assets\\b`,
  );

  await open('/map');
  times['Map: first asset drawn'] = await timeUntil(
    page,
    'the first asset on the map',
    () => {
      const w = globalThis as unknown as PageWindow;
      return w.document.querySelector('.asset-map [data-asset-id]') !== null && w.performance.now();
    },
    null,
  );
  times['Map: every asset drawn'] = await timeUntil(
    page,
    `every located asset (${tenant.located}) on the map`,
    (n) => {
      const w = globalThis as unknown as PageWindow;
      return w.document.querySelectorAll('.asset-map [data-asset-id]').length >= n && w.performance.now();
    },
    tenant.located,
  );
}

async function visitPlot(page: Page, open: (url: string) => Promise<void>, tenant: Tenant, times: Partial<Record<Milestone, number>>): Promise<void> {
  await open(`/assets/${encodeURIComponent(tenant.segmentId)}`);
  const label = `: ${int(tenant.features)} features`;
  times['Along the line: run read'] = await timeUntil(
    page,
    `the plot's ${tenant.features} features read`,
    (text) => {
      const w = globalThis as unknown as PageWindow;
      return Array.from(w.document.querySelectorAll('[role="img"]')).some((e) => (e.getAttribute('aria-label') ?? '').includes(text)) && w.performance.now();
    },
    label,
  );
  await timeUntil(
    page,
    'the plot drawn',
    (text) => {
      const w = globalThis as unknown as PageWindow;
      return w.performance.getEntriesByName('linepack:chart-drawn').some((m) => String(m.detail).includes(text)) && w.performance.now();
    },
    label,
  );
  // The mark's own time, not the frame it was seen in.
  times['Along the line: plot drawn'] = await page.evaluate(
    (text) =>
      (globalThis as unknown as PageWindow).performance.getEntriesByName('linepack:chart-drawn').find((m) => String(m.detail).includes(text))!.startTime,
    label,
  );
}

const PLOT_MILESTONES: readonly Milestone[] = ['Along the line: run read', 'Along the line: plot drawn'];

async function measurePages(browser: Browser, stack: TestStack, tenants: Tenant[], runs: number, plotOnly = false) {
  const milestones = plotOnly ? PLOT_MILESTONES : (Object.keys(BUDGET_MS) as Milestone[]);
  const results = new Map<string, Partial<Record<Milestone, number>>>();
  for (const tenant of tenants) {
    const context: BrowserContext = await browser.newContext({ baseURL: stack.gatewayOrigin, viewport: { width: 1440, height: 900 } });
    try {
      const page = await context.newPage();
      // One sign-in per tenant (a refresh token is single-use: contexts cannot share one), then first visits.
      await signIn(page, tenant.user);
      const cdp = await context.newCDPSession(page);
      const clearCache = () => cdp.send('Network.clearBrowserCache');
      const samples: Partial<Record<Milestone, number>>[] = [];
      // One visit to warm the stack (JIT, connections, caches of the services), not counted.
      await visit(page, clearCache, tenant, plotOnly);
      for (let run = 0; run < runs; run++) samples.push(await visit(page, clearCache, tenant, plotOnly));
      results.set(tenant.label, Object.fromEntries(milestones.map((m) => [m, median(samples.map((s) => s[m]!))])));
      process.stdout.write('.');
    } finally {
      await context.close();
    }
  }
  return results;
}

interface CompressionRow {
  answer: string;
  bytes: number;
  encodings: { name: string; bytes: number; cpuMs: number }[];
}

/** Sizes and CPU of each level on real answers, compressed here (median of repetitions). */
function compressionLevels(answers: { name: string; body: Buffer }[]): CompressionRow[] {
  const levels: { name: string; compress: (b: Buffer) => Buffer }[] = [
    ...[1, 6, 9].map((level) => ({ name: `gzip ${level}`, compress: (b: Buffer) => gzipSync(b, { level }) })),
    ...[1, 4, 5, 6, 9, 11].map((quality) => ({
      name: `br ${quality}`,
      compress: (b: Buffer) =>
        brotliCompressSync(b, {
          params: {
            [constants.BROTLI_PARAM_QUALITY]: quality,
            [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
            [constants.BROTLI_PARAM_SIZE_HINT]: b.length,
          },
        }),
    })),
  ];
  return answers.map(({ name, body }) => ({
    answer: name,
    bytes: body.length,
    encodings: levels.map((level) => {
      const times: number[] = [];
      let size = 0;
      for (let i = 0; i < (level.name === 'br 11' ? 3 : 7); i++) {
        const t0 = process.cpuUsage();
        size = level.compress(body).length;
        const used = process.cpuUsage(t0);
        times.push((used.user + used.system) / 1000);
      }
      return { name: level.name, bytes: size, cpuMs: median(times) };
    }),
  }));
}

/** One POST over a connection of its own (no keep-alive reuse), the body as it crossed the wire. */
function post(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; encoding: string; wire: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', headers, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, encoding: String(res.headers['content-encoding'] ?? 'identity'), wire: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

/**
 * The same request through the gateway with each Accept-Encoding, the encodings taking turns (so drift in the machine's
 * load falls on all three alike): bytes on the wire, median ms, and this process's CPU per request.
 */
async function throughGateway(stack: TestStack, apiKey: string, query: string, repetitions: number) {
  const encodings = ['identity', 'gzip', 'br'] as const;
  const body = JSON.stringify({ query });
  const samples = new Map(encodings.map((e) => [e, { times: [] as number[], cpuMs: 0, wireBytes: 0 }]));
  for (let i = -1; i < repetitions; i++) {
    for (const encoding of encodings) {
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'accept-encoding': encoding };
      const cpu0 = process.cpuUsage();
      const t0 = performance.now();
      const res = await post(stack.gatewayUrl, headers, body);
      const ms = performance.now() - t0;
      const cpu = process.cpuUsage(cpu0);
      if (res.status !== 200) throw new Error(`HTTP ${res.status} for ${encoding}`);
      if (res.encoding !== encoding) throw new Error(`asked for ${encoding}, got ${res.encoding}`);
      if (i < 0) continue; // one round to warm up, not counted
      const sample = samples.get(encoding)!;
      sample.times.push(ms);
      sample.cpuMs += (cpu.user + cpu.system) / 1000;
      sample.wireBytes = res.wire.length;
    }
  }
  return encodings.map((encoding) => {
    const { times, cpuMs, wireBytes } = samples.get(encoding)!;
    return { encoding, wireBytes, medianMs: median(times), cpuMsPerRequest: cpuMs / repetitions };
  });
}

/**
 * What the plot's reading costs on the API side: every page (500 a page, as the console reads them) of the run's
 * features with their assessment (the console's own query, ConsoleIliFeatures), the same without it, and the run's
 * tally, each read sequentially from this process: total ms and pages. Beside them, the median of 20 one-asset reads
 * (`asset(id) { id name }`, one subgraph, one document): what any request through the gateway costs on this machine at
 * this moment, the baseline a page's time is a ratio to.
 */
async function plotReads(stack: TestStack, tenant: Tenant) {
  const ask = async (query: string, variables: Record<string, unknown>) => {
    const res = await graphql<Record<string, unknown>>(stack.gatewayUrl, query, { apiKey: tenant.apiKey, variables });
    if (res.body.errors?.length) throw new Error(`reading ${query.slice(0, 50)}…: ${res.body.errors[0]!.message}`);
    return res.body.data!;
  };
  const read = async (query: string, variables: Record<string, unknown>, pick: (data: Record<string, unknown>) => unknown) => {
    const t0 = performance.now();
    let after: string | null = null;
    let pages = 0;
    let rows = 0;
    for (;;) {
      const connection = pick(await ask(query, { ...variables, first: 500, after })) as {
        edges: unknown[];
        pageInfo: { hasNextPage: boolean; endCursor: string | null };
      };
      pages++;
      rows += connection.edges.length;
      if (!connection.pageInfo.hasNextPage) break;
      after = connection.pageInfo.endCursor;
    }
    return { ms: performance.now() - t0, pages, rows };
  };
  const features = (data: Record<string, unknown>) => (data['asset'] as { measurements: unknown }).measurements;
  const runs = (await ask('query($id: ID!) { asset(id: $id) { iliRuns { id } } }', { id: tenant.segmentId })) as { asset: { iliRuns: { id: string }[] } };
  const run = runs.asset.iliRuns[0]!.id;
  const simple: number[] = [];
  for (let i = 0; i < 21; i++) {
    const t0 = performance.now();
    await ask(ONE_ASSET, { id: tenant.segmentId });
    if (i > 0) simple.push(performance.now() - t0); // the first warms the connection
  }
  const reads = {
    'features with assessment': await read(ILI_PAGES, { id: tenant.segmentId, run }, features),
    'features without assessment': await read(ILI_PAGES.replace(' assessment { responseCategory }', ''), { id: tenant.segmentId, run }, features),
    "the run's tally": await read(TALLY_PAGES, { run }, (d) => (d['iliRun'] as { tally: unknown }).tally),
  };
  for (const [name, r] of Object.entries(reads).slice(0, 2)) {
    if (r.rows !== tenant.features) throw new Error(`${name}: read ${r.rows} features of the run's ${tenant.features}`);
  }
  return { reads, simpleMs: median(simple) };
}

async function rawAnswer(stack: TestStack, apiKey: string, query: string, variables: Record<string, unknown> = {}): Promise<Buffer> {
  const res = await fetch(stack.gatewayUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}`, 'accept-encoding': 'identity' },
    body: JSON.stringify({ query, variables }),
  });
  const body = Buffer.from(await res.arrayBuffer());
  if (res.status !== 200 || (JSON.parse(body.toString('utf8')) as { errors?: unknown }).errors !== undefined)
    throw new Error(`the answer to ${query.slice(0, 60)}… failed: ${body.toString('utf8').slice(0, 300)}`);
  return body;
}

const MAP_PAGE = `query($first: Int, $after: String) { assets(first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor }
  edges { node { id name type status parent { id } location risk { band score } } } } }`;
/** The console's ConsoleIliFeatures (console/src/components/AlongTheLine.tsx): one run's features, a page at a time. */
const ILI_PAGES = `query($id: ID!, $run: String, $first: Int, $after: String) { asset(id: $id) { id
  measurements(type: ILI_ANOMALY, runId: $run, first: $first, after: $after) { totalCount pageInfo { hasNextPage endCursor }
  edges { node { odometerM clockDeg depthPctWt featureType assessment { responseCategory } } } } } }`;
const ONE_ASSET = 'query($id: ID!) { asset(id: $id) { id name } }';
const TALLY_PAGES = `query($run: ID!, $first: Int, $after: String) { iliRun(id: $run) { id tally(first: $first, after: $after) {
  totalCount pageInfo { hasNextPage endCursor } edges { node { kind logDistanceM jointNumber name } } } } }`;

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string' },
      features: { type: 'string' },
      short: { type: 'boolean', default: false },
      only: { type: 'string' },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const runs = Number(values.runs ?? (values.short ? 1 : 3));
  if (!Number.isInteger(runs) || runs < 1 || runs > 20) throw new Error(`--runs must be a whole number from 1 to 20 (got ${values.runs})`);
  const features = Number(values.features ?? (values.short ? 2_000 : 20_000));
  if (!Number.isInteger(features) || features < 1_000 || features > 200_000) throw new Error(`--features must be a whole number from 1,000 to 200,000`);
  if (values.only !== undefined && !['pages', 'plot', 'compression'].includes(values.only)) throw new Error('--only must be pages, plot or compression');
  // plot: the along-the-line page alone, with a large tenant of the short run's 43 assets (the run is what it reads).
  const plotOnly = values.only === 'plot';
  const part = { pages: values.only !== 'compression', compression: values.only === undefined || values.only === 'compression' };

  const dir = await mkdtemp(path.join(os.tmpdir(), 'linepack-bench-console-'));
  const { stack, mongoLabel, untilEventsSettled, stop } = await startConsoleStack('cb');
  let browser: Browser | null = null;
  try {
    const seedStart = performance.now();
    const small = part.pages ? await smallTenant(stack, dir) : null;
    const large = await largeTenant(stack, dir, values.short || plotOnly, features);
    // The services react to the seeding for a while after it (risk, compliance): measured pages must not share the CPU.
    const settledS = await untilEventsSettled();
    console.log(
      `bench:console — ${small ? `small tenant ${small.totalAssets} assets and a ${int(small.features)}-feature run; ` : ''}` +
        `large tenant ${large.totalAssets} assets (${large.located} located) and a ${int(large.features)}-feature run ` +
        `(seeded, assessed and every event handled in ${((performance.now() - seedStart) / 1000).toFixed(0)} s, ${settledS.toFixed(0)} s of it waiting for the events); ` +
        `mongo ${mongoLabel}`,
    );
    // The tenants' sizes only: never their keys or passwords, even of databases dropped at the end.
    const sizeOf = (t: Tenant | null) => t && { totalAssets: t.totalAssets, located: t.located, features: t.features };
    const json: Record<string, unknown> = { benchmark: 'console', runs, small: sizeOf(small), large: sizeOf(large) };

    if (part.pages) {
      browser = await launchBrowser('full');
      const results = await measurePages(browser, stack, [small!, large], runs, plotOnly);
      const [s, l] = [results.get('small')!, results.get('large')!];
      const milestones = Object.keys(l) as Milestone[];
      const rows = milestones.map((m) => [
        m,
        int(s[m]!),
        int(l[m]!),
        `${(l[m]! / s[m]!).toFixed(2)}×`,
        int(BUDGET_MS[m]),
        l[m]! <= BUDGET_MS[m] ? 'within' : `over by ${int(l[m]! - BUDGET_MS[m])}`,
      ]);
      printColumns(
        `Console pages, first visit signed in (Chromium 1440×900, median of ${runs}; ms from navigation start)`,
        ['milestone', 'small tenant', 'large tenant', 'large vs small', 'budget (large)', 'large vs budget'],
        rows,
        [
          `small: ${small!.totalAssets} assets, ${int(small!.features)} ILI features on the plotted segment; large: ${large.totalAssets} assets, ${int(large.features)} features.`,
          'Every visit restores the session first (POST /auth/refresh) and starts with an empty HTTP cache. Ratios compare runs of this invocation only.',
        ],
      );
      json['pages'] = { small: s, large: l, budgetMs: BUDGET_MS };

      const reads = { small: await plotReads(stack, small!), large: await plotReads(stack, large) };
      const perPage = (r: { ms: number; pages: number }, simpleMs: number) => `${int(r.ms / r.pages)} (${(r.ms / r.pages / simpleMs).toFixed(1)}×)`;
      printColumns(
        "Where the plot's time goes: its API reads alone, sequential pages of 500 from this process (no browser)",
        ['read', 'small: pages', 'small: ms', 'large: pages', 'large: ms', 'large ms/page (vs one-asset read)'],
        (Object.keys(reads.large.reads) as (keyof typeof reads.large.reads)[]).map((k) => [
          k,
          String(reads.small.reads[k].pages),
          int(reads.small.reads[k].ms),
          String(reads.large.reads[k].pages),
          int(reads.large.reads[k].ms),
          perPage(reads.large.reads[k], reads.large.simpleMs),
        ]),
        [
          'The console reads the features with their assessment (the colour is the response category) and the tally, one page after another.',
          `One-asset read (asset(id) { id name }), median of 20: ${reads.small.simpleMs.toFixed(1)} ms (small), ${reads.large.simpleMs.toFixed(1)} ms (large): the per-page ratio's baseline.`,
        ],
      );
      json['plotReads'] = reads;
    }

    if (part.compression) {
      const answers = [
        { name: 'map page (200 assets, GeoJSON)', body: await rawAnswer(stack, large.apiKey, MAP_PAGE, { first: 200 }) },
        { name: 'ILI page (500 features)', body: await rawAnswer(stack, large.apiKey, ILI_PAGES, { id: large.segmentId, first: 500 }) },
        { name: 'schema introspection', body: await rawAnswer(stack, large.apiKey, getIntrospectionQuery()) },
      ];
      const levels = compressionLevels(answers);
      const names = levels[0]!.encodings.map((e) => e.name);
      printColumns(
        'Compressing real answers: size (% of the answer) / CPU ms per answer, in this process',
        ['answer', 'bytes', ...names],
        levels.map((r) => [
          r.answer,
          int(r.bytes),
          ...r.encodings.map((e) => `${((100 * e.bytes) / r.bytes).toFixed(1)} % / ${e.cpuMs < 10 ? e.cpuMs.toFixed(2) : e.cpuMs.toFixed(0)}`),
        ]),
        [`The gateway compresses answers of ${int(COMPRESSION_THRESHOLD_BYTES)} bytes and more with br ${BROTLI_QUALITY} or gzip ${GZIP_LEVEL}.`],
      );
      const repetitions = values.short ? 5 : 30;
      const wire = await throughGateway(stack, large.apiKey, getIntrospectionQuery(), repetitions);
      printColumns(
        `The schema's introspection through the gateway (answered by the gateway alone), by Accept-Encoding (${repetitions} requests each, taking turns)`,
        ['Accept-Encoding', 'bytes on the wire', 'median ms', 'stack CPU ms/request', 'vs identity'],
        wire.map((w) => [
          w.encoding,
          int(w.wireBytes),
          w.medianMs.toFixed(1),
          w.cpuMsPerRequest.toFixed(1),
          `${(w.medianMs / wire[0]!.medianMs).toFixed(2)}× time`,
        ]),
        ['stack CPU: this process, where the gateway and the client run; the difference between rows is the compression (and the smaller write).'],
      );
      json['compression'] = { levels, wire };
    }
    if (values.json) console.log(`BENCH_JSON ${JSON.stringify(json)}`);
    return 0;
  } finally {
    await browser?.close();
    await stop();
    await rm(dir, { recursive: true, force: true });
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
