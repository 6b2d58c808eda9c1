/**
 * schema:check on copies of the SDL: breaking changes fail naming the change and exactly the client operations
 * that read its coordinate; acknowledgements approve one change, not a path; the same removal after
 * @deprecated passes as dangerous; additive changes pass; `--force` cannot take client operations out of the
 * check; SDL errors point at file:line:column.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { print } from 'graphql';
import { changelogEntry } from '@linepack/schema/changelog';
import { baselinePath, currentSchemas, formatReport, runSchemaCheck, where, type ClassifiedChange } from '@linepack/schema/check';
import { collectClientOperations, type ClientOperation } from '@linepack/schema/operations';
import { publishSchemas } from '@linepack/schema/publish';
import { publishedSubgraphSdlPath, schemaDir, subgraphNames, subgraphSdlPath } from '@linepack/schema/subgraphs';

const repoRoot = path.resolve(schemaDir, '..');
/** A copy of the layout the check reads: the schema folder and each subgraph's SDL and baseline beside it. */
let layout: string;
let dir: string;

beforeEach(() => {
  layout = mkdtempSync(path.join(os.tmpdir(), 'schema-check-'));
  dir = path.join(layout, 'schema');
  cpSync(schemaDir, dir, { recursive: true, filter: (src) => !src.endsWith('.ts') && !src.includes('node_modules') });
  for (const name of subgraphNames) {
    mkdirSync(path.join(layout, 'subgraphs', name), { recursive: true });
    cpSync(subgraphSdlPath(name), subgraphSdlPath(name, dir));
    // A subgraph has a baseline once its first version is published.
    if (existsSync(publishedSubgraphSdlPath(name))) cpSync(publishedSubgraphSdlPath(name), publishedSubgraphSdlPath(name, dir));
  }
});
afterEach(() => rmSync(layout, { recursive: true, force: true }));

/** The copy's SDL of one subgraph. */
const sdlOf = (name: string) => subgraphSdlPath(name, dir);
const edit = (full: string, from: string | RegExp, to: string) => {
  const file = path.relative(layout, full);
  const text = readFileSync(full, 'utf8');
  const next = text.replace(from, to);
  if (next === text) throw new Error(`${from} not found in ${file}`);
  writeFileSync(full, next);
};
const check = () => runSchemaCheck({ schemaDir: dir, root: repoRoot });
const acknowledge = (entries: object[]) => writeFileSync(path.join(dir, 'acknowledged-changes.json'), JSON.stringify({ acknowledged: entries }));
const changeAt = (changes: ClassifiedChange[], schema: string, coordinate: string, kind: string) =>
  changes.find((c) => c.schema === schema && c.coordinate === coordinate && c.kind === kind);
const readersOf = (change: ClassifiedChange | undefined) => (change?.readers ?? []).map((r) => r.operation);

let clientOperations: ClientOperation[] | undefined;
/** The repository's operations, found by what they contain, to name them as schema:check does. */
const operationsContaining = (...parts: string[]) => {
  clientOperations ??= collectClientOperations(repoRoot);
  return clientOperations.filter((op) => parts.every((p) => print(op.document).includes(p))).map(where);
};
const publishInto = () => {
  for (const [id, sdl] of currentSchemas(dir)) writeFileSync(baselinePath(id, dir), sdl);
};

it('passes on the committed schema, checking the client operations it found', async () => {
  const result = await check();
  expect(formatReport(result)).toMatch(/0 breaking/);
  expect(result.ok).toBe(true);
  expect(result.operationsChecked).toBeGreaterThan(50);
  expect(result.invalidClientOperations).toEqual([]);
});

