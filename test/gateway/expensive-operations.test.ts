/**
 * Per-tenant concurrency for expensive operations at the gateway (issue 31, item 1; gateway/src/expensive-operations.ts):
 * one tenant runs one expensive operation at a time and queues four more, the fifth waiting one is refused with 429,
 * a Retry-After and the limit named, and another tenant's expensive operation takes a free slot at once instead of
 * waiting behind that queue.
 *
 * The operations are held running by stopping the database (SIGSTOP on a MongoDB of this file's own): the first one is
 * then certainly in progress while the others arrive, and every state is observed through the gateway's gauge, never
 * timed.
 */
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { metricsRegistry } from '@linepack/lib/metrics';
import { until } from '@linepack/lib/testing/until';
import { ExpensiveOperations, expensiveOperationLimits } from '@linepack/gateway/expensive-operations';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';
import { stopProcessGroup } from '../support/wait';

jest.setTimeout(120_000);

/** 500 assets' pages of 40 measurements: about 41,500, well above the expensive threshold and far below the maximum. */
const EXPENSIVE = '{ assets(first: 500) { edges { node { id measurements(first: 40) { edges { node { id } } } } } } }';
const CHEAP = '{ assets(first: 5) { edges { node { id } } } }';

let database: EmbeddedMongo;
let stack: TestStack;
let a: string;
let b: string;

async function gauge(): Promise<{ running: number; waiting: number }> {
  const metric = await metricsRegistry.getSingleMetric('linepack_gateway_expensive_operations')!.get();
  const value = (state: string) => metric.values.find((v) => v.labels['state'] === state)?.value ?? 0;
  return { running: value('running'), waiting: value('waiting') };
}

beforeAll(async () => {
  database = await startEmbeddedMongo();
  // Keys stay cached while the database is stopped: authentication needs no lookup then. The longest deadline the
  // gateway allows: a queued operation is refused when the turns ahead of it, estimated from how long this gateway's
  // expensive operations took (the first one also starts the lane), would outlast its request, and on a busy machine
  // four turns came close to the default 30 s.
  stack = await startTestStack({ mongoUri: database.uri, redisUrl: process.env['REDIS_URL'], credentialCacheTtlSeconds: 300, requestTimeoutMs: 55_000 });
  a = (await stack.tenantWithKey({ name: 'tenant A' })).apiKey;
  b = (await stack.tenantWithKey({ name: 'tenant B' })).apiKey;
  for (const key of [a, b]) {
    await createAsset(stack.gatewayUrl, key, { type: 'PIPELINE', name: 'Line' });
    expect((await graphql(stack.gatewayUrl, EXPENSIVE, { apiKey: key })).status).toBe(200);
  }
  // The typical duration the estimate uses is the median of the latest nine: the first operations of a stack also
  // start the gateway's and the subgraphs' lanes (threads), and on a busy machine two of three such cold operations
  // could make the median so long that four turns outlast the deadline and the fifth operation, with room in its
  // queue, is refused. Four more warm operations make the median one of them.
  for (let n = 0; n < 4; n++) expect((await graphql(stack.gatewayUrl, EXPENSIVE, { apiKey: a })).status).toBe(200);
});

afterAll(async () => {
  if (database) process.kill(-database.pid, 'SIGCONT');
  await stack?.stop();
  await database?.stop();
});

test('the query this test sends is expensive by the cost model, and a cheap one is not', async () => {
  const res = await graphql(stack.gatewayUrl, EXPENSIVE, { apiKey: a });
  const cost = (res.body.extensions?.['cost'] as { requested: number }).requested;
  expect(cost).toBeGreaterThanOrEqual(expensiveOperationLimits.minCost);
  const cheap = await graphql(stack.gatewayUrl, CHEAP, { apiKey: a });
  expect((cheap.body.extensions?.['cost'] as { requested: number }).requested).toBeLessThan(expensiveOperationLimits.minCost);
});

