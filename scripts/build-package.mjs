#!/usr/bin/env node
/**
 * Production build of one deployable package (run from its folder: `npm run build -w subgraphs/assets`):
 * esbuild bundles src/main.ts and the workspace packages it imports (@linepack/*, which ship as
 * TypeScript source) into dist/main.js; every other package stays an external `require`, installed
 * in the image by `npm ci --omit=dev -w <package>`. The build fails when the bundle requires a
 * package the deployable does not declare (directly or through a @linepack dependency), so an image
 * can never miss a module at run time — and the gateway provably ships no MongoDB driver.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { build } from 'esbuild';

const entry = process.argv[2] ?? 'src/main.ts';
const pkgDir = process.cwd();
const repoRoot = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const readManifest = (dir) => JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));

const workspaceDirs = new Map();
const workspaceGlobs = readManifest(repoRoot).workspaces ?? [];
const expand = (glob) => (glob.endsWith('/*') ? readdirSync(path.join(repoRoot, glob.slice(0, -2))).map((d) => `${glob.slice(0, -2)}/${d}`) : [glob]);
for (const dir of workspaceGlobs.flatMap(expand)) {
  const full = path.join(repoRoot, dir);
  if (existsSync(path.join(full, 'package.json'))) workspaceDirs.set(readManifest(full).name, full);
}

/** What a package may require at run time: its dependencies and those of the @linepack packages it depends on. */
function declared(dir, seen = new Set()) {
  const m = readManifest(dir);
  if (seen.has(m.name)) return new Set();
  seen.add(m.name);
  const out = new Set([...Object.keys(m.dependencies ?? {}), ...Object.keys(m.peerDependencies ?? {})]);
  for (const dep of Object.keys(m.dependencies ?? {})) {
    if (workspaceDirs.has(dep)) for (const d of declared(workspaceDirs.get(dep), seen)) out.add(d);
  }
  return out;
}

const allowed = declared(pkgDir);
const externals = new Set();
const packageName = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);

await build({
  entryPoints: [path.join(pkgDir, entry)],
  outfile: path.join(pkgDir, 'dist', 'main.js'),
  bundle: true,
  platform: 'node',
  target: 'node20',
  format: 'cjs',
  sourcemap: true,
  logLevel: 'warning',
  plugins: [
    {
      name: 'externalize-registry-packages',
      setup(b) {
        b.onResolve({ filter: /^[^./]/ }, (args) => {
          if (args.path.startsWith('node:')) return { external: true };
          const name = packageName(args.path);
          if (name.startsWith('@linepack/')) return undefined;
          externals.add(name);
          return { external: true };
        });
      },
    },
  ],
});

const undeclared = [...externals].filter((n) => !allowed.has(n) && !n.startsWith('@types/')).sort();
if (undeclared.length > 0) {
  console.error(`${readManifest(pkgDir).name}: dist/main.js requires ${undeclared.join(', ')}, which package.json does not declare`);
  process.exit(1);
}
console.log(`${readManifest(pkgDir).name}: dist/main.js requires ${[...externals].sort().join(', ')}`);
