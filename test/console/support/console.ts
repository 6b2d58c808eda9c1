import { randomBytes } from 'node:crypto';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Page } from 'playwright-core';
import { repoRoot } from '@linepack/lib/repo-root';
import { seedDemoPipeline } from '../../../scripts/demo-seed';
import { graphql, type TestStack } from '../../support/stack';
import { eventually } from '../../support/wait';
import { visible } from './browser';

export const consoleDist = path.join(repoRoot, 'console', 'dist');

/** The newest modification time among a folder's files (recursively), in ms. */
function newestMtime(dir: string): number {
  let newest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    newest = Math.max(newest, entry.isDirectory() ? newestMtime(full) : statSync(full).mtimeMs);
  }
  return newest;
}

/**
 * The gateway serves console/dist; the tests use what is built and say how to build it when it is missing, or
 * older than the console's sources (a stale build would test yesterday's console).
 */
export function requireBuiltConsole(): void {
  const index = path.join(consoleDist, 'index.html');
  if (!existsSync(index)) throw new Error(`the web console is not built (${index} is missing): run npm run console:build first`);
  const consoleRoot = path.dirname(consoleDist);
  const sources = Math.max(
    newestMtime(path.join(consoleRoot, 'src')),
    ...['index.html', 'vite.config.ts', 'package.json']
      .map((f) => path.join(consoleRoot, f))
      .filter(existsSync)
      .map((f) => statSync(f).mtimeMs),
  );
  if (sources > statSync(index).mtimeMs) {
    throw new Error(`the web console's build is older than its sources (console/src changed since ${index} was built): run npm run console:build first`);
  }
}

/** A password the policy accepts (12+ characters, not common, without the service's name or the email). */
export const newPassword = () => `Pw-${randomBytes(12).toString('base64url')}`;

export interface User {
  email: string;
  password: string;
}

export interface SeededTenant {
  tenantId: string;
  /** An ENTERPRISE key with every read and write scope, for seeding and checks outside the browser. */
  apiKey: string;
  totalAssets: number;
  admin: User;
  viewer: User;
}

/**
 * A PRO tenant with the demo pipeline (8 assets, ILI runs, inspections), an ADMIN and a VIEWER user, and the
 * analytics and compliance read models caught up, so the dashboard's tables have rows.
 */
export async function seedTenant(stack: TestStack, label: string): Promise<SeededTenant> {
  const { tenantId, apiKey } = await stack.tenantWithKey({ tier: 'PRO', name: `Console ${label} ${stack.dbPrefix}` });
  const totalAssets = await seedDemoPipeline(stack.gatewayUrl, apiKey);
  const admin = { email: `admin-${label}-${stack.dbPrefix}@example.com`, password: newPassword() };
  const viewer = { email: `viewer-${label}-${stack.dbPrefix}@example.com`, password: newPassword() };
  await stack.authStore.createUser({ tenantId, ...admin, role: 'ADMIN' });
  await stack.authStore.createUser({ tenantId, ...viewer, role: 'VIEWER' });
  const caughtUp = await eventually(async () => {
    const res = await graphql<{ riskRegister: { totalCount: number }; complianceStatus: { totalCount: number } }>(
      stack.gatewayUrl,
      '{ riskRegister { totalCount } complianceStatus { totalCount } }',
      { apiKey },
    );
    return (res.body.data?.riskRegister.totalCount ?? 0) >= 1 && (res.body.data?.complianceStatus.totalCount ?? 0) >= 1;
  }, 20_000);
  if (!caughtUp) throw new Error('analytics and compliance did not catch up with the seeded pipeline within 20 s (is REDIS_URL set? events need Redis)');
  return { tenantId, apiKey, totalAssets, admin, viewer };
}

/** POST /auth/login in JSON mode (as a script would), outside the browser. */
export async function loginJson(gatewayOrigin: string, user: User): Promise<{ status: number; body: Record<string, unknown> }> {
  const res = await fetch(`${gatewayOrigin}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: user.email, password: user.password }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

/** Opens the console, which sends a signed-out visitor to the sign-in page, and signs in with the form. */
export async function signIn(page: Page, user: User): Promise<void> {
  await page.goto('/');
  await visible(page.getByRole('heading', { name: 'Sign in to Linepack' }), 'the sign-in page (h1 "Sign in to Linepack")');
  await page.getByLabel('Email').fill(user.email);
  await page.getByLabel('Password', { exact: true }).fill(user.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await visible(page.getByRole('heading', { name: 'Pipeline at a glance' }), 'the dashboard after signing in (h1 "Pipeline at a glance")');
}

/** The page's visible text with runs of white space (non-breaking spaces included) as one space. */
export async function visibleText(page: Page): Promise<string> {
  return (await page.locator('body').innerText()).replace(/[\s\u00a0]+/g, ' ');
}

/** The GraphQL operations the page sends, by name, with the variables of each request (watched from now on). */
export function watchOperations(page: Page): Map<string, Record<string, unknown>[]> {
  const seen = new Map<string, Record<string, unknown>[]>();
  page.on('request', (req) => {
    if (!req.url().endsWith('/graphql') || req.method() !== 'POST') return;
    const body = req.postDataJSON() as { query?: string; variables?: Record<string, unknown> } | null;
    const name = /^\s*(?:query|mutation)\s+(\w+)/.exec(body?.query ?? '')?.[1];
    if (name) seen.set(name, [...(seen.get(name) ?? []), body?.variables ?? {}]);
  });
  return seen;
}
