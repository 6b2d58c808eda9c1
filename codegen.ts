import type { CodegenConfig } from '@graphql-codegen/cli';
import { subgraphNames } from '@linepack/schema/subgraphs';

/**
 * Every subgraph's own codegen config (subgraphs/<name>/codegen.ts, owned by its team), run together:
 * `npm run codegen` regenerates all, `npm run codegen:check` fails CI when any is stale, and
 * `npm run codegen -w subgraphs/<name>` regenerates one.
 */
// eslint-disable-next-line @typescript-eslint/no-require-imports -- codegen configs are loaded by registry name
const configs = subgraphNames.map((name) => (require(`@linepack/subgraph-${name}/codegen`) as { default: CodegenConfig }).default);

const config: CodegenConfig = {
  overwrite: true,
  silent: true,
  generates: Object.assign({}, ...configs.map((c) => c.generates)) as CodegenConfig['generates'],
};

export default config;
