import type { Browser, Page, Request } from 'playwright-core';
import { graphql, startTestStack, type TestStack } from '../support/stack';
import { checkLayout, gone, inBrowser, launchBrowser, scriptReadableState, shot, until, visible, type PageGlobals } from './support/browser';
import { loginJson, newPassword, requireBuiltConsole, seedTenant, signIn, visibleText, type SeededTenant } from './support/console';

/**
 * The web console in a real browser (Debian's Chromium, headless), against the whole stack on free ports: signing in,
 * the dashboard and an asset page, Settings › API Keys (a secret shown once, then usable from a script, then
 * revoked), a viewer's limits, the explorer, keyboard use and errors in words. Every page visited is saved in
 * .linepack/screenshots.
 */
let stack: TestStack;
let browser: Browser;
let tenant: SeededTenant;

beforeAll(async () => {
  requireBuiltConsole();
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  tenant = await seedTenant(stack, 'main');
  browser = await launchBrowser();
}, 90_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

const HCA_SEGMENT = 'Line 100 · MP 12–30 (HCA)';

it('signs in with email and password, shows the pipeline at a glance and an asset page', async () => {
  await inBrowser(browser, stack.gatewayOrigin, 'dashboard', async ({ page }) => {
    await page.goto('/');
    await visible(page.getByRole('heading', { name: 'Sign in to Linepack' }), 'the sign-in page');
    await shot(page, 'sign-in');
    await signIn(page, tenant.admin);

    const header = page.getByRole('banner');
    await visible(page.getByRole('combobox', { name: 'Tenant' }), 'the "Tenant" select');
    for (const link of ['Pipeline', 'Assets', 'Dig list', 'Explorer', 'API Keys'])
      await visible(header.getByRole('link', { name: link, exact: true }), `the header link "${link}"`);
    await visible(page.getByRole('button', { name: 'Sign out' }), 'the "Sign out" button');

    const risk = page.getByRole('table', { name: 'Risk register' });
    const due = page.getByRole('table', { name: /^Overdue \(days in / });
    await visible(risk.getByRole('link', { name: HCA_SEGMENT }), `the HCA segment in the risk register`);
    await visible(due.getByRole('row').nth(1), 'a row in "Overdue"');
    // The tenant's total is on the page, as the API counts it.
    expect(await visibleText(page)).toContain(String(tenant.totalAssets));
    expect(await page.getByRole('combobox', { name: 'Tenant' }).locator('option:checked').innerText()).toContain(`Console main ${stack.dbPrefix}`);
    await shot(page, 'dashboard');
    await checkLayout(page, 'dashboard');

    await risk.getByRole('link', { name: HCA_SEGMENT }).click();
    await visible(page.getByRole('heading', { level: 1, name: HCA_SEGMENT }), 'the asset page (h1 = asset name)');
    expect(page.url()).toMatch(/\/assets\/[0-9a-f-]{36}$/);
    await visible(page.getByRole('heading', { name: 'Measurements' }), 'the "Measurements" heading');
    // ILI features are read along the line (by log distance), not against their run date.
    await visible(page.getByRole('combobox', { name: 'ILI run' }), 'the "ILI run" select');
    await visible(page.getByRole('img', { name: /^ILI features of the run of .* by log distance: \d+ features/ }), 'the along-the-line plot');
    const anomalies = page.getByRole('table', { name: 'Anomalies' });
    await visible(anomalies, 'the "Anomalies" table');
    // The seeded 2025 ILI run found three anomalies on this segment (plus two in 2019).
    expect(await anomalies.getByRole('row').count()).toBeGreaterThanOrEqual(4);
    await shot(page, 'asset');
    await checkLayout(page, 'asset');
  });
});

it('creates an API key whose secret is shown once, works from a script, and stops working when revoked', async () => {
  const keyName = `Console key ${Date.now()}`;
  await inBrowser(browser, stack.gatewayOrigin, 'api-keys', async ({ page }) => {
    await signIn(page, tenant.admin);
    await page.getByRole('banner').getByRole('link', { name: 'API Keys', exact: true }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'API Keys' }), 'the API Keys page');
    const table = page.getByRole('table', { name: 'API keys' });
    await visible(table, 'the "API keys" table');
    const headers = (await table.getByRole('columnheader').allInnerTexts()).map((t) => t.trim());
    expect(headers).toEqual(expect.arrayContaining(['Name', 'Prefix', 'Scopes', 'Tier', 'Created', 'Last used', 'Expires', 'Status']));
    await shot(page, 'api-keys');
    await checkLayout(page, 'api-keys');

    await page.getByRole('button', { name: 'Create API Key' }).click();
    const dialog = page.getByRole('dialog', { name: 'Create API Key' });
    await visible(dialog, 'the "Create API Key" dialog');
    await dialog.getByRole('textbox', { name: 'Name' }).fill(keyName);
    await dialog.getByRole('checkbox', { name: 'assets:read', exact: true }).check();
    await dialog.getByRole('checkbox', { name: 'measurements:read', exact: true }).check();
    await dialog.getByRole('combobox', { name: 'Tier' }).selectOption('FREE');
    await visible(dialog.getByLabel('Expires in days'), 'the "Expires in days" input');
    await shot(page, 'api-key-create-dialog');
    await dialog.getByRole('button', { name: 'Create', exact: true }).click();

    await visible(page.getByRole('heading', { name: 'Your new API key' }), 'the "Your new API key" heading');
    const secretBox = page.getByRole('textbox', { name: 'New API key secret' });
    const secret = await secretBox.inputValue();
    expect(secret).toMatch(/^lpk_[A-Za-z0-9]{40}$/);
    expect(await secretBox.isEditable()).toBe(false); // readonly
    await visible(page.getByText(/will not be shown again/), 'the "will not be shown again" warning');
    // Copied once, as a person would: the clipboard holds the secret.
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: stack.gatewayOrigin });
    await page.getByRole('button', { name: 'Copy' }).click();
    await visible(page.getByRole('button', { name: 'Copied' }), 'the "Copy" button saying "Copied"');
    const copied = await page.evaluate(() =>
      (globalThis as unknown as { navigator: { clipboard: { readText(): Promise<string> } } }).navigator.clipboard.readText(),
    );
    expect(copied).toBe(secret);
    await shot(page, 'api-key-secret');
    const stored = await stack.authStore.findApiKeyBySecret(secret);
    expect(stored).toMatchObject({ name: keyName, tenantId: tenant.tenantId, scopes: ['assets:read', 'measurements:read'], tier: 'FREE' });

    await page.getByRole('button', { name: 'Done' }).click();
    await gone(page.getByRole('textbox', { name: 'New API key secret' }), 'the secret after "Done"');
    await page.reload();
    await visible(page.getByRole('heading', { level: 1, name: 'API Keys' }), 'the API Keys page after a reload (still signed in)');
    const row = table.getByRole('row').filter({ hasText: keyName });
    await visible(row, `the new key's row ("${keyName}")`);
    const rowText = await row.innerText();
    expect(rowText).toContain(stored!.prefix);
    expect(rowText).toMatch(/\bActive\b/);
    // Shown once: nowhere in the page, its storage or its readable cookies now.
    expect(await page.content()).not.toContain(secret);
    expect(await page.content()).not.toContain(secret.slice(12)); // nor the part after the display prefix
    expect(await scriptReadableState(page)).not.toContain(secret.slice(12));
    await shot(page, 'api-keys-after-reload');

    // A script uses the key, outside the browser.
    const before = await graphql<{ pipelineSummary: { totalAssets: number } }>(stack.gatewayUrl, '{ pipelineSummary { totalAssets } }', { apiKey: secret });
    expect(before.status).toBe(200);
    expect(before.body.data?.pipelineSummary.totalAssets).toBe(tenant.totalAssets);
    // The new user's first query: the copied key pasted into the explorer.
    await page.getByRole('banner').getByRole('link', { name: 'Explorer', exact: true }).click();
    await visible(page.getByRole('button', { name: /^Execute query/ }), 'GraphiQL in the Explorer');
    await typeQuery(page, '{ pipelineSummary { totalAssets } }');
    // Pasted and run at once, as a quick hand does: the request already carries the key the field shows.
    await page.getByRole('textbox', { name: 'API key (optional)' }).fill(copied);
    const sentWithKey = page.waitForRequest(
      (req: Request) => req.url().endsWith('/graphql') && req.method() === 'POST' && (req.postData() ?? '').includes('pipelineSummary'),
    );
    await page.getByRole('button', { name: /^Execute query/ }).click();
    const keyRequest = await sentWithKey;
    expect(keyRequest.headers()['authorization']).toBe(`Bearer ${secret}`);
    await visible(page.getByText('Requests use the pasted API key'), 'the hint that the pasted key is in use');
    await until(
      () => visibleText(page),
      (text) => new RegExp(`"totalAssets": ?${tenant.totalAssets}\\b`).test(text),
      `the explorer to show "totalAssets": ${tenant.totalAssets} for the new key`,
    );
    await shot(page, 'explorer-new-key');
    await page.getByRole('banner').getByRole('link', { name: 'API Keys', exact: true }).click();
    await visible(row, `the new key's row ("${keyName}") again`);

    // The gateway reports key use every 5 s: the row's "Last used" leaves "Never" (the page is read again).
    const lastUsedColumn = headers.indexOf('Last used');
    await until(
      async () => {
        await page.waitForTimeout(1_000);
        await page.reload();
        return (await row.locator('td, th').nth(lastUsedColumn).innerText()).trim();
      },
      (text) => text !== '' && !/never/i.test(text),
      `the "Last used" of "${keyName}" to show its use`,
    );

    await row.getByRole('button', { name: `Revoke ${keyName}` }).click();
    const confirm = page.getByRole('alertdialog');
    await visible(confirm, 'the revoke confirmation (alertdialog)');
    expect(await confirm.innerText()).toContain(keyName);
    await shot(page, 'api-key-revoke-dialog');
    await confirm.getByRole('button', { name: 'Revoke key' }).click();
    await gone(confirm, 'the revoke confirmation after "Revoke key"');
    await until(
      () => row.innerText(),
      (text) => /\bRevoked\b/.test(text),
      `the row of "${keyName}" to say Revoked`,
    );
    await shot(page, 'api-keys-revoked');

    const after = await graphql(stack.gatewayUrl, '{ pipelineSummary { totalAssets } }', { apiKey: secret });
    expect(after.status).toBe(401);
    expect(after.body.errors?.[0]?.extensions?.['code']).toBe('UNAUTHENTICATED');
  });
});

