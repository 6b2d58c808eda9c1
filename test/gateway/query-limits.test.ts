import { graphql, startTestStack, type TestStack } from '../support/stack';

/** One request cannot ask for unbounded work: aliases, depth and cost are capped before execution. */
let stack: TestStack;
let apiKey: string;
beforeAll(async () => {
  stack = await startTestStack();
  apiKey = (await stack.tenantWithKey()).apiKey;
});
afterAll(async () => {
  await stack?.stop();
});

const refusal = async (query: string) => {
  const res = await graphql(stack.gatewayUrl, query, { apiKey });
  return { status: res.status, code: res.body.errors?.[0]?.extensions?.['code'], message: res.body.errors?.[0]?.message ?? '' };
};

it('allows a full 500-row page with the fields a client needs', async () => {
  const res = await graphql(
    stack.gatewayUrl,
    '{ assets(first: 500) { totalCount pageInfo { endCursor } edges { cursor node { id name type status classLocation inHca maopKpa wallThicknessMm outsideDiameterMm smysMpa parent { id name } } } } }',
    { apiKey },
  );
  expect(res.status).toBe(200);
  expect(res.body.errors).toBeUndefined();
});

it('refuses many aliases of an expensive field', async () => {
  const aliases = Array.from({ length: 200 }, (_, i) => `a${i}: assets(first: 500) { edges { node { id name } } }`).join(' ');
  const r = await refusal(`{ ${aliases} }`);
  expect(r.status).toBe(400);
  expect(r.code).toBe('GRAPHQL_VALIDATION_FAILED');
  expect(r.message).toMatch(/Cost limit|aliases/i);
});

it('refuses a query nested too deep', async () => {
  const deep = 'parent { '.repeat(14) + 'id' + ' }'.repeat(14);
  const r = await refusal(`{ assets { edges { node { ${deep} } } } }`);
  expect(r.status).toBe(400);
  expect(r.message).toMatch(/depth limit of 12/);
});

it('does not suggest field names to someone probing the schema', async () => {
  const r = await refusal('{ assetz { totalCount } }');
  expect(r.status).toBe(400);
  expect(r.message).not.toMatch(/Did you mean/);
});

it('refuses batched requests', async () => {
  const res = await fetch(stack.gatewayUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify([{ query: '{ __typename }' }, { query: '{ __typename }' }]),
  });
  expect(res.status).toBe(400);
});

describe('cost, priced after the variables are known', () => {
  const heavy = (n: string) =>
    `query($n: Int) { ${Array.from({ length: 30 }, (_, i) => `a${i}: assets(first: ${n}) { edges { node { id measurements(first: ${n}) { edges { node { id value } } } } } }`).join(' ')} }`;

  it('refuses a list size passed as a variable exactly as when it is written literally', async () => {
    const literal = await refusal(heavy('500'));
    const viaVariable = await graphql(stack.gatewayUrl, heavy('$n'), { apiKey, variables: { n: 500 } });
    expect(literal.status).toBe(400);
    expect(viaVariable.status).toBe(400);
    expect(viaVariable.body.errors?.[0]?.extensions?.['code']).toBe('GRAPHQL_VALIDATION_FAILED');
    expect(viaVariable.body.errors?.[0]?.message).toMatch(/^operation cost \d+ exceeds the maximum of 250000/);
  });

  it('reports what an operation cost', async () => {
    const res = await graphql(stack.gatewayUrl, 'query($n: Int) { assets(first: $n) { edges { node { id } } } }', { apiKey, variables: { n: 20 } });
    expect(res.body.errors).toBeUndefined();
    // The connection, then 20 edges each with its node.
    expect(res.body.extensions?.['cost']).toMatchObject({ requested: 41, maximum: 250_000 });
  });

  it('lets a request call each mutation once', async () => {
    const item = (i: number) =>
      `{ idempotencyKey: "dup-${i}", assetId: "x", type: PRESSURE, value: 1, unit: KPA, observedAt: "2026-01-01T00:00:00Z", source: SCADA }`;
    const r = await refusal(
      `mutation { a: recordMeasurements(input: [${item(1)}]) { insertedCount } b: recordMeasurements(input: [${item(2)}]) { insertedCount } }`,
    );
    expect(r.status).toBe(400);
    expect(r.message).toContain('recordMeasurements appears more than once');
  });

  it('spends a per-minute cost budget by tier: heavy queries run out before the request count does', async () => {
    const { apiKey: freeKey } = await stack.tenantWithKey({ tier: 'FREE' });
    // 1 + 240 × (edge + node + connection + 120 × (edge + node)) = 58,321 per query; the free budget is 1,000,000 a minute.
    const query = '{ assets(first: 240) { edges { node { id measurements(first: 120) { edges { node { id } } } } } } }';
    const statuses: number[] = [];
    let refused: Awaited<ReturnType<typeof graphql>> | null = null;
    for (let i = 0; i < 25 && !refused; i++) {
      const res = await graphql(stack.gatewayUrl, query, { apiKey: freeKey });
      statuses.push(res.status);
      if (res.status !== 200) refused = res;
    }
    expect(statuses.slice(0, 17)).toEqual(Array(17).fill(200));
    expect(refused?.status).toBe(429);
    expect(refused?.body.errors?.[0]?.extensions?.['code']).toBe('RATE_LIMITED');
    expect(refused?.body.errors?.[0]?.message).toMatch(/cost budget of the free tier spent/);
    expect(Number(refused?.headers.get('retry-after'))).toBeGreaterThan(0);
    // Cheap requests still fit in what is left of the budget.
    expect((await graphql(stack.gatewayUrl, '{ __typename }', { apiKey: freeKey })).status).toBe(200);
  });
});

