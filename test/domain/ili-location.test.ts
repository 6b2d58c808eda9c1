/**
 * A dig sheet's location of an imported ILI feature (issue 25 item 6): its joint, the distance downstream of the girth
 * weld that starts it, and the nearest girth welds and markers (reference markers / AGMs and valves) either side —
 * checked against the generator's own listing (lib/ili/generator.ts numbers every row with the joint it lies in), for
 * every feature of an imported run, including features before the run's first girth weld. A page of 50 features, as a
 * dig list asks for them, costs the same few queries as one.
 */
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { INTERNAL_IDENTITY_HEADER, mintInternalToken, type Identity } from '@linepack/lib/identity';
import { importListing } from '@linepack/lib/ili/client';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { TALLY_KINDS, type IliListingRow } from '@linepack/lib/ili/listing';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { createAsset, graphql, mongoCommandsDuring, startTestStack, type TestStack } from '../support/stack';
import { testTempDir } from '../support/temp-dir';

let stack: TestStack;
let key: string;
let tenantId: string;
let segmentId: string;
let runId: string;

const MARKERS = new Set(['REFERENCE_MARKER', 'VALVE']);
const generated = generateTwoRunListing({ features: 150, seed: 25 }).runA.rows;
const featuresOf = (rows: readonly IliListingRow[]) => rows.filter((row) => !TALLY_KINDS.has(row.kind));
// The listing as imported: every girth weld up to the second feature left out, so the first features lie before the
// run's first weld (as in a launcher's station piping, where a listing has no joints yet).
const secondFeatureM = featuresOf(generated)[1]!.logDistanceM;
const rows = generated.filter((row) => !(row.kind === 'GIRTH_WELD' && row.logDistanceM <= secondFeatureM));
const firstWeldM = rows.find((row) => row.kind === 'GIRTH_WELD')!.logDistanceM;

interface Expected {
  jointNumber: number | null;
  upstreamWeld: { jointNumber: number | null; logDistanceM: number } | null;
  downstreamWeld: { jointNumber: number | null; logDistanceM: number } | null;
  upstreamMarker: { name: string | null; kind: string; logDistanceM: number } | null;
  downstreamMarker: { name: string | null; kind: string; logDistanceM: number } | null;
}

/**
 * The truth, from the listing's order: a feature's joint is the one the generator numbered it with (the last weld
 * listed before it — a weld sorts before a feature at its distance); its downstream weld the next weld listed after it.
 */
function expectedAt(index: number): Expected {
  const feature = rows[index]!;
  const before = rows.slice(0, index);
  const after = rows.slice(index + 1);
  const upstreamWeld = before.filter((row) => row.kind === 'GIRTH_WELD').pop() ?? null;
  const downstreamWeld = after.find((row) => row.kind === 'GIRTH_WELD') ?? null;
  const markers = rows.filter((row) => MARKERS.has(row.kind));
  const upstreamMarker = markers.filter((row) => row.logDistanceM <= feature.logDistanceM).pop() ?? null;
  const downstreamMarker = markers.find((row) => row.logDistanceM > feature.logDistanceM) ?? null;
  const weld = (row: IliListingRow | null) => row && { jointNumber: row.jointNumber, logDistanceM: row.logDistanceM };
  const marker = (row: IliListingRow | null) => row && { name: row.markerName, kind: row.kind, logDistanceM: row.logDistanceM };
  return {
    jointNumber: upstreamWeld ? feature.jointNumber : null,
    upstreamWeld: weld(upstreamWeld),
    downstreamWeld: weld(downstreamWeld),
    upstreamMarker: marker(upstreamMarker),
    downstreamMarker: marker(downstreamMarker),
  };
}

const LOCATION = `iliLocation { runId jointNumber distanceFromUpstreamWeldM logDistanceM clockDeg
  upstreamWeld { jointNumber logDistanceM distanceM } downstreamWeld { jointNumber logDistanceM distanceM }
  upstreamMarker { name kind logDistanceM distanceM } downstreamMarker { name kind logDistanceM distanceM } }`;

interface Located {
  id: string;
  idempotencyKey: string;
  odometerM: number;
  clockDeg: number | null;
  iliLocation: null | {
    runId: string;
    jointNumber: number | null;
    distanceFromUpstreamWeldM: number | null;
    logDistanceM: number;
    clockDeg: number | null;
    upstreamWeld: { jointNumber: number | null; logDistanceM: number; distanceM: number } | null;
    downstreamWeld: { jointNumber: number | null; logDistanceM: number; distanceM: number } | null;
    upstreamMarker: { name: string | null; kind: string; logDistanceM: number; distanceM: number } | null;
    downstreamMarker: { name: string | null; kind: string; logDistanceM: number; distanceM: number } | null;
  };
}