it('does not let a viewer manage API keys, in the console or through the API', async () => {
  await inBrowser(browser, stack.gatewayOrigin, 'viewer', async ({ page }) => {
    await signIn(page, tenant.viewer);
    await page.getByRole('banner').getByRole('link', { name: 'API Keys', exact: true }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'API Keys' }), 'the API Keys page');
    await visible(page.getByRole('status').filter({ hasText: 'Only a tenant administrator can manage API keys.' }), 'the viewer notice (role=status)');
    expect(await page.getByRole('button', { name: 'Create API Key' }).count()).toBe(0);
    await shot(page, 'viewer-api-keys');
  });

  const login = await loginJson(stack.gatewayOrigin, tenant.viewer);
  expect(login.status).toBe(200);
  const token = login.body['access_token'] as string;
  const res = await graphql(stack.gatewayUrl, 'mutation { createApiKey(input: { name: "viewer key", scopes: ["assets:read"] }) { secret } }', {
    apiKey: token,
  });
  expect(res.status).toBe(403);
  expect(res.body.errors?.[0]?.extensions).toMatchObject({ code: 'FORBIDDEN', missingScopes: expect.arrayContaining(['admin:*']) });
  expect(res.body.data ?? null).toBeNull();
});

/** GraphiQL's query editor (CodeMirror): replaces its text the way a person would, without auto-closed brackets. */
async function typeQuery(page: Page, query: string): Promise<void> {
  const editor = page.locator('.graphiql-query-editor .CodeMirror, .graphiql-query-editor [contenteditable="true"], .graphiql-query-editor textarea').first();
  await visible(editor, "GraphiQL's query editor");
  await editor.click();
  await page.keyboard.press('ControlOrMeta+A');
  await page.keyboard.press('Delete');
  await page.keyboard.insertText(query);
}