describe('cost cannot be side-stepped with fragments or nulls', () => {
  it('prices a fragment spread many times over once, as it runs once, and answers promptly', async () => {
    const level = (i: number) => `fragment F${i} on Query { ${`...F${i + 1} `.repeat(100)}}`;
    const query = `query { ...F1 } ${[1, 2, 3, 4].map(level).join(' ')} fragment F5 on Query { assets(first: 1) { totalCount } }`;
    const started = Date.now();
    const res = await graphql(stack.gatewayUrl, query, { apiKey });
    // Walked once per spread, 100⁴ spreads would take minutes: a bound this loose only fails on that, not on a busy machine.
    expect(Date.now() - started).toBeLessThan(10_000);
    expect(res.status).toBe(200);
    expect(res.body.extensions?.['cost']).toMatchObject({ requested: 1 });
  });

  it('counts mutations inside fragments: once each, and priced', async () => {
    const item = (key: string) =>
      `{ idempotencyKey: "${key}", assetId: "x", type: PRESSURE, value: 1, unit: KPA, observedAt: "2026-01-01T00:00:00Z", source: SCADA }`;
    const twice = await refusal(
      `mutation { ... on Mutation { a: recordMeasurements(input: [${item('f-1')}]) { insertedCount } } ... on Mutation { b: recordMeasurements(input: [${item('f-2')}]) { insertedCount } } }`,
    );
    expect(twice.status).toBe(400);
    expect(twice.message).toContain('recordMeasurements appears more than once');
    const once = await graphql(stack.gatewayUrl, `mutation { ... on Mutation { recordMeasurements(input: [${item('f-3')}]) { insertedCount } } }`, { apiKey });
    // The result object 1, the mutation 10, its one input item 1.
    expect(once.body.extensions?.['cost']).toMatchObject({ requested: 12 });
  });

  it('prices a long list variable by its items as sent, and execution still refuses an invalid item in it', async () => {
    // Over 1,000 list elements a variable is not coerced while the operation is priced (gateway/src/cost.ts); its price
    // and the refusal of a wrong item must be what they were when it was.
    const items = Array.from({ length: 1_500 }, (_, i) => ({
      idempotencyKey: `long-${i}`,
      assetId: 'x',
      type: 'PRESSURE',
      value: 1,
      unit: 'KPA',
      observedAt: '2026-01-01T00:00:00Z',
      source: 'SCADA',
    }));
    const mutation = 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount } }';
    const wrong = items.map((item, i) => (i === 700 ? { ...item, unitOfMeasure: 'KPA' } : item));
    const refused = await graphql(stack.gatewayUrl, mutation, { apiKey, variables: { i: wrong } });
    expect(refused.status).toBe(400);
    expect(refused.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(refused.body.errors?.[0]?.message).toMatch(/i\[700\].*"unitOfMeasure" is not defined by type "MeasurementInput"/);
    const res = await graphql(stack.gatewayUrl, mutation, { apiKey, variables: { i: items } });
    expect(res.body.errors).toBeUndefined();
    // The result object 1, the mutation 10, its 1,500 input items.
    expect(res.body.extensions?.['cost']).toMatchObject({ requested: 1_511 });
    // Only a list variable is priced as sent: a long list sent for a page size is refused while pricing, as before.
    const page = await graphql(stack.gatewayUrl, 'query($n: Int) { assets(first: $n) { edges { node { id } } } }', {
      apiKey,
      variables: { n: Array.from({ length: 2_000 }, (_, i) => i) },
    });
    expect(page.status).toBe(400);
    expect(page.body.errors?.[0]).toMatchObject({ extensions: { code: 'BAD_USER_INPUT' } });
    expect(page.body.extensions?.['cost']).toBeUndefined();
  });

  it('prices first: null as the default page it is served as', async () => {
    const res = await graphql(stack.gatewayUrl, 'query($n: Int) { assets(first: $n) { edges { node { id } } } }', { apiKey, variables: { n: null } });
    expect(res.body.extensions?.['cost']).toMatchObject({ requested: 101 });
  });
});
