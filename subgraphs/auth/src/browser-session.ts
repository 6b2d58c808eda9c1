import { createHash, timingSafeEqual } from 'node:crypto';
import type { Request, Response } from 'express';
import { cookieValues } from '@linepack/lib/http';
import type { TokenPair } from './tokens';

/**
 * Browser sessions (the web console): the refresh token lives in an HttpOnly cookie that script cannot read
 * and only /auth/* receives (OWASP: keep long-lived tokens out of reach of XSS); the short-lived access token
 * stays in the page's memory. The routes that act on the cookie (refresh, logout) are protected from
 * cross-site requests twice: SameSite=Strict keeps the browser from sending the cookie from another site, and
 * each request must carry X-CSRF-Token — a value derived from the refresh token itself (a signed double
 * submit): a page on another origin can neither read the readable `__Host-lp_csrf` cookie nor compute the value,
 * and a cookie planted by a sibling domain does not match a session it cannot see.
 */
export const REFRESH_COOKIE = 'lp_refresh';
/** `__Host-`: only this host can set it (Secure, Path=/, no Domain), so a sibling subdomain cannot plant one. */
export const CSRF_COOKIE = '__Host-lp_csrf';
export const CSRF_HEADER = 'x-csrf-token';

export function csrfTokenFor(refreshToken: string): string {
  return createHash('sha256').update(`linepack-csrf:${refreshToken}`).digest('base64url');
}

/**
 * A cookie of the request, by name; 'ambiguous' when the browser sent it more than once — a cookie planted by a
 * sibling domain (`Domain=.example.com`) next to ours, which must not decide whose session this is.
 */
export function requestCookie(req: Request, name: string): string | null | 'ambiguous' {
  const values = cookieValues(req.header('cookie'), name);
  if (values.length > 1 || values[0] === null) return 'ambiguous';
  return values[0] ?? null;
}

/** Whether the request's X-CSRF-Token belongs to its refresh cookie (compared in constant time). */
export function csrfMatches(req: Request, refreshToken: string): boolean {
  const presented = Buffer.from(req.header(CSRF_HEADER) ?? '');
  const expected = Buffer.from(csrfTokenFor(refreshToken));
  return presented.length === expected.length && timingSafeEqual(presented, expected);
}

/** The browser's answer to a sign-in or refresh: cookies set, no refresh token in the body. */
export function sendBrowserSession(res: Response, pair: TokenPair, refreshTtlSeconds: number): void {
  const csrf = csrfTokenFor(pair.refresh_token);
  const maxAge = refreshTtlSeconds * 1000;
  res.cookie(REFRESH_COOKIE, pair.refresh_token, { httpOnly: true, secure: true, sameSite: 'strict', path: '/auth', maxAge });
  res.cookie(CSRF_COOKIE, csrf, { httpOnly: false, secure: true, sameSite: 'strict', path: '/', maxAge });
  res.setHeader('Cache-Control', 'no-store');
  res.json({ access_token: pair.access_token, token_type: pair.token_type, expires_in: pair.expires_in, csrf_token: csrf });
}

export function clearBrowserSession(res: Response): void {
  res.clearCookie(REFRESH_COOKIE, { httpOnly: true, secure: true, sameSite: 'strict', path: '/auth' });
  res.clearCookie(CSRF_COOKIE, { httpOnly: false, secure: true, sameSite: 'strict', path: '/' });
}