it('runs a query in the explorer with the session, and shows the explorer for /graphql in a browser', async () => {
  await inBrowser(browser, stack.gatewayOrigin, 'explorer', async ({ page }) => {
    await signIn(page, tenant.admin);
    await page.getByRole('banner').getByRole('link', { name: 'Explorer', exact: true }).click();
    await visible(page.getByRole('heading', { level: 1, name: 'Explorer' }), 'the Explorer page');
    await visible(page.getByRole('textbox', { name: 'API key (optional)' }), 'the "API key (optional)" field');
    const run = page.getByRole('button', { name: /^Execute query/ });
    await visible(run, 'GraphiQL\'s run button ("Execute query (Ctrl-Enter)")');
    await shot(page, 'explorer');

    await typeQuery(page, '{ pipelineSummary { totalAssets } }');
    const sent = page.waitForRequest(
      (req: Request) => req.url().endsWith('/graphql') && req.method() === 'POST' && (req.postData() ?? '').includes('pipelineSummary'),
    );
    await run.click();
    const request = await sent;
    expect((JSON.parse(request.postData()!) as { query: string }).query).toBe('{ pipelineSummary { totalAssets } }'); // what was typed
    // With the session's access token (no key typed).
    expect(request.headers()['authorization']).toMatch(/^Bearer eyJ/);
    const response = await request.response();
    expect(response?.status()).toBe(200);
    expect(await response?.json()).toMatchObject({ data: { pipelineSummary: { totalAssets: tenant.totalAssets } } });
    await until(
      () => visibleText(page),
      (text) => new RegExp(`"totalAssets": ?${tenant.totalAssets}\\b`).test(text),
      `the result pane to show "totalAssets": ${tenant.totalAssets}`,
    );
    await shot(page, 'explorer-result');

    // A pasted API key is used instead of the session, and kept in the page only.
    await page.getByRole('textbox', { name: 'API key (optional)' }).fill(tenant.apiKey);
    await visible(page.getByText('Requests use the pasted API key'), 'the hint that the pasted key is in use');
    await typeQuery(page, '{ me { kind tenantId } }');
    const withKey = page.waitForRequest((req: Request) => req.url().endsWith('/graphql') && req.method() === 'POST' && (req.postData() ?? '').includes('me {'));
    await page.getByRole('button', { name: /^Execute query/ }).click();
    const keyRequest = await withKey;
    expect(keyRequest.headers()['authorization']).toBe(`Bearer ${tenant.apiKey}`);
    expect(await (await keyRequest.response())?.json()).toMatchObject({ data: { me: { kind: 'API_KEY', tenantId: tenant.tenantId } } });
    expect(await scriptReadableState(page)).not.toContain(tenant.apiKey.slice(12));
    expect(await scriptReadableState(page)).not.toMatch(/eyJ[\w-]+\.eyJ[\w-]+\.[\w-]+/);
    // GraphiQL's tabs, queries and headers live in the page only: nothing of it in localStorage.
    const stored = await page.evaluate(() => Object.keys((globalThis as unknown as { localStorage: Record<string, string> }).localStorage));
    expect(stored.filter((key) => key.startsWith('graphiql'))).toEqual([]);
    await shot(page, 'explorer-api-key');

    // A browser opening /graphql gets the console's explorer, not JSON.
    const opened = await page.goto('/graphql');
    expect(opened?.headers()['content-type']).toMatch(/^text\/html/);
    await visible(page.getByRole('heading', { level: 1, name: 'Explorer' }), 'the Explorer at /graphql');
    await visible(page.getByRole('button', { name: /^Execute query/ }), 'GraphiQL at /graphql');
    await shot(page, 'graphql-in-browser');
  });

  // Signed out, it is still a page (the console decides what to show), never a JSON error.
  await inBrowser(browser, stack.gatewayOrigin, 'graphql-signed-out', async ({ page }) => {
    const opened = await page.goto('/graphql');
    expect(opened?.status()).toBe(200);
    expect(opened?.headers()['content-type']).toMatch(/^text\/html/);
    await visible(page.getByRole('heading', { level: 1, name: /^(Explorer|Sign in to Linepack)$/ }), 'the explorer or the sign-in page');
    expect(await visibleText(page)).not.toContain('UNAUTHENTICATED');
    await shot(page, 'graphql-in-browser-signed-out');
  });
});

