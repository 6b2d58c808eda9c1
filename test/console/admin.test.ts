import type { Browser, Page } from 'playwright-core';
import { cliAudit } from '@linepack/subgraph-auth/audit';
import { graphql, startTestStack, type TestStack } from '../support/stack';
import { checkPage, DESKTOP, expectNoAxeViolations, gone, inBrowser, launchBrowser, PHONE, shot, until, visible } from './support/browser';
import { loginJson, newPassword, requireBuiltConsole, seedTenant, signIn, visibleText, type SeededTenant, type User } from './support/console';

/**
 * The console's administration pages (issue 27 item 5) in Chromium at 1440×900 and 390×844, each screenshotted
 * (.linepack/screenshots/admin-*), checked by axe-core and for sideways scrolling: Users (add someone, who gets a
 * one-time token to set their password; change a role; reset a password; remove), the audit log (filters by event,
 * person and day; paged), your account (change password, sign out everywhere), setting a forgotten password with an
 * administrator's token, a viewer's view of the administrators' pages, and an API key rotation that asks first. Every
 * effect is checked outside the browser too, through the API and /auth.
 */
let stack: TestStack;
let browser: Browser;
let tenant: SeededTenant;

const sizes = { desktop: DESKTOP, phone: PHONE } as const;
type Size = keyof typeof sizes;

