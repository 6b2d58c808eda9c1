import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { crc32, deflateSync } from 'node:zlib';
import type { Browser, Page } from 'playwright-core';
import { defaultConsoleDir, gatewayConfigFromEnv } from '@linepack/gateway/config';
import { startGateway, type RunningGateway } from '@linepack/gateway/server';
import { ConfigError } from '@linepack/lib/config';
import { generateInternalKeyPair } from '@linepack/lib/identity';
import { allReadWriteScopes, gatewayConfigFor, graphql, startTestStack, type TestStack } from '../support/stack';
import { eventually } from '../support/wait';
import { checkLayout, DESKTOP, expectNoAxeViolations, horizontalOverflow, inBrowser, launchBrowser, PHONE, shot, until, visible } from './support/browser';
import { requireBuiltConsole, seedTenant, signIn, visibleText, type SeededTenant } from './support/console';

/**
 * The console's map of a tenant's assets (issue 27 item 2), in Chromium at 1440×900 and 390×844: every asset with a
 * location is drawn (read through the API page by page: the tenant here has more assets than one page of the map's
 * query), lines in their risk band's colour as the legend says, points for components; by default no request leaves
 * the console's origin. An asset page's "Open on map" fits the map to that asset and highlights it; a feature clicked
 * on the map links to its asset page. With CONSOLE_MAP_TILE_URL set, tiles come from that server, which the CSP
 * admits for images and nothing else. Screenshots: .linepack/screenshots/issue27-map-{desktop,phone}.png.
 */
let stack: TestStack;
let browser: Browser;
let tenant: SeededTenant;
/** Ids of the tenant's assets that have a location, from the API. */
let located: Set<string>;
let totalAssets: number;
/** A segment with a route of its own and, once analytics has caught up, a risk band. */
let routedSegment: { id: string; name: string; band: string };
let seedKeys: string[];

const sizes = { desktop: DESKTOP, phone: PHONE } as const;
/** The map reads 200 assets a page (MapPage.tsx PAGE_SIZE): the tenant gets more, so the map must page. */
const MAP_PAGE_SIZE = 200;
const EXTRA_SEGMENTS = 210;

interface AssetNode {
  id: string;
  name: string;
  type: string;
  location: unknown;
}

async function allAssets(): Promise<AssetNode[]> {
  const nodes: AssetNode[] = [];
  let after: string | null = null;
  for (;;) {
    const res: { body: { data?: { assets: { pageInfo: { hasNextPage: boolean; endCursor: string | null }; edges: { node: AssetNode }[] } } | null } } =
      await graphql(
        stack.gatewayUrl,
        'query($after: String) { assets(first: 500, after: $after) { pageInfo { hasNextPage endCursor } edges { node { id name type location } } } }',
        { apiKey: seedKeys[0], variables: { after } },
      );
    const page = res.body.data!.assets;
    nodes.push(...page.edges.map((e) => e.node));
    if (!page.pageInfo.hasNextPage) return nodes;
    after = page.pageInfo.endCursor;
  }
}

/** Creates assets through the API, a few at a time (a request may create one), as a bulk loader would. */
async function createAssets(inputs: Record<string, unknown>[]): Promise<string[]> {
  const ids: string[] = new Array<string>(inputs.length);
  let next = 0;
  const worker = async () => {
    while (next < inputs.length) {
      const i = next++;
      const res = await graphql<{ createAsset: { id: string } }>(
        stack.gatewayUrl,
        'mutation($input: CreateAssetInput!) { createAsset(input: $input) { id } }',
        {
          apiKey: seedKeys[i % seedKeys.length],
          variables: { input: inputs[i] },
        },
      );
      if (res.body.errors?.length || !res.body.data) throw new Error(`seeding failed: ${JSON.stringify(res.body.errors)}`);
      ids[i] = res.body.data.createAsset.id;
    }
  };
  await Promise.all(Array.from({ length: 6 }, worker));
  return ids;
}

