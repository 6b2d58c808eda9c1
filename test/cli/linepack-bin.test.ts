/**
 * `npx linepack …` exactly as the README has a user type it: npx from the repository root, through the package's bin
 * (bin/linepack.cjs), against a running stack. The other CLI tests start cli/linepack.ts directly, which is how the
 * bin once broke unnoticed: `analytics rebuild` imports a subgraph module, and without tsx's ESM hook Node's type
 * stripping refused it ("TypeScript parameter property is not supported in strip-only mode").
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { databaseName } from '@linepack/lib/mongo';
import { until } from '@linepack/lib/testing/until';
import { runProcess } from '../support/linepack-process';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';

let stack: TestStack;
let apiKey: string;
let tenantId: string;
// An empty state dir: no dev.json of someone's `npm start` in the checkout decides which databases the CLI opens.
const stateDir = mkdtempSync(path.join(os.tmpdir(), 'linepack-bin-'));

beforeAll(async () => {
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  ({ apiKey, tenantId } = await stack.tenantWithKey());
});
afterAll(async () => {
  await stack?.stop();
  rmSync(stateDir, { recursive: true, force: true });
});

/** `npx linepack <args>` from the repository root, asynchronously: the stack under test runs in this process. */
function npxLinepack(args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    LINEPACK_STATE_DIR: stateDir,
    LINEPACK_DB_PREFIX: stack.dbPrefix,
    MONGODB_URI: process.env['MONGODB_URI'],
    REDIS_URL: process.env['REDIS_URL'],
  };
  return runProcess(['npx', 'linepack', ...args], { env }).then(({ code, stdout, stderr }) => ({ status: code, stdout, stderr }));
}

const assessmentsOf = async (segmentId: string) =>
  (
    await graphql<{ asset: { anomalyAssessments: { totalCount: number; edges: { node: { responseCategory: string; ruleRef: string } }[] } } }>(
      stack.gatewayUrl,
      'query($id: ID!) { asset(id: $id) { anomalyAssessments { totalCount edges { node { responseCategory ruleRef } } } } }',
      { apiKey, variables: { id: segmentId } },
    )
  ).body.data?.asset.anomalyAssessments;

it('npx linepack analytics rebuild --tenant restores lost projections from the event streams', async () => {
  const line = await createAsset(stack.gatewayUrl, apiKey, {
    type: 'PIPELINE',
    name: 'Line 4',
    regulation: 'CFR_192',
    product: 'NATURAL_GAS',
    status: 'ACTIVE',
  });
  const segment = await createAsset(stack.gatewayUrl, apiKey, {
    type: 'SEGMENT',
    name: 'Line 4 · MP 0–2',
    parentId: line.id,
    status: 'ACTIVE',
    regulation: 'CFR_192',
    product: 'NATURAL_GAS',
    outsideDiameterMm: 610,
    wallThicknessMm: 9.5,
    smysMpa: 359,
    maopKpa: 6900,
    classLocation: 3,
    inHca: true,
  });
  const recorded = await graphql(stack.gatewayUrl, 'mutation($i: MeasurementInput!) { recordMeasurement(input: $i) { ids } }', {
    apiKey,
    variables: {
      i: {
        idempotencyKey: 'run-bin-1',
        assetId: segment.id,
        type: 'ILI_ANOMALY',
        source: 'ILI',
        observedAt: '2026-03-02T00:00:00Z',
        runId: 'run-bin',
        featureType: 'METAL_LOSS',
        surface: 'EXTERNAL',
        odometerM: 812.4,
        clockDeg: 90,
        depthPctWt: 85,
        lengthMm: 60,
        widthMm: 45,
        value: 85,
        unit: 'PERCENT_WT',
      },
    },
  });
  expect(recorded.body.errors).toBeUndefined();
  // 85 % of wall: §192.933(d)(1)(iii), "Metal loss greater than 80 percent of nominal wall regardless of dimensions."
  const assessed = [{ node: { responseCategory: 'IMMEDIATE', ruleRef: '§192.933(d)(1)(iii)' } }];
  expect(
    (
      await until(
        () => assessmentsOf(segment.id),
        (a) => a?.totalCount === 1,
        30_000,
      )
    )?.edges,
  ).toEqual(assessed);

  // The projection is lost (a bad migration, a dropped collection): only the streams still know the anomaly.
  await stack.mongo.db(databaseName(stack.dbPrefix, 'analytics')).collection('assessments').deleteMany({ tenantId });
  expect((await assessmentsOf(segment.id))?.totalCount).toBe(0);

  const rebuilt = await npxLinepack(['analytics', 'rebuild', '--tenant', tenantId, '--json']);
  expect({ status: rebuilt.status, stderr: rebuilt.stderr }).toEqual({ status: 0, stderr: expect.not.stringContaining('linepack:') });
  // Two assets upserted and one measurement recorded, at least: the replay read this tenant's streams.
  expect(JSON.parse(rebuilt.stdout)).toEqual({ subgraph: 'analytics', tenantId, events: expect.any(Number) });
  expect((JSON.parse(rebuilt.stdout) as { events: number }).events).toBeGreaterThanOrEqual(3);
  // The rebuild has written the projection by the time the command returns: no waiting for the consumer.
  expect((await assessmentsOf(segment.id))?.edges).toEqual(assessed);

  // The other subgraph with projections goes through the same import of its module.
  const compliance = await npxLinepack(['compliance', 'rebuild', '--tenant', tenantId, '--json']);
  expect({ status: compliance.status, stderr: compliance.stderr }).toEqual({ status: 0, stderr: expect.not.stringContaining('linepack:') });
  expect(JSON.parse(compliance.stdout)).toEqual({ subgraph: 'compliance', tenantId, events: expect.any(Number) });
}, 120_000);

it('npx linepack keys create makes a key that works through the gateway', async () => {
  const station = await createAsset(stack.gatewayUrl, apiKey, { type: 'STATION', name: 'Meter Station 2' });
  const created = await npxLinepack(['keys', 'create', '--tenant', tenantId, '--scopes', 'assets:read', '--name', 'npx key', '--json']);
  expect(created.status).toBe(0);
  const { apiKey: secret, scopes } = JSON.parse(created.stdout) as { apiKey: string; scopes: string[] };
  expect(scopes).toEqual(['assets:read']);
  const read = await graphql<{ asset: { name: string } }>(stack.gatewayUrl, 'query($id: ID!) { asset(id: $id) { name } }', {
    apiKey: secret,
    variables: { id: station.id },
  });
  expect({ data: read.body.data, errors: read.body.errors }).toEqual({ data: { asset: { name: 'Meter Station 2' } }, errors: undefined });

  // A user's mistake is a usage error (exit 2) with the usage text, not a stack trace.
  const wrong = await npxLinepack(['analytics', 'rebuild']);
  expect(wrong.status).toBe(2);
  expect(wrong.stderr).toContain('linepack: rebuild needs --tenant ID or --all-tenants');
}, 60_000);