it('fails a rename of Measurement.depthPctWt as BREAKING, naming the client operations it breaks', async () => {
  edit(sdlOf('measurements'), /\n(\s+)depthPctWt: Float\n/, '\n$1depthPercentWt: Float\n');
  const result = await check();
  expect(result.ok).toBe(false);
  const removed = result.changes.find((c) => c.classification === 'BREAKING' && c.path === 'Measurement.depthPctWt');
  expect(removed?.message).toMatch(/depthPctWt.*removed/);
  expect(readersOf(removed).some((b) => b.startsWith('mcp-server/src/linepack_mcp/'))).toBe(true);
  // The MCP companion's operations are named with the tools that send them.
  expect(readersOf(removed)).toEqual(
    expect.arrayContaining([expect.stringMatching(/operations\/analytics\.graphql:\d+ LinepackAnomaly \(MCP tool assess_anomaly\)$/)]),
  );
  expect(readersOf(removed)).toEqual(
    expect.arrayContaining([expect.stringMatching(/LinepackMeasurements \(MCP tool list_measurements(, resource [^)]*)?\)$/)]),
  );
  expect(result.invalidClientOperations.map((b) => b.operation.file)).toEqual(expect.arrayContaining(['README.md']));
  expect(formatReport(result)).toMatch(/BREAKING +measurements +Field 'depthPctWt' .*removed/);
  // The new field is what every "Did you mean" names; nobody reads it yet, so nobody is attributed to it.
  const added = changeAt(result.changes, 'supergraph', 'Measurement.depthPercentWt', 'FIELD_ADDED');
  expect(added?.classification).toBe('SAFE');
  expect(added?.readers).toEqual([]);
});

it('fails changing clockDeg from Float to Int', async () => {
  edit(sdlOf('measurements'), /\n(\s+)clockDeg: Float\n/, '\n$1clockDeg: Int\n');
  const result = await check();
  expect(result.ok).toBe(false);
  expect(result.changes.filter((c) => c.classification === 'BREAKING').map((c) => c.path)).toContain('Measurement.clockDeg');
});

it('passes the same kind of removal as DANGEROUS when the field was deprecated in the published schema', async () => {
  edit(
    sdlOf('measurements'),
    'type Measurement @key(fields: "id") {',
    'type Measurement @key(fields: "id") {\n  "Old free-text note."\n  legacyNote: String @deprecated(reason: "Nothing reads it; removed next release.")',
  );
  publishInto();
  edit(sdlOf('measurements'), /\n {2}"Old free-text note."\n {2}legacyNote: String @deprecated\(reason: "Nothing reads it; removed next release."\)/, '');
  const result = await check();
  expect(result.changes.filter((c) => c.path === 'Measurement.legacyNote').map((c) => c.classification)).toEqual(['DANGEROUS', 'DANGEROUS']);
  expect(result.ok).toBe(true);
});

it('passes an additive change as SAFE', async () => {
  edit(
    sdlOf('assets'),
    /\n(\s+)inHca: Boolean! @requiresScopes\(scopes: \[\["assets:read"\]\]\)\n/,
    '\n$1inHca: Boolean! @requiresScopes(scopes: [["assets:read"]])\n$1"Operator notes."\n$1notes: String @requiresScopes(scopes: [["assets:read"]])\n',
  );
  const result = await check();
  expect(result.ok).toBe(true);
  expect(result.changes.filter((c) => c.path === 'Asset.notes').map((c) => c.classification)).toContain('SAFE');
  expect(result.changes.filter((c) => c.path === 'Asset.notes').flatMap((c) => c.readers)).toEqual([]);
});

it('passes a breaking change reviewers acknowledged, saying who approved it', async () => {
  edit(sdlOf('measurements'), /\n(\s+)clockDeg: Float\n/, '\n$1clockDeg: Int\n');
  acknowledge(
    ['measurements', 'supergraph'].map((schema) => ({
      schema,
      coordinate: 'Measurement.clockDeg',
      change: 'FIELD_TYPE_CHANGED',
      before: 'Float',
      after: 'Int',
      reason: 'whole degrees only',
      approvedBy: 'measurements-team',
    })),
  );
  const result = await check();
  expect(result.changes.filter((c) => c.path === 'Measurement.clockDeg').map((c) => c.classification)).toEqual(['ACKNOWLEDGED', 'ACKNOWLEDGED']);
  expect(formatReport(result)).toMatch(/ACKNOWLEDGED +measurements .*clockDeg.*acknowledged by measurements-team: whole degrees only/);
  expect(result.ok).toBe(true);
});

