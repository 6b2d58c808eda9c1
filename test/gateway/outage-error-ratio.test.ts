/**
 * Issue 29's "done when": with a subgraph killed under load, the error-ratio PromQL of docs/runbook.md (and the
 * LinepackErrorRatioHigh alert of the chart's PrometheusRule) reads the error ratio the clients saw, and the clients see
 * 503 / SUBGRAPH_UNAVAILABLE.
 *
 * A few concurrent clients send a known mix of queries, some needing the measurements subgraph, while the gateway's
 * /metrics is scraped about every second as Prometheus scrapes it; the measurements subgraph (a process of its own) is
 * killed with SIGKILL mid-run and the load goes on. The scrapes are then stored as Prometheus's scrape loop stores
 * them (each at the time the test took it, with the target's job/instance/namespace labels) and both expressions —
 * read from the files, so the test fails when they drift — are evaluated by Prometheus's own PromQL engine
 * (tools/prometheus-parse --eval) at the instants of the scrapes, and compared with the ratio computed from the
 * clients' own responses over the same span. Nothing depends on how many requests the machine manages per second.
 */
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { parse as parseYaml } from 'yaml';
import { startMetricsServer, type MetricsServer } from '@linepack/lib/metrics';
import { repoRoot } from '@linepack/lib/repo-root';
import { waitFor } from '@linepack/lib/testing/until';
import { evaluatePromQL, takeScrape, type Scrape } from '../support/prometheus-parse';
import { killProcess, measurementsInOwnProcess } from '../support/measurements-process';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

jest.setTimeout(300_000);

