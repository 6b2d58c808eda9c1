/** This team's tests alone: `npm run test -w subgraphs/auth`. */
module.exports = require('@linepack/lib/testing/jest-preset')(__dirname);