// Issue 30's done-when. Float to Int leaves every operation valid (Int is a Float to GraphQL clients' parsers) yet
// changes what they receive, so validation alone finds nobody; the coordinates each operation reads do.
it('changing Measurement.lengthMm from Float to Int names the operations that read it; acknowledging it does not acknowledge removing the field', async () => {
  edit(sdlOf('measurements'), /("Axial length, mm."\n\s+)lengthMm: Float\n/, '$1lengthMm: Int\n');
  const changed = await check();
  expect(changed.ok).toBe(false);
  expect(changed.invalidClientOperations).toEqual([]);
  const change = changeAt(changed.changes, 'supergraph', 'Measurement.lengthMm', 'FIELD_TYPE_CHANGED');
  expect(change).toMatchObject({ classification: 'BREAKING', before: 'Float', after: 'Int' });
  const readers = readersOf(change);
  // The console's dig list, asset page and dig sheet, the CLI's dig sheet (a template of shared field lists), the
  // README and the MCP companion.
  expect(readers).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^console\/src\/pages\/DigListPage\.tsx:\d+ ConsoleDigList$/),
      expect.stringMatching(/^console\/src\/components\/AnomalyTable\.tsx:\d+ ConsoleAssetAnomalies$/),
      // Filled in where it is sent: SHEET_QUERY.replace('ASSESSMENT', ASSESSMENT).
      expect.stringMatching(/^console\/src\/pages\/DigSheetPage\.tsx:\d+ ConsoleDigSheet$/),
      expect.stringMatching(/^cli\/linepack\.ts:\d+ /),
      expect.stringMatching(/^README\.md:\d+ query \{ asset\(id: "<segment id>"\) \{ measurements/),
      expect.stringMatching(/LinepackMeasurements \(MCP tool list_measurements(, resource [^)]*)?\)$/),
    ]),
  );
  expect(change?.readers.every((r) => r.how === 'reads Measurement.lengthMm')).toBe(true);
  // Exactly the readers: the README's recordMeasurements sends lengthMm as MeasurementInput.lengthMm and reads no
  // Measurement field, and an anomaly cluster's lengthMm is another coordinate; neither is named.
  const sendsOnly = operationsContaining('recordMeasurements', 'lengthMm: 48');
  expect(sendsOnly.length).toBeGreaterThan(0);
  for (const op of sendsOnly) expect(readers).not.toContain(op);
  expect(changed.changes.filter((c) => c.coordinate === 'AnomalyCluster.lengthMm' && c.readers.length > 0)).toEqual([]);
  expect(formatReport(changed)).toMatch(/affects console\/src\/pages\/DigListPage\.tsx:\d+ ConsoleDigList {2}\(reads Measurement\.lengthMm\)/);
  // The report prints the entry that acknowledges this change and nothing else.
  expect(formatReport(changed)).toContain(
    'to acknowledge: {"coordinate":"Measurement.lengthMm","change":"FIELD_TYPE_CHANGED","before":"Float","after":"Int","reason":"…","approvedBy":"…"}',
  );

  acknowledge([
    {
      coordinate: 'Measurement.lengthMm',
      change: 'FIELD_TYPE_CHANGED',
      before: 'Float',
      after: 'Int',
      reason: 'the tool reports whole millimetres',
      approvedBy: 'measurements-team',
    },
  ]);
  const acknowledged = await check();
  expect(acknowledged.changes.filter((c) => c.coordinate === 'Measurement.lengthMm').map((c) => [c.schema, c.classification])).toEqual([
    ['measurements', 'ACKNOWLEDGED'],
    ['supergraph', 'ACKNOWLEDGED'],
  ]);
  expect(acknowledged.ok).toBe(true);

  // Same acknowledgement file, the field now removed: a different change, still BREAKING.
  edit(sdlOf('measurements'), /"Axial length, mm."\n\s+lengthMm: Int\n/, '');
  const removed = await check();
  expect(removed.ok).toBe(false);
  const removal = changeAt(removed.changes, 'supergraph', 'Measurement.lengthMm', 'FIELD_REMOVED');
  expect(removal).toMatchObject({ classification: 'BREAKING', before: 'Float', after: null });
  expect(readersOf(removal)).toEqual(readers);
  expect(removed.changes.filter((c) => c.classification === 'ACKNOWLEDGED')).toEqual([]);

  // Float to String on the same coordinate is not the acknowledged change either.
  edit(sdlOf('measurements'), '"Circumferential width, mm."', '"Axial length, mm."\n  lengthMm: String\n  "Circumferential width, mm."');
  const retyped = await check();
  expect(changeAt(retyped.changes, 'supergraph', 'Measurement.lengthMm', 'FIELD_TYPE_CHANGED')).toMatchObject({
    classification: 'BREAKING',
    before: 'Float',
    after: 'String',
  });
});

