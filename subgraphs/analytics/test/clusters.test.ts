/**
 * Which anomalies of a segment are assessed as one cluster (clusters.ts), under the ASME_B31G_3T rule: features
 * within 3t of each other axially and circumferentially interact (the rule and its source are quoted in
 * model/interaction.ts and tested there; this tests how a segment's anomalies are grouped for it).
 */
import { clustersOf, runKeyOf } from '../src/clusters';
import type { AnomalyProjection } from '../src/documents';

const pipe = { outsideDiameterMm: 610, wallThicknessMm: 10 }; // 3t = 30 mm
const rule = { name: 'ASME_B31G_3T' as const };

let serial = 0;
function anomaly(fields: Partial<AnomalyProjection>): AnomalyProjection {
  serial += 1;
  return {
    _id: `m${serial}`,
    tenantId: 't',
    assetId: 's',
    runId: 'run-2024',
    observedAt: new Date('2024-06-01T00:00:00Z'),
    featureType: 'METAL_LOSS',
    surface: 'EXTERNAL',
    odometerM: 100,
    stationM: null,
    clockDeg: 90,
    depthPctWt: 20,
    lengthMm: 40,
    widthMm: 30,
    sourceEventId: 'e',
    ...fields,
  };
}

test('features 3t apart along the pipe form one cluster, assessed as one box at the deepest depth', () => {
  // 100.000–100.040 m, a 30 mm gap (= 3t, inclusive), 100.070–100.120 m, then 31 mm to the third: not interacting.
  const a = anomaly({ odometerM: 100, lengthMm: 40, depthPctWt: 22 });
  const b = anomaly({ odometerM: 100.07, lengthMm: 50, depthPctWt: 41 });
  const c = anomaly({ odometerM: 100.151, lengthMm: 20, depthPctWt: 60 });
  const clusters = clustersOf(pipe, [c, a, b], rule);
  expect(clusters.get(a._id)).toEqual({
    leadId: b._id,
    memberIds: [a._id, b._id].sort(),
    rule: 'ASME_B31G_3T',
    lengthMm: expect.closeTo(120, 6),
    widthMm: expect.closeTo(30, 6),
    maxDepthPctWt: 41,
  });
  expect(clusters.get(b._id)).toBe(clusters.get(a._id));
  // A lone feature is assessed on its own dimensions: no membership.
  expect(clusters.has(c._id)).toBe(false);
});

test('the same place in two runs is the same corrosion seen twice, never one cluster', () => {
  const older = anomaly({ runId: 'run-2019', observedAt: new Date('2019-06-01T00:00:00Z') });
  const newer = anomaly({ runId: 'run-2024' });
  expect(clustersOf(pipe, [older, newer], rule).size).toBe(0);
  // Hand-recorded anomalies without a run are grouped by the day they were observed.
  expect(runKeyOf({ runId: null, observedAt: new Date('2024-06-01T13:00:00Z') })).toBe('2024-06-01');
});

test('features apart around the pipe do not interact; features without a clock or of another kind are left alone', () => {
  // 90° and 180° on 610 mm pipe: 479 mm of arc between centres, far beyond 3t.
  const top = anomaly({ clockDeg: 90 });
  const side = anomaly({ clockDeg: 180 });
  const noClock = anomaly({ clockDeg: null, odometerM: 100.01 });
  const dent = anomaly({ featureType: 'DENT', odometerM: 100.01 });
  expect(clustersOf(pipe, [top, side, noClock, dent], rule).size).toBe(0);
});

test('a segment without its geometry clusters nothing (its anomalies are not assessable anyway)', () => {
  expect(clustersOf({ outsideDiameterMm: null, wallThicknessMm: 10 }, [anomaly({}), anomaly({})], rule).size).toBe(0);
});

test('the lead is the same whatever order the anomalies arrive in', () => {
  const x = anomaly({ odometerM: 200, depthPctWt: 30 });
  const y = anomaly({ odometerM: 200.05, depthPctWt: 30 });
  expect(clustersOf(pipe, [x, y], rule).get(x._id)!.leadId).toBe(clustersOf(pipe, [y, x], rule).get(x._id)!.leadId);
});