/** The runbook's query: the ```promql block of its "Error ratio" section. */
function runbookErrorRatio(): string {
  const runbook = readFileSync(path.join(repoRoot, 'docs', 'runbook.md'), 'utf8');
  const section = runbook.split(/^## /m).find((s) => s.startsWith('Error ratio\n'));
  const query = section?.match(/```promql\n([^]*?)```/)?.[1];
  if (!query) throw new Error('docs/runbook.md has no ```promql block in its "## Error ratio" section');
  return query.trim();
}

/**
 * LinepackErrorRatioHigh's expression as the chart renders it in namespace "linepack" with the default threshold:
 * the template's text with its two template actions filled in as templates/prometheusrule.yaml defines them (any
 * other action left in it fails the test: the expression changed shape).
 */
function alertErrorRatio(): { expr: string; threshold: number } {
  const chart = path.join(repoRoot, 'deploy', 'helm', 'linepack');
  const template = readFileSync(path.join(chart, 'templates', 'prometheusrule.yaml'), 'utf8');
  const block = template.match(/- alert: LinepackErrorRatioHigh\n\s*expr: \|-\n((?:\s{12}.*\n)+)/)?.[1];
  if (!block) throw new Error('templates/prometheusrule.yaml has no LinepackErrorRatioHigh expr block');
  const { threshold } = (
    parseYaml(readFileSync(path.join(chart, 'values.yaml'), 'utf8')) as { metrics: { prometheusRule: { errorRatio: { threshold: number } } } }
  ).metrics.prometheusRule.errorRatio;
  expect(template).toContain('{{- $gateway := printf "%s, linepack_service=\\"gateway\\"" $ns }}');
  const expr = block
    .replaceAll('{ {{- $gateway }}', '{namespace="linepack", linepack_service="gateway"')
    .replaceAll('{{ $rule.errorRatio.threshold }}', String(threshold))
    .replace(/^\s+/gm, '')
    .trim();
  if (expr.includes('{{')) throw new Error(`LinepackErrorRatioHigh's expression has template actions this test does not know: ${expr}`);
  return { expr, threshold };
}

/** The mix each client cycles through: with the measurements subgraph down four of five fail (two 503, two partial). */
const MIXED = '{ assets(first: 5) { edges { node { id name latestMeasurement { id } } } } }';
const ONLY_MEASUREMENTS = '{ measurement(id: "m-none") { id } }';
const ONLY_ASSETS = '{ assets(first: 5) { edges { node { id name } } } }';
const MIX = [MIXED, ONLY_MEASUREMENTS, MIXED, ONLY_MEASUREMENTS, ONLY_ASSETS];
const CLIENTS = 4;

interface Answer {
  /** When the client sent the request and when it had the whole answer (ms since the epoch). */
  sent: number;
  at: number;
  status: number;
  codes: string[];
}
/** As the client sees it: the server failed it (5xx, or an error that says the server or a subgraph failed). */
const failed = (a: Answer) => a.status >= 500 || a.codes.some((code) => code === 'SUBGRAPH_UNAVAILABLE' || code === 'INTERNAL_SERVER_ERROR');

let stack: TestStack;
let measurements: ChildProcess;
let metrics: MetricsServer;
let apiKey: string;

beforeAll(async () => {
  stack = await startTestStack({ credentialCacheTtlSeconds: 300 });
  measurements = await measurementsInOwnProcess(stack);
  metrics = await startMetricsServer({ port: 0, host: '127.0.0.1', service: 'gateway' });
  ({ apiKey } = await stack.tenantWithKey());
  await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Line 1' });
});

afterAll(async () => {
  await killProcess(measurements);
  await metrics?.stop();
  await stack?.stop();
});

test('the runbook error ratio and the alert read the ratio the clients saw, ~0 before the kill, and clients see 503 / SUBGRAPH_UNAVAILABLE', async () => {
  const target = { job: 'linepack', instance: 'gateway:9464', namespace: 'linepack' };
  const answers: Answer[] = [];
  const scrapes: Scrape[] = [];
  let stopping = false;

  const client = async (offset: number) => {
    for (let i = offset; !stopping; i++) {
      const sent = Date.now();
      const res = await graphql(stack.gatewayUrl, MIX[i % MIX.length]!, { apiKey });
      answers.push({ sent, at: Date.now(), status: res.status, codes: (res.body.errors ?? []).map((e) => String(e.extensions?.['code'])) });
    }
  };
  const scraper = async () => {
    while (!stopping) {
      scrapes.push(await takeScrape(metrics.url, target));
      await new Promise((resolve) => setTimeout(resolve, 1000));
    }
  };
  const load = [...Array.from({ length: CLIENTS }, (_, i) => client(i)), scraper()];
  const settled = Promise.allSettled(load);
  let killedAt = 0;
  let goneAt = 0;
  try {
    // Steady load with the subgraph up, for at least five scrapes and as many answers as the mix is long.
    await waitFor(async () => scrapes.length >= 5 && answers.length >= MIX.length * CLIENTS, 60_000, 'five scrapes under load');
    killedAt = Date.now();
    await killProcess(measurements);
    goneAt = Date.now();
    const scrapesBefore = scrapes.length;
    // The outage under the same load: ten more scrapes, and every query of the mix answered after the kill.
    await waitFor(
      async () => scrapes.length >= scrapesBefore + 10 && answers.filter((a) => a.sent > goneAt).length >= MIX.length * CLIENTS,
      120_000,
      'ten scrapes during the outage',
    );
  } finally {
    stopping = true;
    for (const result of await settled) if (result.status === 'rejected') throw result.reason;
  }

  // What the clients saw of requests sent once the subgraph was gone: 503 + SUBGRAPH_UNAVAILABLE when nothing could be
  // served, partial data with SUBGRAPH_UNAVAILABLE otherwise, and the assets-only query whole. Before: all whole.
  const outage = answers.filter((a) => a.sent > goneAt);
  expect(new Set(outage.map((a) => `${a.status} ${[...new Set(a.codes)].join(',')}`))).toEqual(
    new Set(['503 SUBGRAPH_UNAVAILABLE', '200 SUBGRAPH_UNAVAILABLE', '200 ']),
  );
  expect(new Set(answers.filter((a) => a.at < killedAt).map((a) => `${a.status} ${a.codes.join(',')}`))).toEqual(new Set(['200 ']));

  const runbook = runbookErrorRatio();
  const alert = alertErrorRatio();
  const first = scrapes[0]!.timestampMs;
  const lastBefore = scrapes.filter((s) => s.timestampMs < killedAt).at(-1)!.timestampMs;
  const during = scrapes.filter((s) => s.timestampMs > killedAt).map((s) => s.timestampMs);
  const instants = [lastBefore, ...during];
  const results = await evaluatePromQL(scrapes, [
    ...instants.map((atMs) => ({ expr: runbook, atMs })),
    ...instants.map((atMs) => ({ expr: alert.expr, atMs })),
  ]);
  const valueOf = (expr: string, atMs: number) => {
    const result = results.find((r) => r.expr === expr && r.atMs === atMs)!;
    expect(result.vector!.length).toBeLessThanOrEqual(1);
    return result.vector![0]?.value;
  };
  /** The clients' error ratio over the span rate() sees at `atMs`: from the first scrape to that one. */
  const observed = (atMs: number) => {
    const span = answers.filter((a) => a.at > first && a.at <= atMs);
    return span.filter(failed).length / span.length;
  };

  // Before the kill: nothing failed, and the runbook's query says 0 (not "no data"), the alert does not fire.
  expect(observed(lastBefore)).toBe(0);
  expect(valueOf(runbook, lastBefore)).toBe(0);
  expect(valueOf(alert.expr, lastBefore)).toBeUndefined();
  // From the first scrape of the outage on, the runbook's query reads the clients' ratio over the same span, within
  // what rate()'s extrapolation at the span's edges and a request answered across a scrape can move it, and the
  // alert's expression is above its threshold with that value.
  for (const atMs of during) {
    const seen = observed(atMs);
    const read = valueOf(runbook, atMs);
    expect({ atMs, seen, read, close: read !== undefined && Math.abs(read - seen) <= 0.05 + 0.15 * seen }).toEqual({ atMs, seen, read, close: true });
    if (seen > alert.threshold * 2) expect(valueOf(alert.expr, atMs)).toBeCloseTo(read!, 9);
  }
  const lastSeen = observed(during.at(-1)!);
  // Most of the span is the outage, in which four of five queries of the mix fail.
  expect(lastSeen).toBeGreaterThan(0.3);
  expect(valueOf(runbook, during.at(-1)!)).toBeGreaterThan(lastSeen * 0.7);
});
