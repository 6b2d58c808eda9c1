import { GraphQLError, GraphQLScalarType, Kind, type ValueNode } from 'graphql';

const isoDateTime = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:\d{2})$/;

function parseDateTime(value: unknown): Date {
  if (typeof value !== 'string' || !isoDateTime.test(value)) {
    throw new GraphQLError('DateTime must be an ISO 8601 date-time with a time zone, e.g. 2026-01-31T12:00:00Z', {
      extensions: { code: 'BAD_USER_INPUT' },
    });
  }
  const date = new Date(value);
  if (Number.isNaN(date.getTime())) {
    throw new GraphQLError(`DateTime ${value} is not a real instant`, { extensions: { code: 'BAD_USER_INPUT' } });
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
