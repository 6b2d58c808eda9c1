import type { Browser, Page } from 'playwright-core';
import { startTestStack, type TestStack } from '../support/stack';
import { checkLayout, DESKTOP, expectNoAxeViolations, gone, horizontalOverflow, inBrowser, launchBrowser, PHONE, shot, visible } from './support/browser';
import { requireBuiltConsole, seedTenant, signIn, type SeededTenant } from './support/console';

/**
 * The console's own pages that no other browser test walks at both sizes (issue 27 item 6), at 1440×900 and 390×844:
 * sign-in, the dashboard, Settings › API Keys with its dialogs, and "Page not found" signed in and signed out. On
 * every one: axe-core finds nothing, the layout holds (no sideways page scroll on a phone), every page the browser
 * loads carries the console's Content-Security-Policy, and no request leaves the console's origin (all of them are
 * recorded). Screenshots: .linepack/screenshots/pages-*.png.
 */
let stack: TestStack;
let browser: Browser;
let tenant: SeededTenant;

const sizes = { desktop: DESKTOP, phone: PHONE } as const;

/** The page policy as the README states it (no map tile server configured). */
const CONSOLE_CSP = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data: blob:",
  "font-src 'self' data:",
  "connect-src 'self'",
  "worker-src 'self' blob:",
  "frame-ancestors 'none'",
  "base-uri 'self'",
  "form-action 'self'",
  "object-src 'none'",
].join('; ');

