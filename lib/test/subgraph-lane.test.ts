/**
 * A subgraph's expensive-request lane (lib/subgraph-lane.ts, issue 31): requests the gateway's expensive-operation
 * lane marks are executed on a thread of the subgraph's own, so the loop answers other requests meanwhile, and they are
 * answered as the loop would answer them. A real subgraph server over real HTTP with a real identity token; its schema
 * is a fixture whose `gated` field blocks the thread it runs on until the test opens the gate (fixtures/gated-subgraph.ts),
 * so "meanwhile" is asserted by order, never by time.
 */
import path from 'node:path';
import { generateInternalKeyPair, INTERNAL_IDENTITY_HEADER, mintInternalToken, NO_TENANT } from '../identity';
import { createLogger } from '../logger';
import { metricsRegistry } from '../metrics';
import { EXPENSIVE_LANE, EXPENSIVE_LANE_HEADER, SubgraphLane } from '../subgraph-lane';
import { startSubgraphServer, type RunningService } from '../subgraph-server';
import { GATE_OPEN, GATED_SDL, gatedResolvers } from './fixtures/gated-subgraph';

const keys = generateInternalKeyPair();
const logger = createLogger('gated', 'silent');
const gate = new Int32Array(new SharedArrayBuffer(8));
/** Atomics.waitAsync: in Node since 16, in TypeScript's ES2024 lib (this project's is ES2023). */
const waitAsync = (Atomics as unknown as { waitAsync(array: Int32Array, index: number, value: number): { async: boolean; value: unknown } }).waitAsync;
const laneEntry = { file: path.join(__dirname, 'fixtures', 'gated-lane-thread.ts'), execArgv: ['--import', 'tsx'] };

async function startGated(lane: SubgraphLane): Promise<RunningService> {
  return startSubgraphServer(
    { port: 0, host: '127.0.0.1', mongoUri: undefined, dbPrefix: 'gated', internalTokenPublicKey: keys.publicKeyPem, logger },
    { name: 'gated', sdl: GATED_SDL, resolvers: gatedResolvers(gate) as never, buildContext: (base) => base, lane },
  );
}

async function post(service: RunningService, query: string, options: { lane?: string; variables?: Record<string, unknown> } = {}) {
  const token = mintInternalToken({ subject: 'k1', kind: 'api_key', tenantId: NO_TENANT, scopes: [] }, 'gated', keys.privateKeyPem);
  const res = await fetch(service.url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      [INTERNAL_IDENTITY_HEADER]: token,
      ...(options.lane !== undefined ? { [EXPENSIVE_LANE_HEADER]: options.lane } : {}),
    },
    body: JSON.stringify({ query, variables: options.variables ?? {} }),
  });
  return {
    status: res.status,
    contentType: res.headers.get('content-type'),
    body: (await res.json()) as { data?: unknown; errors?: { message: string; extensions?: Record<string, unknown> }[] },
  };
}

async function executed(on: 'lane' | 'event_loop'): Promise<number> {
  const values = (await metricsRegistry.getSingleMetric('linepack_subgraph_expensive_requests_executed_total')!.get()).values;
  return values.filter((v) => v.labels['subgraph'] === 'gated' && v.labels['on'] === on).reduce((sum, v) => sum + v.value, 0);
}

describe('with its lane running', () => {
  let lane: SubgraphLane;
  let service: RunningService;

  beforeAll(async () => {
    lane = new SubgraphLane('gated', laneEntry, { gate }, logger);
    service = await startGated(lane);
  });

  afterAll(async () => {
    Atomics.store(gate, 0, GATE_OPEN);
    Atomics.notify(gate, 0);
    await service?.stop();
    await lane?.stop();
  });

  test('a cheap request is answered while a marked request is executing on the lane', async () => {
    const started = waitAsync(gate, 1, 0);
    const events: string[] = [];
    const marked = post(service, '{ gated }', { lane: EXPENSIVE_LANE }).then((answer) => {
      events.push('marked answered');
      return answer;
    });
    // The marked request is executing on the lane's thread, which it holds until the gate opens.
    if (started.async) await started.value;
    events.push('marked executing');
    const cheap = await post(service, 'query($n: Int!) { quick(n: $n) }', { variables: { n: 21 } });
    events.push('cheap answered');
    expect(cheap.body).toEqual({ data: { quick: 42 } });
    Atomics.store(gate, 0, GATE_OPEN);
    Atomics.notify(gate, 0);
    const answer = await marked;
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual({ data: { gated: 'through the gate' } });
    expect(events).toEqual(['marked executing', 'cheap answered', 'marked answered']);
  });

  test('a marked request is answered as the loop answers it: data, errors with their codes, refusals, headers', async () => {
    const before = await executed('lane');
    const cases = ['query($n: Int!) { quick(n: $n) }', '{ refused }', '{ nosuchfield }', '{ quick(n: "not a number") }'];
    for (const query of cases) {
      const onLoop = await post(service, query, { variables: { n: 4 } });
      const onLane = await post(service, query, { lane: EXPENSIVE_LANE, variables: { n: 4 } });
      expect(onLane).toEqual(onLoop);
    }
    expect((await post(service, '{ refused }', { lane: EXPENSIVE_LANE })).body.errors?.[0]?.extensions).toMatchObject({ code: 'BAD_USER_INPUT' });
    expect((await post(service, '{ nosuchfield }', { lane: EXPENSIVE_LANE })).status).toBe(400);
    expect(await executed('lane')).toBe(before + cases.length + 2);
  });

  test('only the exact mark moves a request: another value runs on the loop like any request', async () => {
    const before = await executed('lane');
    for (const value of ['Expensive', 'expensive, expensive', 'cheap', '']) {
      // The gated field refuses to run on the loop: had any of these reached the lane, it would have answered data.
      const answer = await post(service, '{ gated }', { lane: value });
      expect(answer.body.errors?.[0]).toMatchObject({ message: 'the gated field ran on the event loop', extensions: { code: 'CONFLICT' } });
    }
    expect(await executed('lane')).toBe(before);
  });

  test('a request without a valid identity token is refused before the lane', async () => {
    const before = await executed('lane');
    const res = await fetch(service.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [EXPENSIVE_LANE_HEADER]: EXPENSIVE_LANE },
      body: JSON.stringify({ query: '{ quick(n: 1) }' }),
    });
    expect(res.status).toBe(401);
    expect(await executed('lane')).toBe(before);
  });
});

test('a lane that cannot start leaves marked requests to the loop, and says so', async () => {
  const lines: string[] = [];
  const captured = createLogger('gated', 'error', { write: (line: string) => void lines.push(line) });
  const lane = new SubgraphLane('gated', { file: path.join(__dirname, 'fixtures', 'no-such-thread.ts'), execArgv: ['--import', 'tsx'] }, {}, captured);
  const service = await startGated(lane);
  try {
    const before = await executed('event_loop');
    const answer = await post(service, 'query($n: Int!) { quick(n: $n) }', { lane: EXPENSIVE_LANE, variables: { n: 5 } });
    expect(answer.body).toEqual({ data: { quick: 10 } });
    expect(await executed('event_loop')).toBe(before + 1);
    expect(lines.some((line) => line.includes('the expensive-request lane could not start'))).toBe(true);
  } finally {
    await service.stop();
    await lane.stop();
  }
});
