/**
 * Builds a contender the way the Dockerfile ships the gateway (scripts/build-package.mjs): esbuild bundles the
 * entry and the @linepack workspace packages it imports (TypeScript source) into one file; every other package stays
 * an external import, resolved from the repository's node_modules (the output directory links to it). The output goes
 * to the run's temporary directory, never into the source tree.
 */
import { symlink } from 'node:fs/promises';
import path from 'node:path';
import { build, type Plugin } from 'esbuild';
import { repoRoot } from '@linepack/lib/repo-root';

const packageName = (spec: string) => (spec.startsWith('@') ? spec.split('/').slice(0, 2).join('/') : spec.split('/')[0]!);

const externalizeRegistryPackages: Plugin = {
  name: 'externalize-registry-packages',
  setup(b) {
    b.onResolve({ filter: /^[^./]/ }, (args) => {
      if (args.path.startsWith('node:')) return { external: true };
      if (packageName(args.path).startsWith('@linepack/')) return undefined;
      return { external: true };
    });
  },
};

/** Makes `dir` resolve packages from the repository's node_modules (once per directory). */
export async function linkNodeModules(dir: string): Promise<void> {
  await symlink(path.join(repoRoot, 'node_modules'), path.join(dir, 'node_modules'), 'dir').catch((err: NodeJS.ErrnoException) => {
    if (err.code !== 'EEXIST') throw err;
  });
}

/** Bundles `entry` (relative to the repository) into `outfile`: CommonJS like the gateway image, or ESM (a Hive config). */
export async function bundle(entry: string, outfile: string, format: 'cjs' | 'esm' = 'cjs'): Promise<void> {
  await build({
    entryPoints: [path.join(repoRoot, entry)],
    outfile,
    bundle: true,
    platform: 'node',
    target: 'node20',
    format,
    sourcemap: true,
    logLevel: 'warning',
    plugins: [externalizeRegistryPackages],
  });
}
