import compression from 'compression';
import type { RequestHandler } from 'express';
import { constants } from 'node:zlib';

/**
 * Brotli or gzip for the gateway's own answers (GraphQL JSON, /schema/scopes), chosen from the request's
 * Accept-Encoding (Brotli first, then gzip; identity when the client accepts neither), with Vary: Accept-Encoding.
 * The console's static files are not compressed here: Vite wrote them compressed at build time (console.ts).
 *
 * Levels, from `npm run bench:console -- --only compression` on a 5.6 MB answer (README, The web console): Brotli
 * quality 4 costs about what gzip 6 does per MB and sends ~15 % fewer bytes; qualities above 5 cost several times as
 * much CPU per request for a few per cent, which a gateway answering many requests at once cannot spend. gzip stays
 * at zlib's default 6 (levels 7–9 buy under 2 %).
 *
 * Answers under COMPRESSION_THRESHOLD_BYTES are sent as they are: most GraphQL answers are a few hundred bytes, fit
 * one TCP segment either way, and compressing them would cost CPU and a deflate context's memory for nothing.
 * Compression is safe against BREACH-style guessing here because nothing sent with these answers is ambient: the
 * gateway reads credentials from the Authorization header only (a cross-site page cannot make the browser attach
 * them), and the console's refresh cookie is read only by /auth/*, which this does not compress.
 */
export const COMPRESSION_THRESHOLD_BYTES = 1400;
export const BROTLI_QUALITY = 4;
export const GZIP_LEVEL = 6;

export function responseCompression(): RequestHandler {
  return compression({
    threshold: COMPRESSION_THRESHOLD_BYTES,
    level: GZIP_LEVEL,
    brotli: { params: { [constants.BROTLI_PARAM_QUALITY]: BROTLI_QUALITY, [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT } },
  });
}
