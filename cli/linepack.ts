/**
 * linepack — administration against the auth database (the same code paths as the GraphQL API).
 * Database: MONGODB_URI, or the running development system's <state-dir>/dev.json.
 */
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { parseArgs, parseEnv } from 'node:util';
import { ConfigError } from '@linepack/lib/config';
import { generateInternalKeyPair, internalKeyId, InternalKeySet } from '@linepack/lib/identity';
import { createLogger } from '@linepack/lib/logger';
import { createRedisClient, redisReady, redisTargetFromEnv, type RedisTarget } from '@linepack/lib/redis';
import { RevocationPublisher } from '@linepack/lib/revocations';
import type { SubgraphModule } from '@linepack/lib/subgraph-types';
import { subgraphNames } from '@linepack/schema/subgraphs';
import { connectMongo, databaseName } from '@linepack/lib/mongo';
import { repoRoot } from '@linepack/lib/repo-root';
import { parseScopeList, roles, type Role } from '@linepack/lib/scopes';
import type { ApiKeyDocument, Tier } from '@linepack/subgraph-auth/documents';
import { SigningKeys } from '@linepack/subgraph-auth/signing-keys';
import { SigningKeyRing } from '@linepack/subgraph-auth/signing-key-ring';
import { AuthStore, AuthStoreError } from '@linepack/subgraph-auth/store';
import { cliAudit } from '@linepack/subgraph-auth/audit';
import { gatewayCall, importListing } from '@linepack/lib/ili/client';
import { digCsvHeader, digCsvRow, type DigAssessment, type DigMeasurement, type DigRow } from '@linepack/lib/ili/dig-csv';
import { hhMmFromClockDeg } from '@linepack/lib/ili/listing';

const usage = `usage: linepack <command> [options]

  tenants create --name NAME --tier free|pro|enterprise [--json]
  tenants key-policy --tenant ID --default-days N --max-days M [--json]
                 how long the tenant's API keys live: N days when created without --expires-in-days
                 (default 365), at most M days (default 730)
  keys create    --tenant ID --scopes a,b [--tier free|pro|enterprise] [--name NAME] [--expires-in-days N] [--json]
  keys list      --tenant ID [--json]
  keys revoke    --tenant ID --id KEY_ID [--json]
  keys rotate-signing [--json]
                 a new token signing key, published in the JWKS now and signing about a minute later (once every
                 auth replica publishes it); the previous one signs until then and stays trusted until the tokens it
                 signed expire. Needs JWT_SIGNING_KEY (or the state dir's key)
  users create   --tenant ID --email EMAIL --role viewer|engineer|admin [--password-stdin] [--json]
                 the password is asked for (not echoed), or read from stdin with --password-stdin; never an argument
  users reset-password --tenant ID --email EMAIL [--json]
                 a one-time reset token (30 minutes) for POST /auth/password/reset; hand it to the user
  users remove   --tenant ID --email EMAIL [--json]
                 remove from the tenant: sessions end, the keys they made there are revoked
  users sign-out --email EMAIL [--json]
                 end every session of the user at once
  ili import FILE --asset ID --vendor V --tools MFL,CALIPER --run-date YYYY-MM-DD [--profile ID]
                 [--discovered-at YYYY-MM-DD] [--tool-tolerance PCT] [--url GATEWAY_URL] [--json]
                 import a vendor's ILI listing (.csv or .xlsx) as a new run of a pipeline or segment, through the
                 gateway with the API key in LINEPACK_API_KEY (never an argument); shows upload and import progress,
                 and every rejected row (row, column, rule) when the file is refused. --pipeline is --asset's alias
  digs list [--category C[,C…]] [--due-before DATE] [--pipeline ID] [--hca] [--include-repaired] [--csv] [--page-size N]
            [--url GATEWAY_URL] [--json]
                 the dig list across the tenant (every page), soonest repair due first: by response category
                 (IMMEDIATE, SIXTY_DAY, ONE_HUNDRED_EIGHTY_DAY, ONE_YEAR, TWO_YEAR; default all with a due date),
                 due before DATE, on a pipeline and its segments, in an HCA; --csv writes CSV to stdout; read N a request
                 (default 100, at most 500)
  digs sheet MEASUREMENT_ID [--csv] [--url GATEWAY_URL] [--json]
                 one anomaly's dig sheet: where to dig (joint, girth welds and markers either side), its dimensions,
                 category, rule and due date. digs commands use LINEPACK_API_KEY (analytics:read, measurements:read,
                 assets:read)
  service-keys   print fresh service keys as env lines (identity-token key pair, JWT signing key) for docker compose
  service-keys rotate [--env-file FILE] [--json]
                 a new identity-token key pair and the three steps of its rotation without downtime, as env lines:
                 subgraphs trust old + new, gateways sign with new, subgraphs trust new only. The keys in use are read
                 from FILE (as service-keys writes it) or the environment (INTERNAL_TOKEN_PUBLIC_KEY, and
                 INTERNAL_TOKEN_PRIVATE_KEY when set, checked to match)
  <subgraph> rebuild (--tenant ID | --all-tenants) [--json]
                 drop a subgraph's event projections (analytics, compliance) and replay the domain event streams

Redis (rebuild; revocations reach the gateways at once): REDIS_URL, or REDIS_CLUSTER_NODES, or REDIS_SENTINELS with
REDIS_SENTINEL_NAME (as the services read them), else redisUrl from dev.json.

Database: MONGODB_URI, else mongodbUri from $LINEPACK_STATE_DIR/dev.json (default .linepack/dev.json,
written by npm start). Database names use LINEPACK_DB_PREFIX (default linepack).`;

