/**
 * The jest settings every Linepack package shares. Tests run against real servers (an in-memory
 * embedded MongoDB-protocol server and a redis-server, started once per run by global-setup.ts
 * unless MONGODB_URI / REDIS_URL are set and shared by the run's jest workers), with generous timeouts: a bound
 * for a stuck test, never a speed requirement.
 */
const path = require('node:path');

/** @param {string} rootDir the package folder; its tests live in <rootDir>/test */
module.exports = function linepackJestConfig(rootDir, overrides = {}) {
  return {
    displayName: path.basename(rootDir),
    rootDir,
    testEnvironment: 'node',
    roots: ['<rootDir>'],
    testMatch: ['<rootDir>/test/**/*.test.ts'],
    testPathIgnorePatterns: ['/node_modules/', '/dist/'],
    transform: { '^.+\\.ts$': ['@swc/jest'] },
    globalSetup: path.join(__dirname, 'global-setup.ts'),
    globalTeardown: path.join(__dirname, 'global-teardown.ts'),
    testTimeout: 60000,
    ...overrides,
  };
};