test("one tenant's expensive operations run one at a time, four wait, the next is refused naming the limit, and another tenant's runs at once", async () => {
  const { perTenantRunning, perTenantQueued } = expensiveOperationLimits;
  expect(await gauge()).toEqual({ running: 0, waiting: 0 });
  await stopProcessGroup(database.pid);
  let answers: Promise<Awaited<ReturnType<typeof graphql>>[]>;
  try {
    // Answered early (refused) ones are named, with why, when the gauge never gets there.
    const answeredEarly: string[] = [];
    const send = () =>
      graphql(stack.gatewayUrl, EXPENSIVE, { apiKey: a }).then((res) => {
        answeredEarly.push(`${res.status} ${res.body.errors?.[0]?.message ?? ''}`.trim());
        return res;
      });
    // A rests after the previous test's expensive query as long as it ran, and an operation sent during that rest
    // waits instead of running: with all five sent at once on a busy machine, the first waited, four were waiting
    // when the fifth came, and it was refused. The first ones are sent alone, and the others once they run.
    const first = Array.from({ length: perTenantRunning }, send);
    const running = await until(gauge, (g) => g.running === perTenantRunning || answeredEarly.length > 0, 30_000);
    expect({ ...running, answeredEarly }).toEqual({ running: perTenantRunning, waiting: 0, answeredEarly: [] });
    answers = Promise.all([...first, ...Array.from({ length: perTenantQueued }, send)]);
    const queued = await until(gauge, (g) => (g.running === perTenantRunning && g.waiting === perTenantQueued) || answeredEarly.length > 0, 30_000);
    expect({ ...queued, answeredEarly }).toEqual({ running: perTenantRunning, waiting: perTenantQueued, answeredEarly: [] });

    const refused = await graphql(stack.gatewayUrl, EXPENSIVE, { apiKey: a });
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(refused.body.errors?.[0]?.extensions).toMatchObject({
      code: 'RATE_LIMITED',
      limit: { name: 'expensiveOperationsPerTenant', running: perTenantRunning, queued: perTenantQueued, minCost: expensiveOperationLimits.minCost },
    });
    expect(refused.body.errors?.[0]?.message).toMatch(
      /\(cost 10,000 or more\) run 1 at a time in this gateway with at most 4 waiting; 5 are running or waiting/,
    );
    // Cheap operations take no slot: one is not refused (it waits for the stopped database like any other read).
    const cheap = graphql(stack.gatewayUrl, CHEAP, { apiKey: a });

    // Tenant B's expensive operation takes a free slot although four of A's were waiting before it.
    const other = graphql(stack.gatewayUrl, EXPENSIVE, { apiKey: b });
    expect(await until(gauge, (g) => g.running === perTenantRunning + 1 && g.waiting === perTenantQueued, 30_000)).toEqual({
      running: perTenantRunning + 1,
      waiting: perTenantQueued,
    });

    process.kill(-database.pid, 'SIGCONT');
    expect((await other).status).toBe(200);
    expect((await cheap).status).toBe(200);
  } finally {
    process.kill(-database.pid, 'SIGCONT');
  }
  const statuses = (await answers).map((res) => res.status);
  expect(statuses).toEqual(statuses.map(() => 200));
  expect(await gauge()).toEqual({ running: 0, waiting: 0 });
});

test("an operation whose turn would come after its request's deadline is refused now, with a Retry-After, not left to time out", async () => {
  const operations = new ExpensiveOperations({ ...expensiveOperationLimits, slots: 2 });
  // Admitted as a mutation's, so that releasing it (below) leaves A no rest to wait out.
  const release = await operations.admit('A', { rests: false });
  // One of A's is running, at the assumed 2 s until one has been timed: a request with 1 s left would not get its turn.
  expect(operations.hasRoomFor('A', 1_000)).toBe(false);
  expect(operations.hasRoomFor('A', 60_000)).toBe(true);
  // Nothing of B's is ahead of B's, even for a request out of time (its deadline answers it, with a 504).
  expect(operations.hasRoomFor('B', 1_000)).toBe(true);
  expect(operations.hasRoomFor('B', -5)).toBe(true);
  // Its turn comes after the running one (2 s assumed) and a rest as long (the estimate counts one after every turn): 4 s.
  const refusal = operations.refusal('A');
  expect(refusal.extensions).toMatchObject({ code: 'RATE_LIMITED', retryAfterSeconds: 4, http: { status: 429, headers: new Map([['Retry-After', '4']]) } });
  release();
  expect(operations.hasRoomFor('A', 1_000)).toBe(true);
});

test('one slow operation (the first also starts the lane) does not make the estimate refuse what the usual ones leave time for', async () => {
  const operations = new ExpensiveOperations({ ...expensiveOperationLimits, slots: 2 });
  const held = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
  // Mutations' slots, so that no rest follows them: one slow, then two that end at once.
  const slow = await operations.admit('A', { rests: false });
  await held(3_000);
  slow();
  for (let i = 0; i < 2; i++) (await operations.admit('A', { rests: false }))();
  // One of A's running: the next waits for a typical operation (the median of the latest: the quick ones), not for a
  // mean the slow one raised (an average from the assumed 2 s would be well over a second: a 3 s Retry-After).
  const running = await operations.admit('A', { rests: false });
  expect(operations.refusal('A').extensions).toMatchObject({ retryAfterSeconds: 1 });
  expect(operations.hasRoomFor('A', 1_000)).toBe(true);
  running();
});

test("after an expensive query its tenant rests as long as it ran before its next one starts, while another tenant's starts at once; after a mutation it does not", async () => {
  const operations = new ExpensiveOperations({ ...expensiveOperationLimits, slots: 2 });
  const held = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

  const query = await operations.admit('A');
  await held(300);
  query();
  // A rests at least 300 ms from now: a request with less time left is refused at once, with that rest in its Retry-After.
  expect(operations.hasRoomFor('A', 200)).toBe(false);
  expect(operations.hasRoomFor('A', 60_000)).toBe(true);
  let nextStarted = false;
  const next = operations.admit('A').then((release) => {
    nextStarted = true;
    return release;
  });
  // B takes a slot at once while A rests (no timer can end A's rest between these awaits: only its timeout does).
  const other = await operations.admit('B');
  expect(nextStarted).toBe(false);
  other();
  (await next)();
  expect(nextStarted).toBe(true);

  // A mutation's work rests where it writes (slice by slice in its subgraph): no rest here after it.
  const mutation = await operations.admit('C', { rests: false });
  await held(300);
  mutation();
  expect(operations.hasRoomFor('C', 1)).toBe(true);
});
