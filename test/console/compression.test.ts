import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import http, { type IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { brotliCompressSync, brotliDecompressSync, gunzipSync } from 'node:zlib';
import express from 'express';
import { getIntrospectionQuery } from 'graphql';
import type { Browser } from 'playwright-core';
import { COMPRESSION_THRESHOLD_BYTES } from '@linepack/gateway/compression';
import { mountConsole } from '@linepack/gateway/console';
import { startTestStack, type TestStack } from '../support/stack';
import { inBrowser, launchBrowser, visible } from './support/browser';
import { consoleDist, requireBuiltConsole } from './support/console';

/**
 * Compression on the wire (issue 27 item 6), over real HTTP with the raw bytes read (node:http, which decodes
 * nothing): the console's files are sent as the Brotli or gzip file Vite wrote beside them, whichever the browser
 * accepts, with Content-Encoding, their own Content-Type, Vary: Accept-Encoding and an ETag per encoding; large
 * GraphQL answers are compressed as they are sent, small ones are not. Every decoded body is byte for byte the
 * uncompressed one.
 */
let stack: TestStack;
let apiKey: string;

beforeAll(async () => {
  requireBuiltConsole();
  stack = await startTestStack();
  ({ apiKey } = await stack.tenantWithKey());
}, 60_000);
afterAll(async () => {
  await stack?.stop();
});

interface Raw {
  status: number;
  headers: IncomingHttpHeaders;
  /** The bytes as they crossed the wire. */
  body: Buffer;
}

function request(method: string, url: string, headers: Record<string, string>, body?: string): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(chunks) }));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end(body);
  });
}

const get = (pathname: string, headers: Record<string, string> = {}, origin = stack.gatewayOrigin) => request('GET', `${origin}${pathname}`, headers);

function decoded(res: Raw): Buffer {
  const encoding = res.headers['content-encoding'];
  if (encoding === 'br') return brotliDecompressSync(res.body);
  if (encoding === 'gzip') return gunzipSync(res.body);
  if (encoding === undefined) return res.body;
  throw new Error(`unexpected Content-Encoding ${encoding}`);
}

/** The build's JavaScript and CSS files, largest first, as the gateway serves them (/assets/NAME). */
function builtFiles(): { urlPath: string; file: string; size: number }[] {
  const dir = path.join(consoleDist, 'assets');
  return readdirSync(dir)
    .filter((name) => /\.(?:js|css)$/.test(name))
    .map((name) => ({ urlPath: `/assets/${name}`, file: path.join(dir, name), size: statSync(path.join(dir, name)).size }))
    .sort((a, b) => b.size - a.size);
}

