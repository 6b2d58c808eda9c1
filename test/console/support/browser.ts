import { appendFileSync, mkdirSync } from 'node:fs';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { repoRoot } from '@linepack/lib/repo-root';

/**
 * The console's browser tests drive Debian's Chromium with playwright-core (playwright's own browser download
 * is not reachable here; CHROMIUM_PATH overrides the binary). Every page visited is saved as a full-page
 * screenshot in .linepack/screenshots (git-ignored) for a person to look at; a failing test saves one more
 * (FAILED-<test>.png) and its error names what the page logged, threw and failed to load.
 */
export const screenshotDir = path.join(repoRoot, '.linepack', 'screenshots');

/**
 * Which Chromium a browser is launched from (CHROMIUM_PATH overrides both). `shell`: Debian's chromium-headless-shell,
 * the same Blink and V8 without the full browser's layers, for the tests: a console test file cost the machine 15–25 %
 * less CPU with it than with the full browser in headless mode (admin.test.ts 52 → 39 CPU-seconds), and a suite of
 * them runs beside three stacks on two cores. `full`: Debian's chromium, for what measures the console as people load
 * it (bench:console).
 */
const CHROMIUM = {
  shell: { path: '/usr/bin/chromium-headless-shell', deb: 'chromium-headless-shell' },
  full: { path: '/usr/bin/chromium', deb: 'chromium' },
} as const;

export async function launchBrowser(which: keyof typeof CHROMIUM = 'shell'): Promise<Browser> {
  const executablePath = process.env['CHROMIUM_PATH'] ?? CHROMIUM[which].path;
  try {
    return await chromium.launch({ executablePath, headless: true });
  } catch (err) {
    throw new Error(`cannot launch Chromium at ${executablePath} (install Debian's ${CHROMIUM[which].deb} or set CHROMIUM_PATH): ${(err as Error).message}`);
  }
}

/** A browser context and its page, with everything the page complained about. */
export interface WatchedPage {
  context: BrowserContext;
  page: Page;
  /** console.error / console.warning messages, uncaught exceptions, failed requests and 5xx answers, in order. */
  problems: string[];
}

/** What a scenario may set on its browser context: the reader's time zone and locale (default: the machine's, en-US). */
export interface ReaderOptions {
  timezoneId?: string;
  locale?: string;
}

export async function openPage(browser: Browser, baseURL: string, reader: ReaderOptions = {}): Promise<WatchedPage> {
  const context = await browser.newContext({ baseURL, viewport: { width: 1280, height: 800 }, ...reader });
  const page = await context.newPage();
  const problems: string[] = [];
  page.on('console', (msg) => {
    if (msg.type() === 'error' || msg.type() === 'warning') problems.push(`console.${msg.type()}: ${msg.text()} (${msg.location().url})`);
  });
  page.on('pageerror', (err) => problems.push(`uncaught: ${err.stack ?? err.message}`));
  page.on('requestfailed', (req) => problems.push(`request failed: ${req.method()} ${req.url()} — ${req.failure()?.errorText ?? '?'}`));
  page.on('response', (res) => {
    if (res.status() >= 500) problems.push(`HTTP ${res.status()}: ${res.request().method()} ${res.url()}`);
  });
  return { context, page, problems };
}

/** A full-page screenshot at .linepack/screenshots/<name>.png; returns its path. */
export async function shot(page: Page, name: string): Promise<string> {
  mkdirSync(screenshotDir, { recursive: true });
  const file = path.join(screenshotDir, `${name}.png`);
  await page.screenshot({ path: file, fullPage: true });
  return file;
}

/** A line for whoever looks at the screenshots (.linepack/screenshots/notes.txt): seen, not failed. */
export function note(page: string, text: string): void {
  mkdirSync(screenshotDir, { recursive: true });
  appendFileSync(path.join(screenshotDir, 'notes.txt'), `${new Date().toISOString()} ${page}: ${text}\n`);
}

/** Fails on a broken layout (layoutProblems().broken); notes tables that need sideways scrolling. */
export async function checkLayout(page: Page, name: string): Promise<void> {
  const { broken, scrolls } = await layoutProblems(page);
  for (const text of scrolls) note(name, text);
  if (broken.length > 0) throw new Error(`the ${name} page's layout is broken (see .linepack/screenshots/${name}.png):\n  ${broken.join('\n  ')}`);
}

/**
 * Runs a browser scenario in a fresh context. On failure: a screenshot of where it stopped, and the error
 * grows the page's URL, its problems and the visible text, so the failure says what the user saw. A scenario
 * also fails when the page threw an uncaught exception or the browser refused something under the page's CSP.
 */
