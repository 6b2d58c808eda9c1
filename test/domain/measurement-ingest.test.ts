/**
 * Idempotent batch ingest (subgraphs/measurements/src/repository.ts `record`): items are inserted and a key already
 * stored is refused by the unique index, then answered with its stored id. What a client relies on: a retried or
 * overlapping batch stores every key once, answers every item (new or not) with its id in input order, and only a
 * newly stored measurement carries a measurement.recorded event.
 */
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let apiKey: string;
let tenantId: string;
let assetId: string;

const RECORD = 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount duplicateCount ids } }';
type Recorded = { insertedCount: number; duplicateCount: number; ids: string[] };

const reading = (key: string, minute: number) => ({
  idempotencyKey: key,
  assetId,
  type: 'PRESSURE',
  value: 6_000 + minute,
  unit: 'KPA',
  observedAt: new Date(Date.UTC(2026, 0, 1) + minute * 60_000).toISOString(),
  source: 'SCADA',
});

async function record(items: unknown[]): Promise<Recorded> {
  const res = await graphql<{ recordMeasurements: Recorded }>(stack.gatewayUrl, RECORD, { apiKey, variables: { i: items } });
  expect(res.body.errors).toBeUndefined();
  return res.body.data!.recordMeasurements;
}

/** The stored documents of these keys, as the database has them (this stack runs no relay: outboxes stay). */
function storedByKey(keys: readonly string[]) {
  return stack.mongo
    .db(`${stack.dbPrefix}_measurements`)
    .collection<{ _id: string; idempotencyKey: string; outbox?: { id: string; type: string }[] }>('measurements')
    .find({ tenantId, idempotencyKey: { $in: [...keys] } })
    .toArray();
}

beforeAll(async () => {
  // The longest request deadline the gateway allows (REQUEST_TIMEOUT_MS): on a machine busy with other work a batch of
  // the largest size, resting after each slice as long as it took (lib/fair-share.ts), outlasted the default 30 s.
  stack = await startTestStack({ requestTimeoutMs: 55_000 });
  ({ apiKey, tenantId } = await stack.tenantWithKey());
  assetId = (await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Ingest line' })).id;
});
afterAll(async () => {
  await stack?.stop();
});

it('answers a batch overlapping a stored one with the stored ids for old keys and new ids for the rest, in input order', async () => {
  const first = await record([reading('o-1', 1), reading('o-2', 2), reading('o-3', 3)]);
  expect(first).toMatchObject({ insertedCount: 3, duplicateCount: 0 });

  // Old keys between new ones, and an old key sent with other values (a key is stored once, whatever it carries).
  const second = await record([reading('o-4', 4), reading('o-2', 2), { ...reading('o-1', 1), value: 1 }, reading('o-5', 5)]);
  expect(second).toMatchObject({ insertedCount: 2, duplicateCount: 2 });
  expect(second.ids[1]).toBe(first.ids[1]);
  expect(second.ids[2]).toBe(first.ids[0]);
  expect(new Set([...first.ids, second.ids[0], second.ids[3]]).size).toBe(5);

  const stored = await storedByKey(['o-1', 'o-2', 'o-3', 'o-4', 'o-5']);
  expect(stored).toHaveLength(5);
  const byKey = new Map(stored.map((m) => [m.idempotencyKey, m]));
  expect(byKey.get('o-4')?._id).toBe(second.ids[0]);
  expect(byKey.get('o-5')?._id).toBe(second.ids[3]);
  // One measurement.recorded event per stored measurement: the replayed keys got none more.
  for (const m of stored) expect(m.outbox?.map((e) => e.type)).toEqual(['measurement.recorded']);
  const value = await graphql<{ measurement: { value: number } }>(stack.gatewayUrl, `{ measurement(id: "${first.ids[0]}") { value } }`, { apiKey });
  expect(value.body.data!.measurement.value).toBe(6_001);
});

it('stores each key once when the same batch arrives twice at the same time, and answers both with the same ids', async () => {
  const items = Array.from({ length: 2_500 }, (_, i) => reading(`c-${i}`, 100 + i));
  const [a, b] = await Promise.all([record(items), record(items)]);
  expect(a.insertedCount + b.insertedCount).toBe(2_500);
  expect(a.duplicateCount + b.duplicateCount).toBe(2_500);
  expect(a.ids).toEqual(b.ids);
  expect(new Set(a.ids).size).toBe(2_500);
  const stored = await storedByKey(items.map((i) => i.idempotencyKey));
  expect(stored).toHaveLength(2_500);
  expect(new Map(stored.map((m) => [m.idempotencyKey, m._id]))).toEqual(new Map(items.map((item, i) => [item.idempotencyKey, a.ids[i]])));
});

it("answers a retried batch of the largest size with the stored ids within the gateway's request deadline", async () => {
  const items = Array.from({ length: 10_000 }, (_, i) => reading(`r-${i}`, 10_000 + i));
  // Stored a quarter at a time: what is tested is the retry, not how fast this machine writes 10,000 new readings.
  const firstIds: string[] = [];
  for (let start = 0; start < items.length; start += 2_500) {
    const first = await record(items.slice(start, start + 2_500));
    expect(first).toMatchObject({ insertedCount: 2_500, duplicateCount: 0 });
    firstIds.push(...first.ids);
  }
  // The retry a client sends after losing the first answer, as one batch: every key stored, every id looked up.
  const retry = await record(items);
  expect(retry).toMatchObject({ insertedCount: 0, duplicateCount: 10_000 });
  expect(retry.ids).toEqual(firstIds);
}, 180_000);
