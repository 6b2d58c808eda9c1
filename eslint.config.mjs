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
// A package's dist/ is its build output, not its API: what it holds moves between patch releases. (Every folder's
// no-restricted-imports below repeats this pattern, because a later config's options replace an earlier one's.)
const subgraphImportMessage =
  'A subgraph owns its code and data: it learns about other subgraphs from domain events (their payload schemas, @linepack/subgraph-<name>/events) and entity references, never imports anything else of theirs (its own files are imported relatively).';
const packageInternals = { group: ['**/dist', '**/dist/**'], message: "Import a package's public entry points, never its dist/ internals." };

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
      'no-restricted-imports': ['error', { patterns: [packageInternals] }],
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
            packageInternals,
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
            packageInternals,
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
            packageInternals,
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
              group: ['@linepack/gateway', '@linepack/gateway/*', '../../../*/src/**', '../../*/src/**'],
              message: subgraphImportMessage,
            },
            // A producer's event payloads are its published contract: the one thing of another subgraph's it imports.
            { regex: '^@linepack/subgraph-[^/]+(/(?!events$).*)?$', message: subgraphImportMessage },
            packageInternals,
          ],
        },
      ],
    },
  },
  {
    // A subgraph's event payloads are imported by its consumers' images: they hold the payload schemas and nothing of
    // the producer's code, so a consumer's bundle takes in nothing more.
    files: ['subgraphs/*/src/events.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.|@linepack/(?!lib/events/payload-fields$))',
              message: "An event contract imports zod and lib/events/payload-fields only: consumers' images bundle it.",
            },
            packageInternals,
          ],
        },
      ],
    },
  },
  {
    // Every workspace package declares what it imports, in its own package.json: the images install one package's
    // dependencies (`npm ci --omit=dev -w <package>`, Dockerfile), so an import that works only because another
    // package's dependency is hoisted breaks there. Shipped code imports no devDependency; tests and codegen may.
    files: ['lib/**/*.ts', 'schema/**/*.ts', 'gateway/**/*.ts', 'subgraphs/**/*.ts'],
    rules: {
      'import-x/no-extraneous-dependencies': [
        'error',
        {
          includeInternal: true,
          includeTypes: true,
          devDependencies: ['**/test/**', 'lib/testing/**', '**/codegen.ts', 'schema/**'],
        },
      ],
    },
  },
  {
    // The root package (CLI, scripts, dev stack, end-to-end tests, benchmarks) holds the workspaces: it reaches them
    // through npm's workspace links and the subgraph registry, so they are not repeated as its dependencies (a new
    // subgraph would need a root line); every other package it imports, it declares.
    files: ['cli/**/*.ts', 'scripts/**/*.ts', 'dev/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'codegen.ts'],
    rules: { 'import-x/no-extraneous-dependencies': ['error', { includeInternal: false, includeTypes: true }] },
  },
  ...graphqlConfig,
);
