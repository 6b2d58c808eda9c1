/**
 * The images (Dockerfile): the base image is pinned by digest, and each image's node_modules is cut to what its
 * bundle requires by deploy/tools/prune-node-modules.mjs — shown here on a node_modules laid out as npm lays it out
 * (hoisted and nested versions, scoped packages, optional and peer dependencies, a workspace link).
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { repoRoot } from '@linepack/lib/repo-root';

const prune = path.join(repoRoot, 'deploy', 'tools', 'prune-node-modules.mjs');

function run(args: string[], cwd: string): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) =>
    execFile(process.execPath, [prune, ...args], { cwd, timeout: 60_000 }, (err, stdout, stderr) => resolve({ code: err ? 1 : 0, stdout, stderr })),
  );
}

/** A package directory with its manifest and an index.js (and whatever else `files` adds). */
function pkg(dir: string, manifest: Record<string, unknown>, files: Record<string, string> = {}) {
  mkdirSync(dir, { recursive: true });
  writeFileSync(path.join(dir, 'package.json'), JSON.stringify({ version: '1.0.0', ...manifest }));
  writeFileSync(path.join(dir, 'index.js'), 'module.exports = 1;\n');
  for (const [file, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, file)), { recursive: true });
    writeFileSync(path.join(dir, file), text);
  }
}

let work: string;
beforeEach(() => {
  work = mkdtempSync(path.join(tmpdir(), 'linepack-prune-'));
  const nm = path.join(work, 'node_modules');
  // The bundle requires a and @scope/e (through a subpath); a needs b, b needs its own nested c@2.
  pkg(
    path.join(nm, 'a'),
    { name: 'a', main: 'build/src/index.js', dependencies: { b: '^1' } },
    {
      'build/src/index.js': 'module.exports = require("b");\n',
      'build/src/index.d.ts': 'export {};\n',
      'build/src/index.js.map': '{}',
      'build/esm/index.js': 'export default 1;\n',
    },
  );
  pkg(path.join(nm, 'b'), { name: 'b', dependencies: { c: '^2' } });
  pkg(path.join(nm, 'b', 'node_modules', 'c'), { name: 'c', version: '2.0.0' });
  // c@1 is hoisted for d, which nothing the bundle loads needs.
  pkg(path.join(nm, 'c'), { name: 'c' });
  pkg(path.join(nm, 'd'), { name: 'd', dependencies: { c: '^1' } });
  // A native binary as an optional dependency (installed), a peer that is not installed.
  pkg(path.join(nm, '@scope', 'e'), { name: '@scope/e', optionalDependencies: { 'e-linux-x64': '1' }, peerDependencies: { g: '*' } }, { 'sub.js': '' });
  pkg(path.join(nm, 'e-linux-x64'), { name: 'e-linux-x64' });
  // An exports map: its ES-module build may be what `require` resolves to, so it stays.
  pkg(
    path.join(nm, 'x'),
    { name: 'x', main: 'build/src/index.js', exports: { require: './build/esm/index.cjs' }, dependencies: {} },
    {
      'build/esm/index.cjs': 'module.exports = 1;\n',
    },
  );
  mkdirSync(path.join(nm, '@other'), { recursive: true });
  pkg(path.join(nm, '@other', 'unused'), { name: '@other/unused' });
  // A workspace link, inlined by the bundle.
  pkg(path.join(work, 'lib'), { name: '@linepack/lib' });
  mkdirSync(path.join(nm, '@linepack'));
  symlinkSync(path.join(work, 'lib'), path.join(nm, '@linepack', 'lib'));
  mkdirSync(path.join(work, 'svc', 'dist'), { recursive: true });
  writeFileSync(
    path.join(work, 'svc', 'dist', 'main.js'),
    'const fs = require("node:fs");\nconst a = require("a");\nconst e = require("@scope/e/sub");\nconst x = require(\'x\');\nconst own = require("./own");\n',
  );
});
afterEach(() => rmSync(work, { recursive: true, force: true }));