let located: Located[];

const listingDir = testTempDir('ili-location-');

beforeAll(async () => {
  stack = await startTestStack({ monitorCommands: true });
  ({ apiKey: key, tenantId } = await stack.tenantWithKey());
  const line = await createAsset(stack.gatewayUrl, key, { type: 'PIPELINE', name: 'Line 25' });
  segmentId = (await createAsset(stack.gatewayUrl, key, { type: 'SEGMENT', name: 'Line 25 · MP 0–2', parentId: line.id })).id;
  await stack.knownToMeasurements(segmentId);
  const file = path.join(listingDir, 'run.csv');
  await writePofListingCsv(rows, file);
  const result = await importListing({
    gatewayUrl: stack.gatewayUrl,
    apiKey: key,
    file,
    assetId: segmentId,
    run: { vendor: 'Synthetic ILI Co.', toolTechnologies: ['MFL'], runDate: '2025-05-01T00:00:00Z' },
    pollMs: 100,
  });
  expect(result.state).toBe('SUCCEEDED');
  runId = result.run.id;
  const { body } = await graphql<{ asset: { measurements: { edges: { node: Located }[] } } }>(
    stack.gatewayUrl,
    `query($id: ID!) { asset(id: $id) { measurements(type: ILI_ANOMALY, first: 500) { edges { node { id idempotencyKey odometerM clockDeg ${LOCATION} } } } } }`,
    { apiKey: key, variables: { id: segmentId } },
  );
  expect(body.errors).toBeUndefined();
  located = body.data!.asset.measurements.edges.map((edge) => edge.node);
}, 120_000);
afterAll(() => stack?.stop());

/** The listing row a feature came from: its idempotency key is `ili:<runId>:<row>` (header = row 1). */
const rowIndexOf = (m: Located) => Number(m.idempotencyKey.split(':').pop()) - 2;

test('every feature of the run is located as the listing lays it out: joint, nearest welds and markers either side', () => {
  expect(located).toHaveLength(featuresOf(rows).length);
  for (const m of located) {
    const index = rowIndexOf(m);
    const feature = rows[index]!;
    expect(m.odometerM).toBe(feature.logDistanceM);
    const want = expectedAt(index);
    const got = m.iliLocation!;
    expect({ id: m.idempotencyKey, ...got }).toMatchObject({
      id: m.idempotencyKey,
      runId,
      logDistanceM: feature.logDistanceM,
      clockDeg: feature.clockDeg,
      jointNumber: want.jointNumber,
      upstreamWeld: want.upstreamWeld && expect.objectContaining(want.upstreamWeld),
      downstreamWeld: want.downstreamWeld && expect.objectContaining(want.downstreamWeld),
      upstreamMarker: want.upstreamMarker && expect.objectContaining(want.upstreamMarker),
      downstreamMarker: want.downstreamMarker && expect.objectContaining(want.downstreamMarker),
    });
    // Distances along the pipe to the millimetre the listing gives, never negative: upstream/downstream say which way.
    const x = feature.logDistanceM;
    if (want.upstreamWeld) {
      expect(got.upstreamWeld!.distanceM).toBeCloseTo(x - want.upstreamWeld.logDistanceM, 3);
      expect(got.distanceFromUpstreamWeldM).toBe(got.upstreamWeld!.distanceM);
    }
    if (want.downstreamWeld) expect(got.downstreamWeld!.distanceM).toBeCloseTo(want.downstreamWeld.logDistanceM - x, 3);
    if (want.upstreamMarker) expect(got.upstreamMarker!.distanceM).toBeCloseTo(x - want.upstreamMarker.logDistanceM, 3);
    if (want.downstreamMarker) expect(got.downstreamMarker!.distanceM).toBeCloseTo(want.downstreamMarker.logDistanceM - x, 3);
    for (const d of [got.upstreamWeld, got.downstreamWeld, got.upstreamMarker, got.downstreamMarker]) if (d) expect(d.distanceM).toBeGreaterThanOrEqual(0);
  }
  // The generator's joints are 0.8–13.5 m, so a feature's upstream weld is never further than one joint.
  const inJoints = located.filter((m) => m.iliLocation!.jointNumber !== null);
  expect(Math.max(...inJoints.map((m) => m.iliLocation!.distanceFromUpstreamWeldM!))).toBeLessThanOrEqual(13.5 + 0.5);
  // Markers: the listing's AGMs and valves both count.
  const markerKinds = new Set(located.flatMap((m) => [m.iliLocation!.upstreamMarker?.kind, m.iliLocation!.downstreamMarker?.kind]).filter(Boolean));
  expect(markerKinds).toContain('REFERENCE_MARKER');
});

