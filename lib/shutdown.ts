import type { Logger } from './logger';
import { activeTracing } from './tracing';

/** A serving process as its signal handling sees it (a gateway, a gateway worker, a subgraph). */
export interface Drainable {
  /** Readiness 503 from now on, every response `Connection: close`; still serving (lib/http.ts HttpDrain). */
  drain(): void;
  /** Stop accepting, close idle connections, finish what is in flight, release everything. */
  stop(): Promise<void>;
}

/**
 * How a service process ends on SIGTERM (or SIGINT): drain for `drainMs` — /readyz 503 at once while requests are
 * still served, so load balancers stop sending before anything closes — then stop (requests in flight finish), flush
 * the last spans and exit 0. A second signal during the drain period ends it at once (an operator in a hurry, or
 * Ctrl-C twice); signals after that change nothing, and Node's default (an abrupt exit) never applies.
 *
 * `signals` lets a gateway worker leave SIGINT to its primary (gateway/src/cluster.ts).
 */
export function stopOnSignals(
  service: Drainable,
  options: { drainMs: number; logger: Logger; signals?: readonly NodeJS.Signals[]; exit?: (code: number) => void },
): void {
  const { drainMs, logger } = options;
  const exit = options.exit ?? ((code: number) => process.exit(code));
  let phase: 'serving' | 'draining' | 'stopping' = 'serving';
  let endDrain: () => void = () => undefined;

  const stop = async () => {
    phase = 'stopping';
    logger.info('stopping: closing idle connections and answering the requests in flight');
    try {
      await service.stop();
    } catch (err) {
      logger.error({ err }, 'stopping failed');
    }
    await activeTracing()?.shutdown();
    exit(0);
  };

  const onSignal = (signal: NodeJS.Signals) => {
    if (phase === 'draining') {
      logger.info({ signal }, 'second signal: ending the drain period now');
      return endDrain();
    }
    if (phase === 'stopping') return;
    phase = 'draining';
    service.drain();
    logger.info({ signal, drainSeconds: drainMs / 1000 }, 'draining: /readyz answers 503, requests are still served until the drain period ends');
    const drained = new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, drainMs);
      endDrain = () => {
        clearTimeout(timer);
        resolve();
      };
    });
    void drained.then(stop);
  };
  for (const signal of options.signals ?? ['SIGTERM', 'SIGINT']) process.on(signal, onSignal);
}

/**
 * What Node would print as plain text, as JSON lines of the service's log instead: an uncaught exception or unhandled
 * rejection (logged at fatal with its stack inside the line, then exit 1 as Node's default does) and process warnings
 * (at warn, without a stack). Installed by every service process entry, once its logger exists.
 */
export function logProcessFailures(logger: Logger, exit: (code: number) => void = (code) => process.exit(code)): void {
  process.on('uncaughtException', (err) => {
    logger.fatal({ err }, 'uncaught exception: exiting');
    exit(1);
  });
  process.on('unhandledRejection', (reason) => {
    logger.fatal({ err: reason }, 'unhandled promise rejection: exiting');
    exit(1);
  });
  // Node's own listener prints the warning as text: replaced, not joined.
  process.removeAllListeners('warning');
  process.on('warning', (warning) =>
    logger.warn({ warning: { name: warning.name, message: warning.message, code: (warning as { code?: string }).code } }, 'process warning'),
  );
}
