/**
 * Clustering of interacting metal-loss features.
 *
 * Rule sources (quoted in interaction.ts):
 * - ASME_B31G_3T — "The B31G standard recommends a flaw interaction criterion for ILI metal loss
 *   predictions within a longitudinal and circumferential spacing of 3 times wall thickness" (abstract of
 *   an ASME IPC 2012 paper, asmedigitalcollection.asme.org/IPC/proceedings-abstract/IPC2012/45134/51/266577).
 *   The B31G-2012 text itself was not readable here; the test checks the 3t spacing as that source states it.
 * - POF_6T — the Pipeline Operators Forum "6t × 6t" box (POF 100). Its clause was not readable here either:
 *   the multiple tested is the commonly quoted 6t, not a quotation.
 * - SPACING — operator-supplied limits (e.g. 25.4 mm = 1 in.).
 *
 * The box of a cluster for the published check: ASME B31G-1991 Appendix A example 1 (D 30 in, t 0.438 in,
 * SMYS 52 000 psi, d 0.1 in, L 7.5 in), Modified B31G with 1.1 × SMYS = 1498.8988 psi in the R package
 * pipenostics (tests/testthat/testpf.R), as in b31g.test.ts.
 */
import { type B31GFigures } from '../../src/model/b31g';
import {
  axialGapMm,
  circumferentialGapMm,
  clusterFeatures,
  interact,
  InteractionInputError,
  interactionLimits,
  type MetalLossCluster,
  type MetalLossFeature,
} from '../../src/model/interaction';
import { clusterBoxAssessment } from '../../src/model/rstreng';

const pipe = { outsideDiameterMm: 610, wallThicknessMm: 10 };
const circumference = Math.PI * pipe.outsideDiameterMm;
const degOfMm = (mm: number) => (mm / circumference) * 360;

const feature = (id: string, axialStartMm: number, axialLengthMm: number, clockDeg: number, widthMm: number, depthMm = 2): MetalLossFeature => ({
  id,
  axialStartMm,
  axialLengthMm,
  clockDeg,
  widthMm,
  depthMm,
});

const fieldOfError = (run: () => unknown) => {
  try {
    run();
  } catch (err) {
    return err instanceof InteractionInputError ? err.field : String(err);
  }
  return null;
};

const memberSets = (clusters: MetalLossCluster[]) => clusters.map((c) => [...c.memberIds].sort().join(',')).sort();

describe('interaction limits by rule', () => {
  it('ASME_B31G_3T is 3t both ways, POF_6T 6t both ways, SPACING what the operator sets', () => {
    expect(interactionLimits({ name: 'ASME_B31G_3T' }, 10)).toEqual({ axialGapMm: 30, circumferentialGapMm: 30 });
    expect(interactionLimits({ name: 'POF_6T' }, 10)).toEqual({ axialGapMm: 60, circumferentialGapMm: 60 });
    expect(interactionLimits({ name: 'SPACING', axialGapMm: 25.4, circumferentialGapMm: 60 }, 10)).toEqual({ axialGapMm: 25.4, circumferentialGapMm: 60 });
    expect(fieldOfError(() => interactionLimits({ name: 'SPACING', circumferentialGapMm: 60 }, 10))).toBe('axialGapMm');
    expect(fieldOfError(() => interactionLimits({ name: 'SPACING', axialGapMm: 25.4 }, 10))).toBe('circumferentialGapMm');
  });

  it('rejects a pipe without geometry and features with negative sizes', () => {
    expect(fieldOfError(() => clusterFeatures([], { outsideDiameterMm: 0, wallThicknessMm: 10 }, { name: 'POF_6T' }))).toBe('outsideDiameterMm');
    expect(fieldOfError(() => clusterFeatures([feature('a', 0, -1, 0, 10)], pipe, { name: 'POF_6T' }))).toBe('feature');
    expect(fieldOfError(() => clusterFeatures([feature('a', 0, NaN, 0, 10)], pipe, { name: 'POF_6T' }))).toBe('axialLengthMm');
  });
});