class UsageError extends Error {}

/** The variables of an env file (dotenv syntax, as `service-keys` writes it), read by Node's own parser. */
function envFile(file: string): Record<string, string> {
  if (!existsSync(file)) throw new UsageError(`no such env file: ${file}`);
  return parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
}

/** The gateway of the running development system (dev.json), else the default port. */
function devGatewayUrl(): string {
  return (devState() as { gatewayUrl?: string }).gatewayUrl ?? 'http://localhost:4000/graphql';
}

/** A one-line progress bar on stderr, redrawn in place: the upload's bytes, then the import's rows. */
function progressBar() {
  return (p: { stage: string; done: number; total: number | null; phase: string }) => {
    const width = 30;
    const share = p.total ? Math.min(1, p.done / p.total) : 0;
    const bar = '#'.repeat(Math.round(share * width)).padEnd(width, '.');
    const amount =
      p.stage === 'uploading'
        ? `${(p.done / 1048576).toFixed(1)}/${((p.total ?? 0) / 1048576).toFixed(1)} MiB`
        : `${p.done}${p.total ? `/${p.total}` : ''} rows`;
    process.stderr.write(`\r${p.phase.padEnd(14)} [${bar}] ${p.total ? `${Math.round(share * 100)}%`.padStart(4) : '    '} ${amount}   `);
  };
}

/**
 * GraphQL through the gateway with LINEPACK_API_KEY (never an argument); errors become the command's error. The
 * dig commands read three subgraphs in one federated query, as the console and MCP do.
 */
function gatewayClient(url: string | undefined) {
  const apiKey = process.env['LINEPACK_API_KEY'];
  if (!apiKey)
    throw new UsageError('set LINEPACK_API_KEY to an API key with analytics:read, measurements:read and assets:read (a key is never a command-line argument)');
  const gatewayUrl = url ?? process.env['LINEPACK_URL'] ?? devGatewayUrl();
  return <T>(query: string, variables: Record<string, unknown>): Promise<T> => gatewayCall<T>(gatewayUrl, apiKey, query, variables);
}

/** A date (midnight UTC) or an ISO instant, as the API's DateTime. */
function instantOf(text: string, flag: string): string {
  const value = /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text;
  if (Number.isNaN(Date.parse(value))) throw new UsageError(`${flag} must be a date (YYYY-MM-DD) or an ISO 8601 instant (got ${text})`);
  return new Date(value).toISOString();
}

/** The dig sheet's fields (issue 25's contract), shared by the list and the sheet so both export the same columns. */
const DIG_MEASUREMENT_FIELDS = `id type observedAt odometerM clockDeg depthPctWt lengthMm widthMm featureType runId asset { id name }
  iliLocation { runId jointNumber distanceFromUpstreamWeldM logDistanceM clockDeg
    upstreamWeld { jointNumber logDistanceM distanceM } downstreamWeld { jointNumber logDistanceM distanceM }
    upstreamMarker { name kind logDistanceM distanceM } downstreamMarker { name kind logDistanceM distanceM } }`;
const DIG_ASSESSMENT_FIELDS = 'responseCategory ruleRef discoveredAt repairDueAt status overdue depthSource';
// 100 a page by default: each row reaches three subgraphs, and the gateway prices a page by its size.
const DIG_LIST_QUERY = `query($filter: DigListFilter, $first: Int, $after: String) { digList(filter: $filter, first: $first, after: $after) {
  pageInfo { hasNextPage endCursor } edges { node { ${DIG_ASSESSMENT_FIELDS} measurement { ${DIG_MEASUREMENT_FIELDS} } } } } }`;
