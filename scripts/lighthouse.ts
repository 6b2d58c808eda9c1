/**
 * `npm run lighthouse [-- --runs 3] [--pages dashboard,explorer,sign-in] [--json]`: Lighthouse on the console, in
 * Debian's Chromium (CHROMIUM_PATH overrides /usr/bin/chromium), desktop and mobile, printed as a table.
 *
 * Lighthouse is not a dependency of the project (its install is ~180 MB that neither `npm start` nor the tests need):
 * the first run installs the pinned version into .linepack/lighthouse (git-ignored) and later runs reuse it.
 *
 * It starts the whole stack (bench/console-stack.ts: the embedded MongoDB and a redis-server unless MONGODB_URI /
 * REDIS_URL are set), seeds the demo pipeline in a tenant with an admin user, signs in once in the browser, and audits
 * each page with Lighthouse's own settings for each form factor (mobile: a Moto G Power on slow 4G with a 4× slower
 * CPU, simulated; desktop: 1350×940, no CPU slowdown). The session cookie is kept between audits (a signed-out visit
 * would be the sign-in page) but the HTTP cache is emptied before each one, so every audit is a first visit. Each
 * page and form factor is audited --runs times and the run with the median performance score is reported, as
 * Lighthouse's documentation advises for its variance. Scores are 0–100; times in ms; bytes as transferred.
 * Exit status 1 when an audit failed to run.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { pathToFileURL } from 'node:url';
import { repoRoot } from '@linepack/lib/repo-root';
import { printColumns } from '../bench/harness';
import { startConsoleStack } from '../bench/console-stack';
import { seedTenant, type User } from '../test/console/support/console';

export const LIGHTHOUSE_VERSION = '13.5.0';
const toolDir = path.join(repoRoot, '.linepack', 'lighthouse');
const chromeFlags = ['--headless=new', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update', '--disable-sync'];

/** The console's pages Lighthouse opens: a path, and what shows the page is there (the audit waits for its own load). */
const pages = {
  dashboard: '/dashboard',
  explorer: '/explorer',
  'sign-in': '/sign-in',
} as const;
type PageName = keyof typeof pages;
const formFactors = ['desktop', 'mobile'] as const;
type FormFactor = (typeof formFactors)[number];

// The few parts of Lighthouse, puppeteer-core and chrome-launcher used here (they are installed on demand, untyped here).
interface LighthouseResult {
  /** The report as JSON (output: 'json'). */
  report: string;
  lhr: {
    runtimeError?: { code: string; message: string };
    categories: Record<string, { score: number | null }>;
    audits: Record<string, { numericValue?: number }>;
  };
}
interface LighthouseModule {
  default(url: string, flags: Record<string, unknown>, config: unknown, page: unknown): Promise<LighthouseResult | undefined>;
  desktopConfig: unknown;
}
interface PuppeteerPage {
  goto(url: string): Promise<unknown>;
  type(selector: string, text: string): Promise<void>;
  click(selector: string): Promise<void>;
  waitForSelector(selector: string, options?: { timeout: number }): Promise<unknown>;
  evaluate<T>(fn: () => T): Promise<T>;
  createCDPSession(): Promise<{ send(method: string): Promise<unknown> }>;
}
interface PuppeteerModule {
  default: { connect(options: { browserURL: string; defaultViewport: null }): Promise<{ newPage(): Promise<PuppeteerPage>; disconnect(): Promise<void> }> };
}
interface ChromeLauncherModule {
  launch(options: { chromePath: string; chromeFlags: string[] }): Promise<{ port: number; kill(): void }>;
}

