/**
 * Writes a synthetic pair of ILI listings in the POF pipe-tally layout (the importer's default profile), with the
 * truth an alignment / growth analysis should recover:
 *
 *   npm run ili:generate -- --features 20000 --seed 1 --out DIR [--format csv|xlsx|both]
 *     [--od-mm 609.6] [--wt-mm 9.5] [--years 5]
 *
 * DIR/run-a.{csv,xlsx}, DIR/run-b.{csv,xlsx} and DIR/truth.json (runs' ids and dates, pipe, matches, new features,
 * weld pairs, clusters and the tool noise used).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { writePofListingCsv, writePofListingXlsx } from '@linepack/lib/ili/write';

function positiveNumber(name: string, text: string | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} must be a number greater than 0 (got "${text}")`);
  return value;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      features: { type: 'string', default: '20000' },
      seed: { type: 'string', default: '1' },
      out: { type: 'string' },
      format: { type: 'string', default: 'both' },
      'od-mm': { type: 'string' },
      'wt-mm': { type: 'string' },
      years: { type: 'string' },
    },
    strict: true,
  });
  if (!values.out) throw new Error('--out DIR is required');
  const features = Number(values.features);
  if (!Number.isInteger(features) || features < 1000 || features > 200_000) throw new Error('--features must be a whole number from 1000 to 200000');
  const seed = Number(values.seed);
  if (!Number.isInteger(seed)) throw new Error('--seed must be a whole number');
  const format = values.format;
  if (format !== 'csv' && format !== 'xlsx' && format !== 'both') throw new Error('--format must be csv, xlsx or both');
  const outsideDiameterMm = positiveNumber('od-mm', values['od-mm'], 609.6);
  const wallThicknessMm = positiveNumber('wt-mm', values['wt-mm'], 9.5);
  const yearsBetweenRuns = positiveNumber('years', values.years, 5);

  const started = Date.now();
  const { runA, runB, truth } = generateTwoRunListing({ features, seed, outsideDiameterMm, wallThicknessMm, yearsBetweenRuns });
  const generatedMs = Date.now() - started;
  const dir = path.resolve(values.out);
  await mkdir(dir, { recursive: true });
  for (const [name, run] of [
    ['run-a', runA],
    ['run-b', runB],
  ] as const) {
    if (format !== 'xlsx') await writePofListingCsv(run.rows, path.join(dir, `${name}.csv`));
    if (format !== 'csv') await writePofListingXlsx(run.rows, path.join(dir, `${name}.xlsx`));
  }
  const document = {
    runs: {
      a: { runId: runA.runId, runDate: runA.runDate, rows: runA.rows.length },
      b: { runId: runB.runId, runDate: runB.runDate, rows: runB.rows.length },
    },
    pipe: { outsideDiameterMm, wallThicknessMm },
    yearsBetweenRuns,
    seed,
    ...truth,
  };
  await writeFile(path.join(dir, 'truth.json'), JSON.stringify(document) + '\n');
  process.stdout.write(
    `ili:generate: ${runA.rows.length} rows in run A, ${runB.rows.length} in run B (${truth.matches.length} matched anomalies, ` +
      `${truth.newInB.length} new, ${truth.weldPairs.length} weld pairs, ${truth.clusters.length} colonies); ` +
      `generated in ${generatedMs} ms, written in ${Date.now() - started - generatedMs} ms to ${dir}\n`,
  );
}

main().catch((error: unknown) => {
  process.stderr.write(`ili:generate: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
