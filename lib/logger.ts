import pino, { type Logger } from 'pino';

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

export function createLogger(service: string, level: string = process.env.LOG_LEVEL ?? 'info', destination?: pino.DestinationStream): Logger {
  return pino(
    {
      name: service,
      level,
      redact: { paths: redactPaths, censor: '[REDACTED]' },
      base: { service },
      timestamp: pino.stdTimeFunctions.isoTime,
    },
    destination,
  );
}
