import type { DestinationStream } from 'pino';
import { defaultConsoleDir, type ConsoleMapTiles } from '@linepack/gateway/config';
import { productionWindows, type RateLimitWindows } from '@linepack/gateway/rate-limit';
import { startGateway } from '@linepack/gateway/server';
import { subgraphRegistry, supergraphPath, type SubgraphName } from '@linepack/schema/subgraphs';
import { defaultTokenLifetimes, startAuthSubgraph, type AuthServiceOptions } from '@linepack/subgraph-auth';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { generateInternalKeyPair, type InternalKeyPair } from '@linepack/lib/identity';
import { createLogger } from '@linepack/lib/logger';
import { DEFAULT_MAX_ACCESS_TOKEN_AGE_SECONDS } from '@linepack/lib/config';
import type { RunningService, SubgraphModule, SubgraphStartOptions } from '@linepack/lib/subgraph-types';
import type { RedisTarget } from '@linepack/lib/redis';

/**
 * Domain subgraphs are loaded by name from their packages (`@linepack/subgraph-<name>` exports
 * `subgraph`), so adding one to the registry is enough for the stack to run it. Auth is started
 * explicitly: it is the identity provider whose URL and keys the gateway is wired to.
 */
async function loadSubgraph(name: string): Promise<SubgraphModule> {
  const mod = (await import(`@linepack/subgraph-${name}`)) as { subgraph?: SubgraphModule };
  if (!mod.subgraph) throw new Error(`@linepack/subgraph-${name} does not export \`subgraph\``);
  return mod.subgraph;
}

export interface StackOptions {
  mongoUri: string;
  /** REDIS_URL, or a Redis Cluster or Sentinel target (lib/redis.ts). */
  redisUrl?: RedisTarget | undefined;
  dbPrefix: string;
  host?: string;
  /** 0 = a free port. */
  gatewayPort: number;
  /** 'default' uses the registry's ports (4001…); 'free' lets the OS choose (tests, ephemeral stacks). */
  subgraphPorts: 'default' | 'free';
  logLevel?: string;
  logDestination?: DestinationStream;
  credentialCacheTtlSeconds?: number;
  /** The gateway's CREDENTIAL_VERIFY_TIMEOUT_MS (default 5 s). */
  credentialVerifyTimeoutMs?: number;
  rateLimitWindows?: RateLimitWindows;
  internalKeys?: InternalKeyPair;
  /** Run the outbox relays (default: whenever redisUrl is set). */
  eventRelay?: boolean;
  monitorCommands?: boolean;
  /** The gateway's per-request deadline (default 30 s). */
  requestTimeoutMs?: number;
  /** Browser origins allowed to call the API (the gateway's CORS_ORIGINS); none by default. */
  corsOrigins?: string[];
  /** The built web console the gateway serves at / (default console/dist; null: none). */
  consoleDir?: string | null;
  /** Raster tiles under the console's map (the gateway's CONSOLE_MAP_TILE_URL); none by default. */
  consoleMapTiles?: ConsoleMapTiles | null;
  /** The gateway's GATEWAY_REPLICAS × workers: its share of each limit while Redis is away (default 1, the whole limit). */
  inProcessLimitShares?: number;
  /** The auth service's token signing key and lifetimes; a fresh key when not given. */
  auth?: Partial<AuthServiceOptions>;
}

export interface RunningStack {
  gatewayUrl: string;
  gatewayOrigin: string;
  authUrl: string;
  subgraphs: Record<SubgraphName, RunningService>;
  internalKeys: InternalKeyPair;
  stop(): Promise<void>;
}

/**
 * The whole system in one process: five subgraph HTTP servers and the gateway, talking over
 * real HTTP on loopback exactly as separate processes would. Used by `npm start` and the tests.
 */
export async function startStack(options: StackOptions): Promise<RunningStack> {
  const host = options.host ?? '127.0.0.1';
  const internalKeys = options.internalKeys ?? generateInternalKeyPair();
  const logLevel = options.logLevel ?? 'info';
  const started: RunningService[] = [];
  try {
    const subgraphs = {} as Record<SubgraphName, RunningService>;
    for (const { name, port: defaultPort } of subgraphRegistry) {
      const common: SubgraphStartOptions = {
        port: options.subgraphPorts === 'default' ? defaultPort : 0,
        host,
        mongoUri: options.mongoUri,
        dbPrefix: options.dbPrefix,
        internalTokenPublicKey: internalKeys.publicKeyPem,
        logger: createLogger(name, logLevel, options.logDestination),
        redisUrl: options.redisUrl,
        eventRelay: options.eventRelay ?? true,
        monitorCommands: options.monitorCommands ?? false,
      };
      const service =
        name === 'auth'
          ? await startAuthSubgraph({
              ...common,
              auth: {
                ...defaultTokenLifetimes,
                signingKeyPem: SigningKeys.generatePem(),
                verifyOnlyPublicKeyPems: [],
                ...options.auth,
              },
            })
          : await (await loadSubgraph(name)).start(common);
      started.push(service);
      subgraphs[name] = service;
    }
    const authUrl = `http://${host}:${subgraphs.auth.port}`;
    const gateway = await startGateway(
      {
        port: options.gatewayPort,
        host,
        authUrl,
        internalTokenPrivateKey: internalKeys.privateKeyPem,
        supergraphPath,
        credentialCacheTtlSeconds: options.credentialCacheTtlSeconds ?? 30,
        credentialVerifyTimeoutMs: options.credentialVerifyTimeoutMs,
        redisUrl: options.redisUrl,
        rateLimitWindows: options.rateLimitWindows ?? productionWindows,
        trustProxy: false,
        logLevel,
        requestTimeoutMs: options.requestTimeoutMs ?? 30_000,
        maxAccessTokenAgeSeconds: options.auth?.maxAccessTokenAgeSeconds ?? DEFAULT_MAX_ACCESS_TOKEN_AGE_SECONDS,
        inProcessLimitShares: options.inProcessLimitShares ?? 1,
        subgraphUrls: Object.fromEntries(Object.entries(subgraphs).map(([name, s]) => [name, s.url])),
        corsOrigins: options.corsOrigins ?? [],
        consoleDir: options.consoleDir === undefined ? defaultConsoleDir : options.consoleDir,
        consoleMapTiles: options.consoleMapTiles ?? null,
      },
      createLogger('gateway', logLevel, options.logDestination),
    );
    return {
      gatewayUrl: gateway.url,
      gatewayOrigin: gateway.origin,
      authUrl,
      subgraphs,
      internalKeys,
      async stop() {
        await gateway.stop();
        // Nothing calls a subgraph once the gateway has stopped: they stop side by side.
        await Promise.all(started.map((service) => service.stop()));
      },
    };
  } catch (err) {
    for (const service of started.reverse()) await service.stop().catch(() => undefined);
    throw err;
  }
}
