/** This team's tests alone: `npm run test -w subgraphs/assets`. */
module.exports = require('@linepack/lib/testing/jest-preset')(__dirname);