it('refuses an acknowledgement in the earlier path-only format, since it would approve any change at that path', async () => {
  acknowledge([{ schema: 'supergraph', path: 'Measurement.lengthMm', reason: 'r', approvedBy: 'a' }]);
  await expect(check()).rejects.toThrow(
    /entry 1 acknowledges path "Measurement.lengthMm" without naming the change; write coordinate, change, before and after/,
  );
});

it('names the readers of an output field that becomes nullable, and not the operations that only filter or write by it', async () => {
  edit(sdlOf('assets'), /\n(\s+)inHca: Boolean! @requiresScopes/, '\n$1inHca: Boolean @requiresScopes');
  const result = await check();
  expect(result.ok).toBe(false);
  const change = changeAt(result.changes, 'supergraph', 'Asset.inHca', 'FIELD_TYPE_CHANGED');
  expect(change).toMatchObject({ classification: 'BREAKING', before: 'Boolean!', after: 'Boolean' });
  const readers = readersOf(change);
  expect(readers).toEqual(
    expect.arrayContaining([
      expect.stringMatching(/^console\/src\/pages\/DigListPage\.tsx:\d+ ConsoleDigList$/),
      expect.stringMatching(/^console\/src\/pages\/AssetPage\.tsx:\d+ ConsoleAsset$/),
    ]),
  );
  // The README's overview filters by AssetFilter.inHca and its createAsset writes CreateAssetInput.inHca.
  const notReaders = [...operationsContaining('inHca: true', 'query Overview'), ...operationsContaining('createAsset', 'inHca: false')];
  expect(notReaders.filter((op) => op.startsWith('README.md')).length).toBe(2);
  for (const op of notReaders) expect(readers).not.toContain(op);
});

it('names the operations that send a removed enum value, as a literal or through a variable, and not those that only receive it', async () => {
  edit(sdlOf('assets'), /\n {2}"A pipeline; its parent, if any, is a SYSTEM."\n {2}PIPELINE\n/, '\n');
  const result = await check();
  expect(result.ok).toBe(false);
  const change = changeAt(result.changes, 'supergraph', 'AssetType.PIPELINE', 'ENUM_VALUE_REMOVED');
  expect(change?.classification).toBe('BREAKING');
  const readers = change?.readers ?? [];
  expect(readers).toEqual(
    expect.arrayContaining([
      { operation: expect.stringMatching(/^console\/src\/pages\/DigListPage\.tsx:\d+ ConsoleDigPipelines$/), how: 'sends AssetType.PIPELINE' },
      {
        operation: expect.stringMatching(/\(MCP tool list_assets, search_assets\)$/),
        how: expect.stringMatching(/^may send AssetType\.PIPELINE through \$\w+$/),
      },
    ]),
  );
  // The console's asset page reads Asset.type (it may receive PIPELINE) but sends no AssetType: not named.
  const receivesOnly = operationsContaining('query ConsoleAsset(');
  expect(receivesOnly.length).toBe(1);
  expect(readers.map((r) => r.operation)).not.toContain(receivesOnly[0]);
  // The literal makes the dig list's pipeline picker invalid: it is reported as such.
  expect(result.invalidClientOperations.map((b) => b.operation.name)).toContain('ConsoleDigPipelines');
});