export async function inBrowser<T>(
  browser: Browser,
  baseURL: string,
  name: string,
  body: (w: WatchedPage) => Promise<T>,
  reader: ReaderOptions = {},
): Promise<T> {
  const watched = await openPage(browser, baseURL, reader);
  try {
    const result = await body(watched);
    // A scenario that worked still fails when the page threw or the browser blocked something by policy.
    const faults = watched.problems.filter((p) => p.startsWith('uncaught:') || /Content Security Policy|Refused to (load|execute|connect|apply)/i.test(p));
    if (faults.length > 0) throw new Error(`the page threw or broke its Content-Security-Policy:\n  ${faults.join('\n  ')}`);
    return result;
  } catch (err) {
    const e = err instanceof Error ? err : new Error(String(err));
    const notes: string[] = [`page: ${watched.page.url()}`];
    try {
      notes.push(`screenshot: ${await shot(watched.page, `FAILED-${name}`)}`);
    } catch (shotErr) {
      notes.push(`no screenshot: ${(shotErr as Error).message}`);
    }
    try {
      const text = (await watched.page.locator('body').innerText({ timeout: 2_000 })).replace(/\s+/g, ' ').trim();
      notes.push(`visible text: ${text.slice(0, 1_500) || '(none)'}`);
    } catch {
      notes.push('visible text: (unreadable)');
    }
    notes.push(watched.problems.length ? `page problems:\n  ${watched.problems.slice(-30).join('\n  ')}` : 'page problems: none');
    e.message = `${e.message}\n\n[${name}] ${notes.join('\n')}`;
    throw e;
  } finally {
    await watched.context.close().catch(() => undefined);
  }
}

/**
 * How long a page is given to show what a step waits for: long, since Chromium shares a loaded machine with the whole
 * stack; it only costs time when the step is already failing.
 */
const PAGE_WAIT_MS = 30_000;

/** Waits for the locator to be visible (one element), with a message naming what was awaited. */
export async function visible(locator: Locator, what: string, timeout = PAGE_WAIT_MS): Promise<Locator> {
  try {
    await locator.first().waitFor({ state: 'visible', timeout });
  } catch (err) {
    throw new Error(`not visible within ${timeout} ms: ${what} (${(err as Error).message.split('\n')[0]})`);
  }
  return locator;
}

/** Waits until the locator matches nothing visible. */
export async function gone(locator: Locator, what: string, timeout = PAGE_WAIT_MS): Promise<void> {
  try {
    await locator.first().waitFor({ state: 'hidden', timeout });
  } catch (err) {
    throw new Error(`still visible after ${timeout} ms: ${what} (${(err as Error).message.split('\n')[0]})`);
  }
}