describe('gaps between two features', () => {
  it('axial gap is edge to edge and 0 when the features overlap', () => {
    expect(axialGapMm(feature('a', 0, 50, 0, 10), feature('b', 80, 20, 0, 10))).toBe(30);
    expect(axialGapMm(feature('a', 0, 50, 0, 10), feature('b', 40, 20, 0, 10))).toBe(0);
  });

  it('circumferential gap is arc length edge to edge the short way round, across 12 o’clock', () => {
    // Centres 10° apart across 0°; each 20 mm wide → gap = 10° of arc − 20 mm.
    const a = feature('a', 0, 10, 355, 20);
    const b = feature('b', 0, 10, 5, 20);
    expect(circumferentialGapMm(a, b, pipe.outsideDiameterMm)).toBeCloseTo((10 / 360) * circumference - 20, 9);
    expect(circumferentialGapMm(feature('c', 0, 10, 90, 400), feature('d', 0, 10, 100, 10), pipe.outsideDiameterMm)).toBe(0);
  });
});

describe('which pairs interact', () => {
  const t = pipe.wallThicknessMm;

  it('an axial gap of exactly 3t interacts under ASME_B31G_3T; a hair more does not; 6t still does under POF_6T', () => {
    const a = feature('a', 0, 40, 0, 20);
    const at3t = feature('b', 40 + 3 * t, 40, 0, 20);
    const beyond3t = feature('c', 40 + 3 * t + 0.01, 40, 0, 20);
    const b31g = interactionLimits({ name: 'ASME_B31G_3T' }, t);
    const pof = interactionLimits({ name: 'POF_6T' }, t);
    expect(interact(a, at3t, b31g, pipe.outsideDiameterMm)).toBe(true);
    expect(interact(a, beyond3t, b31g, pipe.outsideDiameterMm)).toBe(false);
    expect(interact(a, beyond3t, pof, pipe.outsideDiameterMm)).toBe(true);
    expect(interact(a, feature('d', 40 + 6 * t + 0.01, 40, 0, 20), pof, pipe.outsideDiameterMm)).toBe(false);
  });

  it('needs both directions: side by side along the pipe but half way round it is two features', () => {
    const clusters = clusterFeatures([feature('top', 0, 100, 0, 30), feature('bottom', 0, 100, 180, 30)], pipe, { name: 'POF_6T' });
    expect(memberSets(clusters)).toEqual(['bottom', 'top']);
  });

  it('the circumferential limit is arc length: 6t of arc either side of 12 o’clock interacts under POF_6T', () => {
    const width = 20;
    // Edge-to-edge arc = 6t exactly when the centres are (6t + width) apart.
    const half = degOfMm(6 * t + width) / 2;
    const clusters = clusterFeatures([feature('a', 0, 50, 360 - half, width), feature('b', 0, 50, half, width)], pipe, { name: 'POF_6T' });
    expect(clusters).toHaveLength(1);
    expect(clusterFeatures([feature('a', 0, 50, 360 - half - 0.01, width), feature('b', 0, 50, half + 0.01, width)], pipe, { name: 'POF_6T' })).toHaveLength(2);
  });
});