it('names the operations that pass a removed argument, and those a new required argument refuses', async () => {
  edit(sdlOf('measurements'), /\n {4}"Observed before this instant."\n {4}to: DateTime\n/, '\n');
  edit(
    sdlOf('measurements'),
    '    "Page size: at most 500 (default 50)."',
    '    "Required unit."\n    unit: MeasurementUnit!\n    "Page size: at most 500 (default 50)."',
  );
  const result = await check();
  expect(result.ok).toBe(false);
  const removed = changeAt(result.changes, 'supergraph', 'Asset.measurements(to:)', 'FIELD_ARGUMENT_REMOVED');
  expect(removed?.classification).toBe('BREAKING');
  const passers = operationsContaining('measurements(', 'to: $to');
  expect(passers).toEqual(expect.arrayContaining([expect.stringMatching(/LinepackMeasurements \(MCP tool list_measurements(, resource [^)]*)?\)$/)]));
  expect(readersOf(removed).sort()).toEqual(expect.arrayContaining(passers));
  expect(removed?.readers.every((r) => r.how === 'passes Asset.measurements(to:)')).toBe(true);
  // The README's segment query reads Asset.measurements with type, from and first, not to: untouched by the removal...
  const withoutTo = operationsContaining('measurements(type: ILI_ANOMALY, from: "2026-01-01T00:00:00Z", first: 100)');
  expect(withoutTo).toHaveLength(1);
  expect(readersOf(removed)).not.toContain(withoutTo[0]);
  // ...but refused by the new required argument, as every reader of the field is.
  const required = changeAt(result.changes, 'supergraph', 'Asset.measurements(unit:)', 'FIELD_ARGUMENT_ADDED');
  expect(required).toMatchObject({ classification: 'BREAKING', before: null, after: 'MeasurementUnit!' });
  expect(required?.readers).toEqual(expect.arrayContaining([{ operation: withoutTo[0], how: 'reads Asset.measurements without Asset.measurements(unit:)' }]));
  expect(readersOf(required)).toEqual(expect.arrayContaining(passers));
});

it('lists who still reads a field when it is deprecated, and says so when nobody does', async () => {
  edit(sdlOf('measurements'), /("Axial length, mm."\n\s+)lengthMm: Float\n/, '$1lengthMm: Float @deprecated(reason: "Use lengthM.")\n');
  edit(sdlOf('measurements'), /("Circumferential width, mm."\n\s+)widthMm: Float\n/, '$1widthMm: Float\n  "Unused."\n  legacyNote: String\n');
  publishInto();
  edit(sdlOf('measurements'), '  legacyNote: String\n', '  legacyNote: String @deprecated(reason: "Nobody reads it.")\n');
  const result = await check();
  const deprecation = changeAt(result.changes, 'supergraph', 'Measurement.legacyNote', 'FIELD_DEPRECATION_ADDED');
  expect(deprecation).toMatchObject({ deprecation: true, readers: [] });
  expect(formatReport(result)).toMatch(/Field 'Measurement.legacyNote' is deprecated\n {26}no client operation reads it/);

  edit(sdlOf('measurements'), 'lengthMm: Float @deprecated(reason: "Use lengthM.")', 'lengthMm: Float');
  publishInto();
  edit(sdlOf('measurements'), /("Axial length, mm."\n\s+)lengthMm: Float\n/, '$1lengthMm: Float @deprecated(reason: "Use lengthM.")\n');
  const deprecated = await check();
  const lengthMm = changeAt(deprecated.changes, 'supergraph', 'Measurement.lengthMm', 'FIELD_DEPRECATION_ADDED');
  expect(lengthMm).toMatchObject({ deprecation: true, before: null, after: 'Use lengthM.' });
  expect(lengthMm?.classification).not.toBe('BREAKING');
  expect(readersOf(lengthMm)).toEqual(expect.arrayContaining([expect.stringMatching(/^console\/src\/pages\/DigListPage\.tsx:\d+ ConsoleDigList$/)]));
  expect(formatReport(deprecated)).toMatch(/still read by console\/src\/pages\/DigListPage\.tsx:\d+ ConsoleDigList {2}\(reads Measurement\.lengthMm\)/);
  expect(deprecated.ok).toBe(true);
});

