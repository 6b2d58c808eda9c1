import { eventStream, streamRegistry } from '@linepack/lib/events/outbox';
import { createLogger } from '@linepack/lib/logger';
import { createRedisClient, redisReady, type RedisClient } from '@linepack/lib/redis';
import { redisBackends, type RedisBackend } from '@linepack/lib/testing/redis-backends';
import { until } from '@linepack/lib/testing/until';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

/** Domain events on Redis Streams, delivered at least once even when the relay dies before publishing. */
interface Event {
  streamId: string;
  id: string;
  type: string;
  tenantId: string;
  occurredAt: string;
  data: Record<string, unknown>;
}

/** Every case with the relays and consumers on one redis-server and on a Redis Cluster. */
describe.each(redisBackends())('on %s', (_name, startBackend) => {
  let backend: RedisBackend;
  let redis: RedisClient;
  beforeAll(async () => {
    backend = await startBackend();
    redis = createRedisClient(backend.target, createLogger('test', 'silent'));
    await redisReady(redis, 10_000);
  }, 90_000);
  afterAll(async () => {
    redis?.disconnect();
    await backend?.close();
  });

  async function eventsOf(stream: string, tenantId: string): Promise<Event[]> {
    const entries = await redis.xrange(stream, '-', '+');
    return entries
      .map(([streamId, fields]) => {
        const f: Record<string, string> = {};
        for (let i = 0; i < fields.length; i += 2) f[fields[i]!] = fields[i + 1]!;
        return {
          streamId,
          id: f['id']!,
          type: f['type']!,
          tenantId: f['tenantId']!,
          occurredAt: f['occurredAt']!,
          data: JSON.parse(f['data']!) as Record<string, unknown>,
        };
      })
      .filter((e) => e.tenantId === tenantId);
  }

  describe('with the relay running', () => {
    let stack: TestStack;
    let tenantId: string;
    let apiKey: string;
    beforeAll(async () => {
      stack = await startTestStack({ redisUrl: backend.target });
      ({ tenantId, apiKey } = await stack.tenantWithKey());
    });
    afterAll(async () => {
      await stack?.stop();
    });

    it('publishes asset.upserted for every create and update, carrying the version', async () => {
      const asset = await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Evented line', maopKpa: 7_000 });
      await graphql(stack.gatewayUrl, `mutation { updateAsset(id: "${asset.id}", version: 1, input: { status: ACTIVE }) { version } }`, { apiKey });
      const events = await until(
        () => eventsOf(eventStream(stack.dbPrefix, 'assets', tenantId), tenantId),
        (e) => e.length >= 2,
      );
      expect(events.map((e) => [e.type, e.data['id'], e.data['version'], e.data['status']])).toEqual([
        ['asset.upserted', asset.id, 1, 'PLANNED'],
        ['asset.upserted', asset.id, 2, 'ACTIVE'],
      ]);
      expect(events[0]!.data['maopKpa']).toBe(7_000);
      expect(new Set(events.map((e) => e.id)).size).toBe(2);
      // On the tenant's own stream, registered for consumers to find; nothing on the pre-upgrade shared stream.
      const base = eventStream(stack.dbPrefix, 'assets');
      expect(await redis.sismember(streamRegistry(base), eventStream(stack.dbPrefix, 'assets', tenantId))).toBe(1);
      expect(await eventsOf(base, tenantId)).toEqual([]);
      // Published events leave the outbox (the relay removes them just after adding them to the stream).
      const stored = await until(
        () =>
          stack.mongo
            .db(`${stack.dbPrefix}_assets`)
            .collection('assets')
            .findOne({ _id: asset.id as never }),
        (doc) => doc?.['outbox']?.length === 0,
        30_000,
      );
      expect(stored?.['outbox']).toEqual([]);
    });

    it('publishes measurement.recorded once per stored measurement, never for a replayed one', async () => {
      const asset = await createAsset(stack.gatewayUrl, apiKey, {
        type: 'SEGMENT',
        name: 'Evented segment',
        parentId: (await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'P' })).id,
      });
      const batch = [0, 1, 2].map((i) => ({
        idempotencyKey: `ev-${i}`,
        assetId: asset.id,
        type: 'PRESSURE',
        value: 6_000 + i,
        unit: 'KPA',
        observedAt: `2026-03-0${i + 1}T00:00:00Z`,
        source: 'SCADA',
      }));
      const mutation = 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount } }';
      await graphql(stack.gatewayUrl, mutation, { apiKey, variables: { i: batch } });
      await graphql(stack.gatewayUrl, mutation, { apiKey, variables: { i: batch } });
      const events = await until(
        () => eventsOf(eventStream(stack.dbPrefix, 'measurements', tenantId), tenantId),
        (e) => e.length >= 3,
      );
      // Once the outbox is drained, everything the relay was going to publish is on the stream: a wrongly published
      // duplicate would be there too.
      const outbox = stack.mongo.db(`${stack.dbPrefix}_measurements`).collection('measurements');
      expect(
        await until(
          () => outbox.countDocuments({ tenantId, 'outbox.id': { $exists: true } }),
          (n) => n === 0,
          30_000,
        ),
      ).toBe(0);
      const after = await eventsOf(eventStream(stack.dbPrefix, 'measurements', tenantId), tenantId);
      expect(after).toHaveLength(3);
      expect(events.map((e) => e.data['value']).sort()).toEqual([6_000, 6_001, 6_002]);
      expect(events.every((e) => e.type === 'measurement.recorded' && e.data['assetId'] === asset.id)).toBe(true);
    });
  });

  it('delivers an event written while no relay ran, once a relay runs again (the process died before publishing)', async () => {
    // First life: the write happens, the relay never gets to publish it.
    const first = await startTestStack({ redisUrl: backend.target, eventRelay: false });
    const { tenantId, apiKey } = await first.tenantWithKey();
    const asset = await createAsset(first.gatewayUrl, apiKey, { type: 'SYSTEM', name: 'Written before the crash' });
    await new Promise((r) => setTimeout(r, 500));
    expect(await eventsOf(eventStream(first.dbPrefix, 'assets', tenantId), tenantId)).toEqual([]);
    const pending = await first.mongo
      .db(`${first.dbPrefix}_assets`)
      .collection('assets')
      .findOne({ _id: asset.id as never });
    expect(pending?.['outbox']).toHaveLength(1);
    await first.stop();

    // Second life on the same database: the relay finds the outbox entry and publishes it.
    const second = await startTestStack({ redisUrl: backend.target, dbPrefix: first.dbPrefix });
    try {
      const events = await until(
        () => eventsOf(eventStream(first.dbPrefix, 'assets', tenantId), tenantId),
        (e) => e.length > 0,
      );
      expect(events).toHaveLength(1);
      expect(events[0]).toMatchObject({ type: 'asset.upserted', id: pending!['outbox'][0].id, data: { id: asset.id, name: 'Written before the crash' } });
    } finally {
      await second.stop();
    }
  });
});
