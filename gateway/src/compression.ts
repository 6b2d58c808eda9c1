import compression from 'compression';
import type { RequestHandler } from 'express';
import { constants } from 'node:zlib';

/**
 * Brotli or gzip for the gateway's own answers (GraphQL JSON, /schema/scopes), chosen from the request's
 * Accept-Encoding (Brotli first, then gzip; identity when the client accepts neither), with Vary: Accept-Encoding.
 * The console's static files are not compressed here: Vite wrote them compressed at build time (console.ts).
 *
 * Levels, from `npm run bench:console` on three real answers of 57–248 kB (README, The web console): Brotli quality 4
 * takes 0.3–3 ms an answer, less CPU than gzip 6, for 4–11 % fewer bytes; qualities 5 and 6 cost 2–4 times the CPU
 * for at most 9 % fewer bytes (one answer grew), 9 and 11 twenty to a hundred times — CPU a gateway answering many
 * requests at once cannot spend. gzip, for clients without Brotli, stays at zlib's default 6 (9 buys 1–6 %).
 *
 * Answers under COMPRESSION_THRESHOLD_BYTES are sent as they are: such an answer fits one TCP segment (1,460 bytes of
 * payload) compressed or not, so compressing it saves no round trip and costs CPU and a compressor's memory.
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