describe("the console's files", () => {
  it('are sent as Brotli or gzip, whichever the browser accepts, decoding to the built file', async () => {
    const files = builtFiles();
    const script = files.find((f) => f.urlPath.endsWith('.js'))!;
    const style = files.find((f) => f.urlPath.endsWith('.css'))!;
    for (const { urlPath, file, size } of [script, style]) {
      const original = readFileSync(file);
      const type = urlPath.endsWith('.js') ? /^(?:text|application)\/javascript; charset=utf-8$/i : /^text\/css; charset=utf-8$/i;

      const br = await get(urlPath, { 'accept-encoding': 'gzip, deflate, br, zstd' });
      expect({ status: br.status, encoding: br.headers['content-encoding'], vary: br.headers['vary'] }).toEqual({
        status: 200,
        encoding: 'br',
        vary: 'Accept-Encoding',
      });
      expect(br.headers['content-type']).toMatch(type);
      expect(br.headers['cache-control']).toBe('public, max-age=31536000, immutable');
      expect(br.headers['x-content-type-options']).toBe('nosniff');
      expect(Number(br.headers['content-length'])).toBe(br.body.length);
      expect(decoded(br).equals(original)).toBe(true);
      expect(br.body.length).toBeLessThan(size * 0.5);

      const gzip = await get(urlPath, { 'accept-encoding': 'gzip' });
      expect(gzip.headers['content-encoding']).toBe('gzip');
      expect(gzip.headers['vary']).toBe('Accept-Encoding');
      expect(gzip.headers['content-type']).toMatch(type);
      expect(decoded(gzip).equals(original)).toBe(true);
      expect(gzip.body.length).toBeLessThan(size * 0.5);
      // Brotli at quality 11 beats gzip 9 on every file of this size.
      expect(br.body.length).toBeLessThan(gzip.body.length);

      // Brotli refused by its quality value: gzip. Nothing acceptable, or no header at all: the file itself.
      expect((await get(urlPath, { 'accept-encoding': 'br;q=0, gzip;q=0.5' })).headers['content-encoding']).toBe('gzip');
      for (const headers of [{ 'accept-encoding': 'identity' }, {}] as Record<string, string>[]) {
        const plain = await get(urlPath, headers);
        expect(plain.headers['content-encoding']).toBeUndefined();
        expect(plain.headers['vary']).toBe('Accept-Encoding');
        expect(plain.headers['content-type']).toMatch(type);
        expect(plain.body.equals(original)).toBe(true);
      }
    }
  });

  it('keep an ETag per encoding, so a revalidation is answered 304 for the copy the browser holds', async () => {
    const { urlPath } = builtFiles()[0]!;
    const br = await get(urlPath, { 'accept-encoding': 'br' });
    const gzip = await get(urlPath, { 'accept-encoding': 'gzip' });
    const plain = await get(urlPath, {});
    const tags = [br, gzip, plain].map((r) => r.headers['etag']);
    for (const tag of tags) expect(tag).toMatch(/^(W\/)?"[^"]+"$/);
    expect(new Set(tags).size).toBe(3);

    const again = await get(urlPath, { 'accept-encoding': 'br', 'if-none-match': br.headers['etag']! });
    expect(again.status).toBe(304);
    expect(again.body.length).toBe(0);
    // The Brotli copy's tag does not validate the gzip copy: a gzip-only client gets the body.
    const otherEncoding = await get(urlPath, { 'accept-encoding': 'gzip', 'if-none-match': br.headers['etag']! });
    expect(otherEncoding.status).toBe(200);
    expect(decoded(otherEncoding).equals(readFileSync(builtFiles()[0]!.file))).toBe(true);
  });

  it('of a new build are sent compressed by a gateway that was already running', async () => {
    // The console's static serving alone (gateway/src/console.ts) over a folder that a build rewrites under it.
    const dir = mkdtempSync(path.join(tmpdir(), 'console-build-'));
    const server = http.createServer();
    try {
      mkdirSync(path.join(dir, 'assets'));
      writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>Linepack</title>');
      const script = Buffer.from(`console.log(${JSON.stringify('x'.repeat(4096))});\n`);
      writeFileSync(path.join(dir, 'assets', 'index-AAAAAAAA.js'), script);
      const app = express();
      mountConsole(app, dir);
      server.on('request', app);
      await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
      const origin = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
      expect((await get('/assets/index-AAAAAAAA.js', { 'accept-encoding': 'br' }, origin)).headers['content-encoding']).toBeUndefined();

      // The next build: a new bundle and its Brotli copy.
      const next = Buffer.from(`console.log(${JSON.stringify('y'.repeat(4096))});\n`);
      writeFileSync(path.join(dir, 'assets', 'index-BBBBBBBB.js'), next);
      writeFileSync(path.join(dir, 'assets', 'index-BBBBBBBB.js.br'), brotliCompressSync(next));
      const served = await get('/assets/index-BBBBBBBB.js', { 'accept-encoding': 'br' }, origin);
      expect(served.headers['content-encoding']).toBe('br');
      expect(decoded(served).equals(next)).toBe(true);
    } finally {
      server.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('are what Chromium receives: every script and stylesheet of the sign-in page over 1 kB comes Brotli-encoded', async () => {
    let browser: Browser | null = null;
    try {
      browser = await launchBrowser();
      await inBrowser(browser, stack.gatewayOrigin, 'compression-sign-in', async ({ page }) => {
        const encodings = new Map<string, string>();
        page.on('response', (res) => {
          if (/\/assets\/.+\.(?:js|css)$/.test(res.url())) encodings.set(new URL(res.url()).pathname, res.headers()['content-encoding'] ?? 'none');
        });
        await page.goto('/sign-in');
        await visible(page.getByRole('heading', { name: 'Sign in to Linepack' }), 'the sign-in page');
        // Vite compresses files of 1 kB and more (console/vite.config.ts): smaller ones gain too little.
        const sizes = new Map(builtFiles().map((f) => [f.urlPath, f.size]));
        const large = [...encodings].filter(([urlPath]) => (sizes.get(urlPath) ?? 0) >= 1024);
        expect(large.length).toBeGreaterThan(0);
        expect(large.filter(([, encoding]) => encoding !== 'br')).toEqual([]);
      });
    } finally {
      await browser?.close();
    }
  });
});

describe('GraphQL answers', () => {
  const post = (query: string, acceptEncoding: string | null, key: string | null = apiKey) =>
    request(
      'POST',
      `${stack.gatewayOrigin}/graphql`,
      {
        'content-type': 'application/json',
        ...(key ? { authorization: `Bearer ${key}` } : {}),
        ...(acceptEncoding === null ? {} : { 'accept-encoding': acceptEncoding }),
      },
      JSON.stringify({ query }),
    );

  it('above the threshold are compressed with the encoding the client accepts, decoding to the same JSON', async () => {
    // The schema's introspection: a large answer (the explorer asks it on every visit).
    const query = getIntrospectionQuery();
    const plain = await post(query, null);
    expect(plain.status).toBe(200);
    expect(plain.headers['content-encoding']).toBeUndefined();
    const json = JSON.parse(plain.body.toString('utf8')) as { data?: { __schema?: unknown } };
    expect(json.data?.__schema).toBeDefined();
    expect(plain.body.length).toBeGreaterThan(100_000);

    const br = await post(query, 'gzip, deflate, br, zstd');
    expect({ status: br.status, encoding: br.headers['content-encoding'], vary: br.headers['vary'] }).toEqual({
      status: 200,
      encoding: 'br',
      vary: 'Accept-Encoding',
    });
    expect(br.headers['content-type']).toMatch(/^application\/(graphql-response\+)?json/);
    expect(decoded(br).equals(plain.body)).toBe(true);
    expect(br.body.length).toBeLessThan(plain.body.length / 5);

    const gzip = await post(query, 'gzip');
    expect(gzip.headers['content-encoding']).toBe('gzip');
    expect(decoded(gzip).equals(plain.body)).toBe(true);
    expect(gzip.body.length).toBeLessThan(plain.body.length / 4);

    const refused = await post(query, 'br;q=0, gzip;q=0, identity');
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(refused.body.equals(plain.body)).toBe(true);
  });

  it('below the threshold, and small refusals, are sent as they are', async () => {
    const small = await post('{ __typename }', 'br, gzip');
    expect(small.status).toBe(200);
    expect(small.body.length).toBeLessThan(COMPRESSION_THRESHOLD_BYTES);
    expect(small.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(small.body.toString('utf8'))).toMatchObject({ data: { __typename: 'Query' } });
    // Still marked as depending on Accept-Encoding: a cache must not hand this copy to every client blindly.
    expect(small.headers['vary']).toMatch(/Accept-Encoding/);

    const refused = await post('{ __typename }', 'br, gzip', null);
    expect(refused.status).toBe(401);
    expect(refused.headers['content-encoding']).toBeUndefined();
    expect(JSON.parse(refused.body.toString('utf8'))).toMatchObject({ errors: [{ extensions: { code: 'UNAUTHENTICATED' } }] });
  });
});
