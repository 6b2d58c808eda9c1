// @ts-check
/**
 * SDL lint (graphql-eslint) for the subgraph SDL files reviewers read. The API is documented where it is
 * written: every type, field, argument, input field and enum value has a description; names follow one
 * convention; numeric fields carry their unit in the name (DESIGN: SI units, named in each field); every
 * connection is Relay-shaped and its `first` argument states the page-size limit.
 */
import { existsSync, readdirSync } from 'node:fs';
import path from 'node:path';
import graphqlPlugin from '@graphql-eslint/eslint-plugin';

/** Numeric names end with their unit. Dimensionless quantities and counts are listed by name. */
const UNIT_SUFFIXES = ['Mm', 'M', 'Kpa', 'Mpa', 'Deg', 'PctWt', 'Pct', 'PctOd', 'Mv', 'A', 'V', 'Years', 'MmPerYear', 'Days', 'Ms', 'Bytes'];
const DIMENSIONLESS = new Set([
  'value', // Measurement.value: its unit is the `unit` field beside it
  'z',
  'foliasFactor',
  'designFactor',
  'erf',
  'failurePressureRatio',
  'classLocation',
  'likelihood',
  'consequence',
  'score',
  'minScore',
  'count',
  'totalAssets',
  'maxErf',
  'version',
  'first',
  'dueSoonDays',
  'expiresInDays',
  // ILI imports: positions and tallies of things (a file's row, a joint's number, a job's items), not quantities.
  'index',
  'rowNumber',
  'jointNumber',
  'attempts',
  'done',
  'total',
  'rows',
  'features',
  'tallyItems',
  'rejectedRows',
  'receivedParts',
  // IliRunComparison.years: the time between two runs, its unit in its name.
  'years',
  // Risk: a probability (0 to 1) and the expected number of anomalies beyond their limit (a sum of probabilities).
  'exceedanceProbability',
  'expectedAnomaliesBeyondLimit',
]);

// graphql-eslint renames GraphQL's `type` property to `gqlType` (ESTree reserves `type`).
const namedType = (type) => (type.kind === 'NamedType' ? type.name.value : namedType(type.gqlType ?? type.type));

/** @type {import('eslint').Rule.RuleModule} */
const unitInNumericNames = {
  meta: { type: 'suggestion', docs: { description: 'Float and Int fields and arguments name their unit (wallThicknessMm, maopKpa).' }, schema: [] },
  create(context) {
    const check = (node) => {
      const type = namedType(node.gqlType);
      if (type !== 'Float' && type !== 'Int') return;
      const name = node.name.value;
      // Counts (totalCount, insertedCount, …) are numbers of things, not quantities with a unit.
      if (DIMENSIONLESS.has(name) || name.endsWith('Count') || UNIT_SUFFIXES.some((unit) => name.endsWith(unit))) return;
      context.report({
        node: node.name,
        message: `Numeric "${name}" has no unit suffix (${UNIT_SUFFIXES.join(', ')}); add one, or list it in schema/eslint.graphql.mjs if it is dimensionless.`,
      });
    };
    return { FieldDefinition: check, InputValueDefinition: check };
  },
};

/** @type {import('eslint').Rule.RuleModule} */
const connectionPageSize = {
  meta: { type: 'suggestion', docs: { description: 'A field returning a connection takes first/after and says its page-size limit.' }, schema: [] },
  create(context) {
    return {
      FieldDefinition(node) {
        if (!namedType(node.gqlType).endsWith('Connection')) return;
        const args = Object.fromEntries((node.arguments ?? []).map((a) => [a.name.value, a]));
        if (!args.first || !args.after) {
          context.report({ node: node.name, message: `Connection field "${node.name.value}" must take "first" and "after".` });
          return;
        }
        const description = args.first.description?.value ?? '';
        if (!/at most \d[\d,]*/.test(description)) {
          context.report({ node: args.first.name, message: `"first" of "${node.name.value}" must state its limit ("… at most 500 …").` });
        }
      },
    };
  },
};

/**
 * Entity types are described once, by the subgraph that owns them; a subgraph that contributes fields
 * leaves the type undescribed (two descriptions would make composition pick one of them).
 */
const ENTITY_OWNERS = { Asset: 'assets', PipelineSummary: 'assets', Measurement: 'measurements' };
/** Every subgraph package with an SDL (subgraphs/<name>/schema.graphql): a new one is linted without a line here. */
const subgraphsDir = path.join(import.meta.dirname, '..', 'subgraphs');
const SUBGRAPHS = readdirSync(subgraphsDir).filter((name) => existsSync(path.join(subgraphsDir, name, 'schema.graphql')));

const requireDescription = (subgraph) => [
  'error',
  {
    types: true,
    FieldDefinition: true,
    InputValueDefinition: true,
    EnumValueDefinition: true,
    DirectiveDefinition: true,
    ignoredSelectors: [
      // Root types are containers; each root field is described.
      '[type=ObjectTypeDefinition][name.value=/^(Query|Mutation)$/]',
      ...Object.entries(ENTITY_OWNERS)
        .filter(([, owner]) => owner !== subgraph)
        .map(([entity]) => `[type=ObjectTypeDefinition][name.value=${entity}]`),
    ],
  },
];

const linepack = { rules: { 'unit-in-numeric-names': unitInNumericNames, 'connection-page-size': connectionPageSize } };

export default [
  {
    files: ['schema/shared.graphql', 'subgraphs/*/schema.graphql'],
    languageOptions: { parser: graphqlPlugin.parser },
    plugins: { '@graphql-eslint': graphqlPlugin, linepack },
    rules: {
      '@graphql-eslint/require-description': requireDescription(null),
      '@graphql-eslint/require-deprecation-reason': 'error',
      '@graphql-eslint/naming-convention': [
        'error',
        {
          types: 'PascalCase',
          FieldDefinition: 'camelCase',
          InputValueDefinition: 'camelCase',
          EnumValueDefinition: 'UPPER_CASE',
          InputObjectTypeDefinition: { style: 'PascalCase', requiredSuffixes: ['Input', 'Filter'] },
          'FieldDefinition[parent.name.value=Query]': { forbiddenPrefixes: ['get', 'query'], forbiddenSuffixes: ['Query'] },
          'FieldDefinition[parent.name.value=Mutation]': { forbiddenPrefixes: ['set'], forbiddenSuffixes: ['Mutation'] },
          allowLeadingUnderscore: false,
          allowTrailingUnderscore: false,
        },
      ],
      '@graphql-eslint/relay-connection-types': 'error',
      '@graphql-eslint/no-hashtag-description': 'error',
      'linepack/unit-in-numeric-names': 'error',
      'linepack/connection-page-size': 'error',
    },
  },
  ...SUBGRAPHS.map((subgraph) => ({
    files: [`subgraphs/${subgraph}/schema.graphql`],
    rules: { '@graphql-eslint/require-description': requireDescription(subgraph) },
  })),
];
