#!/usr/bin/env node
/**
 * Shrinks an image's node_modules to what its bundle can load (Dockerfile, deps-<service> stages):
 *
 *   node deploy/tools/prune-node-modules.mjs <service>/dist/main.js node_modules [--dry-run]
 *
 * `npm ci --omit=dev -w <workspace>` installs more than the workspace uses: every dependency of @linepack/lib (the
 * gateway got exceljs, csv-parse and the MongoDB driver through it), lib's optional MongoDB peer, and packages of
 * other workspaces' trees that npm does not filter (124 MB of @opentelemetry instrumentations in the gateway). The
 * esbuild bundle inlines the @linepack packages, so the packages it `require`s are the whole run-time need: they are
 * kept with everything they declare (dependencies, optionalDependencies, installed peerDependencies), resolved as Node
 * resolves them (the nearest node_modules first); every other package directory is deleted.
 *
 * Prints one line: kept/removed package counts and the size before and after (bytes of the files, in MB).
 */
import { existsSync, lstatSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';

const [bundle, nodeModulesArg, flag] = process.argv.slice(2);
if (!bundle || !nodeModulesArg) {
  console.error('usage: prune-node-modules.mjs <dist/main.js> <node_modules> [--dry-run]');
  process.exit(2);
}
const nodeModules = path.resolve(nodeModulesArg);
const dryRun = flag === '--dry-run';

const packageName = (spec) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]);
// esbuild's CJS output keeps `require("pkg")` / `require("pkg/sub")` for every external; node: built-ins are skipped.
const required = new Set(
  [...readFileSync(bundle, 'utf8').matchAll(/\brequire\(\s*["']([^"'./][^"']*)["']\s*\)/g)]
    .map((m) => m[1])
    .filter((spec) => !spec.startsWith('node:'))
    .map(packageName),
);

/** The directory Node loads `name` from when required by a file in `fromDir` (nearest node_modules upwards). */
function resolvePackage(name, fromDir) {
  for (let dir = fromDir; dir.startsWith(nodeModules) || dir === path.dirname(nodeModules); dir = path.dirname(dir)) {
    const base = path.basename(dir) === 'node_modules' ? dir : path.join(dir, 'node_modules');
    const candidate = path.join(base, name);
    if (existsSync(path.join(candidate, 'package.json'))) return candidate;
    if (dir === path.dirname(nodeModules)) break;
  }
  return null;
}

const kept = new Set();
const missing = [];
const queue = [...required].map((name) => ({ name, from: path.dirname(nodeModules), optional: false, by: 'the bundle' }));
while (queue.length > 0) {
  const { name, from, optional, by } = queue.pop();
  const dir = resolvePackage(name, from);
  if (dir === null) {
    if (!optional) missing.push(`${name} (required by ${by})`);
    continue;
  }
  if (kept.has(dir)) continue;
  kept.add(dir);
  const manifest = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'));
  for (const dep of Object.keys(manifest.dependencies ?? {})) queue.push({ name: dep, from: dir, optional: false, by: name });
  // Optional and peer dependencies are kept when installed (a platform's native binary, a peer npm placed).
  for (const dep of [...Object.keys(manifest.optionalDependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]) {
    queue.push({ name: dep, from: dir, optional: true, by: name });
  }
}
if (missing.length > 0) {
  console.error(`prune-node-modules: not installed: ${[...new Set(missing)].sort().join(', ')}`);
  process.exit(1);
}

/** Every installed package directory, nested ones included (node_modules/a/node_modules/b). */
function packagesIn(modulesDir) {
  const out = [];
  if (!existsSync(modulesDir)) return out;
  for (const entry of readdirSync(modulesDir)) {
    if (entry.startsWith('.')) continue;
    const full = path.join(modulesDir, entry);
    if (entry.startsWith('@')) {
      for (const scoped of readdirSync(full)) out.push(path.join(full, scoped));
    } else {
      out.push(full);
    }
  }
  return out;
}

function sizeOf(target) {
  const stat = lstatSync(target);
  if (!stat.isDirectory()) return stat.size;
  let total = 0;
  for (const entry of readdirSync(target)) total += sizeOf(path.join(target, entry));
  return total;
}

const before = sizeOf(nodeModules);
let removed = 0;
const visit = (modulesDir) => {
  for (const dir of packagesIn(modulesDir)) {
    // Workspace links (@linepack/*) go too: the bundle inlines them, and in the image they would dangle.
    if (!kept.has(dir)) {
      removed += 1;
      if (!dryRun) rmSync(dir, { recursive: true, force: true });
      continue;
    }
    visit(path.join(dir, 'node_modules'));
  }
};
visit(nodeModules);
/**
 * Files of a kept package that `require` never reads: type declarations, source maps (the service's own map is in
 * dist/, outside node_modules), and the ES-module builds (build/esm, build/esnext: the @opentelemetry layout) of a
 * package without an exports map whose main is elsewhere — the CommonJS bundle loads main.
 */
let strippedFiles = 0;
const declarationOrMap = /\.(d\.[cm]?ts|map)$/;
function strip(dir, packageDir) {
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) {
      if (entry.name === 'node_modules') continue;
      if (full === path.join(packageDir, 'build', 'esm') || full === path.join(packageDir, 'build', 'esnext')) {
        const manifest = JSON.parse(readFileSync(path.join(packageDir, 'package.json'), 'utf8'));
        const main = path.join(packageDir, manifest.main ?? 'index.js');
        if (manifest.exports === undefined && !main.startsWith(full + path.sep)) {
          strippedFiles += 1;
          if (!dryRun) rmSync(full, { recursive: true, force: true });
          continue;
        }
      }
      strip(full, packageDir);
    } else if (entry.isFile() && declarationOrMap.test(entry.name)) {
      strippedFiles += 1;
      if (!dryRun) rmSync(full, { force: true });
    }
  }
}
for (const dir of kept) strip(dir, dir);

// Scope folders emptied by the pruning, and npm's bookkeeping of a tree that no longer exists.
if (!dryRun) {
  for (const entry of readdirSync(nodeModules)) {
    const full = path.join(nodeModules, entry);
    if (entry.startsWith('@') && statSync(full).isDirectory() && readdirSync(full).length === 0) rmSync(full, { recursive: true });
    if (entry === '.bin' || entry === '.package-lock.json') rmSync(full, { recursive: true, force: true });
  }
}
const after = dryRun ? before : sizeOf(nodeModules);
const mb = (bytes) => (bytes / 1e6).toFixed(1);
console.log(
  `prune-node-modules: ${required.size} packages required by ${path.basename(path.dirname(path.dirname(path.resolve(bundle))))}'s bundle, ` +
    `${kept.size} kept, ${removed} removed, ${strippedFiles} declaration/map files and ES-module builds stripped${dryRun ? ' (dry run)' : ''}; node_modules ${mb(before)} MB -> ${mb(after)} MB`,
);
