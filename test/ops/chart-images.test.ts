/**
 * The images (Dockerfile): the base image is pinned by digest, and each image's node_modules is cut to what its
 * bundle requires by deploy/tools/prune-node-modules.mjs — shown here on a node_modules laid out as npm lays it out
 * (hoisted and nested versions, scoped packages, optional and peer dependencies, a workspace link).
 */
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { terminate } from '@linepack/lib/infra/child-process';
import { freePort } from '@linepack/lib/infra/free-port';
import { generateInternalKeyPair, INTERNAL_IDENTITY_HEADER, mintInternalToken } from '@linepack/lib/identity';
import { repoRoot } from '@linepack/lib/repo-root';
import { waitFor } from '@linepack/lib/testing/until';
import { bundle, linkNodeModules } from '../../bench/contenders/bundle';

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
  // The gateway, and every subgraph through one target named by a build argument (nothing to add for a new one).
  const stage = (name: string) => dockerfile.split(/^FROM /m).find((text) => text.startsWith(`build AS ${name}\n`)) ?? '';
  // The production install skips install scripts (the root's postinstall needs a development dependency) and applies the
  // dependency patches (patches/) with the patch-package version the development install uses.
  const patchPackage = (JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { devDependencies: Record<string, string> }).devDependencies[
    'patch-package'
  ];
  const patchStep = ` {2}&& npx --yes patch-package@${patchPackage!.replace(/\./g, '\\.')} --error-on-fail \\\\\\n`;
  expect(stage('deps-gateway')).toMatch(
    new RegExp(
      `npm ci --omit=dev [^\\n]*--ignore-scripts -w @linepack/gateway \\\\\\n${patchStep} {2}&& node deploy/tools/prune-node-modules\\.mjs gateway/dist/main\\.js node_modules\\n`,
    ),
  );
  expect(stage('deps-subgraph')).toMatch(
    new RegExp(
      `npm ci --omit=dev [^\\n]*--ignore-scripts -w "@linepack/subgraph-\\$\\{SUBGRAPH\\}" \\\\\\n${patchStep} {2}&& node deploy/tools/prune-node-modules\\.mjs "subgraphs/\\$\\{SUBGRAPH\\}/dist/main\\.js" node_modules\\n`,
    ),
  );
  for (const service of ['gateway', 'subgraph']) expect(dockerfile).toContain(`COPY --from=deps-${service} /app/node_modules ./node_modules`);
});

/** The files the runtime stage and one target copy from the build stage: [source under /app, destination under /app]. */
function copiesOf(dockerfile: string, target: string, args: Record<string, string>): Array<[string, string]> {
  const stageLines = (stage: string) =>
    dockerfile
      .split(/^FROM /m)
      .find((s) => new RegExp(`^\\S+ AS ${stage}\\n`).test(s))!
      .split('\n');
  return ['runtime', target].flatMap((stage) =>
    stageLines(stage)
      .map((line) => /^COPY --from=build \/app\/(\S+) \.\/(\S+)$/.exec(line.replace(/\$\{(\w+)\}/g, (_, name: string) => args[name]!)))
      .filter((m): m is RegExpExecArray => m !== null)
      .map((m) => [m[1]!, m[2]!] as [string, string]),
  );
}

it("a subgraph image with the files the Dockerfile's `subgraph` target copies serves its own SDL", async () => {
  // No Docker engine here: the image's /app is a temporary folder holding what the runtime and subgraph stages copy
  // from the build stage (the bundle built as `npm run build` builds it), with LINEPACK_SCHEMA_DIR as the image sets it.
  const dockerfile = readFileSync(path.join(repoRoot, 'Dockerfile'), 'utf8');
  const schemaDirEnv = /^ENV .*LINEPACK_SCHEMA_DIR=\/app\/(\S+)/m.exec(dockerfile)?.[1];
  expect(schemaDirEnv).toBe('schema');
  const name = 'compliance';
  const app = mkdtempSync(path.join(tmpdir(), 'linepack-image-'));
  let child: ChildProcess | undefined;
  try {
    const copies = copiesOf(dockerfile, 'subgraph', { SUBGRAPH: name });
    expect(copies.map(([, to]) => to)).toEqual(['schema/', 'dist', `subgraphs/${name}/schema.graphql`]);
    for (const [from, to] of copies) {
      if (from.endsWith('/dist')) {
        await bundle(`subgraphs/${name}/src/main.ts`, path.join(app, to, 'main.js'));
      } else if (from.includes('*')) {
        const [dir, pattern] = [path.dirname(from), new RegExp(`^${path.basename(from).replace('.', '\\.').replace('*', '.*')}$`)];
        mkdirSync(path.join(app, to), { recursive: true });
        for (const file of readdirSync(path.join(repoRoot, dir)).filter((f) => pattern.test(f)))
          cpSync(path.join(repoRoot, dir, file), path.join(app, to, file));
      } else {
        mkdirSync(path.dirname(path.join(app, to)), { recursive: true });
        cpSync(path.join(repoRoot, from), path.join(app, to));
      }
    }
    await linkNodeModules(app);
    const port = await freePort();
    const keys = generateInternalKeyPair();
    child = spawn(process.execPath, [path.join(app, 'dist', 'main.js')], {
      cwd: app,
      env: {
        PATH: process.env['PATH'],
        LINEPACK_SCHEMA_DIR: path.join(app, schemaDirEnv!),
        PORT: String(port),
        HOST: '127.0.0.1',
        METRICS_PORT: '0',
        MONGODB_URI: process.env['MONGODB_URI'],
        LINEPACK_DB_PREFIX: `image_${process.pid}`,
        INTERNAL_TOKEN_PUBLIC_KEY: keys.publicKeyPem,
        LOG_LEVEL: 'warn',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let output = '';
    child.stdout!.on('data', (d: Buffer) => (output += d.toString()));
    child.stderr!.on('data', (d: Buffer) => (output += d.toString()));
    await waitFor(
      async () => {
        if (child!.exitCode !== null) throw new Error(`the ${name} bundle exited (${child!.exitCode}):\n${output}`);
        return (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => null))?.ok ?? false;
      },
      60_000,
      `the ${name} bundle in the image layout`,
    );
    // The SDL it serves is the image's copy of its package's file.
    const identity = { subject: 'image-test', kind: 'api_key' as const, tenantId: randomUUID(), scopes: ['admin:*' as const], requestId: 'image-test' };
    const token = mintInternalToken(identity, name, keys.privateKeyPem);
    const res = await fetch(`http://127.0.0.1:${port}/graphql`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', [INTERNAL_IDENTITY_HEADER]: token },
      body: JSON.stringify({ query: '{ _service { sdl } }' }),
    });
    const sdl = ((await res.json()) as { data?: { _service: { sdl: string } } }).data?._service.sdl ?? '';
    expect(sdl).toContain(
      readFileSync(path.join(app, 'subgraphs', name, 'schema.graphql'), 'utf8')
        .trim()
        .split('\n')[0],
    );
  } finally {
    if (child && child.exitCode === null) await terminate(child, 10_000);
    rmSync(app, { recursive: true, force: true });
  }
}, 120_000);
