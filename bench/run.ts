/**
 * `npm run bench`: what federation and ingest cost, measured against in-run baselines.
 *   1. Gateway overhead: the same query through the gateway (authentication, rate limit, scope check,
 *      query plan, identity token) vs. straight to the assets subgraph with a minted identity.
 *   2. Measurement ingest: one item per call (baseline) vs. batches of 500 and 5,000.
 * Real servers: embedded MongoDB (or MONGODB_URI), the in-process stack over loopback HTTP.
 */
import { startEmbeddedMongo, type EmbeddedMongo } from '@linepack/lib/infra/embedded-mongo';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken } from '@linepack/lib/identity';
import { createAsset, graphql, startTestStack } from '../test/support/stack';
import { measure, printTable } from './harness';
import { measureIngest } from './ingest';

async function main(): Promise<void> {
  let embedded: EmbeddedMongo | null = null;
  if (!process.env['MONGODB_URI']) {
    embedded = await startEmbeddedMongo();
    process.env['MONGODB_URI'] = embedded.uri;
  }
  const stack = await startTestStack({ credentialCacheTtlSeconds: 30 });
  try {
    const { apiKey, tenantId } = await stack.tenantWithKey({ tier: 'ENTERPRISE' });
    const line = await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Bench line' });
    for (let i = 0; i < 50; i++) await createAsset(stack.gatewayUrl, apiKey, { type: 'SEGMENT', name: `Bench segment ${i}`, parentId: line.id });

    const query = '{ assets(first: 50) { totalCount edges { node { id name type status } } } }';
    const direct = async () => {
      const token = mintInternalToken(
        { subject: 'bench', kind: 'api_key', tenantId, scopes: ['assets:read'], requestId: 'bench' },
        'assets',
        stack.internalKeys.privateKeyPem,
      );
      const res = await fetch(stack.subgraphs.assets.url, {
        method: 'POST',
        headers: { 'content-type': 'application/json', [INTERNAL_IDENTITY_HEADER]: token },
        body: JSON.stringify({ query }),
      });
      if (!res.ok) throw new Error(`direct call failed: ${res.status}`);
      await res.json();
    };
    const viaGateway = async () => {
      const res = await graphql(stack.gatewayUrl, query, { apiKey });
      if (res.status !== 200) throw new Error(`gateway call failed: ${res.status}`);
    };
    printTable('Gateway overhead: 50 assets per query, 20 sequential queries per run', [
      await measure(
        {
          name: 'assets subgraph directly',
          items: 20,
          run: async () => {
            for (let i = 0; i < 20; i++) await direct();
          },
        },
        10,
      ),
      await measure(
        {
          name: 'through the gateway',
          items: 20,
          run: async () => {
            for (let i = 0; i < 20; i++) await viaGateway();
          },
        },
        10,
      ),
    ]);

    printTable('Measurement ingest through the gateway', await measureIngest(stack.gatewayUrl, apiKey, line.id));
  } finally {
    await stack.stop();
    await embedded?.stop();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