/** Polls the page until `check` holds, failing with `what` and the last value seen. */
export async function until<T>(read: () => Promise<T>, check: (value: T) => boolean, what: string, timeout = PAGE_WAIT_MS): Promise<T> {
  const deadline = Date.now() + timeout;
  let last: T | undefined;
  let lastError: unknown;
  for (;;) {
    try {
      last = await read();
      if (check(last)) return last;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const seen = lastError && last === undefined ? `error ${(lastError as Error).message}` : JSON.stringify(last)?.slice(0, 500);
      throw new Error(`timed out after ${timeout} ms waiting for ${what}; last seen: ${seen}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
}

/**
 * The few browser globals the page functions here use, typed by hand: the project's tsconfig has no DOM lib.
 * Inside page.evaluate, `globalThis as unknown as PageGlobals`.
 */
export interface PageElement {
  tagName: string;
  type?: string;
  innerText: string;
  labels?: { innerText: string }[] | null;
  getAttribute(name: string): string | null;
}
interface StorageLike {
  length: number;
  key(i: number): string | null;
  getItem(key: string): string | null;
}
export interface PageGlobals {
  localStorage: StorageLike;
  sessionStorage: StorageLike;
  document: { cookie: string; activeElement: PageElement | null; body: PageElement };
  getComputedStyle(element: PageElement): { outlineStyle: string; outlineWidth: string; outlineColor: string };
}

/** Everything the page keeps in Web Storage and readable cookies, as one string to search. */
export async function scriptReadableState(page: Page): Promise<string> {
  return page.evaluate(() => {
    const w = globalThis as unknown as PageGlobals;
    const dump = (s: StorageLike) => Array.from({ length: s.length }, (_, i) => `${s.key(i)}=${s.getItem(s.key(i)!)}`).join('\n');
    return `localStorage:\n${dump(w.localStorage)}\nsessionStorage:\n${dump(w.sessionStorage)}\ndocument.cookie:\n${w.document.cookie}`;
  });
}

/**
 * What a person would see as a broken layout: tables drawn over each other, and tables wider than the box
 * they sit in when that box does not scroll (their last columns cut off or spilling over what is beside them) —
 * `broken`; and, as a note, tables whose last columns are out of sight until their box is scrolled sideways —
 * `scrolls`. One sentence per problem.
 */
export async function layoutProblems(page: Page): Promise<{ broken: string[]; scrolls: string[] }> {
  return page.evaluate(() => {
    interface Box {
      left: number;
      right: number;
      top: number;
      bottom: number;
      width: number;
    }
    interface El {
      tagName: string;
      parentElement: El | null;
      scrollWidth: number;
      clientWidth: number;
      getBoundingClientRect(): Box;
      querySelector(selector: string): { textContent: string | null } | null;
      getAttribute(name: string): string | null;
    }
    const w = globalThis as unknown as {
      document: { querySelectorAll(selector: string): ArrayLike<El> };
      getComputedStyle(el: El): { overflowX: string; display: string; visibility: string };
    };
    const name = (t: El) => t.querySelector('caption')?.textContent?.trim() || t.getAttribute('aria-label') || 'a table without a caption';
    const tables = Array.from(w.document.querySelectorAll('table')).filter((t) => {
      const style = w.getComputedStyle(t);
      return style.display !== 'none' && style.visibility !== 'hidden' && t.getBoundingClientRect().width > 0;
    });
    const problems: string[] = [];
    const scrolls: string[] = [];
    // What of a table can be seen: its box clipped by every ancestor that scrolls or clips (a long table in a box that
    // scrolls vertically reaches below that box, but nothing of it is drawn there).
    const seen = (t: El): Box => {
      let r = { ...t.getBoundingClientRect() };
      for (let el = t.parentElement; el && el.tagName !== 'BODY'; el = el.parentElement) {
        const style = w.getComputedStyle(el) as unknown as { overflowX: string; overflowY: string };
        if (style.overflowX === 'visible' && style.overflowY === 'visible') continue;
        const p = el.getBoundingClientRect();
        r = { left: Math.max(r.left, p.left), right: Math.min(r.right, p.right), top: Math.max(r.top, p.top), bottom: Math.min(r.bottom, p.bottom), width: 0 };
      }
      return r;
    };
    for (let i = 0; i < tables.length; i++) {
      for (let j = i + 1; j < tables.length; j++) {
        const a = seen(tables[i]!);
        const b = seen(tables[j]!);
        const overlapX = Math.min(a.right, b.right) - Math.max(a.left, b.left);
        const overlapY = Math.min(a.bottom, b.bottom) - Math.max(a.top, b.top);
        if (overlapX > 2 && overlapY > 2)
          problems.push(`"${name(tables[i]!)}" and "${name(tables[j]!)}" overlap by ${Math.round(overlapX)}×${Math.round(overlapY)} px`);
      }
    }
    for (const table of tables) {
      const box = table.getBoundingClientRect();
      // The nearest ancestor that scrolls or clips; a table wider than a scrolling box is fine (it scrolls).
      for (let el = table.parentElement; el && el.tagName !== 'BODY'; el = el.parentElement) {
        const overflow = w.getComputedStyle(el).overflowX;
        const parentBox = el.getBoundingClientRect();
        if (overflow === 'auto' || overflow === 'scroll') {
          if (el.scrollWidth > el.clientWidth + 2)
            scrolls.push(
              `"${name(table)}" is ${Math.round(box.width)} px wide in a ${Math.round(parentBox.width)} px box: its last columns are out of sight until scrolled sideways`,
            );
          break;
        }
        if (box.right > parentBox.right + 2) {
          problems.push(
            `"${name(table)}" spills ${Math.round(box.right - parentBox.right)} px past its ${el.tagName.toLowerCase()}${overflow === 'hidden' || overflow === 'clip' ? ', which cuts it off' : ''}`,
          );
          break;
        }
      }
    }
    // Chart labels drawn outside their chart's box are cut off by it (an svg clips what lies outside it).
    for (const svg of Array.from(w.document.querySelectorAll('svg[role="img"]'))) {
      const frame = svg.getBoundingClientRect();
      const texts = (svg as unknown as { querySelectorAll(s: string): ArrayLike<El & { textContent: string | null }> }).querySelectorAll('text');
      for (const text of Array.from(texts)) {
        const box = text.getBoundingClientRect();
        if (box.width === 0) continue;
        if (box.left < frame.left - 1 || box.right > frame.right + 1 || box.top < frame.top - 1 || box.bottom > frame.bottom + 1) {
          problems.push(`the label "${text.textContent?.trim()}" of "${svg.getAttribute('aria-label')}" is cut off at the chart's edge`);
        }
      }
    }
    return { broken: problems, scrolls };
  });
}

