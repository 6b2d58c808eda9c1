#!/usr/bin/env node
// The admin CLI runs from the TypeScript source through tsx, like `npm start`. It needs both of tsx's hooks: the CLI
// itself is required (CommonJS), but `<subgraph> rebuild` loads the subgraph with import(), which goes through the ESM
// loader — without tsx's hook there, Node's own type stripping takes the file and rejects parameter properties.
require('tsx/esm/api').register();
require('tsx/cjs');
require('../cli/linepack.ts');