beforeAll(async () => {
  requireBuiltConsole();
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  tenant = await seedTenant(stack, 'map');
  // A few hundred writes in a minute are past one PRO key's per-minute request limit: the writes are spread over keys.
  seedKeys = await Promise.all([1, 2, 3].map(() => stack.keyFor(tenant.tenantId, allReadWriteScopes, 'PRO')));
  // The demo pipeline locates only Line 100 and the valve MLV-12. A second line is recorded as a GIS would: a routed
  // pipeline, routed segments of different class locations (so of different risk), a rectifier and a test point.
  const gas = { status: 'ACTIVE', product: 'NATURAL_GAS', regulation: 'CFR_192', outsideDiameterMm: 508, wallThicknessMm: 7.9, smysMpa: 359, maopKpa: 6_900 };
  const systems = await allAssets();
  const system = systems.find((a) => a.type === 'SYSTEM')!.id;
  const [line] = await createAssets([
    {
      type: 'PIPELINE',
      name: 'Line 300',
      parentId: system,
      ...gas,
      beginStationM: 0,
      endStationM: EXTRA_SEGMENTS * 100,
      location: {
        type: 'LineString',
        coordinates: [
          [-95.3, 29.6],
          [-95.3 + EXTRA_SEGMENTS * 0.001, 29.6],
        ],
      },
    },
  ]);
  const segments = Array.from({ length: EXTRA_SEGMENTS }, (_, i) => ({
    type: 'SEGMENT',
    name: `Line 300 · station ${String(i * 100).padStart(5, '0')}`,
    parentId: line,
    ...gas,
    beginStationM: i * 100,
    endStationM: (i + 1) * 100,
    classLocation: (i % 4) + 1,
    inHca: i % 3 === 0,
    location: {
      type: 'LineString',
      coordinates: [
        [-95.3 + i * 0.001, 29.6],
        [-95.3 + (i + 1) * 0.001, 29.6],
      ],
    },
  }));
  const segmentIds = await createAssets(segments);
  await createAssets([
    { type: 'RECTIFIER', name: 'RECT-31', parentId: segmentIds[10], status: 'ACTIVE', location: { type: 'Point', coordinates: [-95.289, 29.602] } },
    { type: 'CP_TEST_POINT', name: 'TP-300.2', parentId: segmentIds[20], status: 'ACTIVE', location: { type: 'Point', coordinates: [-95.279, 29.598] } },
  ]);
  const assets = await allAssets();
  totalAssets = assets.length;
  located = new Set(assets.filter((a) => a.location !== null).map((a) => a.id));
  expect(located.size).toBeGreaterThan(MAP_PAGE_SIZE);

  // Analytics computes each segment's risk from its asset.upserted event: wait for one of the routed segments.
  const probe = { id: segmentIds[0]!, name: segments[0]!.name };
  let band: string | null = null;
  const caughtUp = await eventually(async () => {
    const res = await graphql<{ asset: { risk: { band: string } | null } | null }>(stack.gatewayUrl, 'query($id: ID!) { asset(id: $id) { risk { band } } }', {
      apiKey: seedKeys[0],
      variables: { id: probe.id },
    });
    band = res.body.data?.asset?.risk?.band ?? null;
    return band !== null;
  }, 60_000);
  if (!caughtUp || band === null) throw new Error(`analytics computed no risk for ${probe.name} within 60 s`);
  routedSegment = { ...probe, band };
  browser = await launchBrowser();
}, 240_000);
afterAll(async () => {
  await browser?.close();
  await stack?.stop();
});

/** Every request the page makes, to check none leaves the origin. */
function recordRequests(page: Page): string[] {
  const urls: string[] = [];
  page.on('request', (req) => urls.push(req.url()));
  return urls;
}

function foreign(urls: string[], origin: string): string[] {
  return urls.filter((u) => /^https?:/.test(u) && new URL(u).origin !== origin);
}

/** The ids of the features Leaflet has drawn (SVG paths and marker icons carry data-asset-id). */
function drawnIds(page: Page): Promise<string[]> {
  return page.locator('.asset-map [data-asset-id]').evaluateAll((elements) => elements.map((e) => e.getAttribute('data-asset-id')!));
}

async function checkPage(page: Page, file: string): Promise<void> {
  await shot(page, file);
  await checkLayout(page, file);
  const { scrollWidth, innerWidth } = await horizontalOverflow(page);
  expect({ page: file, scrollWidth: Math.min(scrollWidth, innerWidth + 1) }).toEqual({ page: file, scrollWidth: Math.min(scrollWidth, innerWidth) });
  await expectNoAxeViolations(page, file);
}

