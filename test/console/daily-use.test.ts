import { readFileSync } from 'node:fs';
import path from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { importListing } from '@linepack/lib/ili/client';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { graphql, startTestStack, type TestStack } from '../support/stack';
import { checkPage, DESKTOP, inBrowser, launchBrowser, PHONE, shot, until, visible } from './support/browser';
import { newPassword, requireBuiltConsole, seedTenant, signIn, visibleText, type SeededTenant } from './support/console';
import { testTempDir } from '../support/temp-dir';

/**
 * Issue 27's "Done when", in Chromium at 1440×900 and 390×844: an admin adds a viewer, who sets their password with the
 * one-time link the admin hands over and signs in; the new user finds a segment by typing part of its name, opens it
 * on the map, reads its ILI features along its length and exports the dig list as CSV (the file's rows are those the
 * API lists); the admin sees the new user in the audit log. Then the asset browser's filters (regulation, class
 * location, HCA) and sort, and a rectifier's page, which shows its readings rather than pipe fields. Every page is
 * screenshotted (.linepack/screenshots/daily-*), checked by axe-core and for sideways scrolling.
 */
let stack: TestStack;
let browser: Browser;
let tenant: SeededTenant;
let segment: { id: string; name: string };
let featureCount: number;

const SEGMENT = 'Line 100 · MP 12–30 (HCA)';
const sizes = { desktop: DESKTOP, phone: PHONE } as const;
type Size = keyof typeof sizes;

async function api<T>(query: string, variables: Record<string, unknown> = {}): Promise<T> {
  const res = await graphql<T>(stack.gatewayUrl, query, { apiKey: tenant.apiKey, variables });
  if (res.body.errors?.length || !res.body.data) throw new Error(`${query.slice(0, 60)}…: ${JSON.stringify(res.body.errors)}`);
  return res.body.data;
}

const listingDir = testTempDir('console-daily-');

