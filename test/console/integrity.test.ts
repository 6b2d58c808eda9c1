import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { importListing } from '@linepack/lib/ili/client';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { graphql, startTestStack, type TestStack } from '../support/stack';
import { checkLayout, DESKTOP, expectNoAxeViolations, horizontalOverflow, inBrowser, launchBrowser, PHONE, shot, until, visible } from './support/browser';
import { requireBuiltConsole, seedTenant, signIn, visibleText, watchOperations, type SeededTenant } from './support/console';
import { testTempDir } from '../support/temp-dir';

/**
 * The console as an integrity team's daily tool (issue 27), in Chromium at 1440×900 and 390×844: the asset browser
 * (search by name, filters, server-side paging, the hierarchy), an ILI run read along the line, the dig list with its
 * CSV export, a printable dig sheet, and the 404 page. Every page is screenshotted (.linepack/screenshots/issue27-*),
 * checked by axe-core (any violation fails) and, on a phone, for sideways page scrolling.
 */
let stack: TestStack;
let browser: Browser;
let tenant: SeededTenant;
let segmentId: string;
let featureCount: number;
let weldCount: number;

const HCA_SEGMENT = 'Line 100 · MP 12–30 (HCA)';
const sizes = { desktop: DESKTOP, phone: PHONE } as const;

const listingDir = testTempDir('console-ili-');