it('points an SDL syntax error and a composition error at file:line:column, in the check and in compose, with no stack trace', async () => {
  const file = sdlOf('measurements');
  const lines = readFileSync(file, 'utf8').split('\n');
  const line = lines.findIndex((l) => l === '  lengthMm: Float') + 1;
  expect(line).toBeGreaterThan(0);
  lines[line - 1] = '  lengthMm Float';
  writeFileSync(file, lines.join('\n'));
  // The copy is outside the working directory, so it is named by its absolute path.
  await expect(check()).rejects.toThrow(`${file}:${line}:12: Syntax Error: Expected ":", found Name "Float".`);

  const compose = spawnSync(path.join(repoRoot, 'node_modules', '.bin', 'tsx'), [path.join(schemaDir, 'compose.ts'), '--check'], {
    cwd: dir,
    env: { ...process.env, LINEPACK_SCHEMA_DIR: dir },
    encoding: 'utf8',
  });
  expect(compose.status).toBe(1);
  expect(compose.stderr).toContain(`measurements/schema.graphql:${line}:12: Syntax Error: Expected ":", found Name "Float".`);
  expect(compose.stderr).not.toMatch(/^\s+at /m);

  // A composition error (a key naming a field the type lacks) is located the same way.
  lines[line - 1] = '  lengthMm: Float';
  writeFileSync(file, lines.join('\n'));
  edit(sdlOf('analytics'), 'type Measurement @key(fields: "id") {', 'type Measurement @key(fields: "idx") {');
  const keyLine = readFileSync(sdlOf('analytics'), 'utf8').split('\n').indexOf('type Measurement @key(fields: "idx") {') + 1;
  const composition = spawnSync(path.join(repoRoot, 'node_modules', '.bin', 'tsx'), [path.join(schemaDir, 'compose.ts'), '--check'], {
    cwd: dir,
    env: { ...process.env, LINEPACK_SCHEMA_DIR: dir },
    encoding: 'utf8',
  });
  expect(composition.status).toBe(1);
  expect(composition.stderr).toMatch(new RegExp(`KEY_INVALID_FIELDS: \\S*analytics\\/schema\\.graphql:${keyLine}:\\d+: \\[analytics\\] On type "Measurement"`));
  expect(composition.stderr).not.toMatch(/^\s+at /m);
});