describe.each(Object.keys(sizes) as (keyof typeof sizes)[])('at %s size', (size) => {
  it('draws every located asset from the API, coloured as its legend says, without a request leaving the origin', async () => {
    await inBrowser(browser, stack.gatewayOrigin, `issue27-map-${size}`, async ({ page }) => {
      const requests = recordRequests(page);
      await page.setViewportSize(sizes[size]);
      await signIn(page, tenant.viewer);
      await page.getByRole('banner').getByRole('link', { name: 'Map', exact: true }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Map' }), 'the Map page');
      await visible(page.getByText(`${located.size} of ${totalAssets} assets drawn`), `"${located.size} of ${totalAssets} assets drawn"`, 30_000);

      // What Leaflet drew is exactly the located assets (no page of the connection dropped, nothing twice).
      const ids = await until(
        () => drawnIds(page),
        (d) => d.length >= located.size,
        `${located.size} drawn features`,
      );
      expect(ids.length).toBe(located.size);
      expect(new Set(ids)).toEqual(located);
      // The map view fits them all: the accessible list names every one of them.
      await visible(page.getByText(`${located.size} of ${located.size} mapped assets in view`), 'every drawn asset in the list');
      expect(await page.getByRole('list', { name: 'Assets in view' }).getByRole('listitem').count()).toBe(located.size);
      // Points for components, lines for pipe.
      expect(await page.locator('.asset-map .asset-point-valve[data-asset-id]').count()).toBe(1);
      expect(await page.locator('.asset-map .asset-point-rectifier[data-asset-id]').count()).toBe(1);
      expect(await page.locator('.asset-map .asset-point-test-point[data-asset-id]').count()).toBe(1);
      expect(await page.locator('.asset-map path.asset-line-pipeline[data-asset-id]').count()).toBe(2);

      // The segment's line has its risk band's colour, the one the legend shows beside the band's name.
      const legendLabels: Record<string, RegExp> = { LOW: /^Low/, MEDIUM: /^Medium/, HIGH: /^High/, VERY_HIGH: /^Very high/ };
      const legendColour = await page
        .getByRole('list', { name: 'Lines: risk band' })
        .getByRole('listitem')
        .filter({ hasText: legendLabels[routedSegment.band]! })
        .locator('line')
        .getAttribute('stroke');
      const lineColour = await page.locator(`.asset-map path[data-asset-id="${routedSegment.id}"]`).getAttribute('stroke');
      expect(lineColour).toBe(legendColour);
      expect(await visibleText(page)).toMatch(/No risk result/);
      // A scale bar, and no tile layer by default.
      await visible(page.locator('.asset-map .leaflet-control-scale-line').first(), 'the scale bar');
      expect(await page.locator('.asset-map .leaflet-tile').count()).toBe(0);

      await checkPage(page, `issue27-map-${size}`);
      expect(foreign(requests, stack.gatewayOrigin)).toEqual([]);
    });
  });

  it('opens an asset on the map from its page, highlighted, and clicks through from the map to an asset page', async () => {
    await inBrowser(browser, stack.gatewayOrigin, `issue27-map-open-${size}`, async ({ page }) => {
      const requests = recordRequests(page);
      await page.setViewportSize(sizes[size]);
      // Without animations (as a reader who asks for less motion gets it), the popup is whole in the screenshot.
      await page.emulateMedia({ reducedMotion: 'reduce' });
      await signIn(page, tenant.viewer);
      await page.goto(`/assets/${encodeURIComponent(routedSegment.id)}`);
      await visible(page.getByRole('heading', { level: 1, name: routedSegment.name }), 'the segment page');
      await page.getByRole('link', { name: 'Open on map' }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'Map' }), 'the Map page');
      expect(new URL(page.url()).searchParams.get('asset')).toBe(routedSegment.id);
      const feature = page.locator(`.asset-map path[data-asset-id="${routedSegment.id}"]`);
      await until(
        () => feature.getAttribute('class'),
        (c) => c?.split(' ').includes('asset-selected') ?? false,
        'the segment highlighted (class asset-selected)',
      );
      expect(await page.locator('.asset-map .asset-selected').count()).toBe(1);
      // The view is fitted to it: it is among the few assets in view, marked as chosen in the list.
      const popup = page.locator('.leaflet-popup');
      await visible(popup.getByRole('link', { name: routedSegment.name }), "the segment's popup");
      expect(await popup.innerText()).toMatch(/Segment · Active/);
      expect(await popup.innerText()).toContain(
        `Risk: ${routedSegment.band === 'VERY_HIGH' ? 'Very high' : routedSegment.band.charAt(0) + routedSegment.band.slice(1).toLowerCase()}`,
      );
      const status = await page.getByText(/ of \d+ mapped assets in view$/).innerText();
      const inView = Number(/^(\d+) of/.exec(status)![1]);
      expect(inView).toBeLessThan(located.size / 4);
      await visible(page.getByRole('button', { name: `Show ${routedSegment.name} on the map`, pressed: true }), 'the segment chosen in the list');
      await shot(page, `issue27-map-open-${size}`);

      // The keyboard way: another asset in view chosen with its "Show" button in the list.
      const other = page.getByRole('list', { name: 'Assets in view' }).getByRole('button', { pressed: false }).first();
      const otherName = /^Show (.+) on the map$/.exec((await other.getAttribute('aria-label'))!)![1]!;
      await other.focus();
      await page.keyboard.press('Enter');
      await visible(popup.getByRole('link', { name: otherName, exact: true }), `the popup of ${otherName}`);
      await visible(page.getByRole('button', { name: `Show ${otherName} on the map`, pressed: true }), `${otherName} chosen in the list`);
      expect(await page.locator('.asset-map .asset-selected').count()).toBe(1);
      expect(await page.locator('.asset-map .asset-selected').getAttribute('data-asset-id')).not.toBe(routedSegment.id);
      await expectNoAxeViolations(page, `issue27-map-open-${size}`);

      await page.getByRole('link', { name: 'Map', exact: true }).click();
      await visible(page.getByText(`${located.size} of ${located.size} mapped assets in view`), 'the whole map again');
      await page.locator('.asset-map .asset-point-valve').click();
      await visible(popup.getByRole('link', { name: 'MLV-12' }), "the valve's popup");
      expect(await popup.innerText()).toMatch(/Valve · Active/);
      await popup.getByRole('link', { name: 'MLV-12' }).click();
      await visible(page.getByRole('heading', { level: 1, name: 'MLV-12' }), "the valve's asset page");
      // Leaving the map closes its popup; the address stays the asset page's.
      expect(new URL(page.url()).pathname).toMatch(/^\/assets\/[^/]+$/);
      await page.reload();
      await visible(page.getByRole('heading', { level: 1, name: 'MLV-12' }), "the valve's asset page after a reload");
      expect(foreign(requests, stack.gatewayOrigin)).toEqual([]);
    });
  });
});