const DIG_SHEET_QUERY = `query($id: ID!) { measurement(id: $id) { ${DIG_MEASUREMENT_FIELDS} assessment { ${DIG_ASSESSMENT_FIELDS} } } }`;

interface DigListPage {
  pageInfo: { hasNextPage: boolean; endCursor: string | null };
  edges: { node: DigAssessment & { measurement: DigMeasurement } }[];
}

const day = (iso: string | null | undefined) => (iso ? iso.slice(0, 10) : '—');
const m = (metres: number | null | undefined) => (metres == null ? '—' : `${metres.toFixed(3)} m`);

function digListLine({ measurement: ml, assessment: a }: DigRow): string {
  const where =
    ml.iliLocation?.jointNumber != null ? `joint ${ml.iliLocation.jointNumber} + ${m(ml.iliLocation.distanceFromUpstreamWeldM)}` : `log ${m(ml.odometerM)}`;
  return [
    day(a?.repairDueAt),
    (a?.responseCategory ?? '—').padEnd(22),
    a?.overdue ? 'OVERDUE' : '       ',
    (ml.asset?.name ?? ml.asset?.id ?? '').padEnd(24),
    `${ml.featureType ?? ''} ${ml.depthPctWt == null ? '' : `${ml.depthPctWt} % wt`}`.padEnd(20),
    where.padEnd(24),
    ml.id,
  ].join('  ');
}

/** The dig sheet as a crew reads it: where to dig first, then what they will find and how urgent it is. */
function digSheetText({ measurement: ml, assessment: a }: DigRow): string {
  const loc = ml.iliLocation;
  const marker = (mk: NonNullable<typeof loc>['upstreamMarker'], side: string) =>
    mk ? `${mk.name ?? '(unnamed)'} (${mk.kind}), ${m(mk.distanceM)} ${side} (log ${m(mk.logDistanceM)})` : 'none in the run';
  const weld = (w: NonNullable<typeof loc>['upstreamWeld'], side: string) =>
    w ? `girth weld ${w.jointNumber ?? '(unnumbered)'}, ${m(w.distanceM)} ${side} (log ${m(w.logDistanceM)})` : 'none in the run';
  const clock = ml.clockDeg == null ? '—' : `${hhMmFromClockDeg(ml.clockDeg)} (${ml.clockDeg}°)`;
  const lines: [string, string][] = [
    ['Anomaly', ml.id],
    ['Asset', ml.asset ? `${ml.asset.name ?? ''} (${ml.asset.id})` : '—'],
    ['Feature', `${ml.featureType ?? ml.type ?? '—'}, observed ${day(ml.observedAt)}`],
    ['Run', loc?.runId ?? ml.runId ?? '—'],
    ['Log distance', m(loc?.logDistanceM ?? ml.odometerM)],
    ['Joint', loc ? (loc.jointNumber == null ? 'before the first girth weld' : String(loc.jointNumber)) : '—'],
    ['From upstream weld', m(loc?.distanceFromUpstreamWeldM)],
    ['Upstream weld', loc ? weld(loc.upstreamWeld, 'upstream') : '—'],
    ['Downstream weld', loc ? weld(loc.downstreamWeld, 'downstream') : '—'],
    ['Upstream marker', loc ? marker(loc.upstreamMarker, 'upstream') : '—'],
    ['Downstream marker', loc ? marker(loc.downstreamMarker, 'downstream') : '—'],
    ['Clock', clock],
    ['Depth', ml.depthPctWt == null ? '—' : `${ml.depthPctWt} % of wall`],
    ['Length × width', `${ml.lengthMm ?? '—'} mm × ${ml.widthMm ?? '—'} mm`],
    ['Response', a?.responseCategory ?? 'not assessed'],
    ['Rule', a?.ruleRef ?? '—'],
    ['Discovered', day(a?.discoveredAt)],
    ['Repair due', `${day(a?.repairDueAt)}${a?.overdue ? ' (OVERDUE)' : ''}`],
    ['Status', `${a?.status ?? '—'}${a?.depthSource ? `, depth from ${a.depthSource === 'FIELD' ? 'the field result' : 'the tool'}` : ''}`],
  ];
  return ['DIG SHEET', ...lines.map(([label, value]) => `  ${label.padEnd(19)} ${value}`)].join('\n');
}

function devState(): { mongodbUri?: string; redisUrl?: string } {
  const devJson = path.join(path.resolve(process.env['LINEPACK_STATE_DIR'] ?? path.join(repoRoot, '.linepack')), 'dev.json');
  return existsSync(devJson) ? (JSON.parse(readFileSync(devJson, 'utf8')) as { mongodbUri?: string; redisUrl?: string }) : {};
}

