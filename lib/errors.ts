import { GraphQLError, type GraphQLFormattedError } from 'graphql';
import { errorSummary, type Logger } from './logger';

/** The error codes clients can rely on, with the HTTP status a request-level failure answers with. */
export const errorStatus = {
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  RATE_LIMITED: 429,
  BAD_USER_INPUT: 400,
  GRAPHQL_PARSE_FAILED: 400,
  GRAPHQL_VALIDATION_FAILED: 400,
  /** No operation to run: several in the document and no operationName, or an operationName it does not contain. */
  OPERATION_RESOLUTION_FAILURE: 400,
  /** The request itself is malformed (Apollo Server's own code: a body field of the wrong type, batching, …). */
  BAD_REQUEST: 400,
  NOT_FOUND: 404,
  CONFLICT: 409,
  INTERNAL_SERVER_ERROR: 500,
} as const;

export type ErrorCode = keyof typeof errorStatus;

/**
 * A field-level error: the operation continues, the HTTP status stays 200.
 * `details` land in extensions (e.g. the offending field name).
 */
export function fieldError(code: ErrorCode, message: string, details: Record<string, unknown> = {}): GraphQLError {
  return new GraphQLError(message, { extensions: { ...details, code } });
}

/**
 * A request-level error thrown before execution (authentication, scopes, rate limits):
 * Apollo Server answers with its HTTP status.
 */
export function requestError(code: ErrorCode, message: string, details: Record<string, unknown> = {}, headers?: Record<string, string>): GraphQLError {
  const http: { status: number; headers?: Map<string, string> } = { status: errorStatus[code] };
  if (headers) http.headers = new Map(Object.entries(headers));
  return new GraphQLError(message, { extensions: { ...details, code, http } });
}

/** The body of a GraphQL-shaped error response written outside Apollo Server (Express middleware). */
export function graphqlErrorBody(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
  return { errors: [{ message, extensions: { ...details, code } }] };
}

/** RFC 9457 problem details for the REST routes, with a stable `code` member. */
export interface Problem {
  type: string;
  title: string;
  status: number;
  code: string;
  detail?: string;
  [extra: string]: unknown;
}

export function problem(status: number, code: string, title: string, detail?: string, extra: Record<string, unknown> = {}): Problem {
  return {
    type: `https://linepack.dev/problems/${code.toLowerCase().replace(/_/g, '-')}`,
    title,
    status,
    code,
    ...(detail ? { detail } : {}),
    ...extra,
  };
}

/**
 * Messages graphql-js writes while coercing input quote the whole offending value ("Variable \"$id\" got invalid
 * value …"); a client's megabyte must not come back to it, nor fill logs. Longer messages keep their start.
 */
export const MAX_ERROR_MESSAGE_LENGTH = 500;

function bounded(message: string): string {
  return message.length > MAX_ERROR_MESSAGE_LENGTH ? `${message.slice(0, MAX_ERROR_MESSAGE_LENGTH)}… (message cut)` : message;
}

/** The MongoDB driver's errors for a server it cannot reach or lost (by name: the gateway does not ship the driver). */
const databaseUnavailableErrors = new Set(['MongoServerSelectionError', 'MongoNetworkError', 'MongoNetworkTimeoutError', 'MongoPoolClearedError']);

/**
 * The driver's labels for an error that reset the connection pool (a network error) or that a retryable write met
 * (a network error, a primary stepping down): they survive where the error's class does not — a bulk write that
 * fails on the network throws a MongoBulkWriteError carrying the network error's labels and message.
 */
const databaseUnavailableLabels = ['ResetPool', 'RetryableWriteError'];

/**
 * A socket error the driver passes on as it is (a write to a connection the server has just closed rejects with
 * Node's own EPIPE error, which a bulk write then wraps, copying its code): the network, not a bug — when a driver
 * error carries it, so that no other service's socket error is called a database's.
 */
const networkErrorCodes = new Set(['EPIPE', 'ECONNRESET', 'ECONNREFUSED', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);

/** Whether an error (or one it wraps) says the database cannot be reached: an outage, not a bug. */
export function isDatabaseUnavailable(error: unknown): boolean {
  for (let e = error; e instanceof Error; e = (e as { originalError?: unknown }).originalError ?? e.cause) {
    if (databaseUnavailableErrors.has(e.name)) return true;
    const labels = (e as { errorLabels?: unknown }).errorLabels;
    if (Array.isArray(labels) && labels.some((label) => databaseUnavailableLabels.includes(label as string))) return true;
    if (e.name.startsWith('Mongo') && networkErrorCodes.has(String((e as { code?: unknown }).code))) return true;
    // A network error on a connection of a pool cleared already (another request met the outage first) is stale: the
    // driver labels nothing (sdam/server.ts handleError), and a bulk write wrapping it keeps only its own fields —
    // beforeHandshake is MongoNetworkError's.
    if (e.name.startsWith('Mongo') && typeof (e as { beforeHandshake?: unknown }).beforeHandshake === 'boolean') return true;
  }
  return false;
}

/** Hides internals: unexpected errors reach clients as a bare INTERNAL_SERVER_ERROR, logged in full here. */
export function formatErrorFor(logger: Logger) {
  return (formatted: GraphQLFormattedError, error: unknown): GraphQLFormattedError => {
    const code = formatted.extensions?.['code'];
    // An error Apollo Server raised about the request with a 4xx status but no code (an unsupported persisted-query
    // version, a hash that does not match) is the client's mistake, told as such — not an internal error.
    const status = (error as { extensions?: { http?: { status?: unknown } } } | null)?.extensions?.http?.status;
    if ((code === undefined || code === 'INTERNAL_SERVER_ERROR') && typeof status === 'number' && status >= 400 && status < 500) {
      return { message: bounded(formatted.message), extensions: { code: 'BAD_REQUEST' } };
    }
    // The database unreachable is an outage, not a bug: the gateway tells it as SUBGRAPH_UNAVAILABLE (a 503 when
    // nothing could be served), bounded by the driver's timeouts (lib/config.ts mongoTimeoutsEnvSchema).
    if (code === 'INTERNAL_SERVER_ERROR' && isDatabaseUnavailable(error)) {
      // An outage, not a bug: what failed, without a stack (one per operation would flood the log while it lasts).
      logger.warn({ error: errorSummary(error) }, 'database unavailable');
      return {
        message: 'the database is unavailable; retry shortly',
        extensions: { code: 'DATABASE_UNAVAILABLE' },
        ...(formatted.path ? { path: formatted.path } : {}),
      };
    }
    if (code === undefined || code === 'INTERNAL_SERVER_ERROR') {
      logger.error({ err: error }, 'unexpected error while executing an operation');
      return { message: 'Internal server error', extensions: { code: 'INTERNAL_SERVER_ERROR' }, ...(formatted.path ? { path: formatted.path } : {}) };
    }
    const { stacktrace: _stacktrace, exception: _exception, ...extensions } = formatted.extensions ?? {};
    return { ...formatted, message: bounded(formatted.message), extensions };
  };
}