/** Lighthouse, puppeteer-core and chrome-launcher from .linepack/lighthouse, installing the pinned version when needed. */
async function lighthouseTools(): Promise<{ lighthouse: LighthouseModule; puppeteer: PuppeteerModule; chromeLauncher: ChromeLauncherModule }> {
  const manifest = path.join(toolDir, 'node_modules', 'lighthouse', 'package.json');
  const installed = existsSync(manifest) ? (JSON.parse(readFileSync(manifest, 'utf8')) as { version: string }).version : null;
  if (installed !== LIGHTHOUSE_VERSION) {
    console.log(`Installing lighthouse@${LIGHTHOUSE_VERSION} into ${path.relative(repoRoot, toolDir)} (once; not part of npm ci)…`);
    const npm = spawnSync('npm', ['install', '--no-save', '--no-audit', '--no-fund', '--prefix', toolDir, `lighthouse@${LIGHTHOUSE_VERSION}`], {
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    if (npm.status !== 0) throw new Error(`npm install lighthouse@${LIGHTHOUSE_VERSION} failed (exit ${npm.status})`);
  }
  // Resolved from Lighthouse's own folder: the versions it was installed with.
  const from = createRequire(manifest);
  const load = async <T>(name: string) => (await import(pathToFileURL(from.resolve(name)).href)) as T;
  return {
    lighthouse: await load<LighthouseModule>('lighthouse'),
    puppeteer: await load<PuppeteerModule>('puppeteer-core'),
    chromeLauncher: await load<ChromeLauncherModule>('chrome-launcher'),
  };
}

interface Audit {
  /** The full report of this run (written to .linepack/lighthouse/reports/). */
  report: string;
  page: PageName;
  formFactor: FormFactor;
  performance: number;
  accessibility: number;
  bestPractices: number;
  fcpMs: number;
  lcpMs: number;
  tbtMs: number;
  cls: number;
  speedIndexMs: number;
  transferBytes: number;
}

function auditOf(page: PageName, formFactor: FormFactor, result: LighthouseResult): Audit {
  const { lhr } = result;
  if (lhr.runtimeError) throw new Error(`Lighthouse could not audit ${page} (${formFactor}): ${lhr.runtimeError.code} ${lhr.runtimeError.message}`);
  const score = (category: string) => Math.round((lhr.categories[category]?.score ?? Number.NaN) * 100);
  const value = (audit: string) => lhr.audits[audit]?.numericValue ?? Number.NaN;
  return {
    report: result.report,
    page,
    formFactor,
    performance: score('performance'),
    accessibility: score('accessibility'),
    bestPractices: score('best-practices'),
    fcpMs: value('first-contentful-paint'),
    lcpMs: value('largest-contentful-paint'),
    tbtMs: value('total-blocking-time'),
    cls: value('cumulative-layout-shift'),
    speedIndexMs: value('speed-index'),
    transferBytes: value('total-byte-weight'),
  };
}

async function signIn(page: PuppeteerPage, origin: string, user: User): Promise<void> {
  await page.goto(`${origin}/sign-in`);
  await page.waitForSelector('input[type="email"]', { timeout: 30_000 });
  await page.type('input[type="email"]', user.email);
  await page.type('input[type="password"]', user.password);
  await page.click('button[type="submit"]');
  await page.waitForSelector('xpath///h1[normalize-space()="Pipeline at a glance"]', { timeout: 30_000 });
}

async function main(): Promise<number> {
  const { values } = parseArgs({
    options: {
      runs: { type: 'string', default: '3' },
      pages: { type: 'string', default: Object.keys(pages).join(',') },
      json: { type: 'boolean', default: false },
    },
    strict: true,
  });
  const runs = Number(values.runs);
  if (!Number.isInteger(runs) || runs < 1 || runs > 15) throw new Error(`--runs must be a whole number from 1 to 15 (got ${values.runs})`);
  const chosen = values.pages.split(',').map((p) => p.trim());
  const unknown = chosen.filter((p) => !(p in pages));
  if (unknown.length > 0) throw new Error(`--pages: unknown page(s) ${unknown.join(', ')} (known: ${Object.keys(pages).join(', ')})`);

  const { lighthouse, puppeteer, chromeLauncher } = await lighthouseTools();
  const chromePath = process.env['CHROMIUM_PATH'] ?? process.env['CHROME_PATH'] ?? '/usr/bin/chromium';
  const { stack, mongoLabel, stop } = await startConsoleStack('lh');
  let chrome: { port: number; kill(): void } | null = null;
  try {
    const tenant = await seedTenant(stack, 'lighthouse');
    chrome = await chromeLauncher.launch({ chromePath, chromeFlags });
    const browser = await puppeteer.default.connect({ browserURL: `http://127.0.0.1:${chrome.port}`, defaultViewport: null });
    const page = await browser.newPage();
    await signIn(page, stack.gatewayOrigin, tenant.admin);
    const version = await page.evaluate(() => (globalThis as unknown as { navigator: { userAgent: string } }).navigator.userAgent);
    console.log(
      `Lighthouse ${LIGHTHOUSE_VERSION} in ${/HeadlessChrome\/[\d.]+|Chrome\/[\d.]+/.exec(version)?.[0] ?? chromePath}; mongo ${mongoLabel}; ${runs} run(s) each`,
    );

    const reportDir = path.join(toolDir, 'reports');
    mkdirSync(reportDir, { recursive: true });
    const cdp = await page.createCDPSession();
    const audits: Audit[] = [];
    for (const name of chosen as PageName[]) {
      for (const formFactor of formFactors) {
        const results: Audit[] = [];
        for (let run = 0; run < runs; run++) {
          // A first visit every time, still signed in: the cache emptied, the session cookie kept.
          await cdp.send('Network.clearBrowserCache');
          const result = await lighthouse.default(
            `${stack.gatewayOrigin}${pages[name]}`,
            { logLevel: 'error', output: 'json', onlyCategories: ['performance', 'accessibility', 'best-practices'], disableStorageReset: true },
            formFactor === 'desktop' ? lighthouse.desktopConfig : undefined,
            page,
          );
          if (!result) throw new Error(`Lighthouse returned nothing for ${name} (${formFactor})`);
          results.push(auditOf(name, formFactor, result));
        }
        results.sort((a, b) => a.performance - b.performance);
        const median = results[Math.floor((results.length - 1) / 2)]!;
        writeFileSync(path.join(reportDir, `${name}-${formFactor}.json`), median.report);
        audits.push(median);
        process.stdout.write('.');
      }
    }
    await browser.disconnect();
    const int = (n: number) => (Number.isFinite(n) ? Math.round(n).toLocaleString('en-US') : '—');
    printColumns(
      'Lighthouse on the console (median run of each)',
      ['page', 'form factor', 'performance', 'accessibility', 'best practices', 'FCP ms', 'LCP ms', 'TBT ms', 'CLS', 'Speed Index ms', 'KiB transferred'],
      audits.map((a) => [
        a.page,
        a.formFactor,
        String(a.performance),
        String(a.accessibility),
        String(a.bestPractices),
        int(a.fcpMs),
        int(a.lcpMs),
        int(a.tbtMs),
        a.cls.toFixed(3),
        int(a.speedIndexMs),
        int(a.transferBytes / 1024),
      ]),
      [
        'Targets (issue 27): the dashboard ≥ 90 performance and 100 accessibility, desktop and mobile.',
        "Mobile and desktop are Lighthouse's own settings (simulated throttling); the times depend on this machine's CPU.",
      ],
    );
    if (values.json) console.log(`LIGHTHOUSE_JSON ${JSON.stringify({ version: LIGHTHOUSE_VERSION, runs, audits: audits.map(({ report: _, ...a }) => a) })}`);
    return 0;
  } finally {
    chrome?.kill();
    await stop();
  }
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(`lighthouse: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
