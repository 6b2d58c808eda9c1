/**
 * Every jest suite: the end-to-end suites in test/ (gateway, auth, tenant isolation, rate limits — the
 * whole stack over real HTTP) and each subgraph package's own in-process tests. `npx jest test/auth`
 * runs one folder; `npm run test -w subgraphs/<name>` runs one team's tests alone.
 */
const os = require('node:os');
const linepackJestConfig = require('./lib/testing/jest-preset');

module.exports = {
  // One set of servers for the whole run: the packages' setups see MONGODB_URI / REDIS_URL and start nothing.
  globalSetup: './lib/testing/global-setup.ts',
  globalTeardown: './lib/testing/global-teardown.ts',
  // Test files run side by side, one per worker: each starts its own stack (its own database prefix, free ports, its
  // own redis-server where it counts Redis keys or stops Redis), so none sees another's data. One worker more than the
  // cores: an end-to-end suite spends part of its time waiting (for its servers, a token to expire, a lease to run
  // out): on the 2-core machine three workers kept the CPUs 96 % busy over a whole run (/proc/stat). `--maxWorkers=1`
  // runs them one after another.
  maxWorkers: os.availableParallelism() + 1,
  // A worker keeps what every file it ran left reachable (each file loads its own copy of the stack's modules): one
  // reached V8's 4.5 GB heap limit and crashed part-way through a CI run. Past 1 GB after a file, it is replaced.
  workerIdleMemoryLimit: '1GB',
  // The slowest files first, also in a fresh clone with no timings of an earlier run.
  testSequencer: './lib/testing/sequencer.js',
  // A global option: jest reads testTimeout from the root config when projects are used.
  testTimeout: 60000,
  projects: [linepackJestConfig(__dirname, { displayName: 'e2e', roots: ['<rootDir>/test'] }), '<rootDir>/lib', '<rootDir>/subgraphs/*'],
};
