/** This team's tests alone: `npm run test -w subgraphs/measurements`. */
module.exports = require('@linepack/lib/testing/jest-preset')(__dirname);