const present = (...parts: string[]) => existsSync(path.join(work, 'node_modules', ...parts));

it('keeps what the bundle requires and what those packages declare, resolved as Node resolves them; removes the rest', async () => {
  const result = await run(['svc/dist/main.js', 'node_modules'], work);
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  expect(result.stdout).toMatch(
    /^prune-node-modules: 3 packages required by svc's bundle, 6 kept, 4 removed, 3 declaration\/map files and ES-module builds stripped; node_modules [\d.]+ MB -> [\d.]+ MB\n$/,
  );
  for (const kept of [['a'], ['b'], ['b', 'node_modules', 'c'], ['@scope', 'e'], ['e-linux-x64'], ['x']])
    expect([kept.join('/'), present(...kept)]).toEqual([kept.join('/'), true]);
  // c@1 was only d's; @other/unused nobody's; the workspace link is in the bundle. Emptied scopes go too.
  for (const removed of [['c'], ['d'], ['@other'], ['@linepack']]) expect([removed.join('/'), present(...removed)]).toEqual([removed.join('/'), false]);
  expect(JSON.parse(readFileSync(path.join(work, 'node_modules', 'b', 'node_modules', 'c', 'package.json'), 'utf8')).version).toBe('2.0.0');
  // The workspace's own files are untouched: only the link went.
  expect(existsSync(path.join(work, 'lib', 'package.json'))).toBe(true);
});

it('strips type declarations, source maps and an ES-module build that CommonJS never loads', async () => {
  await run(['svc/dist/main.js', 'node_modules'], work);
  expect(present('a', 'build', 'src', 'index.js')).toBe(true);
  expect(present('a', 'build', 'src', 'index.d.ts')).toBe(false);
  expect(present('a', 'build', 'src', 'index.js.map')).toBe(false);
  expect(present('a', 'build', 'esm')).toBe(false);
  // x's exports map points `require` into build/esm: kept.
  expect(present('x', 'build', 'esm', 'index.cjs')).toBe(true);
});

it('fails, naming it, when the bundle requires a package that is not installed (and deletes nothing)', async () => {
  writeFileSync(path.join(work, 'svc', 'dist', 'main.js'), 'require("a");\nrequire("missing-package");\n');
  const result = await run(['svc/dist/main.js', 'node_modules'], work);
  expect(result.code).toBe(1);
  expect(result.stderr).toContain('prune-node-modules: not installed: missing-package (required by the bundle)');
  expect(present('d')).toBe(true);
});

it('the Dockerfile builds every image from the digest-pinned base and prunes each image to its own bundle', () => {
  const dockerfile = readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8');
  expect(dockerfile).toMatch(/^ARG NODE_IMAGE=node:24-bookworm-slim@sha256:[0-9a-f]{64}$/m);
  const froms = [...dockerfile.matchAll(/^FROM (\S+) AS (\S+)$/gm)].map((m) => [m[2], m[1]]);
  const stages = Object.fromEntries(froms);
  // Only the two base stages name an image, and both by the pinned ARG; everything else builds on them.
  expect(froms.filter(([, image]) => !Object.keys(stages).includes(image!))).toEqual([
    ['build', '${NODE_IMAGE}'],
    ['runtime', '${NODE_IMAGE}'],
  ]);
  for (const [service, dir] of [
    ['gateway', 'gateway'],
    ['auth', 'subgraphs/auth'],
    ['assets', 'subgraphs/assets'],
    ['measurements', 'subgraphs/measurements'],
    ['analytics', 'subgraphs/analytics'],
    ['compliance', 'subgraphs/compliance'],
  ]) {
    const deps = new RegExp(
      `^FROM build AS deps-${service}\\nRUN npm ci --omit=dev [^\\n]*\\\\\\n  && node deploy/tools/prune-node-modules\\.mjs ${dir}/dist/main\\.js node_modules$`,
      'm',
    );
    expect([service, deps.test(dockerfile)]).toEqual([service, true]);
    expect(dockerfile).toContain(`COPY --from=deps-${service} /app/node_modules ./node_modules`);
  }
});