test("a feature before the run's first girth weld has no joint and no upstream weld; its downstream weld is the first", () => {
  const early = located.filter((m) => m.odometerM < firstWeldM);
  expect(early.length).toBeGreaterThanOrEqual(2);
  for (const m of early) {
    expect(m.iliLocation).toMatchObject({ jointNumber: null, distanceFromUpstreamWeldM: null, upstreamWeld: null });
    expect(m.iliLocation!.downstreamWeld).toMatchObject({ logDistanceM: firstWeldM });
    expect(m.iliLocation!.downstreamWeld!.distanceM).toBeCloseTo(firstWeldM - m.odometerM, 3);
  }
});

test('measurements not from an imported run have no location', async () => {
  const { body } = await graphql<{ recordMeasurements: { ids: string[] } }>(
    stack.gatewayUrl,
    'mutation($i: [MeasurementInput!]!) { recordMeasurements(input: $i) { ids } }',
    {
      apiKey: key,
      variables: {
        i: [
          // Recorded by hand with the imported run's id: it is not a row of the run's listing, so the tally does not place it.
          {
            idempotencyKey: 'by-hand-1',
            assetId: segmentId,
            type: 'ILI_ANOMALY',
            source: 'ILI',
            runId,
            featureType: 'METAL_LOSS',
            odometerM: 500,
            depthPctWt: 30,
            observedAt: '2025-05-01T00:00:00Z',
          },
          { idempotencyKey: 'by-hand-2', assetId: segmentId, type: 'PRESSURE', source: 'SCADA', value: 5000, unit: 'KPA', observedAt: '2025-05-01T00:00:00Z' },
        ],
      },
    },
  );
  expect(body.errors).toBeUndefined();
  for (const id of body.data!.recordMeasurements.ids) {
    const read = await graphql<{ measurement: { iliLocation: unknown } }>(stack.gatewayUrl, `query($id: ID!) { measurement(id: $id) { ${LOCATION} } }`, {
      apiKey: key,
      variables: { id },
    });
    expect(read.body.errors).toBeUndefined();
    expect(read.body.data!.measurement.iliLocation).toBeNull();
  }
});

test('a page of 50 features, as a dig list resolves them, reads the tally in two queries', async () => {
  // Features with a weld within 50 m either side (all but the ends): no side needs a query of its own.
  const page = located
    .filter((m) => m.iliLocation!.upstreamWeld && m.iliLocation!.downstreamWeld)
    .filter((m) => m.iliLocation!.upstreamWeld!.distanceM <= 50 && m.iliLocation!.downstreamWeld!.distanceM <= 50)
    .slice(0, 50);
  expect(page).toHaveLength(50);
  const identity: Identity = { subject: 'test', kind: 'api_key', tenantId, scopes: ['measurements:read'], requestId: randomUUID() };
  let answer: { data?: { _entities: Located[] }; errors?: unknown[] } = {};
  // Straight to the subgraph, as the gateway sends a dig-list page's measurements: one `_entities` request.
  const commands = await mongoCommandsDuring(stack.subgraphs.measurements.mongo!, async () => {
    const res = await fetch(stack.subgraphs.measurements.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        [INTERNAL_IDENTITY_HEADER]: mintInternalToken(identity, 'measurements', stack.internalKeys.privateKeyPem),
      },
      body: JSON.stringify({
        query: `query($r: [_Any!]!) { _entities(representations: $r) { ... on Measurement { id idempotencyKey odometerM clockDeg ${LOCATION} } } }`,
        variables: { r: page.map((m) => ({ __typename: 'Measurement', id: m.id })) },
      }),
    });
    answer = (await res.json()) as typeof answer;
  });
  expect(answer.errors).toBeUndefined();
  expect(answer.data!._entities).toEqual(page);
  const byCollection = commands.map((c) => `${c.commandName} ${String(c.command[c.commandName])}`).sort();
  expect(byCollection).toEqual(['find ili_runs', 'find ili_tally', 'find ili_tally', 'find measurements']);
});
