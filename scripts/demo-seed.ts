import { randomBytes } from 'node:crypto';
import type { Db } from 'mongodb';
import { canonicalScopes } from '@linepack/lib/scopes';
import { AuthStore } from '@linepack/subgraph-auth/store';

export interface DemoCredentials {
  tenantId: string;
  apiKey: string;
  user: { email: string; password: string };
}

export const DEMO_TENANT_NAME = 'Demo Pipeline Co';
export const DEMO_USER_EMAIL = 'demo@linepack.local';

/**
 * Ensures the demo tenant, user and API key exist in the auth database. The key's secret
 * exists only in what this returns (and .linepack/dev.json), so a restart reuses the
 * previous secret when it still works and otherwise issues a new key.
 */
export async function ensureDemoIdentity(authDb: Db, previous: Partial<DemoCredentials> | null): Promise<{ credentials: DemoCredentials; created: boolean }> {
  const store = new AuthStore(authDb);
  await store.ensureIndexes();
  let tenant = await store.tenants.findOne({ name: DEMO_TENANT_NAME });
  const created = !tenant;
  tenant ??= await store.createTenant({ name: DEMO_TENANT_NAME, tier: 'PRO' });

  let password = previous?.user?.password;
  const existingUser = await store.users.findOne({ email: DEMO_USER_EMAIL });
  if (!existingUser || !password) {
    password = randomBytes(12).toString('base64url');
    if (existingUser) await store.users.deleteOne({ _id: existingUser._id });
    await store.createUser({ tenantId: tenant._id, email: DEMO_USER_EMAIL, password, role: 'ADMIN' });
  }

  let apiKey = previous?.apiKey;
  const stillValid = apiKey ? await store.findApiKeyBySecret(apiKey) : null;
  if (!apiKey || !stillValid || stillValid.revokedAt || stillValid.tenantId !== tenant._id) {
    const scopes = canonicalScopes.filter((s) => s !== 'admin:*');
    apiKey = (await store.createApiKey({ tenantId: tenant._id, name: 'demo key', scopes, tier: 'PRO' })).secret;
  }
  return { credentials: { tenantId: tenant._id, apiKey, user: { email: DEMO_USER_EMAIL, password } }, created };
}

