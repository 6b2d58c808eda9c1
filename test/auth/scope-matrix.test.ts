import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { Kind, parse, type FieldDefinitionNode } from 'graphql';
import { securityMapFromSdl } from '@linepack/lib/authz/security-directives';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken } from '@linepack/lib/identity';
import { canonicalScopes, scopeAlias, type Scope } from '@linepack/lib/scopes';
import { subgraphDir, subgraphNames, supergraphPath } from '@linepack/schema/subgraphs';
import { graphql, startTestStack, type TestStack } from '../support/stack';

/**
 * One operation per root field of the supergraph, kept in the package of the subgraph that resolves it
 * (subgraphs/<name>/test/root-operations.ts): the test fails if a root field is added without one there.
 */
const operationsBySubgraph = Object.fromEntries(
  subgraphNames.map((name) => {
    const file = path.join(subgraphDir(name), 'test', 'root-operations.ts');
    // eslint-disable-next-line @typescript-eslint/no-require-imports -- one module per registry entry, found by path
    return [name, existsSync(file) ? (require(file) as { rootOperations: Record<string, string> }).rootOperations : {}];
  }),
);
const rootOperations: Record<string, string> = Object.assign({}, ...Object.values(operationsBySubgraph));

const security = securityMapFromSdl(parse(readFileSync(supergraphPath, 'utf8')));
const supergraph = parse(readFileSync(supergraphPath, 'utf8'));
const rootFieldDefinitions = supergraph.definitions.flatMap((d) =>
  d.kind === 'ObjectTypeDefinition' && (d.name.value === 'Query' || d.name.value === 'Mutation')
    ? (d.fields ?? []).map((f) => ({ field: `${d.name.value}.${f.name.value}`, definition: f }))
    : [],
);
const rootFields = rootFieldDefinitions.map((f) => f.field);
/** The subgraph that resolves a root field: the graph of its @join__field. */
const resolverOf = (definition: FieldDefinitionNode) => {
  const graph = definition.directives?.find((d) => d.name.value === 'join__field')?.arguments?.find((a) => a.name.value === 'graph')?.value;
  return graph?.kind === Kind.ENUM ? graph.value.toLowerCase() : null;
};
const matrix = rootFields.map((field) => ({ field, required: security.get(field)?.scopes[0] ?? [] }));

let stack: TestStack;
let tenantId: string;
let keysInTenant = 0;
/** A key of `tenantId`; a fresh tenant every 90 keys (a tenant holds at most 100 active keys). */
async function keyFor(scopes: readonly string[]): Promise<string> {
  if (++keysInTenant > 90) {
    tenantId = (await stack.tenantWithKey()).tenantId;
    keysInTenant = 1;
  }
  return stack.keyFor(tenantId, scopes);
}
beforeAll(async () => {
  stack = await startTestStack();
  tenantId = (await stack.tenantWithKey()).tenantId;
});
afterAll(async () => {
  await stack?.stop();
});

// Refused for a scope (a resolver may refuse otherwise, e.g. changePassword for an API key, which is not this matrix's concern).
const forbidden = (res: Awaited<ReturnType<typeof graphql>>) =>
  res.body.errors?.some((e) => e.extensions?.['code'] === 'FORBIDDEN' && e.extensions?.['missingScopes'] !== undefined) ?? false;

it('has an operation for every root field of the supergraph', () => {
  expect(Object.keys(rootOperations).sort()).toEqual([...rootFields].sort());
});

it("keeps each root field's operation in the package of the subgraph that resolves it", () => {
  const kept = Object.entries(operationsBySubgraph).flatMap(([name, ops]) => Object.keys(ops).map((field) => [field, name]));
  expect(kept.sort()).toEqual(rootFieldDefinitions.map(({ field, definition }) => [field, resolverOf(definition)]).sort());
});

describe.each(matrix)('$field', ({ field, required }) => {
  const operation = rootOperations[field]!;

  it(`succeeds with exactly ${required.join(' ') || 'any valid credential'}`, async () => {
    const key = await keyFor(required.length ? required : ['compliance:read']);
    const res = await graphql(stack.gatewayUrl, operation, { apiKey: key });
    expect(res.status).toBe(200);
    expect(forbidden(res)).toBe(false);
  });

  if (required.length === 0) return;

  it('gets 403 naming the scope when it lacks it', async () => {
    const others = canonicalScopes.filter((s) => !required.includes(s) && s !== 'admin:*');
    const key = await keyFor(others);
    const res = await graphql(stack.gatewayUrl, operation, { apiKey: key });
    expect(res.status).toBe(403);
    expect(res.body.errors?.[0]?.extensions?.['code']).toBe('FORBIDDEN');
    expect(res.body.errors?.[0]?.extensions?.['missingScopes']).toEqual(required);
    expect(res.body.errors?.[0]?.message).toContain(required[0]);
  });

  const aliases = required.map((s) => scopeAlias(s as Scope));
  if (aliases.length > 0) {
    it(`accepts the alias spelling ${aliases.join(' ')}`, async () => {
      const key = await keyFor(aliases);
      const res = await graphql(stack.gatewayUrl, operation, { apiKey: key });
      expect(forbidden(res)).toBe(false);
    });
  }

  it('is granted by admin:*', async () => {
    const key = await keyFor(['admin:*']);
    expect(forbidden(await graphql(stack.gatewayUrl, operation, { apiKey: key }))).toBe(false);
  });
});

