import { GraphQLError, GraphQLScalarType, valueFromASTUntyped } from 'graphql';
import { DateTimeScalar } from '@linepack/lib/scalars';
import type { GeoJsonGeometry } from '../documents';
import { geoJsonSchema } from '../validation';

function parseGeoJson(value: unknown): GeoJsonGeometry {
  const result = geoJsonSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    throw new GraphQLError(
      `GeoJSON: ${issue ? `${issue.path.join('.') || 'geometry'}: ${issue.message}` : 'invalid geometry'} (Point or LineString expected)`,
      {
        extensions: { code: 'BAD_USER_INPUT' },
      },
    );
  }
  return result.data as GeoJsonGeometry;
}

export const GeoJSONScalar = new GraphQLScalarType<GeoJsonGeometry, GeoJsonGeometry>({
  name: 'GeoJSON',
  serialize: (value) => value as GeoJsonGeometry,
  parseValue: parseGeoJson,
  parseLiteral: (ast, variables) => parseGeoJson(valueFromASTUntyped(ast, variables)),
});

export { DateTimeScalar };
