/**
 * The order jest starts test files in. With timings from an earlier run (jest's cache) jest starts the slowest first;
 * a fresh clone (CI) has none, and jest then orders by file size, which says little here: a 74-line file that starts
 * a four-process scale-out stack runs longer than most 500-line ones. Started last, a slow file leaves the other
 * workers idle while it finishes, so the files that take longest on the 2-core machine (jest's own report of a quiet
 * run with three workers) start first, in this order, and the rest follow in jest's.
 */
const Sequencer = require('@jest/test-sequencer').default;
const path = require('node:path');

const SLOW_FIRST = [
  'test/infra/crash-durability.test.ts',
  'test/bench/scale-bench.test.ts',
  'test/ops/scale-out.test.ts',
  'test/infra/embedded-indexes.test.ts',
  'test/bench/gateway-bench.test.ts',
  'test/console/admin.test.ts',
  'test/ops/tracing.test.ts',
  'test/schema/schema-check.test.ts',
  'test/console/integrity-lists.test.ts',
  'test/console/daily-use.test.ts',
  'test/gateway/expensive-lane.test.ts',
  'test/console/session.test.ts',
  'test/domain/ili-cycle.test.ts',
  'test/ops/chart.test.ts',
].map((file) => path.join(__dirname, '..', '..', file));

class LinepackSequencer extends Sequencer {
  sort(tests) {
    const rank = (test) => {
      const i = SLOW_FIRST.indexOf(test.path);
      return i === -1 ? SLOW_FIRST.length : i;
    };
    // Array.prototype.sort is stable: the rest keep jest's order (failed first, then slowest known, then largest).
    return [...super.sort(tests)].sort((a, b) => rank(a) - rank(b));
  }
}

module.exports = LinepackSequencer;