/** What has keyboard focus: its accessible label as a person would read it, and its outline. */
const focused = (page: Page) =>
  page.evaluate(() => {
    const w = globalThis as unknown as PageGlobals;
    const el = w.document.activeElement;
    if (!el || el === w.document.body) return null;
    const label = el.getAttribute('aria-label') ?? el.labels?.[0]?.innerText ?? el.innerText ?? '';
    const style = w.getComputedStyle(el);
    return {
      tag: el.tagName,
      type: el.type ?? '',
      label: label.trim(),
      outlineStyle: style.outlineStyle,
      outlineWidth: style.outlineWidth,
      outlineColor: style.outlineColor,
    };
  });

it('completes the sign-in form with the keyboard alone, with a visible focus outline', async () => {
  await inBrowser(browser, stack.gatewayOrigin, 'keyboard', async ({ page }) => {
    await page.goto('/');
    await visible(page.getByRole('heading', { name: 'Sign in to Linepack' }), 'the sign-in page');
    // The Email field may already have focus (autofocus); otherwise Tab until it does.
    const seen: unknown[] = [await focused(page)];
    for (let i = 0; i < 10 && (await focused(page))?.label !== 'Email'; i++) {
      await page.keyboard.press('Tab');
      seen.push(await focused(page));
    }
    const email = await focused(page);
    if (email?.label !== 'Email') throw new Error(`Tab never reached the Email field; focus went: ${JSON.stringify(seen)}`);
    expect(email.outlineStyle).not.toBe('none');
    expect(parseFloat(email.outlineWidth)).toBeGreaterThan(0);
    await shot(page, 'sign-in-keyboard-focus');
    await page.keyboard.type(tenant.admin.email);

    await page.keyboard.press('Tab');
    const password = await focused(page);
    expect(password).toMatchObject({ tag: 'INPUT', type: 'password', label: 'Password' });
    expect(password!.outlineStyle).not.toBe('none');
    expect(parseFloat(password!.outlineWidth)).toBeGreaterThan(0);
    await page.keyboard.type(tenant.admin.password);
    await page.keyboard.press('Enter');
    await visible(page.getByRole('heading', { name: 'Pipeline at a glance' }), 'the dashboard after Enter');
  });
});

