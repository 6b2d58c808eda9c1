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
