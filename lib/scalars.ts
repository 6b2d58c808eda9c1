import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

const isoDateTime = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,9})?)?(Z|([+-])(\d{2}):(\d{2}))$/;

/** The years a DateTime may fall in (SDL: shared.graphql); anything else is a typo or a probe, not a record. */
export const DATE_TIME_YEARS = { min: 1900, max: 2199 } as const;

function badDateTime(message: string): GraphQLError {
  return new GraphQLError(message, { extensions: { code: 'BAD_USER_INPUT' } });
}

function parseDateTime(value: unknown): Date {
  const match = typeof value === 'string' && value.length <= 40 ? isoDateTime.exec(value) : null;
  if (!match) throw badDateTime('DateTime must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00Z');
  const [, year, month, day, hour, minute, second = '0', , , offsetHours = '0', offsetMinutes = '0'] = match.map((part) => part ?? undefined);
  const y = Number(year);
  const m = Number(month);
  // Date.parse rolls 2026-02-30 over to March 2; a calendar date must exist as written.
  const daysInMonth = new Date(Date.UTC(y, m, 0)).getUTCDate();
  if (m < 1 || m > 12 || Number(day) < 1 || Number(day) > daysInMonth) throw badDateTime(`DateTime ${String(value)} is not a calendar date`);
  if (Number(hour) > 23 || Number(minute) > 59 || Number(second) > 59 || Number(offsetHours) > 23 || Number(offsetMinutes) > 59) {
    throw badDateTime(`DateTime ${String(value)} is not a time of day`);
  }
  const date = new Date(value as string);
  // In UTC too: 2199-12-31T23:00:00-12:00 is already 2200.
  const utcYear = date.getUTCFullYear();
  if (y < DATE_TIME_YEARS.min || y > DATE_TIME_YEARS.max || utcYear < DATE_TIME_YEARS.min || utcYear > DATE_TIME_YEARS.max) {
    throw badDateTime(`DateTime must be in the years ${DATE_TIME_YEARS.min} to ${DATE_TIME_YEARS.max} (UTC), got ${String(value)}`);
  }
  return date;
}

/** ISO 8601 in UTC on the wire, Date in resolvers and in MongoDB. */
export const DateTimeScalar = new GraphQLScalarType<Date, string>({
  name: 'DateTime',
  serialize(value) {
    const date = value instanceof Date ? value : typeof value === 'string' ? new Date(value) : null;
    if (!date || Number.isNaN(date.getTime())) throw new GraphQLError('DateTime cannot represent a non-date value');
    return date.toISOString();
  },
  parseValue: parseDateTime,
  parseLiteral(ast: ValueNode) {
    if (ast.kind !== Kind.STRING) throw new GraphQLError('DateTime must be a string', { extensions: { code: 'BAD_USER_INPUT' } });
    return parseDateTime(ast.value);
  },
});

/** Bytes of one Base64 value at most (an ILI upload part), and its length in characters. */
export const MAX_BASE64_BYTES = 4 * 1024 * 1024;
export const MAX_BASE64_CHARACTERS = Math.ceil(MAX_BASE64_BYTES / 3) * 4;

function parseBase64(value: unknown): Buffer {
  if (
    typeof value !== 'string' ||
    value.length === 0 ||
    value.length > MAX_BASE64_CHARACTERS ||
    value.length % 4 !== 0 ||
    !/^[A-Za-z0-9+/]*={0,2}$/.test(value)
  )
    throw badDateTime(`Base64 must be 1 to ${MAX_BASE64_CHARACTERS} characters of padded base64 (A–Z, a–z, 0–9, +, /, =)`);
  return Buffer.from(value, 'base64');
}

/**
 * Bytes sent inside a GraphQL request (SDL: measurements.graphql): the one kind of string the gateway lets run past
 * its 10,000-character limit, because its variable is declared with this type (request-guards.ts).
 */
export const Base64Scalar = new GraphQLScalarType<Buffer, string>({
  name: 'Base64',
  description: 'Bytes as padded base64, at most 4 MiB.',
  serialize: (value) => (Buffer.isBuffer(value) ? value.toString('base64') : String(value)),
  parseValue: parseBase64,
  parseLiteral: (node: ValueNode) => {
    if (node.kind !== Kind.STRING) throw badDateTime('Base64 must be a string');
    return parseBase64(node.value);
  },
});
