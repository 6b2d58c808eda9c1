/**
 * Gauges read at scrape time (lib/metrics.ts) from every source a process registered: two sources with the same
 * labels are one series, combined, not the last one read. The measurements subgraph relays two collections
 * (measurements and ILI runs) to one stream, each with its own Redis client: the stream's pending events are both
 * outboxes' together, and the relay's Redis is up only when both clients are.
 */
import { metricsRegistry, watchOutbox, watchRedisReady } from '../metrics';

const valueOf = async (name: string, labels: Record<string, string>): Promise<number | undefined> => {
  const metric = await metricsRegistry.getSingleMetric(name)!.get();
  return metric.values.find((v) => Object.entries(labels).every(([k, value]) => v.labels[k] === value))?.value;
};

it('sums the pending events of two outboxes relayed to one stream', async () => {
  const stops = [
    watchOutbox('p:events:measurements', async () => 100_000),
    watchOutbox('p:events:measurements', async () => 0),
    watchOutbox('p:events:assets', async () => 2),
  ];
  try {
    expect(await valueOf('linepack_outbox_pending_events', { stream: 'p:events:measurements' })).toBe(100_000);
    expect(await valueOf('linepack_outbox_pending_events', { stream: 'p:events:assets' })).toBe(2);
  } finally {
    for (const stop of stops) stop();
  }
});

it('reports a Redis client name up only when every client under it is', async () => {
  let firstReady = false;
  const stops = [watchRedisReady('outbox-relay:p:events:measurements', () => firstReady), watchRedisReady('outbox-relay:p:events:measurements', () => true)];
  try {
    expect(await valueOf('linepack_redis_up', { client: 'outbox-relay:p:events:measurements' })).toBe(0);
    firstReady = true;
    expect(await valueOf('linepack_redis_up', { client: 'outbox-relay:p:events:measurements' })).toBe(1);
  } finally {
    for (const stop of stops) stop();
  }
});
