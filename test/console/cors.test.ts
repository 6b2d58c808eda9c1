import type { Browser, Page } from 'playwright-core';
import { startTestStack, type TestStack } from '../support/stack';
import { inBrowser, launchBrowser, visible } from './support/browser';
import { rawRequest, startOtherOrigin, type OtherOrigin, type ProbeResult } from './support/other-origin';

/**
 * The API and other origins (CORS_ORIGINS): the console is same-origin and needs no CORS; a page elsewhere may
 * read the API's answers only when its origin is listed. An unlisted origin gets no Access-Control-* header, so
 * its browser refuses to hand the answer to the page; a listed origin's preflight is answered before
 * authentication (a preflight carries no credential).
 */
let stack: TestStack;
let browser: Browser;
let listed: OtherOrigin;
let unlisted: OtherOrigin;
let apiKey: string;

beforeAll(async () => {
  listed = await startOtherOrigin();
  unlisted = await startOtherOrigin();
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'], corsOrigins: [listed.origin] });
  ({ apiKey } = await stack.tenantWithKey({ tier: 'PRO', scopes: ['assets:read'] }));
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
  await listed?.close();
  await unlisted?.close();
});

const preflight = (origin: string) =>
  rawRequest(stack.gatewayUrl, 'OPTIONS', {
    origin,
    'access-control-request-method': 'POST',
    'access-control-request-headers': 'authorization,content-type',
  });

const query = JSON.stringify({ query: '{ pipelineSummary { totalAssets } }' });

it('answers an unlisted origin with no Access-Control-* header, on the preflight and on the request itself', async () => {
  const answer = await preflight('https://evil.example');
  expect(answer.headers['access-control-allow-origin']).toBeUndefined();
  expect(answer.headers['access-control-allow-credentials']).toBeUndefined();
  expect(answer.headers['access-control-allow-headers']).toBeUndefined();

  // The request itself is served (the server cannot know who reads it) but carries nothing that lets a browser read it.
  const post = await rawRequest(
    stack.gatewayUrl,
    'POST',
    { origin: 'https://evil.example', 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    query,
  );
  expect(post.status).toBe(200);
  expect(post.headers['access-control-allow-origin']).toBeUndefined();
  // A wildcard would hand every origin the answer; the console's own origin is not an exception either.
  const sameHost = await preflight(stack.gatewayOrigin.replace('127.0.0.1', 'localhost'));
  expect(sameHost.headers['access-control-allow-origin']).toBeUndefined();
});

it("answers a listed origin's preflight before authentication, naming that origin", async () => {
  const answer = await preflight(listed.origin);
  expect(answer.status).toBeGreaterThanOrEqual(200);
  expect(answer.status).toBeLessThan(300);
  expect(answer.headers['access-control-allow-origin']).toBe(listed.origin);
  expect(answer.headers['access-control-allow-credentials']).toBe('true');
  expect(answer.headers['access-control-allow-methods']).toMatch(/POST/);
  expect(answer.headers['access-control-allow-headers']?.toLowerCase()).toMatch(/authorization/);
  expect(answer.headers['access-control-allow-headers']?.toLowerCase()).toMatch(/content-type/);
  expect(answer.headers['vary']?.toLowerCase()).toMatch(/origin/);
  // The listed origin's actual request is readable: the answer names it.
  const post = await rawRequest(
    stack.gatewayUrl,
    'POST',
    { origin: listed.origin, 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    query,
  );
  expect(post.status).toBe(200);
  expect(post.headers['access-control-allow-origin']).toBe(listed.origin);
  // An unauthenticated request from it is still refused, and the page may read why.
  const anonymous = await rawRequest(stack.gatewayUrl, 'POST', { origin: listed.origin, 'content-type': 'application/json' }, query);
  expect(anonymous.status).toBe(401);
  expect(anonymous.headers['access-control-allow-origin']).toBe(listed.origin);
});

/** The other origin's page fetches `url` itself and says whether it could read the answer. */
const probe = (page: Page, url: string, init: { method: string; credentials: 'include'; headers?: Record<string, string>; body?: string }) =>
  page.evaluate(([u, i]) => (globalThis as unknown as { probe(url: string, init: unknown): Promise<ProbeResult> }).probe(u as string, i), [url, init] as const);

it('keeps the answer from a page on an unlisted origin: its fetch rejects', async () => {
  await inBrowser(browser, unlisted.origin, 'cors-unlisted', async ({ page }) => {
    await page.goto('/');
    await visible(page.getByRole('heading', { name: 'Another origin' }), "the other origin's page");
    // A preflighted request (a bearer key and JSON), as a tool on another origin would send it.
    const withKey = await probe(page, stack.gatewayUrl, {
      method: 'POST',
      credentials: 'include',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: query,
    });
    expect(withKey).toEqual({ read: false, error: expect.stringMatching(/TypeError: Failed to fetch/) });
    // A "simple" request (no preflight) with the browser's cookies reaches the server, but the page cannot read it.
    const simple = await probe(page, stack.gatewayUrl, { method: 'POST', credentials: 'include', headers: { 'content-type': 'text/plain' }, body: query });
    expect(simple).toEqual({ read: false, error: expect.stringMatching(/TypeError: Failed to fetch/) });
    // Nor the auth routes (the console's session lives there).
    const refresh = await probe(page, `${stack.gatewayOrigin}/auth/refresh`, { method: 'POST', credentials: 'include' });
    expect(refresh.read).toBe(false);
  });
});

it('lets a page on a listed origin read the API with its key', async () => {
  await inBrowser(browser, listed.origin, 'cors-listed', async ({ page }) => {
    await page.goto('/');
    await visible(page.getByRole('heading', { name: 'Another origin' }), "the listed origin's page");
    const answer = await probe(page, stack.gatewayUrl, {
      method: 'POST',
      credentials: 'include',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: query,
    });
    expect(answer.read).toBe(true);
    expect(answer.status).toBe(200);
    expect(JSON.parse(answer.body!)).toMatchObject({ data: { pipelineSummary: { totalAssets: 0 } } });
  });
});
