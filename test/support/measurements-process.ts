import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { repoRoot } from '@linepack/lib/repo-root';
import { waitFor } from '@linepack/lib/testing/until';
import type { TestStack } from './stack';

/**
 * The stack's measurements subgraph moved into a process of its own on the same port (the gateway keeps calling it
 * there), so a test can kill it with SIGKILL as an orchestrator or the OOM killer would. Resolves once it is ready.
 */
export async function measurementsInOwnProcess(stack: TestStack): Promise<ChildProcess> {
  const { port } = stack.subgraphs.measurements;
  await stack.subgraphs.measurements.stop();
  const child = spawn(process.execPath, ['--import', 'tsx', path.join(repoRoot, 'subgraphs/measurements/src/main.ts')], {
    env: {
      ...process.env,
      PORT: String(port),
      HOST: '127.0.0.1',
      MONGODB_URI: process.env['MONGODB_URI']!,
      LINEPACK_DB_PREFIX: stack.dbPrefix,
      INTERNAL_TOKEN_PUBLIC_KEY: stack.internalKeys.publicKeyPem,
      LOG_LEVEL: 'silent',
      METRICS_PORT: '0',
    },
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/readyz`)).ok, 30_000, 'the measurements subgraph process');
  return child;
}

/** SIGKILL, resolved once the process is gone; nothing if it already is. */
export async function killProcess(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
