/**
 * A metrics exposition read as Prometheus reads it when it scrapes: tools/prometheus-parse runs Prometheus's own
 * parser (model/textparse of Prometheus 3.5, the docker-compose one) on the body, picked by the Content-Type the target
 * answered with. With --eval it stores timestamped scrapes as the scrape loop does and evaluates PromQL on them with
 * Prometheus's own engine (tools/prometheus-parse/eval.go). Built with `go build` into .linepack/tools/bin on first use, and again when its source changes (Go
 * from the Go module proxy, as scripts/validate-chart.sh builds helm; a few seconds once the modules are cached).
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { repoRoot } from '@linepack/lib/repo-root';

const source = path.join(repoRoot, 'tools', 'prometheus-parse');
const bin = path.join(process.env['LINEPACK_TOOLS_DIR'] ?? path.join(repoRoot, '.linepack', 'tools'), 'bin');
const binary = path.join(bin, 'prometheus-parse');

/** What Prometheus 3.5 sends by default (scrape_protocols: OpenMetrics 1.0.0, 0.0.1, then text 1.0.0, 0.0.4). */
export const PROMETHEUS_ACCEPT =
  'application/openmetrics-text;version=1.0.0;escaping=allow-utf-8;q=0.6,application/openmetrics-text;version=0.0.1;q=0.5,' +
  'text/plain;version=1.0.0;escaping=allow-utf-8;q=0.4,text/plain;version=0.0.4;q=0.3,*/*;q=0.2';

export interface ParsedSample {
  name: string;
  labels: Record<string, string>;
  value: number;
  exemplars?: { labels: Record<string, string>; value: number; timestampMs?: number }[];
}

export interface ParsedExposition {
  /** The parser Prometheus chose for the Content-Type. */
  parser: 'openmetrics' | 'prometheus';
  /** Metric family → type, from the # TYPE lines. */
  types: Record<string, string>;
  samples: ParsedSample[];
}

function run(file: string, args: string[], options: { cwd?: string; input?: string } = {}): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = execFile(file, args, { cwd: options.cwd, maxBuffer: 64 * 1024 * 1024, timeout: 5 * 60_000 }, (err, stdout, stderr) =>
      err ? reject(new Error(`${path.basename(file)} ${args.join(' ')}: ${stderr.trim() || err.message}`)) : resolve(stdout),
    );
    child.stdin?.end(options.input ?? '');
  });
}

let built: Promise<string> | null = null;

/**
 * The parser's binary, built first if it is missing or its source changed. scripts/setup.sh builds it ahead
 * (scripts/prometheus-parse.ts): a cold `go build` of Prometheus's packages took longer than a test's 60 s in the first
 * CI run on a fresh machine (test/ops/tracing.test.ts, 2026-11-28).
 */
export function prometheusParser(): Promise<string> {
  built ??= (async () => {
    const hash = createHash('sha256');
    for (const file of readdirSync(source)
      .filter((f) => /^go\.(mod|sum)$|\.go$/.test(f))
      .sort())
      hash.update(readFileSync(path.join(source, file)));
    const stamp = hash.digest('hex');
    const stampFile = `${binary}.stamp`;
    if (existsSync(binary) && existsSync(stampFile) && readFileSync(stampFile, 'utf8') === stamp) return binary;
    mkdirSync(bin, { recursive: true });
    // Built beside and renamed into place: a concurrent test file building it too never runs a half-written binary.
    const partial = `${binary}.${process.pid}`;
    await run('go', ['build', '-buildvcs=false', '-o', partial, '.'], { cwd: source }).catch((err: Error) => {
      throw new Error(`building tools/prometheus-parse needs Go (scripts/setup.sh): ${err.message}`);
    });
    renameSync(partial, binary);
    writeFileSync(stampFile, stamp);
    return binary;
  })();
  return built;
}

/** The body as Prometheus parses it for this Content-Type; rejects with the parser's error where a scrape would fail. */
export async function parseExposition(body: string, contentType: string): Promise<ParsedExposition> {
  return JSON.parse(await run(await prometheusParser(), [contentType], { input: body })) as ParsedExposition;
}

/** GET a /metrics URL with `accept` (default: Prometheus 3.5's) and parse the answer as Prometheus would. */
export async function scrapeAsPrometheus(url: string, accept: string | null = PROMETHEUS_ACCEPT): Promise<ParsedExposition & { contentType: string }> {
  const res = await fetch(url, { headers: accept === null ? {} : { accept } });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  const contentType = res.headers.get('content-type') ?? '';
  return { contentType, ...(await parseExposition(await res.text(), contentType)) };
}

/** One scrape as Prometheus takes it: the body, the Content-Type it came with, when (ms), the target's labels. */
export interface Scrape {
  timestampMs: number;
  contentType: string;
  body: string;
  targetLabels: Record<string, string>;
}

/** GET a /metrics URL as Prometheus 3.5 does, stamped with the time the scrape started (Prometheus's sample time). */
export async function takeScrape(url: string, targetLabels: Record<string, string>): Promise<Scrape> {
  const timestampMs = Date.now();
  const res = await fetch(url, { headers: { accept: PROMETHEUS_ACCEPT } });
  if (res.status !== 200) throw new Error(`GET ${url}: ${res.status} ${await res.text()}`);
  return { timestampMs, contentType: res.headers.get('content-type') ?? '', body: await res.text(), targetLabels };
}

export interface PromQLResult {
  expr: string;
  atMs: number;
  /** An instant vector's samples: empty when nothing matched (an alert expression that does not fire). */
  vector?: { labels: Record<string, string>; value: number }[];
  scalar?: number;
}

/** Each query evaluated at its instant by Prometheus's PromQL engine over the scrapes, stored as the scrape loop stores them. */
export async function evaluatePromQL(scrapes: readonly Scrape[], queries: readonly { expr: string; atMs: number }[]): Promise<PromQLResult[]> {
  return JSON.parse(await run(await prometheusParser(), ['--eval'], { input: JSON.stringify({ scrapes, queries }) })) as PromQLResult[];
}