describe('nested fields carry their own scopes', () => {
  it('refuses Asset.measurements to a key with assets:read only', async () => {
    const key = await keyFor(['assets:read']);
    const res = await graphql(stack.gatewayUrl, '{ assets { edges { node { id measurements { totalCount } } } } }', { apiKey: key });
    expect(res.status).toBe(403);
    expect(res.body.errors?.[0]?.extensions?.['missingScopes']).toEqual(['measurements:read']);
  });

  it('refuses PipelineSummary.measurementCount inside a fragment', async () => {
    const key = await keyFor(['assets:read']);
    const res = await graphql(stack.gatewayUrl, '{ pipelineSummary { ...Counts } } fragment Counts on PipelineSummary { totalAssets measurementCount }', {
      apiKey: key,
    });
    expect(res.status).toBe(403);
    expect(res.body.errors?.[0]?.extensions?.['missingScopes']).toEqual(['measurements:read']);
  });
});

describe('every path to an Asset needs assets:read beyond its id', () => {
  it('refuses Measurement.asset details to a measurements-only key but allows the reference', async () => {
    const full = await keyFor(['assets:write', 'assets:read']);
    const created = await graphql<{ createAsset: { id: string } }>(
      stack.gatewayUrl,
      'mutation { createAsset(input: { type: PIPELINE, name: "Path line" }) { id } }',
      { apiKey: full },
    );
    const assetId = created.body.data!.createAsset.id;
    const narrow = await keyFor(['measurements:read', 'measurements:write']);
    const recorded = await graphql<{ recordMeasurement: { ids: string[] } }>(
      stack.gatewayUrl,
      `mutation { recordMeasurement(input: { idempotencyKey: "path-1", assetId: "${assetId}", type: PATROL, observedAt: "2026-01-01T00:00:00Z", source: FIELD }) { ids } }`,
      { apiKey: narrow },
    );
    const measurementId = recorded.body.data!.recordMeasurement.ids[0];
    const details = await graphql(stack.gatewayUrl, `{ measurement(id: "${measurementId}") { asset { name maopKpa } } }`, { apiKey: narrow });
    expect(details.status).toBe(403);
    expect(details.body.errors?.[0]?.extensions?.['missingScopes']).toEqual(['assets:read']);
    const reference = await graphql<{ measurement: { asset: { id: string } } }>(stack.gatewayUrl, `{ measurement(id: "${measurementId}") { asset { id } } }`, {
      apiKey: narrow,
    });
    expect(reference.body.data?.measurement.asset.id).toBe(assetId);
  });

  it('refuses asset details in a mutation result to a write-only key', async () => {
    const writeOnly = await keyFor(['assets:write']);
    const res = await graphql(stack.gatewayUrl, 'mutation { createAsset(input: { type: SYSTEM, name: "W" }) { id parent { name } } }', { apiKey: writeOnly });
    expect(res.status).toBe(403);
  });
});

describe('subgraphs enforce scopes themselves (defence in depth)', () => {
  it('refuses an identity without the scope even when the token is genuine', async () => {
    const token = mintInternalToken(
      { subject: 's', kind: 'api_key', tenantId, scopes: ['measurements:read'], requestId: 'r' },
      'assets',
      stack.internalKeys.privateKeyPem,
    );
    const res = await fetch(stack.subgraphs.assets.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [INTERNAL_IDENTITY_HEADER]: token },
      body: JSON.stringify({ query: '{ assets { totalCount } }' }),
    });
    const body = (await res.json()) as { errors?: { extensions: { code: string } }[] };
    expect(res.status).toBe(403);
    expect(body.errors?.[0]?.extensions.code).toBe('FORBIDDEN');
  });
});

describe('GET /schema/scopes', () => {
  const scopesUrl = () => new URL('/schema/scopes', stack.gatewayUrl).toString();

  it('tells an authenticated client what every field it enforces demands, and what each scope means', async () => {
    const key = await keyFor(['assets:read']);
    const res = await fetch(scopesUrl(), { headers: { authorization: `Bearer ${key}` } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { scopes: { name: string; description: string }[]; requirements: Record<string, string[][]> };
    // The same map the gateway enforces: every root field's requirement, as the scope matrix above expects it.
    for (const { field, required } of matrix) expect(body.requirements[field]?.[0] ?? []).toEqual(required);
    expect(body.requirements['Asset.measurements']).toEqual([['measurements:read']]);
    expect(body.scopes.map((s) => s.name).sort()).toEqual([...canonicalScopes].sort());
    expect(body.scopes.every((s) => s.description.length > 10)).toBe(true);
  });

  it('is not served without a credential', async () => {
    const res = await fetch(scopesUrl());
    expect(res.status).toBe(401);
    expect(res.headers.get('www-authenticate')).toContain('Bearer');
  });
});