/** One axe-core rule accepted on the elements a selector matches, and why (kept as narrow as the reason). */
export interface AcceptedViolation {
  rule: string;
  selector: string;
  why: string;
}

/**
 * axe-core's violations on the page as it is now (WCAG 2.0–2.2 A and AA rules and axe's best practices), one line each
 * with the elements hit. axe is evaluated in the page through the DevTools protocol, which the page's CSP does not
 * govern, so nothing is added to the page itself. GraphiQL's own widgets are left out by default (`exclude`): the
 * explorer's test checks them with `exclude: []`. `accepted` drops one rule's hits on the elements a selector matches.
 */
export async function axeViolations(page: Page, exclude: string[] = ['.graphiql-container'], accepted: readonly AcceptedViolation[] = []): Promise<string[]> {
  const axeModule = (await import('axe-core')) as unknown as { source?: string; default?: { source: string } };
  await page.evaluate(axeModule.source ?? axeModule.default!.source);
  const violations = await page.evaluate(
    async ({ excluded, acceptedHits }: { excluded: string[]; acceptedHits: { rule: string; selector: string }[] }) => {
      const w = globalThis as unknown as {
        axe: { run(context: unknown, options: unknown): Promise<{ violations: AxeViolation[] }> };
        document: { querySelector(selector: string): { matches(selector: string): boolean } | null };
      };
      interface AxeViolation {
        id: string;
        impact: string | null;
        help: string;
        nodes: { target: unknown[]; failureSummary?: string }[];
      }
      const isAccepted = (rule: string, target: unknown[]) => {
        // Only a plain selector of this document (not one inside a frame or shadow root) can be checked here.
        if (target.length !== 1 || typeof target[0] !== 'string') return false;
        const element = w.document.querySelector(target[0]);
        return element !== null && acceptedHits.some((a) => a.rule === rule && element.matches(a.selector));
      };
      const result = await w.axe.run(excluded.length > 0 ? { exclude: excluded.map((s) => [s]) } : w.document, {
        runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'wcag22aa', 'best-practice'] },
        resultTypes: ['violations'],
      });
      return result.violations
        .map((v) => ({ ...v, nodes: v.nodes.filter((n) => !isAccepted(v.id, n.target)) }))
        .filter((v) => v.nodes.length > 0)
        .map(
          (v) =>
            `${v.id} (${v.impact ?? '?'}): ${v.help} — ${v.nodes.map((n) => `${JSON.stringify(n.target)} ${n.failureSummary?.replace(/\s+/g, ' ') ?? ''}`).join('; ')}`,
        );
    },
    { excluded: exclude, acceptedHits: accepted.map(({ rule, selector }) => ({ rule, selector })) },
  );
  return violations;
}

/** Fails when axe-core finds any violation on the page (see axeViolations). */
export async function expectNoAxeViolations(page: Page, name: string): Promise<void> {
  const violations = await axeViolations(page);
  if (violations.length > 0)
    throw new Error(`axe-core found ${violations.length} accessibility violation(s) on the ${name} page:\n  ${violations.join('\n  ')}`);
}

/** The page is no wider than the window: nothing makes a phone scroll sideways (tables scroll inside their cards). */
export async function horizontalOverflow(page: Page): Promise<{ scrollWidth: number; innerWidth: number }> {
  return page.evaluate(() => {
    const w = globalThis as unknown as { innerWidth: number; document: { documentElement: { scrollWidth: number } } };
    return { scrollWidth: w.document.documentElement.scrollWidth, innerWidth: w.innerWidth };
  });
}

export const DESKTOP = { width: 1440, height: 900 } as const;
export const PHONE = { width: 390, height: 844 } as const;

/**
 * What every page a console test visits must pass: a screenshot to look at (.linepack/screenshots/<file>.png), no
 * broken layout, no sideways page scroll (a phone's page is no wider than its screen), and no axe-core violation.
 */
export async function checkPage(page: Page, file: string): Promise<void> {
  await shot(page, file);
  await checkLayout(page, file);
  const { scrollWidth, innerWidth } = await horizontalOverflow(page);
  if (scrollWidth > innerWidth) throw new Error(`the ${file} page is ${scrollWidth} px wide in a ${innerWidth} px window: it scrolls sideways`);
  await expectNoAxeViolations(page, file);
}