beforeAll(async () => {
  requireBuiltConsole();
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  tenant = await seedTenant(stack, 'admin');
  browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** A member made for one test (changing a password or signing out everywhere must not touch the others' users). */
async function member(label: string, role: 'VIEWER' | 'ENGINEER' | 'ADMIN'): Promise<User & { id: string }> {
  const user = { email: `${label}-${stack.dbPrefix}@example.com`.toLowerCase(), password: newPassword() };
  const created = await stack.authStore.createUser({ tenantId: tenant.tenantId, ...user, role });
  return { ...user, id: created._id };
}

async function postAuth(path: string, body: unknown): Promise<{ status: number; body: Record<string, unknown> | null }> {
  const res = await fetch(`${stack.gatewayOrigin}${path}`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const text = await res.text();
  return { status: res.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : null };
}

/** The tenant's users as the API lists them (an admin's access token), by email. */
async function usersByEmail(emailContains: string): Promise<{ id: string; email: string; role: string }[]> {
  const login = await loginJson(stack.gatewayOrigin, tenant.admin);
  const res = await graphql<{ tenantUsers: { edges: { node: { id: string; email: string; role: string } }[] } }>(
    stack.gatewayUrl,
    'query($e: String) { tenantUsers(emailContains: $e, first: 500) { edges { node { id email role } } } }',
    { apiKey: login.body['access_token'] as string, variables: { e: emailContains } },
  );
  return res.body.data!.tenantUsers.edges.map((e) => e.node);
}

async function openSettings(page: Page, link: 'Users' | 'Audit log' | 'API Keys', heading: string): Promise<void> {
  await page.getByRole('banner').getByRole('link', { name: link, exact: true }).click();
  await visible(page.getByRole('heading', { level: 1, name: heading }), `the ${heading} page`);
}

describe.each(Object.keys(sizes) as Size[])('at %s size', (size) => {
  it("adds a user, who sets their own password with the one-time token; changes the user's role, resets their password and removes them", async () => {
    const email = `new-${size}-${stack.dbPrefix}@example.com`.toLowerCase();
    await inBrowser(browser, stack.gatewayOrigin, `admin-users-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.admin);
      await openSettings(page, 'Users', 'Users');
      const table = page.getByRole('table', { name: /^Users of / });
      const me = table.getByRole('row').filter({ hasText: tenant.admin.email });
      await visible(me, 'the admin among the users');
      expect(await me.innerText()).toMatch(/Admin[\s\S]*You \(your account\)/);
      await visible(page.getByText(/^\d+ of \d+ users$/), '"N of M users"');
      expect(await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Users' }).getAttribute('aria-current')).toBe('page');
      await checkPage(page, `admin-users-${size}`);

      await page.getByRole('button', { name: 'Add user' }).click();
      const add = page.getByRole('dialog', { name: 'Add a user' });
      await visible(add, 'the "Add a user" dialog');
      await add.getByRole('textbox', { name: 'Email' }).fill('not an address');
      await add.getByRole('button', { name: 'Add user' }).click();
      await visible(add.getByRole('alert').filter({ hasText: 'That is not an email address' }), 'the email refused in words');
      await add.getByRole('textbox', { name: 'Email' }).fill(email);
      await visible(add.getByRole('radio', { name: 'Viewer', checked: true }), 'Viewer chosen by default');
      await checkPage(page, `admin-user-add-${size}`);
      await add.getByRole('button', { name: 'Add user' }).click();

      const added = page.getByRole('dialog', { name: `${email} added` });
      const tokenBox = added.getByRole('textbox', { name: `Password token for ${email}` });
      await visible(tokenBox, 'the one-time token');
      const token = await tokenBox.inputValue();
      expect(token).toMatch(/^lpr_/);
      const text = await added.innerText();
      expect(text).toContain('will not be shown again');
      expect(text).toMatch(/joined .* as a Viewer and have no password yet/);
      expect(text).toContain(`/sign-in/reset-password#token=${encodeURIComponent(token)}`);
      await checkPage(page, `admin-user-added-${size}`);
      await added.getByRole('button', { name: 'Done' }).click();
      await gone(added, 'the token dialog after Done');
      await visible(page.getByRole('status').filter({ hasText: `${email} was added as a Viewer.` }), 'the "added" notice');
      expect(await page.content()).not.toContain(token);

      // The person sets their password with the token (as the reset page does), and signs in with it.
      const password = newPassword();
      expect((await postAuth('/auth/password/reset', { reset_token: token, new_password: password })).status).toBe(204);
      expect((await loginJson(stack.gatewayOrigin, { email, password })).status).toBe(200);
      expect(await usersByEmail(email)).toEqual([expect.objectContaining({ email, role: 'VIEWER' })]);

      // Found by part of the email.
      await page.getByRole('searchbox', { name: 'Email contains' }).fill(`new-${size}-`);
      await visible(page.getByText(/^1 of 1 users$/), '"1 of 1 users" for the search');
      const row = table.getByRole('row').filter({ hasText: email });

      await row.getByRole('button', { name: `Change role of ${email}` }).click();
      const roleDialog = page.getByRole('dialog', { name: `Change the role of ${email}` });
      await roleDialog.getByRole('radio', { name: 'Engineer' }).check();
      expect(await roleDialog.innerText()).toMatch(/Their sessions end at once/);
      await expectNoAxeViolations(page, `admin-user-role-${size}`);
      await roleDialog.getByRole('button', { name: 'Change role' }).click();
      await visible(page.getByRole('status').filter({ hasText: `${email} is now an Engineer.` }), 'the role notice');
      await until(
        () => row.innerText(),
        (t) => /Engineer/.test(t),
        'the row to say Engineer',
      );
      expect(await usersByEmail(email)).toEqual([expect.objectContaining({ role: 'ENGINEER' })]);
      await shot(page, `admin-user-role-changed-${size}`);

      await row.getByRole('button', { name: `Reset password of ${email}` }).click();
      const reset = page.getByRole('alertdialog', { name: `Reset the password of ${email}?` });
      expect(await reset.innerText()).toMatch(/Their password keeps working until they use it/);
      await reset.getByRole('button', { name: 'Issue reset token' }).click();
      const resetToken = await (await visible(page.getByRole('textbox', { name: `Password token for ${email}` }), 'the reset token')).inputValue();
      expect(resetToken).toMatch(/^lpr_/);
      expect(resetToken).not.toBe(token);
      await checkPage(page, `admin-user-reset-${size}`);
      await page.getByRole('button', { name: 'Done' }).click();

      await row.getByRole('button', { name: `Remove ${email}` }).click();
      const remove = page.getByRole('alertdialog', { name: `Remove ${email}?` });
      expect(await remove.innerText()).toMatch(/their sessions end, and the API keys they created here are revoked/);
      // The safe choice has the focus: Enter on a confirmation removes nobody.
      expect(
        await remove
          .getByRole('button', { name: 'Cancel' })
          .evaluate((b) => b === (globalThis as unknown as { document: { activeElement: unknown } }).document.activeElement),
      ).toBe(true);
      await checkPage(page, `admin-user-remove-${size}`);
      await remove.getByRole('button', { name: 'Remove user' }).click();
      await visible(page.getByText('No user matches.'), 'the list without the removed user');
      expect(await visibleText(page)).toContain('0 of 0 users');
      expect(await usersByEmail(email)).toEqual([]);
      // In no other tenant, the account is gone with its password.
      expect((await loginJson(stack.gatewayOrigin, { email, password })).status).toBe(401);
    });
  });

  it('reads the audit log newest first, by event, by person and by day, a page at a time', async () => {
    const admin = await member(`audit-${size}`, 'ADMIN');
    // Enough sign-ins for more than one page of the log (the console reads 50 at a time).
    for (let i = 0; i < 52; i++) expect((await loginJson(stack.gatewayOrigin, admin)).status).toBe(200);
    await inBrowser(browser, stack.gatewayOrigin, `admin-audit-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, admin);
      await openSettings(page, 'Audit log', 'Audit log');
      const table = page.getByRole('table', { name: 'Audit events, newest first' });
      await visible(table.getByRole('row').nth(1), 'a row of the audit log');
      const counter = await visible(page.getByText(/^50 of \d+ events$/), '"50 of N events"');
      const total = Number(/^50 of (\d+) events$/.exec(await counter.first().innerText())![1]);
      expect(total).toBeGreaterThan(53);
      // Newest first: this browser's sign-in leads.
      const first = table.getByRole('row').nth(1);
      expect(await first.innerText()).toMatch(new RegExp(`Signed in[\\s\\S]*${admin.email.replace(/[.]/g, '\\.')}`));
      expect(await visibleText(page)).toMatch(/Times are in /);
      await checkPage(page, `admin-audit-${size}`);
      await page.getByRole('button', { name: 'Load more' }).click();
      await visible(page.getByText(new RegExp(`^${Math.min(total, 100)} of ${total} events$`)), `"${Math.min(total, 100)} of ${total} events"`);

      // By event: the users the seed added (USER_ADDED), each named.
      await page.getByRole('combobox', { name: 'Event' }).selectOption({ label: 'User added' });
      await until(
        () => table.getByRole('row').allInnerTexts(),
        (rows) => rows.length > 1 && rows.slice(1).every((r) => r.includes('User added')),
        'only "User added" rows',
      );
      expect(await table.innerText()).toContain(tenant.viewer.email);
      expect(new URL(page.url()).searchParams.get('type')).toBe('USER_ADDED');

      // By person: choosing a name in the Who column narrows the log to them.
      await page.getByRole('combobox', { name: 'Event' }).selectOption({ label: 'Signed in' });
      await table
        .getByRole('button', { name: `Only events by ${admin.email}` })
        .first()
        .click();
      await visible(page.getByRole('list', { name: 'Narrowed to' }).getByText(`By ${admin.email}`), 'the person filter');
      await visible(page.getByText(/^50 of 53 events$/), '"50 of 53 events": the 52 sign-ins from a script and this one');
      await checkPage(page, `admin-audit-filtered-${size}`);

      // By day, in the reader's zone: nothing from tomorrow on; a range the wrong way round is said so.
      const today = await page.evaluate(() => new Date().toLocaleDateString('en-CA'));
      const tomorrow = await page.evaluate(() => new Date(Date.now() + 86_400_000).toLocaleDateString('en-CA'));
      await page.getByLabel('From (day)').fill(tomorrow);
      await visible(page.getByText('No event matches.'), 'no event from tomorrow on');
      await page.getByLabel('From (day)').fill(today);
      await visible(page.getByText(/^50 of 53 events$/), "today's 53 sign-ins");
      await page.getByLabel('Through (day)').fill(await page.evaluate(() => new Date(Date.now() - 86_400_000).toLocaleDateString('en-CA')));
      await visible(page.getByRole('alert').filter({ hasText: 'The Through day is before the From day' }), 'the backwards range said in words');
      await page.getByRole('button', { name: `Clear: show events by anyone, not only ${admin.email}` }).click();
      await gone(page.getByRole('list', { name: 'Narrowed to' }), 'the person filter after Clear');
    });
  });

  it('changes your password, and signs you out everywhere', async () => {
    const user = await member(`account-${size}`, 'VIEWER');
    const elsewhere = await loginJson(stack.gatewayOrigin, user);
    expect(elsewhere.status).toBe(200);
    await inBrowser(browser, stack.gatewayOrigin, `admin-account-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, user);
      await page.getByRole('banner').getByRole('link', { name: 'Account', exact: true }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Your account' }), 'the account page');
      expect(await visibleText(page)).toContain(user.email);
      expect(await visibleText(page)).toMatch(/Your role there Viewer/);
      await checkPage(page, `admin-account-${size}`);

      const form = page.getByRole('region', { name: 'Change your password' });
      const change = async (current: string, next: string, again = next) => {
        await form.getByLabel('Current password').fill(current);
        await form.getByLabel('New password', { exact: true }).fill(next);
        await form.getByLabel('New password again').fill(again);
        await form.getByRole('button', { name: 'Change password' }).click();
      };
      const next = newPassword();
      await change(user.password, 'short');
      await visible(form.getByRole('alert').filter({ hasText: 'The new password is 5 characters long: it needs at least 12.' }), 'the short password refused');
      await change(user.password, next, `${next}x`);
      await visible(form.getByRole('alert').filter({ hasText: 'The two new passwords are not the same' }), 'the mismatch refused');
      await change('not my password at all', next);
      await visible(form.getByRole('alert').filter({ hasText: /current password/i }), 'the wrong current password refused');
      await change(user.password, 'password2024!');
      await visible(form.getByRole('alert').filter({ hasText: /common|breached/i }), 'a common password refused by the server');
      await shot(page, `admin-account-refused-${size}`);
      await change(user.password, next);
      await visible(form.getByRole('status').filter({ hasText: 'Your password is changed. Your other sessions have ended.' }), 'the change confirmed');
      await expectNoAxeViolations(page, `admin-account-changed-${size}`);

      // The other session ended; the old password no longer works, the new one does; this page is still signed in.
      expect((await postAuth('/auth/refresh', { refresh_token: elsewhere.body['refresh_token'] })).status).toBe(401);
      expect((await loginJson(stack.gatewayOrigin, user)).status).toBe(401);
      const again = await loginJson(stack.gatewayOrigin, { email: user.email, password: next });
      expect(again.status).toBe(200);
      await page.reload();
      await visible(page.getByRole('heading', { level: 1, name: 'Your account' }), 'the account page after a reload (still signed in)');

      await page.getByRole('button', { name: 'Sign out everywhere' }).click();
      const confirm = page.getByRole('alertdialog', { name: 'Sign out everywhere?' });
      expect(await confirm.innerText()).toMatch(/this one included/);
      await checkPage(page, `admin-account-sign-out-everywhere-${size}`);
      await confirm.getByRole('button', { name: 'Sign out everywhere' }).click();
      await visible(page.getByRole('heading', { name: 'Sign in to Linepack' }), 'the sign-in page');
      await visible(page.getByRole('status').filter({ hasText: 'You have signed out everywhere' }), 'the sign-in page saying so');
      expect((await postAuth('/auth/refresh', { refresh_token: again.body['refresh_token'] })).status).toBe(401);
      await page.goto('/settings/account');
      await visible(page.getByRole('heading', { name: 'Sign in to Linepack' }), 'the sign-in page, not the account page, after a reload');
    });
  });

  it("sets a forgotten password with an administrator's one-time token, and says in words when a token does not work", async () => {
    const user = await member(`forgot-${size}`, 'VIEWER');
    await inBrowser(browser, stack.gatewayOrigin, `admin-forgot-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await page.goto('/sign-in');
      await page.getByRole('link', { name: 'Forgot your password?' }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Set a new password' }), 'the reset page');
      expect(await visibleText(page)).toMatch(/Linepack sends no email: an administrator of your tenant gives you a one-time token/);
      await checkPage(page, `admin-forgot-${size}`);
      const password = newPassword();
      await page.getByLabel('Token from your administrator').fill('lpr_not-a-real-token');
      await page.getByLabel('New password', { exact: true }).fill(password);
      await page.getByLabel('New password again').fill(password);
      await page.getByRole('button', { name: 'Set password' }).click();
      await visible(page.getByRole('alert').filter({ hasText: 'This token does not work' }), 'an unknown token refused in words');

      // The link an administrator hands over carries the token in its fragment, which the page takes out of the address.
      const { token } = await stack.authStore.issuePasswordReset(tenant.tenantId, user.id, cliAudit);
      await page.goto(`/sign-in/reset-password#token=${encodeURIComponent(token)}`);
      await visible(page.getByText('Filled in from your link.'), 'the token filled in from the link');
      expect(await page.getByLabel('Token from your administrator').inputValue()).toBe(token);
      expect(new URL(page.url()).hash).toBe('');
      await page.getByLabel('New password', { exact: true }).fill('password2024!');
      await page.getByLabel('New password again').fill('password2024!');
      await page.getByRole('button', { name: 'Set password' }).click();
      await visible(page.getByRole('alert').filter({ hasText: /^The new password is not accepted: / }), 'a common password refused, naming the rule');
      await checkPage(page, `admin-forgot-refused-${size}`);
      await page.getByLabel('New password', { exact: true }).fill(password);
      await page.getByLabel('New password again').fill(password);
      await page.getByRole('button', { name: 'Set password' }).click();
      await visible(page.getByRole('status').filter({ hasText: 'Your password is set.' }), 'the password set');
      await page.getByRole('link', { name: 'Sign in with your new password' }).click();
      await signIn(page, { email: user.email, password });
      expect((await loginJson(stack.gatewayOrigin, user)).status).toBe(401);
    });
  });

  it("offers a viewer no administrator's pages, and says why when one is opened", async () => {
    await inBrowser(browser, stack.gatewayOrigin, `admin-viewer-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.viewer);
      const banner = page.getByRole('banner');
      await visible(banner.getByRole('link', { name: 'Account', exact: true }), 'the Account link');
      expect(await banner.getByRole('link', { name: 'Users', exact: true }).count()).toBe(0);
      expect(await banner.getByRole('link', { name: 'Audit log', exact: true }).count()).toBe(0);
      for (const [path, title, what] of [
        ['/settings/users', 'Users', "manage the tenant's users"],
        ['/settings/audit-log', 'Audit log', 'read the audit log'],
      ] as const) {
        await page.goto(path);
        await visible(page.getByRole('heading', { level: 1, name: title }), `the ${title} page`);
        await visible(
          page.getByRole('status').filter({ hasText: `Only a tenant administrator can ${what}. Your role in ${`Console admin ${stack.dbPrefix}`} is Viewer` }),
          `the viewer told why on ${path}`,
        );
        expect(await page.getByRole('table').count()).toBe(0);
        await checkPage(page, `admin-viewer-${title.toLowerCase().replace(' ', '-')}-${size}`);
      }
    });
  });

  it('rotates an API key only when confirmed, saying that the old secret stops working at once', async () => {
    const name = `Rotate me ${size}`;
    const { secret: old } = await stack.authStore.createApiKey({ tenantId: tenant.tenantId, name, scopes: ['assets:read'], tier: 'FREE' });
    const works = async (secret: string) => (await graphql(stack.gatewayUrl, '{ pipelineSummary { totalAssets } }', { apiKey: secret })).status;
    expect(await works(old)).toBe(200);
    await inBrowser(browser, stack.gatewayOrigin, `admin-rotate-${size}`, async ({ page }) => {
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.admin);
      await openSettings(page, 'API Keys', 'API Keys');
      await page.getByRole('button', { name: `Rotate ${name}` }).click();
      const confirm = page.getByRole('alertdialog', { name: `Rotate ${name}?` });
      expect(await confirm.innerText()).toMatch(/The old secret stops working at once/);
      await checkPage(page, `admin-rotate-confirm-${size}`);
      await confirm.getByRole('button', { name: 'Cancel' }).click();
      await gone(confirm, 'the confirmation after Cancel');
      expect(await works(old)).toBe(200);

      await page.getByRole('button', { name: `Rotate ${name}` }).click();
      await confirm.getByRole('button', { name: 'Rotate key' }).click();
      const secret = await (await visible(page.getByRole('textbox', { name: 'New API key secret' }), 'the new secret')).inputValue();
      expect(await page.getByRole('dialog', { name: 'Your new API key' }).innerText()).toMatch(/its old secret stopped working/);
      await checkPage(page, `admin-rotated-${size}`);
      expect(await works(old)).toBe(401);
      expect(await works(secret)).toBe(200);
    });
  });
});
