#!/usr/bin/env node
// The admin CLI runs from the TypeScript source through tsx, like `npm start`.
require('tsx/cjs');
require('../cli/linepack.ts');
