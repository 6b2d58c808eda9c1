import { graphql } from '../test/support/stack';
import { measure, type Result } from './harness';

/**
 * Measurement ingest through the gateway, the same three scenarios wherever it is measured: one item per call
 * (×100), batches of 500, one batch of 5,000. `label` prefixes the scenario names when runs are compared.
 */
export async function measureIngest(gatewayUrl: string, apiKey: string, assetId: string, label = ''): Promise<Result[]> {
  let sequence = 0;
  const items = (n: number) =>
    Array.from({ length: n }, () => ({
      idempotencyKey: `bench-${sequence++}`,
      assetId,
      type: 'PRESSURE',
      value: 6_000,
      unit: 'KPA',
      observedAt: new Date(Date.UTC(2026, 0, 1) + sequence * 1000).toISOString(),
      source: 'SCADA',
    }));
  const record = async (batch: unknown[]) => {
    const res = await graphql(gatewayUrl, 'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { insertedCount } }', {
      apiKey,
      variables: { i: batch },
    });
    if (res.body.errors) throw new Error(JSON.stringify(res.body.errors));
  };
  const name = (scenario: string) => (label ? `${label}: ${scenario}` : scenario);
  return [
    await measure(
      {
        name: name('1 item per call (×100)'),
        items: 100,
        run: async () => {
          for (let i = 0; i < 100; i++) await record(items(1));
        },
      },
      5,
      1,
    ),
    await measure({ name: name('batches of 500'), items: 500, run: () => record(items(500)) }, 5, 1),
    await measure({ name: name('one batch of 5,000'), items: 5_000, run: () => record(items(5_000)) }, 3, 1),
  ];
}