beforeAll(async () => {
  requireBuiltConsole();
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  tenant = await seedTenant(stack, 'integrity');
  const found = await graphql<{ assets: { edges: { node: { id: string } }[] } }>(
    stack.gatewayUrl,
    `
      {
        assets(filter: { nameContains: "MP 12–30" }) {
          edges {
            node {
              id
            }
          }
        }
      }
    `,
    { apiKey: tenant.apiKey },
  );
  segmentId = found.body.data!.assets.edges[0]!.node.id;
  // A generated vendor listing (girth welds every ~12 m, markers, features) imported through the API, as the CLI does.
  const rows = generateTwoRunListing({ features: 300, seed: 27 }).runA.rows;
  // The demo pipe is within its design pressure (heavy wall in class 3), so the generator's mostly shallow corrosion needs
  // no response there: one of its features is made deep and long enough to need one (70 % of wall over 250 mm is a
  // failure pressure ratio of about 1.15, a one-year condition under §192.933(d)(2)), so the dig list has an imported call.
  const deep = rows.find((r) => r.kind === 'METAL_LOSS' && !r.comment?.startsWith('COCL-'))!;
  deep.depthPctWt = 70;
  deep.lengthMm = 250;
  featureCount = rows.filter(
    (r) => !['GIRTH_WELD', 'VALVE', 'TEE', 'BEND', 'FLANGE', 'WALL_THICKNESS_CHANGE', 'REFERENCE_MARKER', 'OTHER_TALLY'].includes(r.kind),
  ).length;
  weldCount = rows.filter((r) => r.kind === 'GIRTH_WELD').length;
  const file = path.join(listingDir, 'run.csv');
  await writePofListingCsv(rows, file);
  const result = await importListing({
    gatewayUrl: stack.gatewayUrl,
    apiKey: tenant.apiKey,
    file,
    assetId: segmentId,
    run: { vendor: 'Synthetic ILI Co.', toolTechnologies: ['MFL'], runDate: '2025-09-01T00:00:00Z' },
    pollMs: 100,
  });
  if (result.state !== 'SUCCEEDED') throw new Error(`the ILI import failed: ${result.failure} ${JSON.stringify(result.errors.slice(0, 3))}`);
  featureCount = result.counts.features;
  browser = await launchBrowser();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Screenshot, layout, no sideways page scroll on a phone, and axe-core: what every page visited here must pass. */
async function checkPage(page: Page, name: string, size: keyof typeof sizes): Promise<void> {
  const file = `issue27-${name}-${size}`;
  await shot(page, file);
  await checkLayout(page, file);
  const { scrollWidth, innerWidth } = await horizontalOverflow(page);
  expect({ page: file, scrollWidth: Math.min(scrollWidth, innerWidth + 1) }).toEqual({ page: file, scrollWidth: Math.min(scrollWidth, innerWidth) });
  await expectNoAxeViolations(page, file);
}

describe.each(Object.keys(sizes) as (keyof typeof sizes)[])('at %s size', (size) => {
  it("finds a segment by typing part of its name, lists a pipeline's children, and reads an ILI run along the line", async () => {
    await inBrowser(browser, stack.gatewayOrigin, `issue27-assets-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.viewer);
      await checkPage(page, 'dashboard', size);

      await page.getByRole('banner').getByRole('link', { name: 'Assets', exact: true }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Assets' }), 'the Assets page');
      const table = page.getByRole('table', { name: 'Assets' });
      // Every asset is reachable: "N of M" with M the tenant's total.
      await visible(page.getByText(new RegExp(`^\\d+ of ${tenant.totalAssets} assets$`)), `"N of ${tenant.totalAssets} assets"`);
      await checkPage(page, 'assets', size);

      await page.getByRole('searchbox', { name: 'Name contains' }).fill('12–30');
      await until(
        () => table.getByRole('row').count(),
        (n) => n === 2,
        'one row (plus the header) for "12–30"',
      );
      expect(await visibleText(page)).toContain('1 of 1 assets');
      expect(page.url()).toContain('q=12');
      await shot(page, `issue27-assets-search-${size}`);

      // The type filter: only pipelines.
      await page.getByRole('searchbox', { name: 'Name contains' }).fill('');
      await page.getByRole('combobox', { name: 'Type' }).selectOption('PIPELINE');
      await visible(page.getByText(/^1 of 1 assets$/), '"1 of 1 assets" for pipelines');
      await table.getByRole('link', { name: 'Line 100', exact: true }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Line 100' }), 'the pipeline page');
      const children = page.getByRole('table', { name: 'Assets below this one' });
      await visible(children.getByRole('link', { name: HCA_SEGMENT }), "the HCA segment among the pipeline's children");
      expect(await visibleText(page)).toMatch(/\b3 of 3 assets\b/); // its three segments
      await checkPage(page, 'pipeline', size);

      const operations = watchOperations(page);
      await children.getByRole('link', { name: HCA_SEGMENT }).click();
      await visible(page.getByRole('heading', { level: 1, name: HCA_SEGMENT }), 'the segment page');
      await visible(page.getByRole('heading', { name: 'Along the line' }), 'the "Along the line" section');
      const plot = page.getByRole('img', { name: /^ILI features of the run of Synthetic ILI Co\./ });
      await visible(plot, 'the along-the-line plot', 30_000);
      const label = (await plot.getAttribute('aria-label'))!;
      expect(label).toContain(`${featureCount.toLocaleString('en-US')} features`);
      expect(label).toContain(`${weldCount.toLocaleString('en-US')} girth welds`);
      expect(await visibleText(page)).toContain(`Showing all ${featureCount.toLocaleString('en-US')} of ${featureCount.toLocaleString('en-US')} features`);
      // Only the chosen run's features are read (by its runId), the imported run being the newest.
      const runs = await graphql<{ asset: { iliRuns: { id: string }[] } }>(stack.gatewayUrl, 'query($id: ID!) { asset(id: $id) { iliRuns { id } } }', {
        apiKey: tenant.apiKey,
        variables: { id: segmentId },
      });
      const importedRun = runs.body.data!.asset.iliRuns[0]!.id;
      expect(new Set((operations.get('ConsoleIliFeatures') ?? []).map((v) => v['run']))).toEqual(new Set([importedRun]));
      // The canvas has been drawn on (ECharts paints points, welds and axes): not an empty box.
      const inked = () =>
        page.evaluate(() => {
          const d = globalThis as unknown as {
            document: {
              querySelector(s: string): {
                width: number;
                height: number;
                getContext(k: string): { getImageData(x: number, y: number, w: number, h: number): { data: Uint8ClampedArray } };
              } | null;
            };
          };
          const canvas = d.document.querySelector('.echart canvas');
          if (!canvas) return 0;
          const data = canvas.getContext('2d').getImageData(0, 0, canvas.width, canvas.height).data;
          let inked = 0;
          for (let i = 3; i < data.length; i += 4) if (data[i]! > 0) inked++;
          return inked;
        });
      await until(inked, (n) => n > 1000, "the plot's canvas to be drawn on (over 1,000 painted pixels)");
      await plot.scrollIntoViewIfNeeded();
      await checkPage(page, 'segment', size);
      // Paged anomalies: "N of M", never "the 100 most urgent"; open ones by default, the history on request.
      await visible(page.getByText(/^\d+ of \d+ anomalies$/), 'the anomalies\' "N of M"');
      await visible(page.getByRole('table', { name: /^Open anomalies, most urgent first/ }), 'the open anomalies table');
      await page.getByRole('checkbox', { name: /^Include history/ }).check();
      const history = page.getByRole('table', { name: /^Anomalies, most urgent first/ });
      await visible(history.getByRole('columnheader', { name: 'Status' }), 'the Status column of the anomaly history');
      await visible(history.getByText('Open').first(), 'an OPEN status in the history');
      await history.scrollIntoViewIfNeeded();
      await checkPage(page, 'segment-history', size);
    });
  }, 180_000);

  it('works the dig list: filters, overdue flagged, CSV export of every row, a printable dig sheet', async () => {
    await inBrowser(browser, stack.gatewayOrigin, `issue27-digs-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.viewer);
      await page.getByRole('banner').getByRole('link', { name: 'Dig list', exact: true }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Dig list' }), 'the Dig list page');
      const answer = await graphql<{ digList: { totalCount: number } }>(stack.gatewayUrl, '{ digList(first: 1) { totalCount } }', { apiKey: tenant.apiKey });
      const total = answer.body.data?.digList.totalCount;
      if (total === undefined) throw new Error(`digList is not served: ${JSON.stringify(answer.body.errors)}`);
      await visible(page.getByText(new RegExp(`^\\d+ of ${total} anomalies$`)), `"N of ${total} anomalies"`);
      await checkPage(page, 'dig-list', size);

      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Export CSV' }).click();
      const file = await (await download).path();
      const csv = readFileSync(file, 'utf8');
      const lines = csv
        .replace(/^\ufeff/, '')
        .trimEnd()
        .split('\r\n');
      expect(lines[0]).toMatch(/^Measurement id,Segment,Pipeline,In HCA,Log distance \(m\),Clock,/);
      expect(lines.length - 1).toBe(total);

      if (total > 0) {
        await page
          .getByRole('link', { name: /^Dig sheet for the anomaly at/ })
          .first()
          .click();
        await visible(page.getByRole('heading', { level: 1, name: /^Dig sheet: / }), 'the dig sheet');
        await visible(page.getByRole('table', { name: 'Where to dig, what to expect, by when' }), 'the dig sheet table');
        expect(await visibleText(page)).toMatch(/Repair due/);
        await checkPage(page, 'dig-sheet', size);
        await page.emulateMedia({ media: 'print' });
        expect(await page.getByRole('banner').isVisible()).toBe(false);
        await shot(page, `issue27-dig-sheet-print-${size}`);
        await page.emulateMedia({ media: 'screen' });

        // An anomaly of the imported run: the crew's references from its pipe tally (girth welds either side, joint).
        const listed = await graphql<{ digList: { edges: { node: { measurement: { id: string; iliLocation: { jointNumber: number | null } | null } } }[] } }>(
          stack.gatewayUrl,
          '{ digList(first: 500) { edges { node { measurement { id iliLocation { jointNumber } } } } } }',
          { apiKey: tenant.apiKey },
        );
        const imported = listed.body.data!.digList.edges.find((e) => e.node.measurement.iliLocation !== null);
        expect(imported).toBeDefined();
        await page.goto(`/digs/${imported!.node.measurement.id}`);
        const sheet = page.getByRole('table', { name: 'Where to dig, what to expect, by when' });
        await visible(sheet, 'the dig sheet of an imported anomaly');
        const text = await sheet.innerText();
        expect(text).toMatch(/Upstream girth weld\s+[\d.,]+ m upstream \(girth weld of joint \d+/);
        expect(text).toMatch(/Downstream girth weld\s+[\d.,]+ m downstream/);
        expect(text).toMatch(new RegExp(`Joint\\s+${imported!.node.measurement.iliLocation!.jointNumber}\\b`));
        await checkPage(page, 'dig-sheet-imported', size);
      }
    });
  });

  it("answers an unknown address with the console's 404 page", async () => {
    await inBrowser(browser, stack.gatewayOrigin, `issue27-404-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.viewer);
      const answer = await page.goto('/nowhere');
      expect(answer?.status()).toBe(404);
      await visible(page.getByRole('heading', { level: 1, name: 'Page not found' }), 'the 404 page');
      await visible(page.getByRole('button', { name: 'Sign out' }), 'Sign out on the 404 page');
      await checkPage(page, '404', size);
    });
  });
});
