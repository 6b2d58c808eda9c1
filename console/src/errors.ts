/**
 * Every failure the console shows is turned into a sentence a person understands here, from the API's
 * error shapes: GraphQL `{ errors: [{ message, extensions: { code, … } }] }` and the auth routes'
 * `application/problem+json` `{ type, title, status, code, detail }`.
 */
export interface GraphQLErrorShape {
  message: string;
  path?: (string | number)[];
  extensions?: {
    code?: string;
    missingScopes?: string[];
    retryAfterSeconds?: number;
    field?: string;
    violations?: { field: string; message: string }[];
    violationCount?: number;
    [key: string]: unknown;
  };
}

export class ApiError extends Error {
  constructor(
    message: string,
    readonly code: string,
    readonly status: number,
    readonly retryAfterSeconds: number | null = null,
    readonly requestId: string | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

function scopeList(scopes: string[]): string {
  if (scopes.length === 1) return `the ${scopes[0]} scope`;
  return `the ${scopes.slice(0, -1).join(', ')} and ${scopes[scopes.length - 1]} scopes`;
}

/** "12 s", or "900 s (about 15 minutes)" for a long wait. */
function wait(seconds: number): string {
  if (seconds < 120) return `${seconds} s`;
  const minutes = Math.round(seconds / 60);
  return `${seconds} s (about ${minutes} minutes)`;
}

function seconds(value: unknown): number | null {
  const n = typeof value === 'number' ? value : typeof value === 'string' ? Number(value) : NaN;
  return Number.isFinite(n) && n >= 0 ? Math.ceil(n) : null;
}

/** A person-readable sentence for one GraphQL error. */
export function describeGraphQLError(
  error: GraphQLErrorShape,
  status: number,
  retryAfterHeader: string | null = null,
  requestId: string | null = null,
): ApiError {
  const ext = error.extensions ?? {};
  const code = typeof ext.code === 'string' ? ext.code : status === 401 ? 'UNAUTHENTICATED' : status === 429 ? 'RATE_LIMITED' : 'ERROR';
  switch (code) {
    case 'UNAUTHENTICATED':
      return new ApiError('You are not signed in, or your session has ended. Sign in again to continue.', code, status, null, requestId);
    case 'FORBIDDEN': {
      const missing = Array.isArray(ext.missingScopes) ? ext.missingScopes.filter((s): s is string => typeof s === 'string') : [];
      const text =
        missing.length > 0 ? `You don't have permission: this needs ${scopeList(missing)}.` : `You don't have permission to do this (${error.message}).`;
      return new ApiError(text, code, status, null, requestId);
    }
    case 'RATE_LIMITED': {
      const after = seconds(ext.retryAfterSeconds) ?? seconds(retryAfterHeader);
      return new ApiError(
        after !== null ? `Too many requests — try again in ${wait(after)}.` : 'Too many requests — try again shortly.',
        code,
        status,
        after,
        requestId,
      );
    }
    case 'BAD_USER_INPUT': {
      const violations = Array.isArray(ext.violations) ? ext.violations : [];
      if (violations.length > 1) {
        const listed = violations
          .slice(0, 5)
          .map((v) => `${v.field}: ${v.message}`)
          .join('; ');
        return new ApiError(`Please check what you entered — ${listed}${violations.length > 5 ? '; …' : ''}.`, code, status, null, requestId);
      }
      return new ApiError(`Please check what you entered — ${error.message}.`, code, status, null, requestId);
    }
    case 'GRAPHQL_VALIDATION_FAILED':
    case 'GRAPHQL_PARSE_FAILED':
      return new ApiError(`The request was not valid: ${error.message}.`, code, status, null, requestId);
    case 'NOT_FOUND':
      return new ApiError(`Not found: ${error.message}.`, code, status, null, requestId);
    case 'CONFLICT':
      return new ApiError(`That conflicts with the current state: ${error.message}.`, code, status, null, requestId);
    case 'TIMEOUT':
      return new ApiError('The server took too long to answer. Try again in a moment.', code, status, null, requestId);
    case 'INTERNAL_SERVER_ERROR':
      return new ApiError(
        `Something went wrong on the server. Try again; if it keeps happening, give your administrator this request id: ${requestId ?? 'unknown'}.`,
        code,
        status,
        null,
        requestId,
      );
    default:
      return new ApiError(error.message || `The request failed (HTTP ${status}).`, code, status, null, requestId);
  }
}

export interface Problem {
  type?: string;
  title?: string;
  status?: number;
  code?: string;
  detail?: string;
}

/** A person-readable sentence for an auth route's problem answer. */
export function describeProblem(problem: Problem | null, status: number, retryAfterHeader: string | null): ApiError {
  const code = problem?.code ?? `HTTP_${status}`;
  if (status === 429) {
    const after = seconds(retryAfterHeader);
    return new ApiError(after !== null ? `Too many attempts — try again in ${wait(after)}.` : 'Too many attempts — try again later.', code, status, after);
  }
  if (code === 'INVALID_CREDENTIALS' || (status === 401 && !problem?.code)) {
    return new ApiError('The email or password is not right. Check them and try again.', code, status);
  }
  if (code === 'CSRF_FAILED') return new ApiError('Your session could not be confirmed. Sign in again.', code, status);
  if (code === 'INVALID_REFRESH_TOKEN') return new ApiError('Your session has ended. Sign in again.', code, status);
  if (status >= 500) return new ApiError('The sign-in service is not answering right now. Try again in a moment.', code, status);
  const words = [problem?.title, problem?.detail].filter(Boolean).join(': ');
  return new ApiError(words ? `${words}.` : `The request failed (HTTP ${status}).`, code, status);
}

export function networkError(): ApiError {
  return new ApiError('Could not reach Linepack. Check your connection and try again.', 'NETWORK', 0);
}

export function messageOf(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return String(error);
}
