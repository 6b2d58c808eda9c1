/**
 * Trusted documents (issue 29, item 2; gateway/src/trusted-documents.ts): the committed manifest is what the clients'
 * sources give now (the staleness check of `npm run trusted-documents:check`), a document's id does not depend on
 * how it is formatted, and with TRUSTED_DOCUMENTS_ONLY the gateway runs a trusted document — sent as text, as a
 * `documentId` or as an APQ hash — and refuses any other with the codes Apollo Router uses
 * (PERSISTED_QUERY_NOT_IN_LIST, PERSISTED_QUERY_NOT_FOUND).
 */
import { parse } from 'graphql';
import { repoRoot } from '@linepack/lib/repo-root';
import { trustedDocuments } from '@linepack/lib/generated/trusted-documents';
import { canonicalDocument, documentIdOf } from '@linepack/gateway/trusted-documents';
import { collectTrustedDocuments } from '../../scripts/trusted-documents';
import { startGatewayProcess } from '../support/gateway-process';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

jest.setTimeout(120_000);

const named = (name: string) => {
  const entry = Object.entries(trustedDocuments).find(([, d]) => d.name === name);
  if (!entry) throw new Error(`no trusted document named ${name}`);
  return { id: entry[0], document: entry[1].document };
};

async function post(url: string, apiKey: string, body: Record<string, unknown>) {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify(body),
  });
  return {
    status: res.status,
    body: (await res.json()) as { data?: Record<string, unknown> | null; errors?: { message: string; extensions?: Record<string, unknown> }[] },
  };
}

test('the committed manifest is what the console, MCP companion, CLI and README sources give now', () => {
  // Listed by name and id first, so a stale manifest reads as the operations that changed; `npm run trusted-documents` fixes it.
  const listed = (documents: typeof trustedDocuments) => Object.entries(documents).map(([id, d]) => `${d.name ?? '(anonymous)'} ${id}`);
  const now = collectTrustedDocuments(repoRoot);
  expect(listed(now)).toEqual(listed(trustedDocuments));
  expect(now).toEqual(trustedDocuments);
  const sources = new Set(Object.values(trustedDocuments).flatMap((d) => d.sources.map((s) => s.split('/')[0])));
  expect([...sources].sort()).toEqual(expect.arrayContaining(['README.md', 'console', 'lib', 'mcp-server']));
  // No test's operation is trusted.
  expect(
    Object.values(trustedDocuments)
      .flatMap((d) => d.sources)
      .filter((s) => s.split('/').includes('test')),
  ).toEqual([]);
});

test("a document's id ignores formatting, comments, other operations and unused fragments, and changes with its content", () => {
  const { id, document } = named('ConsoleDigPipelines');
  const reformatted = `# the dig list's pipelines\nquery Other { __typename }\nfragment Unused on Asset { id }\n${document.replace(/\n\s*/g, ' ')}`;
  expect(documentIdOf(canonicalDocument(parse(reformatted), 'ConsoleDigPipelines')!.text)).toBe(id);
  expect(documentIdOf(canonicalDocument(parse(document.replace('name', 'type')), null)!.text)).not.toBe(id);
  // Two operations and no name: no operation is chosen, so there is nothing to trust.
  expect(canonicalDocument(parse('query A { __typename } query B { __typename }'), null)).toBeNull();
});

describe('with TRUSTED_DOCUMENTS_ONLY', () => {
  let stack: TestStack;
  let gateway: Awaited<ReturnType<typeof startGatewayProcess>>;
  let apiKey: string;

  beforeAll(async () => {
    stack = await startTestStack({ credentialCacheTtlSeconds: 300 });
    gateway = await startGatewayProcess(stack, null, { TRUSTED_DOCUMENTS_ONLY: 'true' });
    ({ apiKey } = await stack.tenantWithKey());
    await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Trusted line' });
  });

  afterAll(async () => {
    gateway?.process.kill('SIGTERM');
    await stack?.stop();
  });

  test('a trusted document runs, sent as its text (however formatted), as a documentId or as an APQ hash', async () => {
    const { id, document } = named('ConsoleDigPipelines');
    const expected = { assets: { totalCount: 1, edges: [{ node: { id: expect.any(String), name: 'Trusted line' } }] } };
    const asText = await post(gateway.url, apiKey, { query: document.replace(/\n\s*/g, ' ') });
    expect(asText).toEqual({ status: 200, body: { data: expected, extensions: expect.anything() } });
    const asDocumentId = await post(gateway.url, apiKey, { documentId: `sha256:${id}` });
    expect(asDocumentId).toEqual({ status: 200, body: { data: expected, extensions: expect.anything() } });
    const asApq = await post(gateway.url, apiKey, { extensions: { persistedQuery: { version: 1, sha256Hash: id } } });
    expect(asApq).toEqual({ status: 200, body: { data: expected, extensions: expect.anything() } });
  });

  test('an untrusted document is refused with PERSISTED_QUERY_NOT_IN_LIST and an unknown id with PERSISTED_QUERY_NOT_FOUND', async () => {
    const untrusted = await post(gateway.url, apiKey, { query: '{ assets(first: 500) { edges { node { id name } } } }' });
    expect(untrusted.status).toBe(400);
    expect(untrusted.body.data).toBeUndefined();
    expect(untrusted.body.errors?.[0]?.extensions?.['code']).toBe('PERSISTED_QUERY_NOT_IN_LIST');
    expect(untrusted.body.errors?.[0]?.message).toMatch(/trusted documents only/);

    const unknown = await post(gateway.url, apiKey, { documentId: `sha256:${'0'.repeat(64)}` });
    expect(unknown).toEqual({
      status: 400,
      body: { errors: [{ message: `no trusted document has the id "${'0'.repeat(64)}"`, extensions: { code: 'PERSISTED_QUERY_NOT_FOUND' } }] },
    });
    // APQ cannot register a document when only trusted ones run.
    const registering = await post(gateway.url, apiKey, { extensions: { persistedQuery: { version: 1, sha256Hash: 'f'.repeat(64) } } });
    expect(registering.status).toBe(400);
    expect(registering.body.errors?.[0]?.extensions?.['code']).toBe('PERSISTED_QUERY_NOT_FOUND');
  });

  test('without it (the default) any document runs, and a trusted documentId too', async () => {
    expect((await graphql(stack.gatewayUrl, '{ assets(first: 1) { totalCount } }', { apiKey })).body.errors).toBeUndefined();
    const { id } = named('ConsoleDigPipelines');
    const byId = await post(stack.gatewayUrl, apiKey, { documentId: id });
    expect(byId.status).toBe(200);
    expect(byId.body.data?.['assets']).toMatchObject({ totalCount: 1 });
  });
});
