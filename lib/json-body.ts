import express, { type NextFunction, type Request, type RequestHandler, type Response } from 'express';

/**
 * The one JSON body parser of the gateway and the auth service. The gateway's /auth proxy decides on a body before
 * it forwards it (does this sign-in ask for a cookie session? which refresh token is presented?) and the auth
 * service decides on the same bytes again: when the two parsers differ, a body that one reads and the other does not
 * slips between them — a UTF-8 byte order mark or a UTF-16 body once made the gateway see "not JSON" (so no
 * cross-origin check) while the auth service's body-parser decoded it and set the session cookie. So both sides call
 * parseJsonBody, and it accepts one encoding only:
 *
 * - `Content-Type: application/json`, with no charset or `charset=utf-8` (RFC 8259 §8.1: JSON exchanged between
 *   systems is UTF-8); any other charset is 415;
 * - valid UTF-8, without a byte order mark (§8.1: "MUST NOT add"; refusing it is simpler than agreeing everywhere on
 *   skipping it): 400;
 * - an object or an array at the top (body-parser's `strict`, which both sides used before); an empty body is `{}`
 *   (body-parser's special case, kept so `POST /auth/logout` with no body behaves as before).
 */
export type JsonBodyVerdict =
  | { ok: true; value: unknown }
  | { ok: false; status: 400; type: 'entity.parse.failed'; message: string }
  | { ok: false; status: 415; type: 'charset.unsupported'; message: string };

/** The media type and parameters of a Content-Type header, lower-cased (quotes around a value removed). */
function mediaTypeOf(contentType: string | undefined): { type: string; params: Map<string, string> } | null {
  if (!contentType) return null;
  const [type, ...rest] = contentType.split(';');
  const params = new Map<string, string>();
  for (const part of rest) {
    const at = part.indexOf('=');
    if (at < 0) continue;
    params.set(
      part.slice(0, at).trim().toLowerCase(),
      part
        .slice(at + 1)
        .trim()
        .replace(/^"(.*)"$/, '$1')
        .toLowerCase(),
    );
  }
  return { type: type!.trim().toLowerCase(), params };
}

/** Whether a body of this Content-Type is JSON (and so read and parsed here); other types are left unread. */
export function isJsonContentType(contentType: string | undefined): boolean {
  return mediaTypeOf(contentType)?.type === 'application/json';
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export function parseJsonBody(raw: Buffer, contentType: string | undefined): JsonBodyVerdict {
  const charset = mediaTypeOf(contentType)?.params.get('charset');
  if (charset !== undefined && charset !== 'utf-8' && charset !== 'utf8') {
    return { ok: false, status: 415, type: 'charset.unsupported', message: `JSON bodies are UTF-8; charset "${charset.slice(0, 40)}" is not accepted` };
  }
  if (raw.length === 0) return { ok: true, value: {} };
  const malformed = (message: string): JsonBodyVerdict => ({ ok: false, status: 400, type: 'entity.parse.failed', message });
  if (raw[0] === 0xef && raw[1] === 0xbb && raw[2] === 0xbf) return malformed('malformed JSON body: a byte order mark before the JSON is not accepted');
  let text: string;
  try {
    text = utf8.decode(raw);
  } catch {
    return malformed('malformed JSON body: it is not valid UTF-8');
  }
  // JSON's own whitespace only (String.trimStart would also skip U+FEFF and other Unicode spaces).
  const first = /^[ \t\n\r]*(.)/s.exec(text)?.[1];
  if (first !== '{' && first !== '[') return malformed('malformed JSON body: expected an object or an array');
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch {
    return malformed('malformed JSON body');
  }
}

/** An error shaped as body-parser's (status, type, expose), so the services' error handlers treat both alike. */
export class JsonBodyError extends Error {
  readonly expose = true;
  constructor(
    readonly status: 400 | 415,
    readonly type: 'entity.parse.failed' | 'charset.unsupported',
    message: string,
  ) {
    super(message);
  }
}

/**
 * Express middleware: a JSON body (isJsonContentType) up to `limit` becomes req.body through parseJsonBody; a refused
 * one is a JsonBodyError for the route's error handler; an oversized one is body-parser's `entity.too.large` (413). A
 * body of another type is not read (req.body stays undefined), as express.json left it.
 */
export function jsonBody(options: { limit: string }): RequestHandler[] {
  return [
    express.raw({ type: (req) => isJsonContentType(req.headers['content-type']), limit: options.limit }),
    (req: Request, _res: Response, next: NextFunction) => {
      if (!Buffer.isBuffer(req.body)) return next();
      const verdict = parseJsonBody(req.body, req.headers['content-type']);
      if (!verdict.ok) return next(new JsonBodyError(verdict.status, verdict.type, verdict.message));
      req.body = verdict.value;
      next();
    },
  ];
}
