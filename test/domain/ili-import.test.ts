/**
 * ILI listing import end to end (issues 25 and 31): a generated vendor listing, uploaded in parts through the gateway,
 * imported as a durable job; its features become ILI_ANOMALY measurements of the run and its girth welds the pipe
 * tally. The same file again changes nothing; a file with 3 bad rows is refused with 3 row/column messages and
 * nothing stored.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { importListing, type IliImportRequest } from '@linepack/lib/ili/client';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { TALLY_KINDS } from '@linepack/lib/ili/listing';
import { writePofListingCsv, writePofListingXlsx } from '@linepack/lib/ili/write';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';
import { testTempDir } from '../support/temp-dir';

let stack: TestStack;
let key: string;
let segmentId: string;
const dir = testTempDir('ili-import-');
const listing = generateTwoRunListing({ features: 300, seed: 7 });
const features = listing.runA.rows.filter((row) => !TALLY_KINDS.has(row.kind)).length;
const tallyItems = listing.runA.rows.length - features;
const girthWelds = listing.runA.rows.filter((row) => row.kind === 'GIRTH_WELD').length;

const call = (query: string, variables: Record<string, unknown> = {}) => graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey: key, variables });
const request = (file: string, runDate = '2024-06-01T00:00:00Z'): IliImportRequest => ({
  gatewayUrl: stack.gatewayUrl,
  apiKey: key,
  file,
  assetId: segmentId,
  run: { vendor: 'Synthetic ILI Co.', toolTechnologies: ['MFL', 'CALIPER'], runDate },
  pollMs: 100,
});
const anomalyCount = async () =>
  (await call('query($id: ID!) { asset(id: $id) { measurements(type: ILI_ANOMALY, first: 1) { totalCount } } }', { id: segmentId })).body.data!['asset']
    .measurements.totalCount as number;

beforeAll(async () => {
  stack = await startTestStack();
  key = (await stack.tenantWithKey()).apiKey;
  const line = await createAsset(stack.gatewayUrl, key, { type: 'PIPELINE', name: 'Line 7' });
  segmentId = (await createAsset(stack.gatewayUrl, key, { type: 'SEGMENT', name: 'Line 7 · MP 0–10', parentId: line.id })).id;
  await stack.knownToMeasurements(segmentId);
  await writePofListingCsv(listing.runA.rows, path.join(dir, 'run-a.csv'));
  await writePofListingXlsx(listing.runB.rows, path.join(dir, 'run-b.xlsx'));
});
afterAll(() => stack?.stop());

test('a CSV listing is imported as a run: its features as measurements, its girth welds as the tally', async () => {
  const progress: string[] = [];
  const result = await importListing({ ...request(path.join(dir, 'run-a.csv')), onProgress: (p) => progress.push(p.stage) });
  expect(result).toMatchObject({ state: 'SUCCEEDED', failure: null, errorCount: 0, counts: { features, tallyItems, rejectedRows: 0 } });
  expect(progress).toContain('uploading');
  const { body } = await call(
    `query($run: ID!, $asset: ID!) {
      iliRun(id: $run) { status vendor toolTechnologies featureCount tallyItemCount girthWeldCount discoveredAt runDate
        tally(kinds: [GIRTH_WELD], first: 3) { totalCount edges { node { kind logDistanceM jointNumber jointLengthM } } } }
      asset(id: $asset) { iliRuns { id } } }`,
    { run: result.run.id, asset: segmentId },
  );
  const run = body.data!['iliRun'];
  expect(run).toMatchObject({
    status: 'COMPLETE',
    vendor: 'Synthetic ILI Co.',
    toolTechnologies: ['MFL', 'CALIPER'],
    featureCount: features,
    tallyItemCount: tallyItems,
    girthWeldCount: girthWelds,
  });
  // The discovery date defaults to the run date (§192.933(b) lets it be later; never earlier).
  expect(run.discoveredAt).toBe(run.runDate);
  expect(run.tally.totalCount).toBe(girthWelds);
  const welds = run.tally.edges.map((e: { node: { logDistanceM: number } }) => e.node.logDistanceM);
  expect(welds).toEqual([...welds].sort((a, b) => a - b));
  expect(body.data!['asset'].iliRuns).toEqual([{ id: result.run.id }]);
  expect(await anomalyCount()).toBe(features);
});

test('importing the same file again answers with the first import and stores nothing', async () => {
  const first = await importListing(request(path.join(dir, 'run-a.csv')));
  const again = await importListing(request(path.join(dir, 'run-a.csv')));
  expect(again.id).toBe(first.id);
  expect(await anomalyCount()).toBe(features);
});

test('an XLSX listing imports the same way (the second run)', async () => {
  const result = await importListing(request(path.join(dir, 'run-b.xlsx'), '2026-06-01T00:00:00Z'));
  const bFeatures = listing.runB.rows.filter((row) => !TALLY_KINDS.has(row.kind)).length;
  expect(result).toMatchObject({ state: 'SUCCEEDED', counts: { features: bFeatures } });
  expect(await anomalyCount()).toBe(features + bFeatures);
});

test('a file with 3 bad rows is refused with 3 row/column messages, and nothing of it is stored', async () => {
  const lines = readFileSync(path.join(dir, 'run-a.csv'), 'utf8').split('\r\n');
  const header = lines[0]!.split(',');
  const distance = header.findIndex((h) => /log dist/i.test(h));
  expect(distance).toBeGreaterThanOrEqual(0);
  // Rows 10, 50 and 120 of the file (header = row 1) get a distance that is no number.
  for (const row of [10, 50, 120]) {
    const cells = lines[row - 1]!.split(',');
    cells[distance] = 'twelve';
    lines[row - 1] = cells.join(',');
  }
  const bad = path.join(dir, 'bad.csv');
  writeFileSync(bad, lines.join('\r\n'));
  const before = await anomalyCount();
  const result = await importListing(request(bad, '2025-01-01T00:00:00Z'));
  expect(result.state).toBe('FAILED');
  expect(result.failure).toMatch(/nothing was stored/);
  expect(result.errorCount).toBe(3);
  expect(result.errors.map((e) => [e.rowNumber, e.column])).toEqual([
    [10, header[distance]],
    [50, header[distance]],
    [120, header[distance]],
  ]);
  expect(result.errors[0]!.rule).toMatch(/number/);
  expect(result.run.status).toBe('FAILED');
  expect(await anomalyCount()).toBe(before);
});

test('a bad start is refused at once, naming the field', async () => {
  const { body } = await call('mutation($i: StartIliImportInput!) { startIliImport(input: $i) { id } }', {
    i: { uploadId: 'nope', assetId: segmentId, run: { vendor: '', toolTechnologies: [], runDate: '2024-01-01T00:00:00Z' } },
  });
  const fields = (body.errors![0]!.extensions!['violations'] as { field: string }[]).map((v) => v.field).sort();
  expect(fields).toEqual(['input.run.toolTechnologies', 'input.run.vendor', 'input.uploadId']);
});

test('the CLI imports an XLSX listing through the gateway (npx linepack ili import) and says what it stored', async () => {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const other = generateTwoRunListing({ features: 120, seed: 11 });
  const file = path.join(dir, 'cli-run.xlsx');
  await writePofListingXlsx(other.runA.rows, file);
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [
      'bin/linepack.cjs',
      'ili',
      'import',
      file,
      '--asset',
      segmentId,
      '--vendor',
      'CLI Vendor',
      '--tools',
      'mfl',
      '--run-date',
      '2023-03-01',
      '--url',
      stack.gatewayUrl,
      '--json',
    ],
    { env: { ...process.env, LINEPACK_API_KEY: key } },
  );
  const result = JSON.parse(stdout) as { state: string; counts: { features: number } };
  expect(result.state).toBe('SUCCEEDED');
  expect(result.counts.features).toBe(other.runA.rows.filter((row) => !TALLY_KINDS.has(row.kind)).length);
});
