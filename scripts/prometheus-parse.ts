/**
 * `scripts/setup.sh` builds tools/prometheus-parse (the test suites' Prometheus parser) here, in the background, so
 * that no test waits for a cold `go build` of Prometheus's packages (test/support/prometheus-parse.ts).
 */
import { prometheusParser } from '../test/support/prometheus-parse';

prometheusParser().then(
  (binary) => console.log(`ok: ${binary}`),
  (err: unknown) => {
    console.error((err as Error).message);
    process.exit(1);
  },
);
