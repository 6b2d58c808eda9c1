import { availableParallelism } from 'node:os';
import { ConfigError, parseConfig } from '@linepack/lib/config';
import { generateInternalKeyPair } from '@linepack/lib/identity';
import { redisTargetOf } from '@linepack/lib/redis';
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
  ).toThrow('INTERNAL_TOKEN_PUBLIC_KEY: must hold one or more EC P-256 public keys in PEM');
});

describe('INTERNAL_TOKEN_PUBLIC_KEY is a key set (two keys during a rotation of the gateway key)', () => {
  const analytics = (value: string) =>
    parseConfig('analytics subgraph', subgraphConfigSchema({ defaultPort: 4003, ownsDatabase: false }), { INTERNAL_TOKEN_PUBLIC_KEY: value });
  const next = generateInternalKeyPair();

  it('accepts several concatenated PEM blocks, on one line with \\n escapes too', () => {
    expect(analytics(`${keys.publicKeyPem}${next.publicKeyPem}`).INTERNAL_TOKEN_PUBLIC_KEY).toContain(next.publicKeyPem.trim());
    expect(() => analytics(`${keys.publicKeyPem}\n${next.publicKeyPem}`.replace(/\n/g, '\\n'))).not.toThrow();
  });

  it.each([
    ['a second block that is a private key', () => `${keys.publicKeyPem}${next.privateKeyPem}`, 'must hold only PEM public key blocks'],
    [
      'a block that does not parse',
      () => `${keys.publicKeyPem}-----BEGIN PUBLIC KEY-----\nAAAA\n-----END PUBLIC KEY-----`,
      'key 2 of 2 is not a valid PEM public key',
    ],
    ['text between the keys', () => `${keys.publicKeyPem}old key follows\n${next.publicKeyPem}`, 'must hold only PEM public key blocks'],
    ['nine keys', () => Array.from({ length: 9 }, () => generateInternalKeyPair().publicKeyPem).join(''), 'holds 9 keys; at most 8'],
  ])('refuses %s, naming the variable and the rule (no key is silently ignored)', (_what, value, expected) => {
    expect(() => analytics(value())).toThrow(ConfigError);
    expect(() => analytics(value())).toThrow(`INTERNAL_TOKEN_PUBLIC_KEY: ${expected}`);
  });
});

it('reads SHUTDOWN_DRAIN_SECONDS (default 5, the chart preStop pause) and refuses a bad one', () => {
  expect(gatewayConfigFromEnv(gatewayEnv).shutdownDrainMs).toBe(5_000);
  expect(gatewayConfigFromEnv({ ...gatewayEnv, SHUTDOWN_DRAIN_SECONDS: '0' }).shutdownDrainMs).toBe(0);
  expect(() => gatewayConfigFromEnv({ ...gatewayEnv, SHUTDOWN_DRAIN_SECONDS: 'soon' })).toThrow('SHUTDOWN_DRAIN_SECONDS');
  expect(() => gatewayConfigFromEnv({ ...gatewayEnv, SHUTDOWN_DRAIN_SECONDS: '600' })).toThrow('SHUTDOWN_DRAIN_SECONDS');
});