/** A file of the state dir (`LINEPACK_STATE_DIR`, default .linepack), or null. */
function stateFile(name: string): string | null {
  const file = path.join(path.resolve(process.env['LINEPACK_STATE_DIR'] ?? path.join(repoRoot, '.linepack')), name);
  return existsSync(file) ? readFileSync(file, 'utf8') : null;
}

function mongoUri(): string {
  const uri = process.env['MONGODB_URI'] ?? devState().mongodbUri;
  if (uri) return uri;
  throw new UsageError('no database: set MONGODB_URI, or start Linepack with `npm start` (it writes .linepack/dev.json)');
}

/** REDIS_URL, REDIS_CLUSTER_NODES or REDIS_SENTINELS (+ REDIS_SENTINEL_NAME) as the services read them, else dev.json's. */
function redisTarget(): RedisTarget | undefined {
  return redisTargetFromEnv('linepack', process.env) ?? devState().redisUrl;
}

function requiredRedis(): RedisTarget {
  const target = redisTarget();
  if (target) return target;
  throw new UsageError(
    'no Redis: set REDIS_URL (or REDIS_CLUSTER_NODES, or REDIS_SENTINELS and REDIS_SENTINEL_NAME), or start Linepack with `npm start` (it writes .linepack/dev.json)',
  );
}

const dbPrefix = () => process.env['LINEPACK_DB_PREFIX'] ?? 'linepack';

async function rebuild(name: string, tenantId: string | null): Promise<{ events: number }> {
  const mod = (await import(`@linepack/subgraph-${name}`)) as { subgraph?: SubgraphModule };
  if (!mod.subgraph?.rebuild) throw new UsageError(`the ${name} subgraph has no event projections to rebuild`);
  const logger = createLogger('cli', process.env['LOG_LEVEL'] ?? 'warn');
  const target = requiredRedis();
  const client = await connectMongo(mongoUri(), { serverSelectionTimeoutMS: 5_000 });
  const redis = createRedisClient(target, logger);
  try {
    // The client fails fast rather than queueing (lib/redis.ts): a replay that starts before it has connected fails.
    await redisReady(redis, 10_000);
    return await mod.subgraph.rebuild({ db: client.db(databaseName(dbPrefix(), name)), dbPrefix: dbPrefix(), redis, tenantId, logger });
  } finally {
    redis.disconnect();
    await client.close();
  }
}

function required(values: Record<string, unknown>, name: string): string {
  const v = values[name];
  if (typeof v !== 'string' || v.length === 0) throw new UsageError(`--${name} is required`);
  return v;
}

function tierOf(raw: string): Tier {
  const tier = raw.toUpperCase();
  if (tier !== 'FREE' && tier !== 'PRO' && tier !== 'ENTERPRISE') throw new UsageError(`--tier must be free, pro or enterprise (got ${raw})`);
  return tier;
}

function roleOf(raw: string): Role {
  const role = raw.toUpperCase() as Role;
  if (!roles.includes(role)) throw new UsageError(`--role must be one of ${roles.map((r) => r.toLowerCase()).join(', ')} (got ${raw})`);
  return role;
}

function keyView(key: ApiKeyDocument) {
  return {
    id: key._id,
    name: key.name,
    prefix: key.prefix,
    tenantId: key.tenantId,
    scopes: key.scopes,
    tier: key.tier.toLowerCase(),
    expiresAt: key.expiresAt?.toISOString() ?? null,
    lastUsedAt: key.lastUsedAt?.toISOString() ?? null,
    revokedAt: key.revokedAt?.toISOString() ?? null,
  };
}

/** Asks for a secret on the terminal without echoing it. */
async function promptHidden(question: string): Promise<string> {
  if (!process.stdin.isTTY) throw new UsageError('no terminal to ask for the password on: pass it on stdin with --password-stdin');
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  const muted = rl as unknown as { _writeToOutput: (s: string) => void };
  let asked = false;
  muted._writeToOutput = (s: string) => {
    if (!asked) process.stderr.write(s);
    asked = true;
  };
  try {
    return await new Promise<string>((resolve) => rl.question(question, resolve));
  } finally {
    rl.close();
    process.stderr.write('\n');
  }
}

async function userByEmail(store: AuthStore, tenantId: string, email: string) {
  const user = await store.users.findOne({ email: email.trim().toLowerCase(), 'memberships.tenantId': tenantId });
  if (!user) throw new UsageError(`no user ${email} in tenant ${tenantId}`);
  return user;
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks)
    .toString('utf8')
    .replace(/\r?\n$/, '');
}

