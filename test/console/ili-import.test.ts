import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { POF_DEFAULT_PROFILE, TALLY_KINDS } from '@linepack/lib/ili/listing';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { graphql, startTestStack, type TestStack } from '../support/stack';
import { checkLayout, DESKTOP, expectNoAxeViolations, horizontalOverflow, inBrowser, launchBrowser, PHONE, shot, visible } from './support/browser';
import { requireBuiltConsole, seedTenant, signIn, visibleText, type SeededTenant } from './support/console';
import { testTempDir } from '../support/temp-dir';

/**
 * An ILI listing imported from the console (issue 25 item 1: "upload → mapping preview → progress → report"), in
 * Chromium at 1440×900 and 390×844: a generated POF listing chosen in the page, uploaded in parts, previewed (mapped
 * columns, first rows), imported and reported with a link to the run along the line; and a listing with 3 bad rows
 * reported with its 3 row/column messages and "nothing was stored". Screenshots in .linepack/screenshots/issue25-*,
 * axe-core on every step (any violation fails).
 */
let stack: TestStack;
let browser: Browser;
let tenant: SeededTenant;
let segmentId: string;
const dir = testTempDir('console-ili-import-');
const rows = generateTwoRunListing({ features: 40, seed: 25 }).runA.rows;
const features = rows.filter((r) => !TALLY_KINDS.has(r.kind)).length;
const goodFile = path.join(dir, 'vendor-listing.csv');
const badFile = path.join(dir, 'vendor-listing-3-bad.csv');
const BAD_ROWS = [5, 40, 60];
const sizes = { desktop: DESKTOP, phone: PHONE } as const;

beforeAll(async () => {
  requireBuiltConsole();
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  tenant = await seedTenant(stack, 'ili-import');
  const found = await graphql<{ assets: { edges: { node: { id: string } }[] } }>(
    stack.gatewayUrl,
    '{ assets(filter: { nameContains: "MP 12–30" }) { edges { node { id } } } }',
    {
      apiKey: tenant.apiKey,
    },
  );
  segmentId = found.body.data!.assets.edges[0]!.node.id;
  await writePofListingCsv(rows, goodFile);
  // Rows 5, 40 and 60 of the file (header = row 1) get a log distance that is no number.
  const lines = readFileSync(goodFile, 'utf8').split('\r\n');
  const distance = lines[0]!.split(',').indexOf(POF_DEFAULT_PROFILE.columns.logDistance);
  for (const row of BAD_ROWS) {
    const cells = lines[row - 1]!.split(',');
    cells[distance] = 'twelve';
    lines[row - 1] = cells.join(',');
  }
  writeFileSync(badFile, lines.join('\r\n'));
  browser = await launchBrowser();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

async function checkPage(page: Page, name: string, size: keyof typeof sizes): Promise<void> {
  const file = `issue25-${name}-${size}`;
  await shot(page, file);
  await checkLayout(page, file);
  const { scrollWidth, innerWidth } = await horizontalOverflow(page);
  expect({ page: file, scrollWidth: Math.min(scrollWidth, innerWidth + 1) }).toEqual({ page: file, scrollWidth: Math.min(scrollWidth, innerWidth) });
  await expectNoAxeViolations(page, file);
}

/** From the segment's page to the preview of `file`: the link, the form, the upload. */
async function uploadAndPreview(page: Page, file: string, runDate: string, size: keyof typeof sizes, name: string): Promise<void> {
  await page.goto(`/assets/${segmentId}`);
  await page.getByRole('link', { name: 'Import an ILI listing' }).click();
  await visible(page.getByRole('heading', { level: 1, name: 'Import ILI listing' }), 'the import page');
  await page.getByLabel('Listing file (CSV or XLSX)').setInputFiles(file);
  await page.getByLabel('Vendor').fill('Synthetic ILI Co.');
  await page.getByLabel('CALIPER').check();
  await page.getByLabel('Run date').fill(runDate);
  if (name === 'good') await checkPage(page, 'form', size);
  await page.getByRole('button', { name: 'Upload and preview' }).click();
  await visible(page.getByRole('heading', { name: 'Preview' }), 'the preview', 30_000);
  await visible(page.getByRole('table', { name: 'Mapped columns' }), 'the mapped columns');
  await checkPage(page, `preview-${name}`, size);
}

describe.each(Object.keys(sizes) as (keyof typeof sizes)[])('at %s size', (size) => {
  const day = size === 'desktop' ? '01' : '02';

  it('imports a listing through upload, preview and progress, and reports what was stored', async () => {
    await inBrowser(browser, stack.gatewayOrigin, `issue25-ili-import-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.admin);
      await uploadAndPreview(page, goodFile, `2025-10-${day}`, size, 'good');
      const previewRows = page.getByRole('table', { name: 'First rows as they will be read' }).getByRole('row');
      expect(await previewRows.count()).toBe(1 + 20);
      expect(await page.getByRole('table', { name: 'Mapped columns' }).innerText()).not.toContain('Missing');
      await page.getByRole('button', { name: 'Start import' }).click();
      await visible(page.getByRole('heading', { name: 'Imported' }), 'the report of a finished import', 60_000);
      expect(await visibleText(page)).toContain(`${rows.length} rows read: ${features} features and ${rows.length - features} tally items stored.`);
      await checkPage(page, 'report', size);
      await page.getByRole('link', { name: 'See the run along the line' }).click();
      await visible(page.getByRole('heading', { name: 'Along the line' }), "the segment's along-the-line view");
    });
  });

  it('reports every rejected row of a listing with 3 bad rows, and that nothing was stored', async () => {
    await inBrowser(browser, stack.gatewayOrigin, `issue25-ili-import-bad-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.admin);
      await uploadAndPreview(page, badFile, `2025-11-${day}`, size, 'bad');
      // Row 5 is among the 20 rows previewed, so the preview already names it.
      const problems = page.getByRole('table', { name: /^Problems in the first rows/ });
      expect(await problems.innerText()).toContain(POF_DEFAULT_PROFILE.columns.logDistance);
      await page.getByRole('button', { name: 'Start import' }).click();
      await visible(page.getByRole('heading', { name: 'Not imported' }), 'the report of a refused import', 60_000);
      expect(await visibleText(page)).toMatch(/3 values were rejected in 3 rows; nothing was stored/);
      const report = page.getByRole('table', { name: '3 rejected values' });
      const reported = await report
        .getByRole('row')
        .evaluateAll((trs) => trs.slice(1).map((tr) => [...tr.querySelectorAll('td')].slice(0, 2).map((td) => td.textContent)));
      expect(reported).toEqual(BAD_ROWS.map((row) => [String(row), POF_DEFAULT_PROFILE.columns.logDistance]));
      await checkPage(page, 'report-rejected', size);
    });
  });
});
