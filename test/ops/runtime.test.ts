import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { repoRoot } from '@linepack/lib/repo-root';
import { processesWith, startLinepack } from '../support/linepack-process';

/** Node 20 reached end of life in April 2026: Linepack runs on Node 24 LTS, and says so on anything older. */
// eslint-disable-next-line @typescript-eslint/no-require-imports
const { nodeVersionProblem, REQUIRED_MAJOR } = require('../../scripts/check-node.cjs') as {
  nodeVersionProblem(version: string, execPath: string): string | null;
  REQUIRED_MAJOR: number;
};

it('runs (and CI runs) on Node 24 LTS, as package.json requires', () => {
  const manifest = JSON.parse(readFileSync(path.join(repoRoot, 'package.json'), 'utf8')) as { engines: { node: string }; scripts: Record<string, string> };
  expect(manifest.engines.node).toBe(`>=${REQUIRED_MAJOR}`);
  expect(Number(process.versions.node.split('.')[0])).toBeGreaterThanOrEqual(REQUIRED_MAJOR);
  // The check runs before anything that an older Node would fail on with an obscure error, as npm's prestart; start
  // execs tsx, so the SIGTERM npm forwards reaches the stack instead of a shell that dies and orphans it.
  expect(manifest.scripts['prestart']).toBe('node scripts/check-node.cjs');
  expect(manifest.scripts['start']).toBe('exec tsx scripts/start.ts');
});

it('npm start on an older Node stops at once and says what to install', () => {
  expect(nodeVersionProblem('24.0.0', '/x/node')).toBeNull();
  expect(nodeVersionProblem('26.1.0', '/x/node')).toBeNull();
  expect(nodeVersionProblem('22.12.0', '/x/node')).toContain('this is Node.js v22.12.0 (/x/node)');
  expect(nodeVersionProblem('20.19.0', '/x/node')).toContain('npm install -g node@24');
  // The Debian system Node on these machines (20), when present, really is refused.
  const systemNode = '/usr/bin/node';
  if (!existsSync(systemNode)) return;
  const version = spawnSync(systemNode, ['-p', 'process.versions.node'], { encoding: 'utf8' }).stdout.trim();
  const run = spawnSync(systemNode, [path.join(repoRoot, 'scripts/check-node.cjs')], { encoding: 'utf8' });
  if (Number(version.split('.')[0]) >= REQUIRED_MAJOR) {
    expect(run.status).toBe(0);
  } else {
    expect(run.status).toBe(1);
    expect(run.stderr).toContain(`Node.js 24 LTS or newer is required; this is Node.js v${version}`);
  }
});

it('npm start stops everything on SIGTERM to npm itself, as a supervisor sends it', async () => {
  const stateDir = mkdtempSync(path.join(os.tmpdir(), 'linepack-sigterm-'));
  const env = { ...process.env };
  delete env['MONGODB_URI'];
  delete env['REDIS_URL'];
  try {
    const npm = await startLinepack(['npm', 'start', '--silent', '--', '--ephemeral', '--state-dir', stateDir], { env });
    expect(processesWith(stateDir).length).toBeGreaterThan(0);
    npm.child.kill('SIGTERM');
    await npm.exited;
    // Nothing of the stack outlives npm: no service, no embedded MongoDB or Redis holding the state directory.
    const deadline = Date.now() + 5_000;
    while (processesWith(stateDir).length > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
    expect(processesWith(stateDir)).toEqual([]);
  } finally {
    for (const pid of processesWith(stateDir)) process.kill(pid, 'SIGKILL');
    rmSync(stateDir, { recursive: true, force: true });
  }
}, 120_000);