async function withStore<T>(work: (store: AuthStore) => Promise<T>): Promise<T> {
  // With Redis known, a key revoked here stops working at every gateway at once, as through the API.
  const target = redisTarget();
  const client = await connectMongo(mongoUri(), { serverSelectionTimeoutMS: 5_000 });
  const logger = createLogger('cli', process.env['LOG_LEVEL'] ?? 'warn');
  const redis = target ? createRedisClient(target, logger, { commandTimeoutMs: 2_000 }) : null;
  try {
    if (redis) await redisReady(redis);
    const store = new AuthStore(client.db(databaseName(dbPrefix(), 'auth')), new RevocationPublisher(redis, 3_660, logger));
    await store.ensureIndexes();
    return await work(store);
  } finally {
    redis?.disconnect();
    await client.close();
  }
}

async function run(argv: string[]): Promise<void> {
  const [group, action] = argv;
  if (group === '--help' || group === '-h' || group === 'help') {
    console.log(usage);
    return;
  }
  const { values } = parseArgs({
    args: argv.slice(group === 'service-keys' && action !== 'rotate' ? 1 : 2),
    options: {
      name: { type: 'string' },
      tier: { type: 'string' },
      tenant: { type: 'string' },
      scopes: { type: 'string' },
      'expires-in-days': { type: 'string' },
      'default-days': { type: 'string' },
      'max-days': { type: 'string' },
      id: { type: 'string' },
      email: { type: 'string' },
      password: { type: 'string' },
      'password-stdin': { type: 'boolean' },
      role: { type: 'string' },
      json: { type: 'boolean', default: false },
      'all-tenants': { type: 'boolean', default: false },
      asset: { type: 'string' },
      pipeline: { type: 'string' },
      profile: { type: 'string' },
      vendor: { type: 'string' },
      tools: { type: 'string' },
      'run-date': { type: 'string' },
      'discovered-at': { type: 'string' },
      'tool-tolerance': { type: 'string' },
      url: { type: 'string' },
      category: { type: 'string', multiple: true },
      'due-before': { type: 'string' },
      hca: { type: 'boolean' },
      'include-repaired': { type: 'boolean', default: false },
      csv: { type: 'boolean', default: false },
      'page-size': { type: 'string' },
      'env-file': { type: 'string' },
    },
    allowPositionals: group === 'ili' || group === 'digs',
  });
  const json = values.json ?? false;
  const print = (object: unknown, text: string) => console.log(json ? JSON.stringify(object) : text);

  switch (`${group ?? ''} ${action ?? ''}`.trim()) {
    case 'tenants create': {
      const tenant = await withStore((s) => s.createTenant({ name: required(values, 'name'), tier: tierOf(required(values, 'tier')) }));
      print(
        { id: tenant._id, name: tenant.name, tier: tenant.tier.toLowerCase() },
        `created tenant ${tenant.name}\n  id    ${tenant._id}\n  tier  ${tenant.tier.toLowerCase()}`,
      );
      return;
    }
    case 'tenants key-policy': {
      const days = (flag: 'default-days' | 'max-days') => {
        const value = required(values, flag);
        if (!/^\d+$/.test(value)) throw new UsageError(`--${flag} must be a whole number of days`);
        return Number(value);
      };
      const tenant = await withStore((s) => s.setKeyExpiryPolicy(required(values, 'tenant'), { defaultDays: days('default-days'), maxDays: days('max-days') }));
      print(
        { id: tenant._id, apiKeyDefaultExpiryDays: tenant.apiKeyDefaultExpiryDays, apiKeyMaxExpiryDays: tenant.apiKeyMaxExpiryDays },
        `tenant ${tenant.name}: new API keys expire after ${tenant.apiKeyDefaultExpiryDays} days unless given another expiry, at most ${tenant.apiKeyMaxExpiryDays}`,
      );
      return;
    }
    case 'keys create': {
      const days = values['expires-in-days'];
      if (days !== undefined && !/^\d+$/.test(days)) throw new UsageError('--expires-in-days must be a whole number of days');
      const { apiKey, secret } = await withStore((s) =>
        s.createApiKey({
          tenantId: required(values, 'tenant'),
          name: values.name ?? 'cli key',
          scopes: parseScopeList(required(values, 'scopes')),
          tier: tierOf(values.tier ?? 'free'),
          expiresInDays: days !== undefined ? Number(days) : null,
        }),
      );
      print(
        { ...keyView(apiKey), apiKey: secret },
        `created API key ${apiKey.prefix}… (${apiKey.scopes.join(' ')}, ${apiKey.tier.toLowerCase()})\n  id   ${apiKey._id}\n  key  ${secret}\nStore the key now: it is shown only once.`,
      );
      return;
    }
    case 'keys list': {
      const keys = await withStore((s) => s.listApiKeys(required(values, 'tenant')));
      print(
        keys.map(keyView),
        keys.map((k) => `${k.prefix}…  ${k._id}  ${k.tier.toLowerCase()}  ${k.revokedAt ? 'revoked' : 'active'}  ${k.scopes.join(' ')}`).join('\n') ||
          'no keys',
      );
      return;
    }
    case 'keys revoke': {
      const key = await withStore((s) => s.revokeApiKey(required(values, 'tenant'), required(values, 'id')));
      print(keyView(key), `revoked ${key.prefix}… (${key._id})`);
      return;
    }
    case 'users create': {
      if (values.password !== undefined) {
        throw new UsageError(
          '--password is not accepted: a password on the command line is visible to every user of this machine; use --password-stdin or answer the prompt',
        );
      }
      const password = values['password-stdin'] ? await readStdin() : await promptHidden(`password for ${required(values, 'email')}: `);
      const user = await withStore((s) =>
        s.createUser({ tenantId: required(values, 'tenant'), email: required(values, 'email'), password, role: roleOf(required(values, 'role')) }),
      );
      print(
        { id: user._id, email: user.email, memberships: user.memberships },
        `user ${user.email} (${user._id}) is ${user.memberships.map((m) => `${m.role.toLowerCase()} in ${m.tenantId}`).join(', ')}`,
      );
      return;
    }
    case 'keys rotate-signing': {
      const rootPem = process.env['JWT_SIGNING_KEY']?.replace(/\\n/g, '\n') ?? stateFile('jwt-signing-key.pem');
      if (!rootPem) throw new UsageError("no signing key: set JWT_SIGNING_KEY (the auth service's), or run against a state dir with jwt-signing-key.pem");
      const client = await connectMongo(mongoUri(), { serverSelectionTimeoutMS: 5_000 });
      try {
        const rotated = await SigningKeyRing.rotate(client.db(databaseName(dbPrefix(), 'auth')), rootPem);
        print(
          rotated ? { kid: rotated.kid, signsFrom: rotated.signsFrom.toISOString() } : { kid: null },
          rotated
            ? `signing key ${rotated.kid} is published now (every auth replica within 30 s) and signs from ${rotated.signsFrom.toISOString()}, once every gateway can find it`
            : 'another rotation happened at the same moment; nothing to do',
        );
      } finally {
        await client.close();
      }
      return;
    }
    case 'users reset-password': {
      const tenantId = required(values, 'tenant');
      const reset = await withStore(async (s) => s.issuePasswordReset(tenantId, (await userByEmail(s, tenantId, required(values, 'email')))._id, cliAudit));
      print(
        { userId: reset.user._id, email: reset.user.email, token: reset.token, expiresAt: reset.expiresAt.toISOString() },
        `reset token for ${reset.user.email} (valid until ${reset.expiresAt.toISOString()}, once):\n  ${reset.token}\nThey set a new password with POST /auth/password/reset {"reset_token": "…", "new_password": "…"}.`,
      );
      return;
    }
    case 'users remove': {
      const tenantId = required(values, 'tenant');
      const user = await withStore(async (s) => s.removeMember(tenantId, (await userByEmail(s, tenantId, required(values, 'email')))._id, cliAudit));
      print(
        { id: user._id, email: user.email, removedFrom: tenantId },
        `removed ${user.email} from ${tenantId}; their sessions ended and the keys they made there are revoked`,
      );
      return;
    }
    case 'users sign-out': {
      const email = required(values, 'email').trim().toLowerCase();
      const ended = await withStore(async (s) => {
        const user = await s.users.findOne({ email });
        if (!user) throw new UsageError(`no user ${email}`);
        return s.signOutEverywhere(user, cliAudit);
      });
      print({ email, sessionsEnded: ended }, `${email}: ${ended} session${ended === 1 ? '' : 's'} ended`);
      return;
    }
    case 'ili import': {
      const file = argv[2];
      if (!file || file.startsWith('--')) throw new UsageError('ili import needs the listing file: ili import FILE --asset ID …');
      const apiKey = process.env['LINEPACK_API_KEY'];
      if (!apiKey) throw new UsageError('set LINEPACK_API_KEY to an API key with measurements:write (a key is never a command-line argument)');
      const assetId = values.asset ?? values.pipeline;
      if (!assetId) throw new UsageError('ili import needs --asset ID (or --pipeline ID)');
      const date = (text: string | undefined) => (text === undefined ? undefined : /^\d{4}-\d{2}-\d{2}$/.test(text) ? `${text}T00:00:00Z` : text);
      const result = await importListing({
        gatewayUrl: values.url ?? process.env['LINEPACK_URL'] ?? devGatewayUrl(),
        apiKey,
        file,
        assetId,
        profileId: values.profile ?? null,
        run: {
          vendor: required(values, 'vendor'),
          toolTechnologies: required(values, 'tools')
            .split(',')
            .map((t) => t.trim().toUpperCase()),
          runDate: date(required(values, 'run-date'))!,
          discoveredAt: date(values['discovered-at']) ?? null,
          toolTolerancePctWt: values['tool-tolerance'] === undefined ? null : Number(values['tool-tolerance']),
        },
        onProgress: json || !process.stderr.isTTY ? undefined : progressBar(),
      });
      if (!json && process.stderr.isTTY) process.stderr.write('\n');
      const c = result.counts;
      print(
        result,
        result.state === 'SUCCEEDED'
          ? `imported run ${result.run.id}: ${c.rows} rows, ${c.features} features, ${c.tallyItems} tally items (import ${result.id})`
          : [
              `import ${result.id} failed: ${result.failure}`,
              ...result.errors.map((e) => `  row ${e.rowNumber}${e.column ? `, ${e.column}` : ''}: ${e.rule}${e.value ? ` (${e.value})` : ''}`),
              ...(result.errorCount > result.errors.length ? [`  … and ${result.errorCount - result.errors.length} more`] : []),
            ].join('\n'),
      );
      if (result.state !== 'SUCCEEDED') process.exitCode = 1;
      return;
    }
    case 'digs list': {
      const gateway = gatewayClient(values.url);
      const categories = (values.category ?? [])
        .flatMap((c) => c.split(','))
        .map((c) => c.trim().toUpperCase())
        .filter(Boolean);
      const filter = {
        ...(categories.length > 0 ? { responseCategories: categories } : {}),
        ...(values['due-before'] ? { dueBefore: instantOf(values['due-before'], '--due-before') } : {}),
        ...(values.pipeline ? { pipelineId: values.pipeline } : {}),
        ...(values.hca ? { inHca: true } : {}),
        includeRepaired: values['include-repaired'] ?? false,
      };
      const first = Number(values['page-size'] ?? 100);
      if (!Number.isInteger(first) || first < 1 || first > 500) throw new UsageError('--page-size must be a whole number from 1 to 500');
      const rows: DigRow[] = [];
      if (values.csv) process.stdout.write(digCsvHeader());
      // Every page until the list ends: a dig list is exported whole, not its first page.
      for (let after: string | null = null; ;) {
        const page: DigListPage = (await gateway<{ digList: DigListPage }>(DIG_LIST_QUERY, { filter, first, after })).digList;
        for (const { node } of page.edges) {
          const { measurement, ...assessment } = node;
          const row = { measurement, assessment };
          if (values.csv) process.stdout.write(digCsvRow(row));
          else rows.push(row);
        }
        if (!page.pageInfo.hasNextPage || !page.pageInfo.endCursor) break;
        after = page.pageInfo.endCursor;
      }
      if (values.csv) return;
      print(rows, rows.length === 0 ? 'the dig list is empty' : rows.map(digListLine).join('\n'));
      return;
    }
    case 'digs sheet': {
      const id = argv[2];
      if (!id || id.startsWith('--')) throw new UsageError('digs sheet needs the anomaly: digs sheet MEASUREMENT_ID');
      const { measurement } = await gatewayClient(values.url)<{ measurement: (DigMeasurement & { assessment: DigAssessment | null }) | null }>(
        DIG_SHEET_QUERY,
        { id },
      );
      if (!measurement) throw new UsageError(`no measurement ${id} in your tenant`);
      const { assessment, ...rest } = measurement;
      const row: DigRow = { measurement: rest, assessment };
      if (values.csv) process.stdout.write(digCsvHeader() + digCsvRow(row));
      else print(measurement, digSheetText(row));
      return;
    }
    case 'service-keys rotate': {
      // The keys in use: an env file as `service-keys` writes it, or this process's environment.
      const current = values['env-file'] ? envFile(values['env-file']) : process.env;
      const publicKeys = current['INTERNAL_TOKEN_PUBLIC_KEY'];
      if (!publicKeys) throw new UsageError('service-keys rotate needs the current INTERNAL_TOKEN_PUBLIC_KEY: --env-file FILE, or in the environment');
      let trusted: InternalKeySet;
      try {
        trusted = new InternalKeySet(publicKeys);
      } catch (err) {
        throw new UsageError(`INTERNAL_TOKEN_PUBLIC_KEY ${(err as Error).message}`);
      }
      if (trusted.kids.length > 1) {
        throw new UsageError(
          `INTERNAL_TOKEN_PUBLIC_KEY holds ${trusted.kids.length} keys: a rotation is under way; finish it (step 3: the subgraphs keep only the key the gateways sign with) first`,
        );
      }
      const privateKey = current['INTERNAL_TOKEN_PRIVATE_KEY'];
      if (privateKey && !trusted.kids.includes(internalKeyId(privateKey.replace(/\\n/g, '\n')))) {
        throw new UsageError('INTERNAL_TOKEN_PRIVATE_KEY is not the key INTERNAL_TOKEN_PUBLIC_KEY trusts: these are not the keys in use');
      }
      const next = generateInternalKeyPair();
      const oldPublic = publicKeys.replace(/\\n/g, '\n').trim();
      const steps = [
        {
          step: 1,
          roll: 'subgraphs',
          what: 'every subgraph trusts the old and the new key',
          env: { INTERNAL_TOKEN_PUBLIC_KEY: `${oldPublic}\n${next.publicKeyPem.trim()}` },
        },
        {
          step: 2,
          roll: 'gateway',
          what: "once every subgraph runs step 1 (every gateway's /readyz stays 200), the gateways sign with the new key",
          env: { INTERNAL_TOKEN_PRIVATE_KEY: next.privateKeyPem.trim() },
        },
        {
          step: 3,
          roll: 'subgraphs',
          what: 'once no gateway signs with the old key (the gateway rollout is done), the subgraphs trust the new key only',
          env: { INTERNAL_TOKEN_PUBLIC_KEY: next.publicKeyPem.trim() },
        },
      ];
      const oneLine = (pem: string) => JSON.stringify(pem).slice(1, -1);
      print(
        { oldKid: trusted.kids[0], newKid: internalKeyId(next.privateKeyPem), steps },
        [
          `# Rotating the internal identity key (README, Rotating keys): kid ${trusted.kids[0]} → ${internalKeyId(next.privateKeyPem)}.`,
          ...steps.flatMap(({ step, roll, what, env }) => [
            `# Step ${step} — ${what}; roll the ${roll}:`,
            ...Object.entries(env).map(([name, value]) => `${name}="${oneLine(value)}"`),
          ]),
        ].join('\n'),
      );
      return;
    }
    case 'service-keys': {
      const pair = generateInternalKeyPair();
      const oneLine = (pem: string) => JSON.stringify(pem.trim()).slice(1, -1);
      console.log(
        [
          `INTERNAL_TOKEN_PRIVATE_KEY="${oneLine(pair.privateKeyPem)}"`,
          `INTERNAL_TOKEN_PUBLIC_KEY="${oneLine(pair.publicKeyPem)}"`,
          `JWT_SIGNING_KEY="${oneLine(SigningKeys.generatePem())}"`,
        ].join('\n'),
      );
      return;
    }
    default:
      if (action === 'rebuild' && (subgraphNames as readonly string[]).includes(group ?? '')) {
        if (!values.tenant && !values['all-tenants']) throw new UsageError('rebuild needs --tenant ID or --all-tenants');
        const tenantId = values['all-tenants'] ? null : required(values, 'tenant');
        const result = await rebuild(group!, tenantId);
        print(
          { subgraph: group, tenantId, events: result.events },
          `rebuilt ${group} projections${tenantId ? ` of tenant ${tenantId}` : ''} from ${result.events} events`,
        );
        return;
      }
      throw new UsageError(group ? `unknown command: ${argv.slice(0, 2).join(' ')}` : 'no command given');
  }
}

run(process.argv.slice(2)).catch((err: unknown) => {
  if (err instanceof UsageError) {
    console.error(`linepack: ${err.message}\n\n${usage}`);
    process.exit(2);
  }
  // Already "linepack: invalid configuration" and the variables at fault, as a service says it at start-up.
  if (err instanceof ConfigError) {
    console.error(err.message);
    process.exit(2);
  }
  if (err instanceof AuthStoreError || (err as { code?: string }).code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    console.error(`linepack: ${(err as Error).message}`);
    process.exit(2);
  }
  console.error(`linepack: ${(err as Error).message}`);
  process.exit(1);
});
