import { readFileSync, statSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import path from 'node:path';
import cors from 'cors';
import type { Express, NextFunction, Request, RequestHandler, Response } from 'express';
import expressStaticGzip from 'express-static-gzip';
import { problem } from '@linepack/lib/errors';
import type { ConsoleMapTiles } from './config';

/**
 * The web console (console/, built by Vite into static files) served from the gateway's own origin, so it
 * needs no CORS and its session cookie never leaves this origin. Every client-side route answers the app's
 * index.html; /graphql answers it too when a browser asks for a page (GraphiQL lives in the console).
 */
const consolePaths = /^\/(?:$|(?:sign-in|dashboard|explorer|assets|map|digs|risk|compliance|settings|oauth)(?:\/|$))/;

/** The gateway's own routes: a browser asking one of them for a page is not sent the console's 404. */
const apiPaths = /^\/(?:graphql|auth|schema|healthz|readyz|metrics)(?:\/|$)/;

/**
 * What the console's pages may load and call: only this origin (no CDN at run time), no framing. The one exception is
 * the map's tile server when the operator configured one: images from that URL's origin only.
 */
function contentSecurityPolicyFor(mapTiles: ConsoleMapTiles | null): string {
  return [
    "default-src 'self'",
    "script-src 'self'",
    "style-src 'self' 'unsafe-inline'",
    `img-src 'self' data: blob:${mapTiles ? ` ${new URL(mapTiles.url).origin}` : ''}`,
    "font-src 'self' data:",
    "connect-src 'self'",
    "worker-src 'self' blob:",
    "frame-ancestors 'none'",
    "base-uri 'self'",
    "form-action 'self'",
    "object-src 'none'",
  ].join('; ');
}

const escapeAttribute = (value: string) => value.replace(/&/g, '&amp;').replace(/"/g, '&quot;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** The map's tile settings for the console, as <meta> tags in its page (the static build knows nothing of the deployment). */
function withMapTiles(html: string, mapTiles: ConsoleMapTiles | null): string {
  if (!mapTiles) return html;
  const tags =
    `<meta name="linepack-map-tiles" content="${escapeAttribute(mapTiles.url)}" />` +
    (mapTiles.attribution ? `<meta name="linepack-map-attribution" content="${escapeAttribute(mapTiles.attribution)}" />` : '');
  return html.replace('</head>', `${tags}</head>`);
}

function pageHeaders(res: Pick<ServerResponse, 'setHeader'>, contentSecurityPolicy: string): void {
  res.setHeader('Content-Security-Policy', contentSecurityPolicy);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cache-Control', 'no-cache');
}

/** A browser navigating (Accept: text/html first), as opposed to a GraphQL client asking for JSON. */
export function wantsPage(req: Request): boolean {
  if (req.method !== 'GET' && req.method !== 'HEAD') return false;
  const accept = req.header('accept') ?? '';
  return accept.includes('text/html') && !/^application\/(graphql-response\+)?json/.test(accept);
}

/** Vite names its bundles by content hash: they never change, so browsers may keep them. */
const hashedBundle = /[.-][A-Za-z0-9_-]{8,}\.(?:js|css|woff2?|svg|png)$/;

/**
 * The build's files, each sent as the .br or .gz that Vite wrote beside it when the browser accepts that encoding
 * (Brotli first), with Content-Encoding, the original file's Content-Type and Vary: Accept-Encoding; a browser that
 * accepts neither gets the file itself. The ETag and Last-Modified are those of the file sent, so each encoding has its
 * own validators and a conditional request is answered 304 for the one the browser holds.
 * The compressed files are listed when the middleware is made: a new build (the folder's entries change) makes a new
 * one, so a running gateway serves the new build's compressed files too.
 */
function staticFiles(consoleDir: string, contentSecurityPolicy: string): RequestHandler {
  const make = () =>
    expressStaticGzip(consoleDir, {
      enableBrotli: true,
      orderPreference: ['br', 'gzip'],
      index: false,
      serveStatic: {
        index: false,
        redirect: false,
        setHeaders: (res, file) => {
          const original = file.replace(/\.(?:br|gz)$/, '');
          // A page reached by its file name (/index.html) gets the pages' policy too: no framing, nothing foreign.
          if (original.endsWith('.html')) return pageHeaders(res, contentSecurityPolicy);
          res.setHeader('X-Content-Type-Options', 'nosniff');
          res.setHeader('Cache-Control', hashedBundle.test(original) ? 'public, max-age=31536000, immutable' : 'no-cache');
        },
      },
    }) as RequestHandler;
  const buildOf = () => {
    try {
      return `${statSync(consoleDir).mtimeMs}:${statSync(path.join(consoleDir, 'assets')).mtimeMs}`;
    } catch {
      return 'none';
    }
  };
  let current = { build: buildOf(), handler: make() };
  return (req, res, next) => {
    // Only GET and HEAD read files (an API POST passes straight on, as it did through express.static).
    if (req.method !== 'GET' && req.method !== 'HEAD') return next();
    const build = buildOf();
    if (build !== current.build) current = { build, handler: make() };
    return current.handler(req, res, next);
  };
}

export function mountConsole(app: Express, consoleDir: string | null, mapTiles: ConsoleMapTiles | null = null): void {
  const contentSecurityPolicy = contentSecurityPolicyFor(mapTiles);
  const indexPath = consoleDir ? path.join(consoleDir, 'index.html') : null;
  // Re-read when a new build replaced it (its hashed bundle names change), so a running gateway serves the new one.
  let cached: { mtimeMs: number; html: string } | null = null;
  const currentIndex = (): string | null => {
    if (indexPath === null) return null;
    try {
      const { mtimeMs } = statSync(indexPath);
      if (cached?.mtimeMs !== mtimeMs) cached = { mtimeMs, html: withMapTiles(readFileSync(indexPath, 'utf8'), mapTiles) };
      return cached.html;
    } catch {
      return null;
    }
  };
  const sendIndex = (res: Response, status = 200) => {
    pageHeaders(res, contentSecurityPolicy);
    const index = currentIndex();
    if (index === null) {
      res.status(503).type('text/plain').send('The Linepack console is not built: run `npm run console:build` (npm start builds it when it is missing).\n');
      return;
    }
    res.status(status).type('html').send(index);
  };
  if (consoleDir !== null) app.use(staticFiles(consoleDir, contentSecurityPolicy));
  app.get(consolePaths, (req, res, next) => (wantsPage(req) ? sendIndex(res) : next()));
  // A script or stylesheet the build does not have (an old page asking for last build's bundle): a plain 404, never a
  // page in its place, which the browser would try to run as the script.
  app.get(/^\/assets\/[^/]+\.[A-Za-z0-9]+$/, (req, res, next) =>
    wantsPage(req)
      ? next()
      : void res
          .status(404)
          .type('application/problem+json')
          .json(problem(404, 'NOT_FOUND', 'no such file in the console build')),
  );
  app.get('/graphql', (req, res, next) => (wantsPage(req) ? sendIndex(res) : next()));
  // Any other address a browser opens: the console's "Page not found" with a 404 status (never Express's bare
  // "Cannot GET"), so the visitor keeps the header and a way back, and crawlers and monitors see the 404.
  app.get(/^\/(?!\.)/, (req, res, next) => (wantsPage(req) && !apiPaths.test(req.path) ? sendIndex(res, 404) : next()));
}

/**
 * CORS for browser tools on other origins: only the configured ones (CORS_ORIGINS), with credentials; the
 * console is same-origin and needs none. Preflights are answered here, before authentication, so a listed
 * origin's OPTIONS never meets a 401; an unlisted origin gets no Access-Control-* header at all.
 */
export function corsMiddleware(allowedOrigins: readonly string[]): (req: Request, res: Response, next: NextFunction) => void {
  const allowed = new Set(allowedOrigins);
  const handle = cors({
    origin: (origin, callback) => callback(null, origin !== undefined && allowed.has(origin)),
    credentials: true,
    methods: ['GET', 'POST', 'OPTIONS'],
    // No X-CSRF-Token: the cookie session is the console's (same-origin) alone.
    allowedHeaders: ['Authorization', 'Content-Type', 'Accept', 'X-Tenant-ID', 'X-Request-ID'],
    exposedHeaders: ['X-Request-ID', 'Retry-After', 'RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset', 'RateLimit-Policy'],
    maxAge: 600,
  });
  // cors answers a listed origin's preflight itself and passes every other request on: an unlisted origin's
  // preflight is answered here too (204 without Access-Control-* headers, so the browser refuses), not by a 401
  // that would count against the address's failed-authentication budget.
  return (req, res, next) =>
    handle(req, res, (err?: unknown) => {
      if (err) return next(err);
      if (req.method === 'OPTIONS' && req.header('access-control-request-method')) return void res.status(204).end();
      next();
    });
}