/** A 256×256 PNG of one colour, as a tile server would send. */
function solidPng(rgb: [number, number, number]): Buffer {
  const chunk = (type: string, data: Buffer) => {
    const body = Buffer.concat([Buffer.from(type, 'ascii'), data]);
    const out = Buffer.alloc(12 + data.length);
    out.writeUInt32BE(data.length, 0);
    body.copy(out, 4);
    out.writeUInt32BE(crc32(body), 8 + data.length);
    return out;
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(256, 0);
  header.writeUInt32BE(256, 4);
  header[8] = 8; // bit depth
  header[9] = 2; // truecolour
  const row = Buffer.concat([Buffer.from([0]), Buffer.from(Array.from({ length: 256 }, () => rgb).flat())]);
  const pixels = deflateSync(Buffer.concat(Array.from({ length: 256 }, () => row)));
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    chunk('IHDR', header),
    chunk('IDAT', pixels),
    chunk('IEND', Buffer.alloc(0)),
  ]);
}

describe('with CONSOLE_MAP_TILE_URL', () => {
  it('is checked once at start-up: one literal host, the {z} {x} {y} placeholders, no credentials', () => {
    const keys = generateInternalKeyPair();
    const env = { AUTH_URL: 'http://127.0.0.1:4005', INTERNAL_TOKEN_PRIVATE_KEY: keys.privateKeyPem };
    expect(gatewayConfigFromEnv(env).consoleMapTiles).toBeNull();
    expect(
      gatewayConfigFromEnv({ ...env, CONSOLE_MAP_TILE_URL: 'https://tiles.example.com/base/{z}/{x}/{y}{r}.png', CONSOLE_MAP_TILE_ATTRIBUTION: ' © Example ' })
        .consoleMapTiles,
    ).toEqual({ url: 'https://tiles.example.com/base/{z}/{x}/{y}{r}.png', attribution: '© Example' });
    for (const [url, message] of [
      ['https://{s}.tiles.example.com/{z}/{x}/{y}.png', 'CONSOLE_MAP_TILE_URL: has placeholders the map cannot fill: {s}'],
      ['https://tiles.example.com/{s}/{z}/{x}/{y}.png', 'placeholders the map cannot fill: {s}'],
      ['https://tiles.example.com/{z}/{x}.png', 'needs the {y} (or {-y}) placeholder'],
      ['ftp://tiles.example.com/{z}/{x}/{y}.png', 'must be an http(s) URL'],
      ['https://user:secret@tiles.example.com/{z}/{x}/{y}.png', 'must not carry a user name or password'],
    ]) {
      expect(() => gatewayConfigFromEnv({ ...env, CONSOLE_MAP_TILE_URL: url })).toThrow(ConfigError);
      expect(() => gatewayConfigFromEnv({ ...env, CONSOLE_MAP_TILE_URL: url })).toThrow(message);
    }
  });

  it("draws the operator's tiles under the assets, admitting that one origin for images only, and credits them as text", async () => {
    const tileRequests: string[] = [];
    const tile = solidPng([200, 220, 200]);
    const tiles = http.createServer((req, res) => {
      tileRequests.push(req.url ?? '');
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'no-store' });
      res.end(tile);
    });
    await new Promise<void>((resolve) => tiles.listen(0, '127.0.0.1', resolve));
    const tileOrigin = `http://127.0.0.1:${(tiles.address() as AddressInfo).port}`;
    // A second gateway in front of the same services, configured with tiles, as an operator's deployment would be.
    let gateway: RunningGateway | null = null;
    try {
      gateway = await startGateway(
        gatewayConfigFor(
          {
            authUrl: stack.authUrl,
            subgraphUrls: Object.fromEntries(Object.entries(stack.subgraphs).map(([name, s]) => [name, s.url])),
            internalTokenPrivateKey: stack.internalKeys.privateKeyPem,
          },
          { consoleDir: defaultConsoleDir, consoleMapTiles: { url: `${tileOrigin}/tiles/{z}/{x}/{y}.png`, attribution: 'Tiles <b>© Test Co</b>' } },
        ),
      );
      const origin = gateway.origin;
      const page = await fetch(`${origin}/map`, { headers: { accept: 'text/html' } });
      expect(page.status).toBe(200);
      const csp = page.headers.get('content-security-policy')!;
      expect(csp).toContain(`img-src 'self' data: blob: ${tileOrigin};`);
      expect(csp.replace(`img-src 'self' data: blob: ${tileOrigin};`, '')).not.toContain(tileOrigin);
      const defaultCsp = (await fetch(`${stack.gatewayOrigin}/map`, { headers: { accept: 'text/html' } })).headers.get('content-security-policy')!;
      expect(defaultCsp).toContain("img-src 'self' data: blob:;");

      await inBrowser(browser, origin, 'issue27-map-tiles-desktop', async ({ page: tab }) => {
        const requests = recordRequests(tab);
        await tab.setViewportSize(DESKTOP);
        await signIn(tab, tenant.viewer);
        await tab.getByRole('banner').getByRole('link', { name: 'Map', exact: true }).click();
        await visible(tab.getByText(`${located.size} of ${totalAssets} assets drawn`), 'the assets drawn', 30_000);
        await until(
          () => tab.locator('.asset-map img.leaflet-tile-loaded').count(),
          (n) => n > 0,
          'tiles loaded from the tile server',
        );
        expect(tileRequests.length).toBeGreaterThan(0);
        expect(tileRequests.every((u) => /^\/tiles\/\d+\/\d+\/\d+\.png$/.test(u))).toBe(true);
        // Only the tile server besides the console's own origin.
        expect(new Set(foreign(requests, origin).map((u) => new URL(u).origin))).toEqual(new Set([tileOrigin]));
        // The operator's credit is shown as written, not as markup.
        expect(await tab.locator('.leaflet-control-attribution').innerText()).toBe('Tiles <b>© Test Co</b>');
        await shot(tab, 'issue27-map-tiles-desktop');
      });
    } finally {
      await gateway?.stop();
      tiles.closeAllConnections();
      await new Promise<void>((resolve) => tiles.close(() => resolve()));
    }
  });
});
