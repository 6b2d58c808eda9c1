import { metricsRegistry } from './metrics';

/**
 * Metrics of work done on a worker thread (the gateway's expensive-operation lane, a subgraph's expensive-request lane
 * and job runner): a thread has a registry of its own that nobody scrapes, so its metric calls are recorded there and
 * replayed on the main thread's metric of the same name, where /metrics counts them once.
 */
export interface MetricCall {
  name: string;
  method: 'inc' | 'dec' | 'set' | 'observe';
  args: unknown[];
}

/**
 * On a worker thread: every metric of this thread's registry records its calls instead of counting them; the
 * function returned takes the calls recorded so far (to send to the main thread).
 */
export function recordMetricCalls(): () => MetricCall[] {
  const calls: MetricCall[] = [];
  for (const metric of metricsRegistry.getMetricsAsArray()) {
    const target = metric as unknown as Record<string, unknown>;
    for (const method of ['inc', 'dec', 'set', 'observe'] as const) {
      if (typeof target[method] !== 'function') continue;
      target[method] = (...args: unknown[]) => void calls.push({ name: metric.name, method, args });
    }
  }
  return () => calls.splice(0, calls.length);
}

/** On the main thread: a worker thread's metric calls, made on this thread's metrics of the same names. */
export function replayMetricCalls(calls: readonly MetricCall[]): void {
  for (const { name, method, args } of calls) {
    const metric = metricsRegistry.getSingleMetric(name) as unknown as Record<string, ((...a: unknown[]) => unknown) | undefined> | undefined;
    metric?.[method]?.(...args);
  }
}