beforeAll(async () => {
  requireBuiltConsole();
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  tenant = await seedTenant(stack, 'pages');
  browser = await launchBrowser();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Every request the page makes, and the policy of every document it loads. */
function record(page: Page): { requests: string[]; documents: { url: string; status: number; csp: string | undefined }[] } {
  const seen = { requests: [] as string[], documents: [] as { url: string; status: number; csp: string | undefined }[] };
  page.on('request', (req) => seen.requests.push(req.url()));
  page.on('response', (res) => {
    if (res.request().resourceType() === 'document')
      seen.documents.push({ url: res.url(), status: res.status(), csp: res.headers()['content-security-policy'] });
  });
  return seen;
}

/** The checks every page here must pass. */
async function checkPage(page: Page, name: string): Promise<void> {
  await shot(page, `pages-${name}`);
  await checkLayout(page, `pages-${name}`);
  const { scrollWidth, innerWidth } = await horizontalOverflow(page);
  expect({ page: name, scrollWidth: Math.min(scrollWidth, innerWidth + 1) }).toEqual({ page: name, scrollWidth: Math.min(scrollWidth, innerWidth) });
  await expectNoAxeViolations(page, `pages-${name}`);
}

function expectOwnOriginOnly(seen: ReturnType<typeof record>): void {
  const foreign = seen.requests.filter((u) => /^(https?|wss?):/.test(u) && new URL(u).origin !== stack.gatewayOrigin);
  expect(foreign).toEqual([]);
  expect(seen.documents.length).toBeGreaterThan(0);
  for (const document of seen.documents) expect({ url: document.url, csp: document.csp }).toEqual({ url: document.url, csp: CONSOLE_CSP });
}

describe.each(Object.keys(sizes) as (keyof typeof sizes)[])('at %s size', (size) => {
  it('signs in and shows the dashboard, both without an axe-core violation, within the page policy', async () => {
    await inBrowser(browser, stack.gatewayOrigin, `pages-sign-in-${size}`, async ({ page }) => {
      const seen = record(page);
      await page.setViewportSize(sizes[size]);
      await page.goto('/');
      await visible(page.getByRole('heading', { level: 1, name: 'Sign in to Linepack' }), 'the sign-in page');
      await checkPage(page, `sign-in-${size}`);

      // A failed attempt: the error is announced and the page stays accessible.
      await page.getByLabel('Email').fill(tenant.viewer.email);
      await page.getByLabel('Password', { exact: true }).fill('not-the-password-at-all');
      await page.getByRole('button', { name: 'Sign in' }).click();
      await visible(page.getByRole('alert').filter({ hasText: /email or password/i }), 'the wrong-password alert');
      await checkPage(page, `sign-in-error-${size}`);

      await signIn(page, tenant.viewer);
      await visible(page.getByRole('table', { name: /^Due in the next 30 days/ }), 'the whole dashboard (its last section)');
      await checkPage(page, `dashboard-${size}`);
      expectOwnOriginOnly(seen);
    });
  });

  it('shows Settings › API Keys, its create dialog, the new secret and the revoke confirmation without an axe-core violation', async () => {
    await inBrowser(browser, stack.gatewayOrigin, `pages-api-keys-${size}`, async ({ page }) => {
      const seen = record(page);
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.admin);
      await page.goto('/settings/api-keys');
      await visible(page.getByRole('table', { name: 'API keys' }), 'the API keys table');
      await checkPage(page, `api-keys-${size}`);

      await page.getByRole('button', { name: 'Create API Key' }).click();
      const dialog = page.getByRole('dialog', { name: 'Create API Key' });
      await visible(dialog, 'the "Create API Key" dialog');
      await checkPage(page, `api-key-create-${size}`);
      const keyName = `Pages ${size} ${Date.now()}`;
      await dialog.getByRole('textbox', { name: 'Name' }).fill(keyName);
      await dialog.getByRole('checkbox', { name: 'assets:read', exact: true }).check();
      await dialog.getByRole('button', { name: 'Create', exact: true }).click();
      await visible(page.getByRole('textbox', { name: 'New API key secret' }), 'the new secret');
      await checkPage(page, `api-key-secret-${size}`);
      await page.getByRole('button', { name: 'Done' }).click();

      await page
        .getByRole('table', { name: 'API keys' })
        .getByRole('button', { name: `Revoke ${keyName}` })
        .click();
      const confirm = page.getByRole('alertdialog');
      await visible(confirm, 'the revoke confirmation');
      await checkPage(page, `api-key-revoke-${size}`);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await gone(confirm, 'the revoke confirmation after Cancel');
      expectOwnOriginOnly(seen);
    });
  });

  it('answers an unknown address with "Page not found" and HTTP 404, signed in or not', async () => {
    await inBrowser(browser, stack.gatewayOrigin, `pages-404-${size}`, async ({ page }) => {
      const seen = record(page);
      await page.setViewportSize(sizes[size]);
      // Signed out: the page itself, with a way to sign in (not a detour through the sign-in form).
      const signedOut = await page.goto('/no/such/page?x=1');
      expect(signedOut?.status()).toBe(404);
      expect(signedOut?.headers()['content-type']).toMatch(/^text\/html/);
      await visible(page.getByRole('heading', { level: 1, name: 'Page not found' }), '"Page not found" signed out');
      expect(new URL(page.url()).pathname).toBe('/no/such/page');
      await visible(page.getByRole('main').getByRole('link', { name: 'Sign in' }), 'the way to sign in');
      await checkPage(page, `404-signed-out-${size}`);

      await signIn(page, tenant.viewer);
      const signedIn = await page.goto('/nowhere');
      expect(signedIn?.status()).toBe(404);
      await visible(page.getByRole('heading', { level: 1, name: 'Page not found' }), '"Page not found" signed in');
      await visible(page.getByRole('main').getByRole('link', { name: 'Back to the dashboard' }), 'the way back');
      await checkPage(page, `404-signed-in-${size}`);
      expectOwnOriginOnly(seen);
    });
  });
});

it('answers a missing script or stylesheet with a plain 404 problem, never a page in its place', async () => {
  for (const file of ['/assets/index-missing0.js', '/assets/index-missing0.css', '/assets/index-missing0.js.br']) {
    const res = await fetch(`${stack.gatewayOrigin}${file}`, { headers: { accept: '*/*', 'accept-encoding': 'br, gzip' } });
    expect({ file, status: res.status, type: res.headers.get('content-type') }).toEqual({ file, status: 404, type: 'application/problem+json; charset=utf-8' });
    expect(await res.json()).toMatchObject({ status: 404, code: 'NOT_FOUND' });
  }
  // An asset page is still a page.
  const page = await fetch(`${stack.gatewayOrigin}/assets/0b7f6c2e-0000-4000-8000-000000000000`, { headers: { accept: 'text/html' } });
  expect(page.status).toBe(200);
  expect(page.headers.get('content-type')).toMatch(/^text\/html/);
});
