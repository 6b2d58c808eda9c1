/**
 * Compliance end to end: assets and inspection records go in through the gateway, the events flow
 * through Redis Streams, and the compliance subgraph's answers come back through the gateway.
 */
import { until } from '@linepack/lib/testing/until';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let apiKey: string;
let tenantId: string;
beforeAll(async () => {
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  ({ apiKey, tenantId } = await stack.tenantWithKey());
});
afterAll(() => stack?.stop());

const call = (query: string, variables: Record<string, unknown> = {}, key = apiKey) =>
  graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey: key, variables });

it('turns a Part 192 valve inspection recorded on 2025-02-01 into DUE_SOON on 2026-04-20 and OVERDUE on 2026-05-02', async () => {
  const line = await createAsset(stack.gatewayUrl, apiKey, { type: 'PIPELINE', name: 'Line 7', regulation: 'CFR_192', status: 'ACTIVE', classLocation: 2 });
  const valve = await createAsset(stack.gatewayUrl, apiKey, { type: 'VALVE', name: 'MLV 7-3', parentId: line.id, status: 'ACTIVE' });
  const before = await call(`query($id: ID!) { asset(id: $id) { compliance { state obligations { obligation state } } } }`, { id: valve.id });
  expect(before.body.errors).toBeUndefined();
  // Just created: compliance may not have received the asset yet — then NOT_EVALUATED, never OK with no obligations.
  expect(['NOT_EVALUATED', 'NO_RECORD']).toContain(before.body.data!['asset'].compliance.state);

  const recorded = await call(
    `mutation { recordMeasurement(input: { idempotencyKey: "mlv-7-3-2025", assetId: "${valve.id}", type: VALVE_INSPECTION, source: FIELD, observedAt: "2025-02-01T10:00:00Z" }) { ids } }`,
  );
  expect(recorded.body.errors).toBeUndefined();

  const at = (asOf: string) =>
    call(
      `query($id: ID!, $asOf: DateTime) { asset(id: $id) { name compliance(asOf: $asOf) { state obligations { obligation state regulationRef dueAt evidence { id } } } } }`,
      { id: valve.id, asOf },
    );
  const soon = await until(
    () => at('2026-04-20T00:00:00Z'),
    (r) => r.body.data?.['asset']?.compliance.state === 'DUE_SOON',
  );
  expect(soon.body.data!['asset']).toEqual({
    name: 'MLV 7-3',
    compliance: {
      state: 'DUE_SOON',
      obligations: [
        {
          obligation: 'VALVE_INSPECTION',
          state: 'DUE_SOON',
          regulationRef: '§192.745(a)',
          dueAt: '2026-05-01T00:00:00.000Z',
          evidence: [{ id: recorded.body.data!['recordMeasurement'].ids[0] }],
        },
      ],
    },
  });
  expect((await at('2026-05-02T00:00:00Z')).body.data!['asset'].compliance.state).toBe('OVERDUE');

  // The tenant's time zone through the gateway: an admin sets it, every due date then says which zone its day is in.
  const admin = await stack.keyFor(tenantId, ['admin:*']);
  const zone = await call(`mutation { updateComplianceSettings(input: { timeZone: "America/Chicago" }) { timeZone } }`, {}, admin);
  expect(zone.body.data?.['updateComplianceSettings']).toEqual({ timeZone: 'America/Chicago' });
  const local = await call(`query($id: ID!) { asset(id: $id) { compliance(asOf: "2026-04-20T12:00:00Z") { timeZone obligations { dueDate dueAt } } } }`, {
    id: valve.id,
  });
  // Inspected 2025-02-01T10:00Z = 04:00 in Chicago, the same day: due 2026-05-01, which begins at 05:00Z (CDT).
  expect(local.body.data!['asset'].compliance).toEqual({
    timeZone: 'America/Chicago',
    obligations: [{ dueDate: '2026-05-01', dueAt: '2026-05-01T05:00:00.000Z' }],
  });
  expect(
    (await call(`mutation { updateComplianceSettings(input: { timeZone: null }) { timeZone } }`, {}, admin)).body.data?.['updateComplianceSettings'],
  ).toEqual({
    timeZone: 'UTC',
  });

  const overdue = await call(
    `{ complianceStatus(filter: { state: OVERDUE, obligation: VALVE_INSPECTION }, asOf: "2026-05-02T00:00:00Z") { totalCount edges { node { asset { id name } state dueAt } } } }`,
  );
  expect(overdue.body.data!['complianceStatus']).toEqual({
    totalCount: 1,
    edges: [{ node: { asset: { id: valve.id, name: 'MLV 7-3' }, state: 'OVERDUE', dueAt: '2026-05-01T00:00:00.000Z' } }],
  });

  const summary = await call('{ pipelineSummary { complianceByState { state count } } }');
  expect(summary.body.data!['pipelineSummary'].complianceByState).toEqual(expect.arrayContaining([expect.objectContaining({ state: 'OVERDUE' })]));
  const total = summary.body.data!['pipelineSummary'].complianceByState.reduce((n: number, c: { count: number }) => n + c.count, 0);
  expect(total).toBeGreaterThanOrEqual(4); // the pipeline's CP, patrol and leakage survey, and the valve
});

it('needs compliance:read, checked at the gateway', async () => {
  const key = await stack.keyFor((await stack.tenantWithKey()).tenantId, ['assets:read']);
  const res = await call('{ complianceStatus { totalCount } }', {}, key);
  expect(res.status).toBe(403);
  expect(res.body.errors?.[0]?.extensions?.['missingScopes']).toEqual(['compliance:read']);
});
