import { createHash } from 'node:crypto';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * A client's mistake is a 4xx with a code and a message, never a 500 (issue 16): syntax errors, limits,
 * out-of-range literals and variables, absurdly nested input, bad persisted-query hashes, malformed JSON.
 */
let stack: TestStack;
let apiKey: string;
beforeAll(async () => {
  stack = await startTestStack();
  apiKey = (await stack.tenantWithKey()).apiKey;
});
afterAll(async () => {
  await stack?.stop();
});

async function post(body: unknown): Promise<{ status: number; code: unknown; message: string; length: number; extensionKeys: string[] }> {
  const res = await fetch(stack.gatewayUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await res.text();
  const parsed = JSON.parse(text) as { errors?: { message: string; extensions?: { code?: unknown } }[] };
  const error = parsed.errors?.[0];
  return {
    status: res.status,
    code: error?.extensions?.code,
    message: error?.message ?? '',
    length: text.length,
    extensionKeys: Object.keys(error?.extensions ?? {}),
  };
}

const createAsset = 'mutation($input: CreateAssetInput!) { createAsset(input: $input) { id } }';

it.each([
  ['a syntax error', { query: '{ me { id ' }, 'GRAPHQL_PARSE_FAILED', /Syntax Error/],
  ['more than 20,000 tokens', { query: `{ ${'__typename '.repeat(20_001)}}` }, 'GRAPHQL_PARSE_FAILED', /20000 tokens/],
  ['a query nested 5,000 deep', { query: '{ a '.repeat(5_000) + '}'.repeat(5_000) }, 'GRAPHQL_PARSE_FAILED', /nest/i],
  [
    'a Float literal out of range',
    { query: 'mutation { createAsset(input: { type: PIPELINE, name: "x", maopKpa: 1e309 }) { id } }' },
    'GRAPHQL_VALIDATION_FAILED',
    /Float/,
  ],
  [
    'a Float variable out of range',
    `{"query":${JSON.stringify(createAsset)},"variables":{"input":{"type":"PIPELINE","name":"x","maopKpa":1e309}}}`,
    'BAD_USER_INPUT',
    /maopKpa/,
  ],
  [
    'a GeoJSON nested 5,000 deep',
    `{"query":${JSON.stringify(createAsset)},"variables":{"input":{"type":"PIPELINE","name":"x","geometry":{"type":"LineString","coordinates":${'['.repeat(5_000)}${']'.repeat(5_000)}}}}}`,
    'BAD_USER_INPUT',
    /nest/i,
  ],
  [
    'a persisted-query hash that does not match the query',
    { query: '{ __typename }', extensions: { persistedQuery: { version: 1, sha256Hash: createHash('sha256').update('something else').digest('hex') } } },
    'BAD_USER_INPUT',
    /hash/i,
  ],
  ['malformed JSON', '{"query": "{ __typename }"', 'BAD_USER_INPUT', /malformed JSON/],
  ['a JSON body after a byte order mark', '\ufeff{"query": "{ __typename }"}', 'BAD_USER_INPUT', /byte order mark/],
  ['several operations and no operationName', { query: 'query A { __typename } query B { __typename }' }, 'OPERATION_RESOLUTION_FAILURE', /operation name/],
  [
    'an operationName the document does not have',
    { query: 'query A { __typename }', operationName: 'B' },
    'OPERATION_RESOLUTION_FAILURE',
    /Unknown operation named "B"/,
  ],
  ['a subscription (the schema has none)', { query: 'subscription { __typename }' }, 'GRAPHQL_VALIDATION_FAILED', /no subscription root type/],
  ['an unsupported persisted-query version', { query: '{ __typename }', extensions: { persistedQuery: 7 } }, 'BAD_REQUEST', /persisted query version/],
])('%s answers 400 with a code and a message', async (_name, body, code, message) => {
  const res = await post(body);
  expect({ status: res.status, code: res.code }).toEqual({ status: 400, code });
  expect(res.message).toMatch(message);
});

it('never echoes more than a short prefix of an offending value', async () => {
  const huge = 'x'.repeat(1_000_000);
  for (const body of [
    { query: `{ asset(id: "${huge}") { id } }` },
    { query: 'query($id: ID!) { asset(id: $id) { id } }', variables: { id: huge } },
    { query: 'query($n: Int) { assets(first: $n) { totalCount } }', variables: { n: huge } },
  ]) {
    const res = await post(body);
    expect(res.status).toBe(400);
    expect(res.length).toBeLessThan(2_000);
  }
});

it('still answers a correct request normally', async () => {
  const res = await graphql(stack.gatewayUrl, '{ me { tenantId } }', { apiKey });
  expect(res.status).toBe(200);
  expect(res.body.errors).toBeUndefined();
});

it('a literal only a subgraph can refuse (a DateTime that does not exist) is a 400 too', async () => {
  const res = await post({ query: 'mutation { createAsset(input: { type: PIPELINE, name: "x", installedAt: "2026-02-30T00:00:00Z" }) { id } }' });
  expect({ status: res.status, code: res.code }).toEqual({ status: 400, code: 'GRAPHQL_VALIDATION_FAILED' });
  expect(res.message).toBe('DateTime 2026-02-30T00:00:00Z is not a calendar date');
  expect(res.extensionKeys).toEqual(['code']);
});

it('stays 200 when a subgraph refuses its part after another part of the request was applied', async () => {
  const res = await post({
    query:
      'mutation { createAsset(input: { type: PIPELINE, name: "applied" }) { id } recordMeasurements(input: [{ idempotencyKey: "m", assetId: "x", type: PRESSURE, value: 1, unit: KPA, observedAt: "2026-02-30T00:00:00Z", source: SCADA }]) { ids } }',
  });
  expect(res.status).toBe(200);
  expect(res.code).toBe('GRAPHQL_VALIDATION_FAILED');
  const listed = await graphql<{ assets: { totalCount: number } }>(stack.gatewayUrl, '{ assets(filter: { nameContains: "applied" }) { totalCount } }', {
    apiKey,
  });
  expect(listed.body.data?.assets.totalCount).toBe(1);
});

it('applies the same guards to GET requests, however many parameters come first', async () => {
  const padding = Array.from({ length: 1_000 }, (_, i) => `p${i}=1`).join('&');
  // 100 levels: over the limit of 64, and short enough for a URL (Node refuses headers over 16 KB).
  const deep = '{ a '.repeat(100) + '}'.repeat(100);
  const res = await fetch(`${stack.gatewayUrl}?${padding}&query=${encodeURIComponent(deep)}`, {
    headers: { authorization: `Bearer ${apiKey}`, 'apollo-require-preflight': 'true' },
  });
  const body = (await res.json()) as { errors?: { extensions?: { code?: string } }[] };
  expect(res.status).toBe(400);
  expect(body.errors?.[0]?.extensions?.code).toBe('GRAPHQL_PARSE_FAILED');
});

describe('the 10,000-character limit exempts a variable only where the operation that runs declares it Base64', () => {
  const part = 'A'.repeat(20_000); // valid Base64, twice the string limit
  const upload = 'appendIliUploadPart(uploadId: "00000000-0000-4000-8000-000000000000", index: 0, data: $d) { id }';
  const refusal = { status: 400, code: 'BAD_USER_INPUT', message: 'variables.d is 20000 characters long; at most 10000 are accepted' };

  it('passes a Base64 upload part on to the subgraph (which answers for the unknown upload)', async () => {
    const res = await post({ query: `mutation($d: Base64!) { ${upload} }`, variables: { d: part } });
    expect(res.message).not.toMatch(/characters long/);
  });

  it('a "$d: Base64" in a comment or a string does not exempt a String variable', async () => {
    for (const query of [
      `# $d: Base64\nmutation($d: String!) { createAsset(input: { type: PIPELINE, name: $d }) { id } }`,
      `mutation($d: String!) { createAsset(input: { type: PIPELINE, name: $d, description: "$d: Base64" }) { id } }`,
    ]) {
      const res = await post({ query, variables: { d: part } });
      expect({ status: res.status, code: res.code, message: res.message }).toEqual(refusal);
    }
  });

  it('nor does another operation of the document: the one operationName selects decides', async () => {
    const query = `mutation Upload($d: Base64!) { ${upload} } mutation Named($d: String!) { createAsset(input: { type: PIPELINE, name: $d }) { id } }`;
    const named = await post({ query, operationName: 'Named', variables: { d: part } });
    expect({ status: named.status, code: named.code, message: named.message }).toEqual(refusal);
    const uploaded = await post({ query, operationName: 'Upload', variables: { d: part } });
    expect(uploaded.message).not.toMatch(/characters long/);
    // Two operations and no operationName: none is selected, nothing is exempt.
    const unnamed = await post({ query, variables: { d: part } });
    expect({ status: unnamed.status, code: unnamed.code, message: unnamed.message }).toEqual(refusal);
  });
});
