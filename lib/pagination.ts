import { z } from 'zod';
import { fieldError } from './errors';
import { textLimits } from './validation';

/** Relay-style cursor pages: `first`/`after`, `pageInfo`, `totalCount`. */
export const MAX_PAGE_SIZE = 500;

export function pageSize(first: number | null | undefined, defaultSize = 50): number {
  const size = first ?? defaultSize;
  if (!Number.isInteger(size) || size < 0 || size > MAX_PAGE_SIZE) {
    throw fieldError('BAD_USER_INPUT', `first must be an integer from 0 to ${MAX_PAGE_SIZE}`, { field: 'first' });
  }
  return size;
}

/** Cursors are opaque to clients: base64url of the JSON sort key of the last row. */
export function encodeCursor(sortKey: unknown): string {
  return Buffer.from(JSON.stringify(sortKey)).toString('base64url');
}

export function decodeCursor<S extends z.ZodType>(cursor: string | null | undefined, schema: S): z.output<S> | null {
  if (cursor == null) return null;
  if (cursor.length > textLimits.cursor) throw fieldError('BAD_USER_INPUT', 'after is not a cursor returned by this field', { field: 'after' });
  try {
    const parsed = schema.safeParse(JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')));
    if (parsed.success) return parsed.data;
  } catch {
    // fall through to the error below
  }
  throw fieldError('BAD_USER_INPUT', 'after is not a cursor returned by this field', { field: 'after' });
}

export interface Connection<T> {
  edges: { cursor: string; node: T }[];
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  totalCount: number;
}

/**
 * Builds a page from `size + 1` fetched rows: the extra row only tells whether there is a next page.
 *
 * `counted` comes from a count read beside the rows' read, so while documents are being written the two can disagree
 * (the count already sees a row the page missed). A first page without a next page holds the whole list: its rows
 * are its count, so a client that waits for `totalCount` to reach N finds N rows on that page.
 */
export function toConnection<T>(rows: T[], size: number, counted: number, cursorOf: (row: T, index: number) => string, isFirstPage = false): Connection<T> {
  const page = rows.slice(0, size);
  const edges = page.map((node, index) => ({ cursor: cursorOf(node, index), node }));
  const hasNextPage = rows.length > size;
  return {
    edges,
    pageInfo: { hasNextPage, endCursor: edges.at(-1)?.cursor ?? null },
    totalCount: isFirstPage && !hasNextPage ? page.length : counted,
  };
}
