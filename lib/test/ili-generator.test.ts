import { generateTwoRunListing, GENERATOR_TOOL_NOISE } from '../ili/generator';
import { TALLY_KINDS, type IliListingRow } from '../ili/listing';

/**
 * The synthetic two-run listing: what an alignment and growth analysis will be tested on must have the structure the
 * brief asks for (joints of 9–13.5 m with pups, odometer drift and slip in run B, missed and extra welds, growth, new
 * features, colonies, dents at welds and with metal loss, tool noise) and the truth must describe the rows.
 */
describe('ILI synthetic two-run listing', () => {
  const years = 5;
  const { runA, runB, truth } = generateTwoRunListing({ features: 5000, seed: 42, yearsBetweenRuns: years });
  const byId = (rows: IliListingRow[]) => new Map(rows.filter((r) => r.vendorFeatureId !== null).map((r) => [r.vendorFeatureId!, r]));
  const a = byId(runA.rows);
  const b = byId(runB.rows);
  const anomalies = (rows: IliListingRow[]) => rows.filter((r) => !TALLY_KINDS.has(r.kind));

  it('is deterministic per seed', () => {
    const again = generateTwoRunListing({ features: 5000, seed: 42, yearsBetweenRuns: years });
    expect(again.runA.rows).toEqual(runA.rows);
    expect(again.truth).toEqual(truth);
    const other = generateTwoRunListing({ features: 5000, seed: 43, yearsBetweenRuns: years });
    expect(other.runA.rows).not.toEqual(runA.rows);
  });

  it('lists the asked number of anomalies in run A and a few percent more in run B, sorted by log distance', () => {
    expect(anomalies(runA.rows)).toHaveLength(5000);
    expect(anomalies(runB.rows)).toHaveLength(5000 + truth.newInB.length);
    expect(truth.newInB.length).toBe(150);
    for (const run of [runA, runB]) {
      run.rows.forEach((row, i) => {
        expect(row.rowNumber).toBe(i + 2);
        if (i > 0) expect(row.logDistanceM).toBeGreaterThanOrEqual(run.rows[i - 1]!.logDistanceM);
      });
    }
    expect(runA.runDate).toBe('2021-06-15');
    expect(runB.runDate).toBe('2026-06-15');
  });

  it('never logs a negative distance, even when the odometer slips in the first metres', () => {
    // Seed 2511 at 5,000 features slips run B's wheel 2 m within its first metre: its first rows logged below zero,
    // and the import refused them ("must be ≥ 0").
    for (const seed of [42, 2511]) {
      const listing = generateTwoRunListing({ features: 5000, seed, wallThicknessMm: 9.5 });
      for (const run of [listing.runA, listing.runB]) expect(Math.min(...run.rows.map((row) => row.logDistanceM))).toBeGreaterThanOrEqual(0);
    }
  });

  it('has joints of 9–13.5 m with some short pups', () => {
    const lengths = runA.rows.filter((r) => r.kind === 'GIRTH_WELD' && r.jointLengthM !== null).map((r) => r.jointLengthM!);
    const pups = lengths.filter((l) => l < 8);
    const regular = lengths.filter((l) => l >= 8);
    expect(pups.length).toBeGreaterThan(0);
    expect(pups.length / lengths.length).toBeLessThan(0.06);
    // Run A's odometer is within 0.05 % and slips under 0.5 m, so a 9–13.5 m joint lists within these bounds.
    expect(Math.min(...regular)).toBeGreaterThan(9 * 0.9995 - 0.5);
    expect(Math.max(...regular)).toBeLessThan(13.5 * 1.0005 + 0.01);
    const mean = regular.reduce((s, l) => s + l, 0) / regular.length;
    expect(mean).toBeGreaterThan(11.5);
    expect(mean).toBeLessThan(12.5);
  });

  it('has valves, tees, bends, markers and wall thickness changes', () => {
    const big = generateTwoRunListing({ features: 20000, seed: 1 });
    const kinds = new Set(big.runA.rows.map((r) => r.kind));
    for (const kind of ['VALVE', 'TEE', 'BEND', 'FLANGE', 'REFERENCE_MARKER', 'WALL_THICKNESS_CHANGE'] as const) expect(kinds).toContain(kind);
    for (const change of big.runA.rows.filter((r) => r.kind === 'WALL_THICKNESS_CHANGE')) expect(change.wallThicknessMm).not.toBeNull();
  });

  it('drifts run B by a scale error of a few tenths of a percent plus slips', () => {
    const welds = (rows: IliListingRow[]) => new Map(rows.filter((r) => r.kind === 'GIRTH_WELD').map((r) => [r.jointNumber!, r.logDistanceM]));
    const weldsA = welds(runA.rows);
    const weldsB = welds(runB.rows);
    const last = truth.weldPairs[truth.weldPairs.length - 1]!;
    const ratio = weldsB.get(last.b)! / weldsA.get(last.a)!;
    expect(Math.abs(ratio - 1)).toBeGreaterThan(0.001);
    expect(Math.abs(ratio - 1)).toBeLessThan(0.006);
  });

  it('misses a weld or calls an extra one in run B, and pairs the rest', () => {
    const weldsA = runA.rows.filter((r) => r.kind === 'GIRTH_WELD').length;
    const weldsB = runB.rows.filter((r) => r.kind === 'GIRTH_WELD').length;
    expect(truth.weldPairs.length).toBeLessThanOrEqual(weldsA);
    expect(weldsB - truth.weldPairs.length).toBeGreaterThanOrEqual(1);
    // Pairs run in order in both runs, and after a missed or extra weld B's numbering is offset from A's.
    for (let i = 1; i < truth.weldPairs.length; i += 1) {
      expect(truth.weldPairs[i]!.a).toBeGreaterThan(truth.weldPairs[i - 1]!.a);
      expect(truth.weldPairs[i]!.b).toBeGreaterThan(truth.weldPairs[i - 1]!.b);
    }
    expect(truth.weldPairs.some((p) => p.a !== p.b)).toBe(true);
  });

  it('grows metal loss by 0.05–0.5 mm a year, and the listed depths show it through the tool noise', () => {
    expect(truth.matches).toHaveLength(5000);
    let trueGrowth = 0;
    let seenGrowth = 0;
    let n = 0;
    for (const m of truth.matches) {
      const rowA = a.get(m.a)!;
      const rowB = b.get(m.b)!;
      expect(rowB.kind).toBe(rowA.kind);
      if (rowA.kind !== 'METAL_LOSS') continue;
      const mmPerYear = (m.trueDepthGrowthPctWtPerYear / 100) * rowA.wallThicknessMm!;
      expect(mmPerYear).toBeGreaterThanOrEqual(0.05 - 1e-9);
      expect(mmPerYear).toBeLessThanOrEqual(0.5 + 1e-9);
      // No selection on the listed depths (that would pick the pairs whose noise happens to point one way); only the
      // few near the 95 % cap, whose growth the cap cuts short.
      if (rowB.depthPctWt! < 80) {
        trueGrowth += m.trueDepthGrowthPctWtPerYear * years;
        seenGrowth += rowB.depthPctWt! - rowA.depthPctWt!;
        n += 1;
      }
    }
    expect(n).toBeGreaterThan(1000);
    // Mean of B − A over thousands of pairs: the noise (sd 4 % of wall per run) averages out to well under 1 % of wall.
    expect(Math.abs(seenGrowth / n - trueGrowth / n)).toBeLessThan(1);
    process.stdout.write(`ili generator: mean listed growth ${(seenGrowth / n).toFixed(2)} vs true ${(trueGrowth / n).toFixed(2)} % of wall over ${n} pairs\n`);
    expect(truth.matches.some((m) => m.trueLengthGrowthMmPerYear > 0)).toBe(true);
  });

  it('lists new features only in run B', () => {
    const matchedB = new Set(truth.matches.map((m) => m.b));
    for (const id of truth.newInB) {
      expect(b.has(id)).toBe(true);
      expect(matchedB.has(id)).toBe(false);
    }
  });

  it('makes colonies of interacting pits close together in run B', () => {
    expect(truth.clusters.length).toBeGreaterThan(10);
    for (const colony of truth.clusters) {
      expect(colony.length).toBeGreaterThanOrEqual(3);
      const rows = colony.map((id) => b.get(id)!);
      for (const row of rows) expect(row.kind).toBe('METAL_LOSS');
      const spread = Math.max(...rows.map((r) => r.logDistanceM)) - Math.min(...rows.map((r) => r.logDistanceM));
      // 0.3 m of true spread plus position noise (sd 0.07 m) on each pit.
      expect(spread).toBeLessThan(0.3 + 8 * GENERATOR_TOOL_NOISE.positionMSd);
    }
  });

  it('puts some dents on girth welds and some with metal loss', () => {
    const dents = runA.rows.filter((r) => r.kind === 'DENT');
    expect(dents.length).toBeGreaterThan(50);
    expect(dents.some((d) => d.comment === 'Dent on girth weld')).toBe(true);
    expect(dents.some((d) => d.comment === 'Dent with metal loss')).toBe(true);
    for (const d of dents) expect(d.dentDepthPctOd).toBeGreaterThan(0);
  });

  it('adds tool noise of the stated size to features that do not grow', () => {
    // Cracks and gouges do not grow in the generator, so their B − A depth is noise of both runs: sd ≈ √2 × 4 % of wall.
    const differences: number[] = [];
    for (const m of truth.matches) {
      const rowA = a.get(m.a)!;
      if (rowA.kind !== 'CRACK' && rowA.kind !== 'GOUGE') continue;
      differences.push(b.get(m.b)!.depthPctWt! - rowA.depthPctWt!);
    }
    expect(differences.length).toBeGreaterThan(30);
    const mean = differences.reduce((s, d) => s + d, 0) / differences.length;
    const sd = Math.sqrt(differences.reduce((s, d) => s + (d - mean) ** 2, 0) / (differences.length - 1));
    expect(sd).toBeGreaterThan(GENERATOR_TOOL_NOISE.depthPctWtSd * Math.SQRT2 * 0.6);
    expect(sd).toBeLessThan(GENERATOR_TOOL_NOISE.depthPctWtSd * Math.SQRT2 * 1.4);
    expect(truth.toolNoise).toEqual(GENERATOR_TOOL_NOISE);
  });

  it('refuses a feature count that is not a positive whole number', () => {
    expect(() => generateTwoRunListing({ features: 0, seed: 1 })).toThrow('features must be a whole number of 1 or more');
  });
});
