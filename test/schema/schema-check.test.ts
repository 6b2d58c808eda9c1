/**
 * schema:check on copies of the SDL: breaking changes fail naming the change and the client operations
 * they break; the same removal after @deprecated passes as dangerous; additive changes pass.
 */
import { cpSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { changelogEntry } from '@linepack/schema/changelog';
import { currentSchemas, formatReport, runSchemaCheck } from '@linepack/schema/check';
import { schemaDir } from '@linepack/schema/subgraphs';

const repoRoot = path.resolve(schemaDir, '..');
let dir: string;

beforeEach(() => {
  dir = mkdtempSync(path.join(os.tmpdir(), 'schema-check-'));
  cpSync(schemaDir, dir, { recursive: true, filter: (src) => !src.endsWith('.ts') && !src.includes('node_modules') });
});
afterEach(() => rmSync(dir, { recursive: true, force: true }));

const edit = (file: string, from: string | RegExp, to: string) => {
  const full = path.join(dir, file);
  const text = readFileSync(full, 'utf8');
  const next = text.replace(from, to);
  if (next === text) throw new Error(`${from} not found in ${file}`);
  writeFileSync(full, next);
};
const check = () => runSchemaCheck({ schemaDir: dir, root: repoRoot });
const publishInto = () => {
  mkdirSync(path.join(dir, 'published'), { recursive: true });
  for (const [id, sdl] of currentSchemas(dir)) writeFileSync(path.join(dir, 'published', `${id}.graphql`), sdl);
};

it('passes on the committed schema, checking the client operations it found', async () => {
  const result = await check();
  expect(formatReport(result)).toMatch(/0 breaking/);
  expect(result.ok).toBe(true);
  expect(result.operationsChecked).toBeGreaterThan(50);
});

it('fails a rename of Measurement.depthPctWt as BREAKING, naming the client operations it breaks', async () => {
  edit('measurements.graphql', /\n(\s+)depthPctWt: Float\n/, '\n$1depthPercentWt: Float\n');
  const result = await check();
  expect(result.ok).toBe(false);
  const removed = result.changes.find((c) => c.classification === 'BREAKING' && c.path === 'Measurement.depthPctWt');
  expect(removed?.message).toMatch(/depthPctWt.*removed/);
  expect(removed?.breaks.some((b) => b.startsWith('mcp-server/src/linepack_mcp/'))).toBe(true);
  // The MCP companion's operations are named with the tools that send them.
  expect(removed?.breaks).toEqual(
    expect.arrayContaining([expect.stringMatching(/operations\/analytics\.graphql:\d+ LinepackAnomaly \(MCP tool assess_anomaly\)$/)]),
  );
  expect(removed?.breaks).toEqual(expect.arrayContaining([expect.stringMatching(/LinepackMeasurements \(MCP tool list_measurements\)$/)]));
  expect(result.brokenOperations.map((b) => b.operation.file)).toEqual(expect.arrayContaining(['README.md']));
  expect(formatReport(result)).toMatch(/BREAKING +measurements +Field 'depthPctWt' .*removed/);
});

it('fails changing clockDeg from Float to Int', async () => {
  edit('measurements.graphql', /\n(\s+)clockDeg: Float\n/, '\n$1clockDeg: Int\n');
  const result = await check();
  expect(result.ok).toBe(false);
  expect(result.changes.filter((c) => c.classification === 'BREAKING').map((c) => c.path)).toContain('Measurement.clockDeg');
});

it('passes the same kind of removal as DANGEROUS when the field was deprecated in the published schema', async () => {
  edit(
    'measurements.graphql',
    'type Measurement @key(fields: "id") {',
    'type Measurement @key(fields: "id") {\n  "Old free-text note."\n  legacyNote: String @deprecated(reason: "Nothing reads it; removed next release.")',
  );
  publishInto();
  edit('measurements.graphql', /\n {2}"Old free-text note."\n {2}legacyNote: String @deprecated\(reason: "Nothing reads it; removed next release."\)/, '');
  const result = await check();
  expect(result.changes.filter((c) => c.path === 'Measurement.legacyNote').map((c) => c.classification)).toEqual(['DANGEROUS', 'DANGEROUS']);
  expect(result.ok).toBe(true);
});

it('passes an additive change as SAFE', async () => {
  edit(
    'assets.graphql',
    /\n(\s+)inHca: Boolean! @requiresScopes\(scopes: \[\["assets:read"\]\]\)\n/,
    '\n$1inHca: Boolean! @requiresScopes(scopes: [["assets:read"]])\n$1"Operator notes."\n$1notes: String @requiresScopes(scopes: [["assets:read"]])\n',
  );
  const result = await check();
  expect(result.ok).toBe(true);
  expect(result.changes.filter((c) => c.path === 'Asset.notes').map((c) => c.classification)).toContain('SAFE');
});

it('passes a breaking change reviewers acknowledged, saying who approved it', async () => {
  edit('measurements.graphql', /\n(\s+)clockDeg: Float\n/, '\n$1clockDeg: Int\n');
  writeFileSync(
    path.join(dir, 'acknowledged-changes.json'),
    JSON.stringify({
      acknowledged: ['measurements', 'supergraph'].map((schema) => ({
        schema,
        path: 'Measurement.clockDeg',
        reason: 'whole degrees only',
        approvedBy: 'measurements-team',
      })),
    }),
  );
  const result = await check();
  expect(result.changes.filter((c) => c.path === 'Measurement.clockDeg').map((c) => c.classification)).toEqual(['ACKNOWLEDGED', 'ACKNOWLEDGED']);
});

it('writes a changelog entry that lists changes of shape and counts description edits', async () => {
  publishInto();
  edit(
    'measurements.graphql',
    '"Orientation, degrees clockwise from top of pipe (0–360)."',
    '"Orientation of the feature, degrees clockwise from top of pipe (0–360)."',
  );
  edit(
    'assets.graphql',
    /\n(\s+)inHca: Boolean! @requiresScopes\(scopes: \[\["assets:read"\]\]\)\n/,
    '\n$1inHca: Boolean! @requiresScopes(scopes: [["assets:read"]])\n$1"Operator notes."\n$1notes: String @requiresScopes(scopes: [["assets:read"]])\n',
  );
  const entry = changelogEntry(await check(), '2026-11-23');
  expect(entry).toMatch(/^\n## 2026-11-23\n/);
  expect(entry).toMatch(/### assets\n\n- SAFE: Field 'notes' was added to object type 'Asset'/);
  expect(entry).toMatch(/### measurements\n\n- SAFE: 1 description added or changed\n/);
  expect(entry).not.toMatch(/Orientation of the feature/);
});

it('fails an MCP tool operation the schema refuses, even one no schema change broke, naming the tool', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'schema-check-root-'));
  try {
    const ops = path.join(root, 'mcp-server', 'src', 'linepack_mcp', 'operations');
    cpSync(path.join(repoRoot, 'mcp-server', 'src', 'linepack_mcp', 'operations'), ops, { recursive: true });
    const file = path.join(ops, 'assets.graphql');
    writeFileSync(file, readFileSync(file, 'utf8').replace('regulation\n  }', 'regulation\n    wallThicknes\n  }'));
    const result = await runSchemaCheck({ schemaDir: dir, root });
    expect(result.ok).toBe(false);
    expect(result.invalidToolOperations.map((b) => b.operation.tools)).toEqual([['list_compliance_obligations']]);
    expect(formatReport(result)).toMatch(
      /INVALID OP +mcp-server\/src\/linepack_mcp\/operations\/assets\.graphql:\d+ LinepackAssetRegulation \(MCP tool list_compliance_obligations\): Cannot query field "wallThicknes"/,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