describe('GATEWAY_WORKERS', () => {
  const withRedis = { ...gatewayEnv, REDIS_URL: 'redis://127.0.0.1:6379' };

  it.each(['0', 'abc', '-1', '1.5', '', '1025'])('refuses GATEWAY_WORKERS=%j, naming the setting and the rule', (setting) => {
    const read = () => gatewayConfigFromEnv({ ...withRedis, GATEWAY_WORKERS: setting });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow('GATEWAY_WORKERS: must be a positive integer (at most 1024) or "auto"');
  });

  it('refuses more than one worker without REDIS_URL, saying why', () => {
    const read = () => gatewayConfigFromEnv({ ...gatewayEnv, GATEWAY_WORKERS: '2' });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(/GATEWAY_WORKERS: 2 workers need REDIS_URL: .*each worker would count in its own memory .* 2× its tier's limits/);
    // "auto" is refused the same way where it means more than one…
    expect(() => gatewayConfigFromEnv({ ...gatewayEnv, GATEWAY_WORKERS: 'auto' }, 4)).toThrow(/"auto" is 4 workers, which need REDIS_URL/);
    // …and is fine where it means one.
    expect(gatewayConfigFromEnv({ ...gatewayEnv, GATEWAY_WORKERS: 'auto' }, 1).workers).toBe(1);
    expect(gatewayConfigFromEnv({ ...gatewayEnv, GATEWAY_WORKERS: '1' }).workers).toBe(1);
  });

  it('runs as many as asked, or one per available CPU for "auto"', () => {
    expect(gatewayConfigFromEnv({ ...withRedis, GATEWAY_WORKERS: '3' }).workers).toBe(3);
    expect(gatewayConfigFromEnv({ ...withRedis, GATEWAY_WORKERS: ' auto ' }, 6).workers).toBe(6);
  });

  it('defaults to one per available CPU in production (with Redis), and to one process otherwise', () => {
    expect(gatewayConfigFromEnv({ ...withRedis, NODE_ENV: 'production' }).workers).toBe(availableParallelism());
    expect(gatewayConfigFromEnv({ ...withRedis, NODE_ENV: 'production' }, 8).workers).toBe(8);
    // Development, tests and npm start: the single process, Redis or not.
    expect(gatewayConfigFromEnv({ ...withRedis }, 8).workers).toBe(1);
    expect(gatewayConfigFromEnv({ ...withRedis, NODE_ENV: 'development' }, 8).workers).toBe(1);
    expect(gatewayConfigFromEnv({ ...gatewayEnv }, 8).workers).toBe(1);
    // Production without Redis keeps the one process it always had rather than refusing to start (limits in memory).
    expect(gatewayConfigFromEnv({ ...gatewayEnv, NODE_ENV: 'production' }, 8).workers).toBe(1);
  });
});

describe('GATEWAY_DEDUPLICATE_QUERIES', () => {
  it('is on by default', () => {
    expect(gatewayConfigFromEnv(gatewayEnv).deduplicateInflightQueries).toBe(true);
  });

  it.each([
    ['false', false],
    ['0', false],
    ['off', false],
    ['No', false],
    ['true', true],
    ['TRUE', true],
    ['1', true],
    [' on ', true],
  ])('reads %j as %s', (setting, expected) => {
    expect(gatewayConfigFromEnv({ ...gatewayEnv, GATEWAY_DEDUPLICATE_QUERIES: setting }).deduplicateInflightQueries).toBe(expected);
  });

  it.each(['maybe', 'disabled', ''])('refuses %j rather than reading it as off', (setting) => {
    const read = () => gatewayConfigFromEnv({ ...gatewayEnv, GATEWAY_DEDUPLICATE_QUERIES: setting });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow('GATEWAY_DEDUPLICATE_QUERIES: must be true or false');
  });
});

describe('GATEWAY_REPLICAS: each gateway process’s share of the limits while Redis is away', () => {
  const withRedis = { ...gatewayEnv, REDIS_URL: 'redis://127.0.0.1:6379' };

  it('is one share by default, and replicas × workers when set', () => {
    expect(gatewayConfigFromEnv(gatewayEnv).inProcessLimitShares).toBe(1);
    expect(gatewayConfigFromEnv({ ...gatewayEnv, GATEWAY_REPLICAS: '3' }).inProcessLimitShares).toBe(3);
    // Every worker counts in its own memory too: 3 replicas of 4 workers are 12 counters.
    expect(gatewayConfigFromEnv({ ...withRedis, GATEWAY_REPLICAS: '3', GATEWAY_WORKERS: '4' }).inProcessLimitShares).toBe(12);
  });

  it.each(['0', '-2', '1.5', 'two', '', '10000'])('refuses GATEWAY_REPLICAS=%j, naming the setting and the rule', (setting) => {
    const read = () => gatewayConfigFromEnv({ ...gatewayEnv, GATEWAY_REPLICAS: setting });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow('GATEWAY_REPLICAS: must be a whole number from 1 to 9999');
  });
});

it('reads MAX_ACCESS_TOKEN_AGE_SECONDS with the auth service’s schema (lib/config.ts): the same bounds on both', () => {
  expect(gatewayConfigFromEnv(gatewayEnv).maxAccessTokenAgeSeconds).toBe(3_600);
  expect(() => gatewayConfigFromEnv({ ...gatewayEnv, MAX_ACCESS_TOKEN_AGE_SECONDS: '10' })).toThrow('MAX_ACCESS_TOKEN_AGE_SECONDS');
});

describe('Redis: one server, a cluster or Sentinels (lib/redis.ts)', () => {
  it('reads a cluster’s seed nodes and a Sentinel set-up with their user, password, TLS and replicas to wait for', () => {
    const cluster = gatewayConfigFromEnv({
      ...gatewayEnv,
      REDIS_CLUSTER_NODES: 'redis-0.redis:6379, [fd00::1]:7000',
      REDIS_USERNAME: 'linepack',
      REDIS_PASSWORD: 's3cret',
      REDIS_TLS: 'true',
      REDIS_WAIT_REPLICAS: '1',
    });
    expect(cluster.redisUrl).toEqual({
      clusterNodes: [
        { host: 'redis-0.redis', port: 6379 },
        { host: 'fd00::1', port: 7000 },
      ],
      username: 'linepack',
      password: 's3cret',
      tls: true,
      replicasToAcknowledge: 1,
    });
    // A cluster is a shared Redis: the workers count in it as they would in one server.
    expect(gatewayConfigFromEnv({ ...gatewayEnv, REDIS_CLUSTER_NODES: 'redis:6379', GATEWAY_WORKERS: '2' }).workers).toBe(2);
    const sentinel = parseConfig('compliance subgraph', subgraphConfigSchema({ defaultPort: 4004, ownsDatabase: true }), {
      INTERNAL_TOKEN_PUBLIC_KEY: keys.publicKeyPem,
      MONGODB_URI: 'mongodb://mongo',
      REDIS_SENTINELS: 'sentinel-0:26379,sentinel-1:26379',
      REDIS_SENTINEL_NAME: 'mymaster',
      REDIS_SENTINEL_PASSWORD: 'x',
    });
    expect(redisTargetOf('compliance subgraph', sentinel)).toEqual({
      sentinels: [
        { host: 'sentinel-0', port: 26379 },
        { host: 'sentinel-1', port: 26379 },
      ],
      sentinelName: 'mymaster',
      sentinelPassword: 'x',
    });
  });

  it.each([
    [
      { REDIS_URL: 'redis://r:6379', REDIS_CLUSTER_NODES: 'r:6379' },
      'REDIS_URL, REDIS_CLUSTER_NODES: set only one of REDIS_URL, REDIS_CLUSTER_NODES, REDIS_SENTINELS',
    ],
    [{ REDIS_SENTINELS: 's:26379' }, 'REDIS_SENTINEL_NAME: is required with REDIS_SENTINELS'],
    [{ REDIS_SENTINEL_NAME: 'mymaster' }, 'REDIS_SENTINELS: is required with REDIS_SENTINEL_NAME'],
    [{ REDIS_CLUSTER_NODES: 'redis-0' }, 'REDIS_CLUSTER_NODES: "redis-0" is not host:port'],
    [{ REDIS_CLUSTER_NODES: 'redis-0:70000' }, 'REDIS_CLUSTER_NODES: "redis-0:70000" is not host:port'],
    [{ REDIS_URL: 'redis://r:6379', REDIS_PASSWORD: 'p' }, 'REDIS_PASSWORD: for cluster or Sentinel mode only; REDIS_URL carries its own'],
    [{ REDIS_CLUSTER_NODES: 'r:6379', REDIS_TLS: 'maybe' }, 'REDIS_TLS: must be true or false'],
    [{ REDIS_CLUSTER_NODES: 'r:6379', REDIS_WAIT_REPLICAS: '17' }, 'REDIS_WAIT_REPLICAS'],
  ])('refuses %j at start-up, naming the variables and the rule', (override, expected) => {
    const read = () => gatewayConfigFromEnv({ ...gatewayEnv, ...override });
    expect(read).toThrow(ConfigError);
    expect(read).toThrow(expected);
  });
});
