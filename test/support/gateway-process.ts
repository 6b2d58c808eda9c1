import { spawn, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import { freePort } from '@linepack/lib/infra/free-port';
import { redisEnvOf, type RedisTarget } from '@linepack/lib/redis';
import { repoRoot } from '@linepack/lib/repo-root';
import type { TestStack } from './stack';
import { waitFor } from '@linepack/lib/testing/until';

/**
 * A second, separate gateway process (another replica) sharing the stack's subgraphs and the given Redis. `entry`: what
 * node runs (default the source, through tsx; a bundle as the image ships it).
 */
export async function startGatewayProcess(
  stack: TestStack,
  redis: RedisTarget | null,
  env: Record<string, string> = {},
  entry: string[] = ['--import', 'tsx', path.join(repoRoot, 'gateway/src/main.ts')],
): Promise<{ url: string; origin: string; process: ChildProcess }> {
  const port = await freePort();
  // The given Redis replaces the one the test run's environment names (REDIS_URL and the cluster or Sentinel settings
  // are exclusive); without one the gateway keeps the run's.
  const inherited = Object.entries(process.env as Record<string, string>).filter(([name]) => !redis || !name.startsWith('REDIS_'));
  const childEnv: Record<string, string> = {
    ...Object.fromEntries(inherited),
    PORT: String(port),
    HOST: '127.0.0.1',
    AUTH_URL: stack.authUrl,
    INTERNAL_TOKEN_PRIVATE_KEY: stack.internalKeys.privateKeyPem,
    ...(redis ? redisEnvOf(redis) : {}),
    CREDENTIAL_CACHE_TTL_SECONDS: '0',
    // Replicas on one machine: each its own free metrics port (the default, 9464, is one per host).
    METRICS_PORT: '0',
    LOG_LEVEL: 'silent',
    // Nothing balances load to a test's replica: stopped, it closes at once (requests in flight still finish).
    SHUTDOWN_DRAIN_SECONDS: '0',
    ...env,
  };
  for (const [name, service] of Object.entries(stack.subgraphs)) childEnv[`SUBGRAPH_URL_${name.toUpperCase()}`] = service.url;
  const child = spawn(process.execPath, entry, {
    env: childEnv,
    stdio: ['ignore', 'ignore', 'inherit'],
  });
  try {
    await waitFor(async () => (await fetch(`http://127.0.0.1:${port}/healthz`)).ok, 30_000, 'the second gateway');
  } catch (err) {
    // Not handed to the caller, so nobody else would stop it (and its stderr would hold the test run's output open).
    child.kill('SIGKILL');
    throw err;
  }
  return { url: `http://127.0.0.1:${port}/graphql`, origin: `http://127.0.0.1:${port}`, process: child };
}
