import { ConfigError, parseConfig } from '@linepack/lib/config';
import { generateInternalKeyPair } from '@linepack/lib/identity';
import { subgraphConfigSchema } from '@linepack/lib/subgraph-config';
import { gatewayConfigFromEnv } from '@linepack/gateway/config';

/** Misconfiguration fails at start-up with a message naming the variable, not on the first request. */
const keys = generateInternalKeyPair();
const gatewayEnv = { AUTH_URL: 'http://127.0.0.1:4005', INTERNAL_TOKEN_PRIVATE_KEY: keys.privateKeyPem };

it('accepts a complete gateway configuration, with PEMs given as one line with \\n escapes', () => {
  const config = gatewayConfigFromEnv({ ...gatewayEnv, INTERNAL_TOKEN_PRIVATE_KEY: keys.privateKeyPem.replace(/\n/g, '\\n'), TRUST_PROXY: '1' });
  expect(config.port).toBe(4000);
  expect(config.trustProxy).toBe(1);
  expect(config.rateLimitWindows).toEqual({ minuteSeconds: 60, daySeconds: 86_400 });
});

it.each([
  [{ INTERNAL_TOKEN_PRIVATE_KEY: keys.publicKeyPem }, 'INTERNAL_TOKEN_PRIVATE_KEY: must be an EC P-256 private key'],
  [{ AUTH_URL: 'auth:4005' }, 'AUTH_URL'],
  [{ REDIS_URL: 'localhost:6379' }, 'REDIS_URL: must be a redis:// or rediss:// URL'],
  [{ PORT: 'eighty' }, 'PORT'],
])('names the bad gateway variable in %j', (override, expected) => {
  expect(() => gatewayConfigFromEnv({ ...gatewayEnv, ...override })).toThrow(ConfigError);
  expect(() => gatewayConfigFromEnv({ ...gatewayEnv, ...override })).toThrow(expected);
});

it('says a missing variable is required', () => {
  expect(() => gatewayConfigFromEnv({})).toThrow(/AUTH_URL: is required[\s\S]*INTERNAL_TOKEN_PRIVATE_KEY: is required/);
});

it('requires MONGODB_URI only of subgraphs that own a database', () => {
  const env = { INTERNAL_TOKEN_PUBLIC_KEY: keys.publicKeyPem };
  expect(() => parseConfig('assets subgraph', subgraphConfigSchema({ defaultPort: 4001, ownsDatabase: true }), env)).toThrow('MONGODB_URI: is required');
  expect(parseConfig('analytics subgraph', subgraphConfigSchema({ defaultPort: 4003, ownsDatabase: false }), env).PORT).toBe(4003);
  expect(() =>
    parseConfig('analytics subgraph', subgraphConfigSchema({ defaultPort: 4003, ownsDatabase: false }), { INTERNAL_TOKEN_PUBLIC_KEY: keys.privateKeyPem }),
  ).toThrow('INTERNAL_TOKEN_PUBLIC_KEY: must be an EC P-256 public key');
});