it('says in words what went wrong: a wrong password, and too many attempts with when to retry', async () => {
  await inBrowser(browser, stack.gatewayOrigin, 'errors', async ({ page }) => {
    await page.goto('/');
    await visible(page.getByRole('heading', { name: 'Sign in to Linepack' }), 'the sign-in page');
    await page.getByLabel('Email').fill(tenant.admin.email);
    await page.getByLabel('Password', { exact: true }).fill('not-the-password-at-all');
    await page.getByRole('button', { name: 'Sign in' }).click();
    const alert = page.getByRole('alert').filter({ hasText: /\S/ });
    await visible(alert, 'an alert after a wrong password');
    expect(await alert.first().innerText()).toMatch(/email or password/i);
    await shot(page, 'sign-in-wrong-password');

    // Five failures for one email from one address: the sixth attempt is throttled (429 with Retry-After).
    const throttled = { email: `throttled-${stack.dbPrefix}@example.com`, password: newPassword() };
    await stack.authStore.createUser({ tenantId: tenant.tenantId, ...throttled, role: 'VIEWER' });
    for (let i = 0; i < 5; i++) expect((await loginJson(stack.gatewayOrigin, { ...throttled, password: 'wrong-password-guess' })).status).toBe(401);

    await page.getByLabel('Email').fill(throttled.email);
    await page.getByLabel('Password', { exact: true }).fill(throttled.password);
    const answered = page.waitForResponse((res) => res.url().endsWith('/auth/login'));
    await page.getByRole('button', { name: 'Sign in' }).click();
    const response = await answered;
    expect(response.status()).toBe(429);
    const retryAfter = Number(response.headers()['retry-after']);
    expect(retryAfter).toBeGreaterThan(0);
    const text = await until(
      () => alert.first().innerText(),
      (t) => !/email or password/i.test(t) && /\d/.test(t),
      'the alert to change to the throttling message with a retry time',
    );
    expect(text).toMatch(/(try again|retry|wait)/i);
    // A time with its unit ("900 s", "15 minutes", "12:45").
    expect(text).toMatch(/\d+\s*(seconds?|minutes?|min|s)\b|\d{1,2}:\d{2}/i);
    await shot(page, 'sign-in-throttled');
    // Still on the sign-in page.
    await visible(page.getByRole('heading', { name: 'Sign in to Linepack' }), 'the sign-in page after a 429');
  });
});
