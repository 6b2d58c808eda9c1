/** The platform library's own tests: `npx jest lib`. */
module.exports = require('./testing/jest-preset')(__dirname);
