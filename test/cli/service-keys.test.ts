/**
 * `linepack service-keys rotate`: the identity key's rotation as three env changes an operator applies in order
 * (README, Rotating keys). Each step's value is read by the services' own configuration parsers and checked against
 * tokens: step 1 trusts the key in use and the new one, step 2 signs with the new one, step 3 trusts only it.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { parseEnv } from 'node:util';
import { gatewayConfigFromEnv } from '@linepack/gateway/config';
import { parseConfig } from '@linepack/lib/config';
import { internalKeyId, InternalTokenVerifier, mintInternalToken, NO_TENANT, type Identity } from '@linepack/lib/identity';
import { repoRoot } from '@linepack/lib/repo-root';
import { subgraphConfigSchema } from '@linepack/lib/subgraph-config';
import { runProcess } from '../support/linepack-process';

const dir = mkdtempSync(path.join(os.tmpdir(), 'linepack-service-keys-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const cli = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runProcess([process.execPath, '--import', 'tsx', path.join(repoRoot, 'cli/linepack.ts'), ...args], { env: { ...process.env, ...env } });

const identity: Identity = { subject: 'gateway', kind: 'api_key', tenantId: NO_TENANT, scopes: [], requestId: 'r1' };
const trusts = (publicKeys: string, privateKey: string) => {
  try {
    new InternalTokenVerifier('assets', publicKeys).verify(mintInternalToken(identity, 'assets', privateKey));
    return true;
  } catch {
    return false;
  }
};

interface Rotation {
  oldKid: string;
  newKid: string;
  steps: { step: number; roll: string; env: Record<string, string> }[];
}

it('prints the three steps from an env file as service-keys wrote it; each step is valid where it goes and does what it says', async () => {
  const fresh = await cli(['service-keys']);
  expect(fresh.code).toBe(0);
  const file = path.join(dir, 'service-keys.env');
  writeFileSync(file, fresh.stdout);
  const inUse = parseEnv(fresh.stdout) as Record<string, string>;

  const text = await cli(['service-keys', 'rotate', '--env-file', file]);
  expect(text.code).toBe(0);
  expect(text.stdout.match(/^# Step \d/gm)).toEqual(['# Step 1', '# Step 2', '# Step 3']);

  const run = await cli(['service-keys', 'rotate', '--env-file', file, '--json']);
  expect(run.code).toBe(0);
  const rotation = JSON.parse(run.stdout) as Rotation;
  const [one, two, three] = rotation.steps;
  expect(rotation.oldKid).toBe(internalKeyId(inUse['INTERNAL_TOKEN_PRIVATE_KEY']!));
  expect([one!.roll, two!.roll, three!.roll]).toEqual(['subgraphs', 'gateway', 'subgraphs']);

  const subgraph = (value: string) =>
    parseConfig('assets subgraph', subgraphConfigSchema({ defaultPort: 4001, ownsDatabase: false }), { INTERNAL_TOKEN_PUBLIC_KEY: value })
      .INTERNAL_TOKEN_PUBLIC_KEY;
  const step1 = subgraph(one!.env['INTERNAL_TOKEN_PUBLIC_KEY']!);
  const step2 = gatewayConfigFromEnv({
    AUTH_URL: 'http://auth:4005',
    INTERNAL_TOKEN_PRIVATE_KEY: two!.env['INTERNAL_TOKEN_PRIVATE_KEY']!,
  }).internalTokenPrivateKey;
  const step3 = subgraph(three!.env['INTERNAL_TOKEN_PUBLIC_KEY']!);
  expect(internalKeyId(step2)).toBe(rotation.newKid);
  expect(new InternalTokenVerifier('assets', step1).keyIds.sort()).toEqual([rotation.oldKid, rotation.newKid].sort());
  // Step 1: the gateway in use and the new one are both trusted; step 3: only the new one.
  const oldPrivate = inUse['INTERNAL_TOKEN_PRIVATE_KEY']!;
  expect([trusts(step1, oldPrivate), trusts(step1, step2)]).toEqual([true, true]);
  expect([trusts(step3, oldPrivate), trusts(step3, step2)]).toEqual([false, true]);
});

it('reads the keys in use from the environment, and refuses what is not a rotation to start', async () => {
  const inUse = parseEnv((await cli(['service-keys'])).stdout) as Record<string, string>;
  const other = parseEnv((await cli(['service-keys'])).stdout) as Record<string, string>;
  const fromEnv = await cli(['service-keys', 'rotate', '--json'], inUse);
  expect(fromEnv.code).toBe(0);
  expect((JSON.parse(fromEnv.stdout) as Rotation).oldKid).toBe(internalKeyId(inUse['INTERNAL_TOKEN_PRIVATE_KEY']!));

  // Two keys trusted already: a rotation is under way.
  const midway = await cli(['service-keys', 'rotate'], {
    INTERNAL_TOKEN_PUBLIC_KEY: `${inUse['INTERNAL_TOKEN_PUBLIC_KEY']}\n${other['INTERNAL_TOKEN_PUBLIC_KEY']}`,
    INTERNAL_TOKEN_PRIVATE_KEY: '',
  });
  expect(midway.code).toBe(2);
  expect(midway.stderr).toContain('INTERNAL_TOKEN_PUBLIC_KEY holds 2 keys: a rotation is under way');
  // A private key that does not match: not the keys in use.
  const mismatched = await cli(['service-keys', 'rotate'], { ...inUse, INTERNAL_TOKEN_PRIVATE_KEY: other['INTERNAL_TOKEN_PRIVATE_KEY']! });
  expect(mismatched.code).toBe(2);
  expect(mismatched.stderr).toContain('INTERNAL_TOKEN_PRIVATE_KEY is not the key INTERNAL_TOKEN_PUBLIC_KEY trusts');
  const nothing = await cli(['service-keys', 'rotate'], { INTERNAL_TOKEN_PUBLIC_KEY: '', INTERNAL_TOKEN_PRIVATE_KEY: '' });
  expect(nothing.code).toBe(2);
  expect(nothing.stderr).toContain('service-keys rotate needs the current INTERNAL_TOKEN_PUBLIC_KEY');
}, 60_000);