beforeAll(async () => {
  requireBuiltConsole();
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  tenant = await seedTenant(stack, 'daily');
  const found = await api<{ assets: { edges: { node: { id: string; name: string; version: number } }[] } }>(
    '{ assets(filter: { nameContains: "MP 12–30" }) { edges { node { id name version } } } }',
  );
  const node = found.assets.edges[0]!.node;
  segment = { id: node.id, name: node.name };
  // The segment's route on its pipeline's (stations 12–30 km of Line 100's 42), as a GIS export records it (the demo
  // seed locates only the pipeline).
  await api('mutation($id: ID!, $v: Int!, $input: UpdateAssetInput!) { updateAsset(id: $id, version: $v, input: $input) { id } }', {
    id: segment.id,
    v: node.version,
    input: {
      location: {
        type: 'LineString',
        coordinates: [
          [-95.27, 29.8],
          [-95.12, 29.86],
        ],
      },
    },
  });
  // An ILI run of the segment, imported from a vendor listing through the API as the CLI does.
  const rows = generateTwoRunListing({ features: 200, seed: 2027 }).runA.rows;
  const file = path.join(listingDir, 'run.csv');
  await writePofListingCsv(rows, file);
  const result = await importListing({
    gatewayUrl: stack.gatewayUrl,
    apiKey: tenant.apiKey,
    file,
    assetId: segment.id,
    run: { vendor: 'Daily ILI Co.', toolTechnologies: ['MFL'], runDate: '2025-09-01T00:00:00Z' },
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

/** RFC 4180 rows of a CSV file (a quoted field may hold commas, doubled quotes and line breaks; lines end in CRLF). */
function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  const endField = () => {
    row.push(field);
    field = '';
  };
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (quoted && c === '"' && text[i + 1] === '"') {
      field += '"';
      i++;
    } else if (c === '"') quoted = !quoted;
    else if (!quoted && c === ',') endField();
    else if (!quoted && c === '\r' && text[i + 1] === '\n') {
      endField();
      rows.push(row);
      row = [];
      i++;
    } else field += c;
  }
  if (field || row.length) {
    endField();
    rows.push(row);
  }
  return rows;
}

/** The ids of every open dig-list row, as the API pages them. */
async function digListIds(): Promise<string[]> {
  const ids: string[] = [];
  let after: string | null = null;
  for (;;) {
    const page: { digList: { edges: { node: { measurement: { id: string } } }[]; pageInfo: { hasNextPage: boolean; endCursor: string | null } } } = await api(
      'query($after: String) { digList(first: 500, after: $after) { edges { node { measurement { id } } } pageInfo { hasNextPage endCursor } } }',
      { after },
    );
    ids.push(...page.digList.edges.map((e) => e.node.measurement.id));
    if (!page.digList.pageInfo.hasNextPage) return ids;
    after = page.digList.pageInfo.endCursor;
  }
}

/** The admin adds a viewer on the Users page and copies the one-time link the dialog shows. */
async function adminAddsViewer(page: Page, email: string, size: Size): Promise<string> {
  await signIn(page, tenant.admin);
  await page.getByRole('banner').getByRole('link', { name: 'Users', exact: true }).click();
  await visible(page.getByRole('heading', { level: 1, name: 'Users' }), 'the Users page');
  await page.getByRole('button', { name: 'Add user' }).click();
  const add = page.getByRole('dialog', { name: 'Add a user' });
  await add.getByRole('textbox', { name: 'Email' }).fill(email);
  await add.getByRole('radio', { name: 'Viewer' }).check();
  await add.getByRole('button', { name: 'Add user' }).click();
  const added = page.getByRole('dialog', { name: `${email} added` });
  await visible(added.getByRole('textbox', { name: `Password token for ${email}` }), 'the one-time token');
  await checkPage(page, `daily-1-admin-adds-viewer-${size}`);
  const link = /(https?:\/\/\S+\/sign-in\/reset-password#token=\S+)/.exec(await added.innerText())?.[1];
  if (!link) throw new Error(`no reset link in the dialog: ${await added.innerText()}`);
  await added.getByRole('button', { name: 'Done' }).click();
  return link;
}

describe.each(Object.keys(sizes) as Size[])('at %s size', (size) => {
  it('a new user finds a segment by name, opens it on the map, reads its ILI features along its length and exports the dig list; the admin who added them sees it in the audit log', async () => {
    const email = `field-${size}-${stack.dbPrefix}@example.com`.toLowerCase();
    const password = newPassword();
    let link = '';
    await inBrowser(browser, stack.gatewayOrigin, `daily-admin-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      link = await adminAddsViewer(page, email, size);
    });

    await inBrowser(browser, stack.gatewayOrigin, `daily-new-user-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      // Without animations (as a reader who asks for less motion gets it), the map's popup is whole in the screenshot.
      await page.emulateMedia({ reducedMotion: 'reduce' });
      // The new user opens the link they were handed and sets their own password.
      await page.goto(link);
      await visible(page.getByRole('heading', { level: 1, name: 'Set a new password' }), 'the page that sets a password');
      await visible(page.getByText('Filled in from your link.'), 'the token taken from the link');
      await page.getByLabel('New password', { exact: true }).fill(password);
      await page.getByLabel('New password again').fill(password);
      await checkPage(page, `daily-2-new-user-sets-password-${size}`);
      await page.getByRole('button', { name: 'Set password' }).click();
      await page.getByRole('link', { name: 'Sign in with your new password' }).click();
      await signIn(page, { email, password });
      await checkPage(page, `daily-3-dashboard-${size}`);

      // Finds the segment by typing part of its name.
      await page.getByRole('banner').getByRole('link', { name: 'Assets', exact: true }).click();
      await page.getByRole('searchbox', { name: 'Name contains' }).fill('12–30');
      const table = page.getByRole('table', { name: 'Assets' });
      await until(
        () => table.getByRole('row').count(),
        (n) => n === 2,
        'one asset (and the header row) for "12–30"',
      );
      await visible(page.getByText(/^1 of 1 assets$/), '"1 of 1 assets"');
      await checkPage(page, `daily-4-found-${size}`);
      await table.getByRole('link', { name: SEGMENT }).click();
      await visible(page.getByRole('heading', { level: 1, name: SEGMENT }), 'the segment page');

      // Opens it on the map: the map fits it and highlights it.
      await page.getByRole('link', { name: 'Open on map' }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Map' }), 'the map');
      await until(
        () => page.locator(`.asset-map path[data-asset-id="${segment.id}"]`).getAttribute('class'),
        (c) => c?.split(' ').includes('asset-selected') ?? false,
        'the segment drawn and highlighted on the map',
        30_000,
      );
      await visible(page.locator('.leaflet-popup').getByRole('link', { name: SEGMENT }), "the segment's popup");
      await checkPage(page, `daily-5-map-${size}`);

      // Reads its ILI features along its length (back on its page, through the popup's link).
      await page.locator('.leaflet-popup').getByRole('link', { name: SEGMENT }).click();
      await visible(page.getByRole('heading', { level: 1, name: SEGMENT }), 'the segment page again');
      const plot = page.getByRole('img', { name: /^ILI features of the run of Daily ILI Co\./ });
      await visible(plot, 'the along-the-line plot', 30_000);
      expect(await plot.getAttribute('aria-label')).toContain(`${featureCount.toLocaleString('en-US')} features`);
      expect(await visibleText(page)).toContain(`Showing all ${featureCount.toLocaleString('en-US')} of ${featureCount.toLocaleString('en-US')} features`);
      await plot.scrollIntoViewIfNeeded();
      await checkPage(page, `daily-6-along-the-line-${size}`);

      // Exports the dig list as CSV: every row the API lists, once.
      await page.getByRole('banner').getByRole('link', { name: 'Dig list', exact: true }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Dig list' }), 'the dig list');
      const ids = await digListIds();
      expect(ids.length).toBeGreaterThan(0);
      await visible(page.getByText(new RegExp(`^\\d+ of ${ids.length} anomalies$`)), `"N of ${ids.length} anomalies"`);
      await checkPage(page, `daily-7-dig-list-${size}`);
      const download = page.waitForEvent('download');
      await page.getByRole('button', { name: 'Export CSV' }).click();
      const saved = await download;
      expect(saved.suggestedFilename()).toMatch(/\.csv$/);
      const [header, ...rows] = parseCsv(readFileSync((await saved.path())!, 'utf8').replace(/^\ufeff/, ''));
      expect(header!.slice(0, 3)).toEqual(['Measurement id', 'Segment', 'Pipeline']);
      expect(rows.map((r) => r[0]).sort()).toEqual([...ids].sort());
      expect(rows.every((r) => r.length === header!.length)).toBe(true);
      expect(rows.filter((r) => r[1] === SEGMENT).length).toBeGreaterThan(0);
    });

    await inBrowser(browser, stack.gatewayOrigin, `daily-audit-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.admin);
      await page.getByRole('banner').getByRole('link', { name: 'Audit log', exact: true }).click();
      await page.getByRole('combobox', { name: 'Event' }).selectOption({ label: 'User added' });
      const row = page.getByRole('table', { name: 'Audit events, newest first' }).getByRole('row').filter({ hasText: email });
      await visible(row, `"User added" for ${email}`);
      const text = await row.innerText();
      expect(text).toContain('User added');
      expect(text).toContain(tenant.admin.email);
      expect(text).toContain(`added ${email} as VIEWER`);
      await checkPage(page, `daily-8-audit-log-${size}`);
      // And their first steps: the password they set, their sign-in.
      await page.getByRole('combobox', { name: 'Event' }).selectOption({ label: 'Any event' });
      await page
        .getByRole('table', { name: 'Audit events, newest first' })
        .getByRole('button', { name: `Only events by ${email}` })
        .first()
        .click();
      await until(
        () => page.getByRole('table', { name: 'Audit events, newest first' }).innerText(),
        (t) => t.includes('Signed in') && t.includes('Password reset completed'),
        `the new user's sign-in and password set, by ${email}`,
      );
      await shot(page, `daily-9-audit-new-user-${size}`);
    });
  });

  it('filters the asset browser by regulation, class location and HCA and sorts it; a rectifier shows its readings, not pipe fields', async () => {
    await inBrowser(browser, stack.gatewayOrigin, `daily-assets-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.viewer);
      await page.getByRole('banner').getByRole('link', { name: 'Assets', exact: true }).click();
      const table = page.getByRole('table', { name: 'Assets' });
      const names = async () => (await table.getByRole('rowheader').allInnerTexts()).map((t) => t.trim());
      await visible(page.getByText(new RegExp(`^${tenant.totalAssets} of ${tenant.totalAssets} assets$`)), 'every asset');

      await page.getByRole('combobox', { name: 'Class location' }).selectOption({ label: 'Class 3' });
      await until(names, (n) => n.length === 1 && n[0] === SEGMENT, `only ${SEGMENT} in class 3`);
      await page.getByRole('combobox', { name: 'Class location' }).selectOption({ label: 'Any class' });
      await page.getByRole('combobox', { name: 'Regulation' }).selectOption({ label: '49 CFR 192' });
      await page.getByRole('combobox', { name: 'Type' }).selectOption({ label: 'Segment' });
      await page.getByRole('combobox', { name: 'High consequence area' }).selectOption({ label: 'Outside HCAs' });
      await until(names, (n) => n.length === 2 && !n.includes(SEGMENT), 'the two segments outside HCAs');
      await page.getByRole('combobox', { name: 'High consequence area' }).selectOption({ label: 'In or outside' });
      await page.getByRole('combobox', { name: 'Sort by' }).selectOption({ label: 'Class location, 4 to 1' });
      await until(names, (n) => n.length === 3 && n[0] === SEGMENT, 'the class 3 segment first');
      expect(await names()).toEqual([SEGMENT, 'Line 100 · MP 30–42', 'Line 100 · MP 0–12']);
      const address = new URL(page.url()).searchParams;
      expect(Object.fromEntries(address)).toEqual({ type: 'SEGMENT', regulation: 'CFR_192', sort: 'CLASS_LOCATION:DESC' });
      await checkPage(page, `daily-assets-filtered-${size}`);
      // The address keeps the view: a reload shows the same list.
      await page.reload();
      await until(names, (n) => n.join('|') === [SEGMENT, 'Line 100 · MP 30–42', 'Line 100 · MP 0–12'].join('|'), 'the same order after a reload');
      await page.getByRole('combobox', { name: 'Sort by' }).selectOption({ label: 'Name, Z to A' });
      await until(names, (n) => n.join('|') === ['Line 100 · MP 30–42', SEGMENT, 'Line 100 · MP 0–12'].join('|'), 'names Z to A');

      // A rectifier: what it is part of and its readings; no diameter, wall, SMYS or MAOP.
      await page.goto('/assets?q=RECT');
      await table.getByRole('link', { name: 'RECT-07' }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'RECT-07' }), "the rectifier's page");
      const details = page.getByRole('region', { name: 'Asset details' });
      const facts = await details.innerText();
      expect(facts).toContain('Part of');
      expect(facts).toContain('Line 100 · MP 0–12');
      for (const pipeField of ['Outside diameter', 'Wall thickness', 'SMYS', 'MAOP', 'Class location', 'Product']) expect(facts).not.toContain(pipeField);
      await visible(page.getByRole('table', { name: /Rectifier output readings/ }), "the rectifier's readings");
      expect(await page.getByRole('heading', { name: 'Along the line' }).count()).toBe(0);
      await checkPage(page, `daily-rectifier-${size}`);
    });
  });
});
