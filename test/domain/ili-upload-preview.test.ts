/**
 * The mapping preview of an uploaded ILI listing (issue 25 item 1: "upload → mapping preview → progress → report"):
 * before startIliImport, Query.iliUploadPreview reads the start of the stored file with the same parseListing the
 * import job uses and answers the header, the profile's columns against it, the first rows in canonical units and the
 * cells the import would reject. A good file, a file missing a required column, and a file with a bad cell.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { POF_DEFAULT_PROFILE } from '@linepack/lib/ili/listing';
import { writePofListingCsv, writePofListingXlsx } from '@linepack/lib/ili/write';
import { graphql, startTestStack, type TestStack } from '../support/stack';
import { testTempDir } from '../support/temp-dir';

let stack: TestStack;
let key: string;
const dir = testTempDir('ili-preview-');
const listing = generateTwoRunListing({ features: 40, seed: 11 });
const call = (query: string, variables: Record<string, unknown> = {}) => graphql<Record<string, any>>(stack.gatewayUrl, query, { apiKey: key, variables });

const PREVIEW = `query($u: ID!, $rows: Int) { iliUploadPreview(uploadId: $u, rows: $rows) {
  upload { id fileName } profile { id } header columns { field column found } missingColumns problem
  rows { rowNumber kind logDistanceM jointNumber clockDeg depthPctWt lengthMm } rejected { rowNumber column rule value } } }`;

/** Uploads bytes in one part, as the console does for a small file, and answers the upload's id. */
async function upload(fileName: string, bytes: Buffer): Promise<string> {
  const created = await call('mutation($i: CreateIliUploadInput!) { createIliUpload(input: $i) { id } }', {
    i: { fileName, format: /\.xlsx$/.test(fileName) ? 'XLSX' : 'CSV', sizeBytes: bytes.length, sha256: createHash('sha256').update(bytes).digest('hex') },
  });
  const id = created.body.data!['createIliUpload'].id as string;
  await call('mutation($u: ID!, $d: Base64!) { appendIliUploadPart(uploadId: $u, index: 0, data: $d) { receivedBytes } }', {
    u: id,
    d: bytes.toString('base64'),
  });
  return id;
}

const csvLines = () => readFileSync(path.join(dir, 'good.csv'), 'utf8').split('\r\n');

beforeAll(async () => {
  stack = await startTestStack();
  key = (await stack.tenantWithKey()).apiKey;
  await writePofListingCsv(listing.runA.rows, path.join(dir, 'good.csv'));
  await writePofListingXlsx(listing.runA.rows, path.join(dir, 'good.xlsx'));
});
afterAll(() => stack?.stop());

test('a good CSV: every mapped column found, the first rows as they would be imported, nothing rejected', async () => {
  const id = await upload('good.csv', readFileSync(path.join(dir, 'good.csv')));
  const { body } = await call(PREVIEW, { u: id, rows: 5 });
  const preview = body.data!['iliUploadPreview'];
  expect(preview.upload).toEqual({ id, fileName: 'good.csv' });
  expect(preview.profile.id).toBe(POF_DEFAULT_PROFILE.id);
  expect(preview.header).toEqual(csvLines()[0]!.split(','));
  expect(preview.missingColumns).toEqual([]);
  expect(preview.problem).toBeNull();
  expect(preview.columns.every((c: { found: boolean }) => c.found)).toBe(true);
  expect(preview.columns.find((c: { field: string }) => c.field === 'logDistance').column).toBe(POF_DEFAULT_PROFILE.columns.logDistance);
  expect(preview.rejected).toEqual([]);
  // The generated rows are the truth the file was written from: the first five come back in its order and units.
  const truth = listing.runA.rows.slice(0, 5);
  expect(preview.rows.map((r: { rowNumber: number }) => r.rowNumber)).toEqual([2, 3, 4, 5, 6]);
  expect(preview.rows.map((r: { kind: string }) => r.kind)).toEqual(truth.map((r) => r.kind));
  preview.rows.forEach((row: { logDistanceM: number }, i: number) => expect(row.logDistanceM).toBeCloseTo(truth[i]!.logDistanceM, 2));
});

test('a good XLSX reads the same header and rows', async () => {
  const id = await upload('good.xlsx', readFileSync(path.join(dir, 'good.xlsx')));
  const { body } = await call(PREVIEW, { u: id, rows: 3 });
  const preview = body.data!['iliUploadPreview'];
  expect(preview.header).toEqual(csvLines()[0]!.split(','));
  expect(preview.problem).toBeNull();
  expect(preview.rows.map((r: { kind: string }) => r.kind)).toEqual(listing.runA.rows.slice(0, 3).map((r) => r.kind));
});

test('a file without the log distance column: that column named as missing, no rows', async () => {
  const lines = csvLines();
  const distance = lines[0]!.split(',').indexOf(POF_DEFAULT_PROFILE.columns.logDistance);
  expect(distance).toBeGreaterThanOrEqual(0);
  const without = lines
    .map((line) =>
      line
        .split(',')
        .filter((_, i) => i !== distance)
        .join(','),
    )
    .join('\r\n');
  const id = await upload('no-distance.csv', Buffer.from(without));
  const preview = (await call(PREVIEW, { u: id })).body.data!['iliUploadPreview'];
  expect(preview.missingColumns).toEqual([POF_DEFAULT_PROFILE.columns.logDistance]);
  expect(preview.columns.find((c: { field: string }) => c.field === 'logDistance')).toMatchObject({ found: false });
  expect(preview.problem).toContain(`"${POF_DEFAULT_PROFILE.columns.logDistance}"`);
  expect(preview.rows).toEqual([]);
});

test('a bad cell in the rows read is named by row, column and rule; rows past `rows` are not read', async () => {
  const lines = csvLines();
  const distance = lines[0]!.split(',').indexOf(POF_DEFAULT_PROFILE.columns.logDistance);
  // Row 4 (header = row 1) is within the first 5 rows; row 30 is not, so the preview does not see it.
  for (const row of [4, 30]) {
    const cells = lines[row - 1]!.split(',');
    cells[distance] = 'twelve';
    lines[row - 1] = cells.join(',');
  }
  const id = await upload('bad-cell.csv', Buffer.from(lines.join('\r\n')));
  const preview = (await call(PREVIEW, { u: id, rows: 5 })).body.data!['iliUploadPreview'];
  expect(preview.problem).toBeNull();
  expect(preview.rejected).toEqual([{ rowNumber: 4, column: POF_DEFAULT_PROFILE.columns.logDistance, rule: 'must be a number (m)', value: 'twelve' }]);
  expect(preview.rows.map((r: { rowNumber: number }) => r.rowNumber)).toEqual([2, 3, 5, 6]);
});

test('an unknown upload or too many rows is refused naming the argument', async () => {
  const { body } = await call(PREVIEW, { u: '00000000-0000-4000-8000-000000000000', rows: 500 });
  const fields = (body.errors![0]!.extensions!['violations'] as { field: string }[]).map((v) => v.field).sort();
  expect(fields).toEqual(['rows', 'uploadId']);
});