/** A small demo pipeline, created through the public GraphQL API like any client would. */
export async function seedDemoPipeline(gatewayUrl: string, apiKey: string): Promise<number> {
  const create = async (input: Record<string, unknown>): Promise<string> => {
    const res = await fetch(gatewayUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
      body: JSON.stringify({ query: 'mutation Seed($input: CreateAssetInput!) { createAsset(input: $input) { id } }', variables: { input } }),
    });
    const body = (await res.json()) as { data?: { createAsset: { id: string } } | null; errors?: { message: string }[] };
    if (body.errors?.length || !body.data) throw new Error(`seeding failed (${res.status}): ${body.errors?.map((e) => e.message).join('; ')}`);
    return body.data.createAsset.id;
  };
  const gas = { status: 'ACTIVE', product: 'NATURAL_GAS', regulation: 'CFR_192' };
  const pipe = { outsideDiameterMm: 610, wallThicknessMm: 9.5, smysMpa: 359, maopKpa: 6_900 };

  const system = await create({ type: 'SYSTEM', name: 'Gulf Coast Gas System', ...gas });
  const line = await create({
    type: 'PIPELINE',
    name: 'Line 100',
    parentId: system,
    ...gas,
    ...pipe,
    beginStationM: 0,
    endStationM: 42_000,
    classLocation: 1,
    installedAt: '1988-06-01T00:00:00Z',
    location: {
      type: 'LineString',
      coordinates: [
        [-95.37, 29.76],
        [-95.02, 29.9],
      ],
    },
  });
  // Heavier wall where the class location is higher, as §192.111 designs it: the design pressure 2·S·t/D × F (§192.105)
  // of each segment is at or above the line's MAOP — class 1 9.5 mm (F 0.72): 8,051 kPa; class 2 11.1 mm (0.60):
  // 7,839 kPa; class 3 12.7 mm (0.50): 7,474 kPa. (9.5 mm wall in class 3 allows only 5,591 kPa: every anomaly there
  // would have an ERF above 1 and no remaining life, whatever its depth.)
  const segments = [
    { name: 'Line 100 · MP 0–12', beginStationM: 0, endStationM: 12_000, classLocation: 1, inHca: false, wallThicknessMm: 9.5 },
    { name: 'Line 100 · MP 12–30 (HCA)', beginStationM: 12_000, endStationM: 30_000, classLocation: 3, inHca: true, wallThicknessMm: 12.7 },
    { name: 'Line 100 · MP 30–42', beginStationM: 30_000, endStationM: 42_000, classLocation: 2, inHca: false, wallThicknessMm: 11.1 },
  ];
  const segmentIds: string[] = [];
  for (const s of segments) segmentIds.push(await create({ type: 'SEGMENT', parentId: line, ...gas, ...pipe, ...s }));
  const valve = await create({
    type: 'VALVE',
    name: 'MLV-12',
    parentId: segmentIds[1],
    status: 'ACTIVE',
    location: { type: 'Point', coordinates: [-95.2, 29.8] },
  });
  const rectifier = await create({ type: 'RECTIFIER', name: 'RECT-07', parentId: segmentIds[0], status: 'ACTIVE' });
  const testPoint = await create({
    type: 'CP_TEST_POINT',
    name: 'TP-12.4',
    parentId: segmentIds[1],
    status: 'ACTIVE',
    beginStationM: 12_400,
    endStationM: 12_400,
  });

  // A little history, so analytics and compliance have something to show: two ILI runs of the HCA
  // segment (one feature grew), inspection records on the line and the valve.
  const hca = segmentIds[1]!;
  const ili = (run: string, at: string, i: number, odometerM: number, clockDeg: number, depthPctWt: number, lengthMm: number) => ({
    idempotencyKey: `demo-${run}-${i}`,
    assetId: hca,
    type: 'ILI_ANOMALY',
    source: 'ILI',
    observedAt: at,
    runId: run,
    featureType: 'METAL_LOSS',
    surface: 'EXTERNAL',
    odometerM,
    clockDeg,
    depthPctWt,
    lengthMm,
    value: depthPctWt,
    unit: 'PERCENT_WT',
  });
  const inspection = (key: string, assetId: string, type: string, observedAt: string) => ({
    idempotencyKey: `demo-${key}`,
    assetId,
    type,
    source: 'FIELD',
    observedAt,
  });
  await record(gatewayUrl, apiKey, [
    ili('2019-run', '2019-05-14T00:00:00Z', 1, 14_212.3, 170, 22, 85),
    ili('2019-run', '2019-05-14T00:00:00Z', 2, 21_880.0, 30, 12, 40),
    ili('2025-run', '2025-04-22T00:00:00Z', 1, 14_212.6, 175, 41, 95),
    ili('2025-run', '2025-04-22T00:00:00Z', 2, 21_880.4, 35, 14, 40),
    ili('2025-run', '2025-04-22T00:00:00Z', 3, 26_004.1, 200, 63, 180),
    inspection('ili-2019', hca, 'ILI_RUN', '2019-05-14T00:00:00Z'),
    inspection('ili-2025', hca, 'ILI_RUN', '2025-04-22T00:00:00Z'),
    inspection('cp-2025', line, 'CP_SURVEY', '2025-09-10T00:00:00Z'),
    inspection('patrol-2025', line, 'PATROL', '2025-11-03T00:00:00Z'),
    inspection('leak-2025', line, 'LEAK_SURVEY', '2025-06-18T00:00:00Z'),
    inspection('valve-2025', valve, 'VALVE_INSPECTION', '2025-02-01T00:00:00Z'),
    { ...inspection('rect-2025', rectifier, 'RECTIFIER_OUTPUT', '2025-10-01T00:00:00Z'), value: 12.4, unit: 'V' },
    ...readingHistory(testPoint, line),
  ]);
  return 2 + segments.length + 3;
}

/**
 * Readings to chart: eight years of monthly pipe-to-soil potentials at the test point (96, all more negative than the
 * −850 mV criterion) and a year of daily SCADA pressures on the line (365, below its MAOP). Deterministic, so a
 * restart records the same readings (and the idempotency keys keep them once).
 */
function readingHistory(testPoint: string, line: string): Record<string, unknown>[] {
  const readings: Record<string, unknown>[] = [];
  for (let month = 0; month < 96; month++) {
    const at = new Date(Date.UTC(2018, month, 15));
    readings.push({
      idempotencyKey: `demo-cp-${at.toISOString().slice(0, 7)}`,
      assetId: testPoint,
      type: 'CP_PIPE_TO_SOIL',
      source: 'FIELD',
      observedAt: at.toISOString(),
      stationM: 12_400,
      value: Math.round(-1_010 + month * 0.9 + 25 * Math.sin(month / 1.9)),
      unit: 'MV',
    });
  }
  for (let day = 0; day < 365; day++) {
    const at = new Date(Date.UTC(2025, 0, 1 + day, 12));
    readings.push({
      idempotencyKey: `demo-pressure-${at.toISOString().slice(0, 10)}`,
      assetId: line,
      type: 'PRESSURE',
      source: 'SCADA',
      observedAt: at.toISOString(),
      value: Math.round(6_150 + 300 * Math.sin((day / 365) * 2 * Math.PI) + 90 * Math.sin(day / 4)),
      unit: 'KPA',
    });
  }
  return readings;
}

async function record(gatewayUrl: string, apiKey: string, input: Record<string, unknown>[]): Promise<void> {
  const res = await fetch(gatewayUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${apiKey}` },
    body: JSON.stringify({
      query: 'mutation Seed($input: [MeasurementInput!]!) { recordMeasurements(input: $input) { insertedCount } }',
      variables: { input },
    }),
  });
  const body = (await res.json()) as { errors?: { message: string }[] };
  if (body.errors?.length) throw new Error(`seeding measurements failed (${res.status}): ${body.errors.map((e) => e.message).join('; ')}`);
}
