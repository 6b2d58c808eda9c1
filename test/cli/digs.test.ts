/**
 * `linepack digs list` and `linepack digs sheet` (issue 25 item 6) through the gateway, as a user runs them: a generated
 * listing imported into an HCA gas segment, assessed by analytics, then the dig list exported as CSV (every page) and
 * one anomaly's dig sheet as CSV and as text. The CSV is read back with csv-parse and compared with the API's own
 * answers: the dig list's rows and order, and the dig sheet's location and assessment.
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { parse } from 'csv-parse/sync';
import { importListing } from '@linepack/lib/ili/client';
import { generateTwoRunListing } from '@linepack/lib/ili/generator';
import { TALLY_KINDS } from '@linepack/lib/ili/listing';
import { writePofListingCsv } from '@linepack/lib/ili/write';
import { until } from '@linepack/lib/testing/until';
import { createAsset, graphql, startTestStack, type TestStack } from '../support/stack';
import { testTempDir } from '../support/temp-dir';

let stack: TestStack;
let key: string;
let lineId: string;
let segmentId: string;
const listing = generateTwoRunListing({ features: 150, seed: 31 }).runA.rows;
const featureCount = listing.filter((row) => !TALLY_KINDS.has(row.kind)).length;
const DUE_CATEGORIES = ['IMMEDIATE', 'SIXTY_DAY', 'ONE_HUNDRED_EIGHTY_DAY', 'ONE_YEAR', 'TWO_YEAR'];

interface Assessed {
  responseCategory: string | null;
  ruleRef: string | null;
  repairDueAt: string | null;
  measurement: {
    id: string;
    iliLocation: { jointNumber: number | null; distanceFromUpstreamWeldM: number | null; upstreamMarker: { name: string | null } | null };
  };
}
let assessed: Assessed[];

const linepack = (args: string[]) =>
  promisify(execFile)(process.execPath, ['bin/linepack.cjs', ...args, '--url', stack.gatewayUrl], { env: { ...process.env, LINEPACK_API_KEY: key } });

const listingDir = testTempDir('digs-');

beforeAll(async () => {
  stack = await startTestStack({ redisUrl: process.env['REDIS_URL'] });
  key = (await stack.tenantWithKey()).apiKey;
  const pipe = { status: 'ACTIVE', regulation: 'CFR_192', product: 'NATURAL_GAS' };
  lineId = (await createAsset(stack.gatewayUrl, key, { type: 'PIPELINE', name: 'Line 31', ...pipe })).id;
  segmentId = (
    await createAsset(stack.gatewayUrl, key, {
      type: 'SEGMENT',
      name: 'Line 31 · MP 0–2',
      parentId: lineId,
      ...pipe,
      outsideDiameterMm: 609.6,
      wallThicknessMm: 9.5,
      smysMpa: 359,
      maopKpa: 6900,
      classLocation: 3,
      inHca: true,
    })
  ).id;
  await stack.knownToMeasurements(segmentId);
  const file = path.join(listingDir, 'run.csv');
  await writePofListingCsv(listing, file);
  const result = await importListing({
    gatewayUrl: stack.gatewayUrl,
    apiKey: key,
    file,
    assetId: segmentId,
    run: { vendor: 'Synthetic ILI Co.', toolTechnologies: ['MFL'], runDate: '2026-09-01T00:00:00Z' },
    pollMs: 100,
  });
  expect(result.state).toBe('SUCCEEDED');
  const read = () =>
    graphql<{ asset: { anomalyAssessments: { totalCount: number; edges: { node: Assessed }[] } } }>(
      stack.gatewayUrl,
      `
        query ($id: ID!) {
          asset(id: $id) {
            anomalyAssessments(first: 500) {
              totalCount
              edges {
                node {
                  responseCategory
                  ruleRef
                  repairDueAt
                  measurement {
                    id
                    iliLocation {
                      jointNumber
                      distanceFromUpstreamWeldM
                      upstreamMarker {
                        name
                      }
                    }
                  }
                }
              }
            }
          }
        }
      `,
      { apiKey: key, variables: { id: segmentId } },
    );
  const res = await until(read, (r) => r.body.data?.asset.anomalyAssessments.totalCount === featureCount, 60_000, 250);
  expect(res.body.errors).toBeUndefined();
  expect(res.body.data!.asset.anomalyAssessments.totalCount).toBe(featureCount);
  assessed = res.body.data!.asset.anomalyAssessments.edges.map((edge) => edge.node);
}, 120_000);
afterAll(() => stack?.stop());

test('digs list --csv pages through the whole dig list: every anomaly with a due date, soonest first, located', async () => {
  const { stdout } = await linepack(['digs', 'list', '--pipeline', lineId, '--csv', '--page-size', '3']);
  const rows = parse(stdout, { columns: true }) as Record<string, string>[];
  const due = assessed
    .filter((a) => a.responseCategory !== null && DUE_CATEGORIES.includes(a.responseCategory))
    .sort((a, b) => a.repairDueAt!.localeCompare(b.repairDueAt!) || (a.measurement.id < b.measurement.id ? -1 : 1));
  // More than a page of 3, so the paging is exercised.
  expect(due.length).toBeGreaterThan(3);
  expect(rows.map((r) => r['Measurement ID'])).toEqual(due.map((a) => a.measurement.id));
  rows.forEach((row, i) => {
    const a = due[i]!;
    expect(row).toMatchObject({
      'Asset ID': segmentId,
      Asset: 'Line 31 · MP 0–2',
      'Response category': a.responseCategory,
      Rule: a.ruleRef,
      'Repair due (UTC)': new Date(a.repairDueAt!).toISOString(),
      Status: 'OPEN',
      'Joint number': String(a.measurement.iliLocation.jointNumber ?? ''),
      'Distance from upstream weld [m]': String(a.measurement.iliLocation.distanceFromUpstreamWeldM ?? ''),
    });
  });
  const immediate = parse((await linepack(['digs', 'list', '--category', 'immediate', '--csv'])).stdout, { columns: true }) as Record<string, string>[];
  expect(immediate.map((r) => r['Measurement ID'])).toEqual(due.filter((a) => a.responseCategory === 'IMMEDIATE').map((a) => a.measurement.id));
});

test('digs sheet prints one anomaly as CSV and as a sheet: where to dig, what it is, how urgent', async () => {
  const worst = assessed.find((a) => a.responseCategory === 'IMMEDIATE') ?? assessed.find((a) => a.repairDueAt !== null)!;
  const id = worst.measurement.id;
  const { body } = await graphql<{ measurement: Record<string, any> }>(
    stack.gatewayUrl,
    `
      query ($id: ID!) {
        measurement(id: $id) {
          depthPctWt
          lengthMm
          clockDeg
          iliLocation {
            runId
            jointNumber
            distanceFromUpstreamWeldM
            downstreamWeld {
              distanceM
            }
            upstreamMarker {
              name
              distanceM
            }
          }
        }
      }
    `,
    { apiKey: key, variables: { id } },
  );
  const m = body.data!.measurement;
  const [row, ...more] = parse((await linepack(['digs', 'sheet', id, '--csv'])).stdout, { columns: true }) as Record<string, string>[];
  expect(more).toHaveLength(0);
  const text = (value: unknown) => (value == null ? '' : String(value));
  expect(row).toMatchObject({
    'Measurement ID': id,
    'Response category': worst.responseCategory,
    Rule: worst.ruleRef,
    'Repair due (UTC)': new Date(worst.repairDueAt!).toISOString(),
    'Run ID': m['iliLocation'].runId,
    'Joint number': text(m['iliLocation'].jointNumber),
    'Distance from upstream weld [m]': text(m['iliLocation'].distanceFromUpstreamWeldM),
    'Distance to downstream weld [m]': text(m['iliLocation'].downstreamWeld?.distanceM),
    'Upstream marker': text(m['iliLocation'].upstreamMarker?.name),
    'Distance from upstream marker [m]': text(m['iliLocation'].upstreamMarker?.distanceM),
    'Depth [% wt]': text(m['depthPctWt']),
    'Length [mm]': text(m['lengthMm']),
    'Clock [deg]': text(m['clockDeg']),
  });

  const { stdout: sheet } = await linepack(['digs', 'sheet', id]);
  expect(sheet).toMatch(/^DIG SHEET/);
  expect(sheet).toContain(`Joint               ${m['iliLocation'].jointNumber ?? 'before the first girth weld'}`);
  expect(sheet).toContain(`Response            ${worst.responseCategory}`);
  if (m['iliLocation'].upstreamMarker) expect(sheet).toContain(`${m['iliLocation'].upstreamMarker.name} (`);

  await expect(linepack(['digs', 'sheet', 'no-such-measurement'])).rejects.toMatchObject({
    code: 2,
    stderr: expect.stringContaining('no measurement no-such-measurement'),
  });
});