describe('clusters', () => {
  it('are transitive: a chain a–b–c is one cluster though a and c are far apart', () => {
    const chain = [feature('a', 0, 50, 0, 20), feature('b', 70, 50, 0, 20), feature('c', 140, 50, 0, 20)];
    const clusters = clusterFeatures(chain, pipe, { name: 'ASME_B31G_3T' });
    expect(axialGapMm(chain[0]!, chain[2]!)).toBeGreaterThan(30);
    expect(clusters).toHaveLength(1);
    expect(clusters[0]!.memberIds).toEqual(['a', 'b', 'c']);
  });

  it('box: axial span, covering arc across 12 o’clock, deepest member', () => {
    const members = [feature('a', 1000, 40, 350, 30, 3.1), feature('b', 1050, 60, 10, 30, 4.7), feature('c', 1080, 10, 0, 5, 1)];
    const [box] = clusterFeatures(members, pipe, { name: 'POF_6T' });
    expect(box!.memberIds).toEqual(['a', 'b', 'c']);
    expect(box!.axialStartMm).toBe(1000);
    expect(box!.axialLengthMm).toBe(110);
    expect(box!.maxDepthMm).toBe(4.7);
    // From 350° − 15 mm to 10° + 15 mm: 20° of arc plus 30 mm, centred on 0°.
    expect(box!.widthMm).toBeCloseTo((20 / 360) * circumference + 30, 9);
    expect(Math.min(box!.clockDeg, 360 - box!.clockDeg)).toBeCloseTo(0, 9);
  });

  it('a ring of features round the pipe: the box leaves out only the widest gap, or nothing when they overlap', () => {
    const spaced = Array.from({ length: 12 }, (_, i) => feature(`r${i}`, 0, 30, i * 30, circumference / 12 - 5));
    const [box] = clusterFeatures(spaced, pipe, { name: 'ASME_B31G_3T' });
    expect(box!.memberIds).toHaveLength(12);
    expect(box!.widthMm).toBeCloseTo(circumference - 5, 9);
    const overlapping = Array.from({ length: 12 }, (_, i) => feature(`o${i}`, 0, 30, i * 30, circumference / 12 + 5));
    expect(clusterFeatures(overlapping, pipe, { name: 'ASME_B31G_3T' })[0]!.widthMm).toBeCloseTo(circumference, 9);
  });

  it('a lone feature is a cluster of one with its own box', () => {
    const lone = feature('x', 5, 12, 90, 8, 2.5);
    expect(clusterFeatures([lone], pipe, { name: 'POF_6T' })).toEqual([
      { memberIds: ['x'], axialStartMm: 5, axialLengthMm: 12, clockDeg: 90, widthMm: expect.closeTo(8, 9) as number, maxDepthMm: 2.5 },
    ]);
  });

  it('match an all-pairs check on random features (the sweep misses no interacting pair)', () => {
    let seed = 20261125;
    const random = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const features = Array.from({ length: 400 }, (_, i) =>
      feature(`f${i}`, random() * 20000, 5 + random() * 150, random() * 360, 5 + random() * 200, random() * 6),
    );
    for (const rule of [{ name: 'ASME_B31G_3T' as const }, { name: 'POF_6T' as const }]) {
      const limits = interactionLimits(rule, pipe.wallThicknessMm);
      const parent = features.map((_, i) => i);
      const find = (i: number): number => (parent[i] === i ? i : find(parent[i]!));
      for (let i = 0; i < features.length; i++) {
        for (let j = i + 1; j < features.length; j++) {
          if (interact(features[i]!, features[j]!, limits, pipe.outsideDiameterMm)) parent[find(i)] = find(j);
        }
      }
      const expected = new Map<number, string[]>();
      features.forEach((f, i) => expected.set(find(i), [...(expected.get(find(i)) ?? []), f.id]));
      const expectedSets = [...expected.values()].map((ids) => ids.sort().join(',')).sort();
      expect(memberSets(clusterFeatures(features, pipe, rule))).toEqual(expectedSets);
    }
  });

  it('handles 100 000 features along a line: each pair 20 mm apart clusters, pairs 500 mm apart do not', () => {
    const features: MetalLossFeature[] = [];
    for (let k = 0; k < 50_000; k++) {
      features.push(feature(`p${k}a`, k * 600, 40, (k * 37) % 360, 25), feature(`p${k}b`, k * 600 + 60, 40, (k * 37) % 360, 25));
    }
    const clusters = clusterFeatures(features, pipe, { name: 'ASME_B31G_3T' });
    expect(clusters).toHaveLength(50_000);
    expect(clusters.every((c) => c.memberIds.length === 2 && c.axialLengthMm === 100)).toBe(true);
  });
});

describe('a cluster assessed as one feature', () => {
  it('uses the box’s length and deepest point in Modified B31G (B31G-1991 example 1, 1498.8988 psi)', () => {
    const IN = 25.4;
    const PSI_KPA = 6.894757;
    const examplePipe = { outsideDiameterMm: 30 * IN, wallThicknessMm: 0.438 * IN };
    // Two pits whose box is 7.5 in long and 0.1 in deep at its deepest.
    const pits = [feature('p1', 0, 3 * IN, 0, IN, 0.06 * IN), feature('p2', 4.5 * IN, 3 * IN, 0, IN, 0.1 * IN)];
    const [box] = clusterFeatures(pits, examplePipe, { name: 'SPACING', axialGapMm: 2 * IN, circumferentialGapMm: 0 });
    expect(box!.axialLengthMm).toBeCloseTo(7.5 * IN, 9);
    const result = clusterBoxAssessment(box!, {
      ...examplePipe,
      smysMpa: (52_000 * PSI_KPA) / 1000,
      regulation: 'CFR_192',
      classLocation: 1,
      flowStress: 'SMYS_TIMES_1_1',
    }) as B31GFigures;
    expect(result.applicable).toBe(true);
    expect(Math.abs(result.failurePressureKpa / PSI_KPA / 1498.8988 - 1)).toBeLessThan(0.001);
  });
});
