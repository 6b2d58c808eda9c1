// @ts-check
/**
 * Lint for the TypeScript (typescript-eslint) and the layering rules that keep packages independent:
 * lib/ is the bottom layer and imports no deployable; schema/ imports neither; nothing imports
 * across subgraph packages; no import cycles. The SDL lint (graphql-eslint) lives in
 * schema/eslint.graphql.mjs, owned with the SDL.
 */
import tseslint from 'typescript-eslint';
import importX, { createNodeResolver } from 'eslint-plugin-import-x';
import graphqlConfig from './schema/eslint.graphql.mjs';

const deployables = ['@linepack/gateway', '@linepack/gateway/*', '@linepack/subgraph-*', '@linepack/subgraph-*/*'];
const relativeDeployables = ['**/gateway/**', '**/subgraphs/**'];

export default tseslint.config(
  { ignores: ['**/node_modules/**', '**/dist/**', '**/generated/**', 'mcp-server/**', 'tools/mongo/target/**', 'docs/**', '.linepack/**', 'console/**'] },
  {
    files: ['**/*.ts'],
    extends: [tseslint.configs.recommended],
    plugins: { 'import-x': importX },
    settings: {
      'import-x/parsers': { '@typescript-eslint/parser': ['.ts'] },
      'import-x/extensions': ['.ts', '.js'],
      'import-x/resolver-next': [createNodeResolver({ extensions: ['.ts', '.js', '.mjs'], conditionNames: ['types', 'require', 'node', 'default'] })],
    },
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', destructuredArrayIgnorePattern: '^_' }],
      '@typescript-eslint/no-non-null-assertion': 'off',
      'import-x/no-cycle': ['error', { ignoreExternal: false }],
      'import-x/no-self-import': 'error',
    },
  },
  {
    files: ['lib/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: deployables, message: 'lib/ is shared by every deployable and may not import one (move the code into lib, or pass it in).' },
            {
              group: [...relativeDeployables, '**/schema/**', '@linepack/schema', '@linepack/schema/*'],
              message: 'lib/ may not import gateway/, subgraphs/ or schema/.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['schema/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [...deployables, ...relativeDeployables, '@linepack/lib', '@linepack/lib/*'],
              message: 'schema/ (registry, composition, checks) imports no deployable and no lib.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['gateway/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            { group: ['@linepack/subgraph-*', '@linepack/subgraph-*/*', '**/subgraphs/**'], message: 'The gateway reaches subgraphs over HTTP only.' },
          ],
        },
      ],
    },
  },
  {
    files: ['subgraphs/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@linepack/gateway', '@linepack/gateway/*', '@linepack/subgraph-*', '@linepack/subgraph-*/*', '../../../*/src/**', '../../*/src/**'],
              message:
                'A subgraph owns its code and data: it learns about other subgraphs from domain events and entity references, never imports (its own files are imported relatively).',
            },
          ],
        },
      ],
    },
  },
  ...graphqlConfig,
);
