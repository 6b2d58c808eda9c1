import pino, { type Logger } from 'pino';
import { activeSpanIds } from './tracing';

export type { Logger };

/**
 * JSON logs with every place a credential can appear redacted: request headers,
 * request bodies of the auth routes, and our own fields. Tests assert nothing
 * secret reaches the output.
 */
const redactPaths = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["x-linepack-identity"]',
  'headers.authorization',
  'headers["x-linepack-identity"]',
  'authorization',
  'password',
  '*.password',
  'token',
  '*.token',
  'access_token',
  'refresh_token',
  '*.access_token',
  '*.refresh_token',
  'apiKey',
  '*.apiKey',
  'secret',
  '*.secret',
  'body.password',
  'body.refresh_token',
];

/**
 * One JSON object per line: `level` as its name ("info", not pino's 30: what log pipelines and people read), `time`
 * in ISO 8601, `service`, and — for a line written while a traced request is served — `trace_id` and `span_id` of
 * the span it was written under (lib/tracing.ts), so a log line leads to its trace and a trace to its lines.
 */
export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      name: service,
      level,
      redact: { paths: redactPaths, censor: '[REDACTED]' },
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => activeSpanIds() ?? {},
    },
    destination,
  );
}

/** The longest message an error summary keeps (a driver error can quote a whole command). */
const MAX_SUMMARY_MESSAGE_LENGTH = 500;

/**
 * An error's name, message (cut at 500 characters) and code, for log lines that must not carry a stack: an outage
 * (a database that cannot be reached), not a bug. For a GraphQL error, the error it wraps.
 */
export function errorSummary(error: unknown): { name: string; message: string; code?: string | number } {
  let e: unknown = error;
  for (
    let inner = (e as { originalError?: unknown } | null)?.originalError;
    inner instanceof Error;
    inner = (inner as { originalError?: unknown }).originalError
  )
    e = inner;
  if (!(e instanceof Error)) return { name: 'Error', message: String(e).slice(0, MAX_SUMMARY_MESSAGE_LENGTH) };
  const code = (e as { code?: unknown }).code;
  const message = e.message.length > MAX_SUMMARY_MESSAGE_LENGTH ? `${e.message.slice(0, MAX_SUMMARY_MESSAGE_LENGTH)}… (message cut)` : e.message;
  return { name: e.name, message, ...(typeof code === 'string' || typeof code === 'number' ? { code } : {}) };
}
