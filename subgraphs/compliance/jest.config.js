/** This team's tests alone: `npm run test -w subgraphs/compliance`. */
module.exports = require('@linepack/lib/testing/jest-preset')(__dirname);