it('schema:publish --force publishes over a breaking change but not over a client operation the new schema refuses, which stays in the check', async () => {
  // A rename: the README, the console and the MCP companion read depthPctWt.
  edit(sdlOf('measurements'), /\n(\s+)depthPctWt: Float\n/, '\n$1depthPercentWt: Float\n');
  const before = readFileSync(publishedSubgraphSdlPath('measurements', dir), 'utf8');
  const refused = await publishSchemas({ schemaDir: dir, root: repoRoot, force: true });
  expect(refused.published).toBe(false);
  expect(refused.message).toMatch(/INVALID OP +README\.md:\d+ .*Cannot query field "depthPctWt"/);
  expect(refused.message).toMatch(/INVALID OP +console\/src\//);
  expect(refused.message).toMatch(/--force does not cover them/);
  expect(readFileSync(publishedSubgraphSdlPath('measurements', dir), 'utf8')).toBe(before);

  // Even with the rename in the baseline, the README's and console's operations are still validated.
  publishInto();
  const after = await check();
  expect(after.ok).toBe(false);
  expect(after.invalidClientOperations.map((b) => b.operation.file)).toEqual(expect.arrayContaining(['README.md', expect.stringMatching(/^console\/src\//)]));
});

it('schema:publish --force publishes a breaking change every client still accepts', async () => {
  edit(sdlOf('measurements'), /\n(\s+)clockDeg: Float\n/, '\n$1clockDeg: Int\n');
  expect((await publishSchemas({ schemaDir: dir, root: repoRoot })).published).toBe(false);
  const forced = await publishSchemas({ schemaDir: dir, root: repoRoot, force: true, date: '2026-11-25' });
  expect(forced.published).toBe(true);
  expect(readFileSync(path.join(dir, 'CHANGELOG.md'), 'utf8')).toMatch(
    /## 2026-11-25\n[\s\S]*- BREAKING: Field 'Measurement.clockDeg' changed type from 'Float' to 'Int'/,
  );
  expect((await check()).ok).toBe(true);
});

it('reads registered trusted documents, naming the manifest line of those no source holds', async () => {
  const root = mkdtempSync(path.join(os.tmpdir(), 'schema-check-root-'));
  try {
    const written = 'query Lengths { measurement(id: "m") { lengthMm } }';
    const registeredOnly = 'query FieldAppLengths($id: ID!) {\n  measurement(id: $id) {\n    lengthMm\n  }\n}';
    writeFileSync(path.join(root, 'README.md'), `# x\n\n\`\`\`graphql\n${written}\n\`\`\`\n`);
    mkdirSync(path.join(root, 'lib', 'generated'), { recursive: true });
    const manifest = {
      ['a'.repeat(64)]: { name: 'Lengths', document: print(collectClientOperations(root)[0]!.document), sources: ['README.md'] },
      ['b'.repeat(64)]: { name: 'FieldAppLengths', document: registeredOnly, sources: ['field-app'] },
    };
    writeFileSync(
      path.join(root, 'lib', 'generated', 'trusted-documents.ts'),
      `// Generated.\nexport const trustedDocuments: TrustedDocuments = ${JSON.stringify(manifest, null, 2)};\n`,
    );
    edit(sdlOf('measurements'), /("Axial length, mm."\n\s+)lengthMm: Float\n/, '$1lengthMm: Int\n');
    const result = await runSchemaCheck({ schemaDir: dir, root });
    const change = changeAt(result.changes, 'supergraph', 'Measurement.lengthMm', 'FIELD_TYPE_CHANGED');
    expect(readersOf(change)).toEqual(['README.md:4 Lengths', 'lib/generated/trusted-documents.ts:10 FieldAppLengths']);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});

it('writes a changelog entry that lists changes of shape and counts description edits', async () => {
  publishInto();
  edit(
    sdlOf('measurements'),
    '"Orientation, degrees clockwise from top of pipe (0–360)."',
    '"Orientation of the feature, degrees clockwise from top of pipe (0–360)."',
  );
  edit(
    sdlOf('assets'),
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
    expect(result.invalidClientOperations.map((b) => b.operation.tools)).toEqual([['list_compliance_obligations']]);
    expect(formatReport(result)).toMatch(
      /INVALID OP +mcp-server\/src\/linepack_mcp\/operations\/assets\.graphql:\d+ LinepackAssetRegulation \(MCP tool list_compliance_obligations\): Cannot query field "wallThicknes"/,
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
