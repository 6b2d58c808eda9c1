import type { RevocationPublisher } from '@linepack/lib/revocations';
import { createLogger, type Logger } from '@linepack/lib/logger';
import { AuditLog, cliAudit, type AuditContext, type AuditEventDocument } from './audit';
import { randomUUID } from 'node:crypto';
import { hash as argon2Hash, type Algorithm } from '@node-rs/argon2';
import type { Collection, Db } from 'mongodb';
import { z } from 'zod';
import { isDuplicateKeyError } from '@linepack/lib/mongo';
import { hasUnsafeCharacters, UNSAFE_CHARACTERS_RULE } from '@linepack/lib/validation';
import { normalizeScopes, type Role, type Scope } from '@linepack/lib/scopes';
import { displayPrefix, generateApiKeySecret, hashApiKeySecret, sameHash } from '@linepack/lib/api-keys';
import type { ApiKeyDocument, TenantRecord, Tier, UserDocument } from './documents';

export const tierRank: Readonly<Record<Tier, number>> = { FREE: 0, PRO: 1, ENTERPRISE: 2 };

/** Each key has its own rate-limit budget, so their number is bounded (SDL: createApiKey). */
export const MAX_ACTIVE_API_KEYS_PER_TENANT = 100;
/** A key that nobody gave an expiry still expires: a forgotten key in an old script stops working on its own. */
export const DEFAULT_KEY_EXPIRY_DAYS = 365;
export const MAX_KEY_EXPIRY_DAYS = 730;

export class AuthStoreError extends Error {
  constructor(
    readonly code: 'BAD_USER_INPUT' | 'NOT_FOUND' | 'CONFLICT',
    readonly field: string,
    message: string,
  ) {
    super(message);
  }
}

/** Algorithm is an ambient const enum (not importable under isolatedModules): 2 is Argon2id. */
export const ARGON2_OPTIONS = { algorithm: 2 as Algorithm, memoryCost: 19_456, timeCost: 2, parallelism: 1 } as const;

const emailSchema = z.string().trim().toLowerCase().email();

/**
 * The identity registry: tenants, API keys and users. The one place that creates them,
 * used by the GraphQL mutations, the `linepack` CLI and the development seed alike.
 * Lookups by key hash and by email are global by nature (the tenant is not known yet),
 * so these two indexes are the deliberate exceptions to "every index starts with tenantId".
 */
/** An API key as an audit event names it: its id and display prefix. */
export const keyTarget = (key: ApiKeyDocument): AuditEventDocument['target'] => ({ kind: 'API_KEY', id: key._id, label: `${key.prefix}…` });

export class AuthStore {
  readonly tenants: Collection<TenantRecord>;
  readonly apiKeys: Collection<ApiKeyDocument>;
  readonly users: Collection<UserDocument>;

  readonly audit: AuditLog;

  constructor(
    db: Db,
    private readonly revocations: RevocationPublisher | null = null,
    logger: Logger = createLogger('auth', 'silent'),
  ) {
    this.audit = new AuditLog(db, logger);
    this.tenants = db.collection('tenants');
    this.apiKeys = db.collection('apiKeys');
    this.users = db.collection('users');
  }

  async ensureIndexes(): Promise<void> {
    await this.apiKeys.createIndexes([
      { key: { secretHash: 1 }, name: 'secret_hash', unique: true },
      { key: { tenantId: 1, createdAt: 1 }, name: 'tenant_created' },
    ]);
    await this.users.createIndexes([{ key: { email: 1 }, name: 'email', unique: true }]);
    await this.audit.ensureIndexes();
  }

  async createTenant(input: { name: string; tier: Tier }): Promise<TenantRecord> {
    const name = input.name.trim();
    if (!name || name.length > 200) throw new AuthStoreError('BAD_USER_INPUT', 'name', 'tenant name must be 1–200 characters');
    if (hasUnsafeCharacters(name)) throw new AuthStoreError('BAD_USER_INPUT', 'name', `tenant name ${UNSAFE_CHARACTERS_RULE}`);
    const tenant: TenantRecord = { _id: randomUUID(), name, tier: input.tier, createdAt: new Date() };
    await this.tenants.insertOne(tenant);
    return tenant;
  }

  findTenant(id: string): Promise<TenantRecord | null> {
    return this.tenants.findOne({ _id: id });
  }

  /** Creates a key and returns its secret: the only time the secret exists outside the caller's hands. */
  async createApiKey(
    input: {
      tenantId: string;
      name: string;
      scopes: readonly string[];
      tier: Tier;
      expiresInDays?: number | null;
    },
    audit: AuditContext = cliAudit,
  ): Promise<{ apiKey: ApiKeyDocument; secret: string }> {
    const tenant = await this.findTenant(input.tenantId);
    if (!tenant) throw new AuthStoreError('NOT_FOUND', 'tenant', `no tenant ${input.tenantId}`);
    let scopes: Scope[];
    try {
      scopes = normalizeScopes(input.scopes);
    } catch (err) {
      throw new AuthStoreError('BAD_USER_INPUT', 'scopes', (err as Error).message);
    }
    if (scopes.length === 0) throw new AuthStoreError('BAD_USER_INPUT', 'scopes', 'a key needs at least one scope');
    if (tierRank[input.tier] > tierRank[tenant.tier]) {
      throw new AuthStoreError('BAD_USER_INPUT', 'tier', `tier ${input.tier} exceeds the tenant's plan (${tenant.tier})`);
    }
    const maxDays = tenant.apiKeyMaxExpiryDays ?? MAX_KEY_EXPIRY_DAYS;
    const days = input.expiresInDays ?? Math.min(tenant.apiKeyDefaultExpiryDays ?? DEFAULT_KEY_EXPIRY_DAYS, maxDays);
    if (!Number.isInteger(days) || days < 1 || days > maxDays) {
      throw new AuthStoreError('BAD_USER_INPUT', 'expiresInDays', `expiresInDays must be a whole number from 1 to ${maxDays} (the tenant's maximum)`);
    }
    const name = input.name.trim();
    if (!name || name.length > 100) throw new AuthStoreError('BAD_USER_INPUT', 'name', 'key name must be 1–100 characters');
    if (hasUnsafeCharacters(name)) throw new AuthStoreError('BAD_USER_INPUT', 'name', `key name ${UNSAFE_CHARACTERS_RULE}`);
    const now = new Date();
    const active = await this.apiKeys.countDocuments({ tenantId: tenant._id, revokedAt: null, $or: [{ expiresAt: null }, { expiresAt: { $gt: now } }] });
    if (active >= MAX_ACTIVE_API_KEYS_PER_TENANT) {
      throw new AuthStoreError(
        'CONFLICT',
        'tenant',
        `the tenant already has ${active} active API keys, the most allowed is ${MAX_ACTIVE_API_KEYS_PER_TENANT}: revoke one first`,
      );
    }
    const secret = generateApiKeySecret();
    const apiKey: ApiKeyDocument = {
      _id: randomUUID(),
      tenantId: tenant._id,
      name,
      prefix: displayPrefix(secret),
      secretHash: hashApiKeySecret(secret),
      scopes,
      tier: input.tier,
      createdAt: now,
      expiresAt: new Date(now.getTime() + days * 86_400_000),
      lastUsedAt: null,
      revokedAt: null,
    };
    await this.apiKeys.insertOne(apiKey);
    await this.audit.record(
      [tenant._id],
      'API_KEY_CREATED',
      audit,
      keyTarget(apiKey),
      `created API key "${name}" (${apiKey.prefix}…): ${scopes.join(' ')}, ${input.tier.toLowerCase()}${apiKey.expiresAt ? `, expires ${apiKey.expiresAt.toISOString()}` : ', no expiry'}`,
    );
    return { apiKey, secret };
  }

  /** The key a secret belongs to, whatever its state; callers decide what inactive means. */
  async findApiKeyBySecret(secret: string): Promise<ApiKeyDocument | null> {
    const secretHash = hashApiKeySecret(secret);
    const key = await this.apiKeys.findOne({ secretHash });
    return key && sameHash(key.secretHash, secretHash) ? key : null;
  }

  /**
   * Records when keys were last used, as gateways report it in batches (a few seconds behind, never a write per
   * request); a late or repeated report never moves lastUsedAt back.
   */
  async recordKeyUse(uses: readonly { id: string; at: Date }[]): Promise<void> {
    if (uses.length === 0) return;
    await this.apiKeys.bulkWrite(
      uses.map(({ id, at }) => ({
        updateOne: { filter: { _id: id, $or: [{ lastUsedAt: null }, { lastUsedAt: { $lt: at } }] }, update: { $set: { lastUsedAt: at } } },
      })),
      { ordered: false },
    );
  }

  /** The tenant's key policy: the expiry a key gets when none is given, and the longest allowed. */
  async setKeyExpiryPolicy(tenantId: string, policy: { defaultDays: number; maxDays: number }): Promise<TenantRecord> {
    const { defaultDays, maxDays } = policy;
    if (!Number.isInteger(maxDays) || maxDays < 1 || maxDays > 3650) throw new AuthStoreError('BAD_USER_INPUT', 'maxDays', 'the maximum must be 1–3650 days');
    if (!Number.isInteger(defaultDays) || defaultDays < 1 || defaultDays > maxDays) {
      throw new AuthStoreError('BAD_USER_INPUT', 'defaultDays', `the default must be 1–${maxDays} days (at most the maximum)`);
    }
    const tenant = await this.tenants.findOneAndUpdate(
      { _id: tenantId },
      { $set: { apiKeyDefaultExpiryDays: defaultDays, apiKeyMaxExpiryDays: maxDays } },
      { returnDocument: 'after' },
    );
    if (!tenant) throw new AuthStoreError('NOT_FOUND', 'tenant', `no tenant ${tenantId}`);
    return tenant;
  }

  listApiKeys(tenantId: string): Promise<ApiKeyDocument[]> {
    return this.apiKeys.find({ tenantId }, { sort: { createdAt: 1, _id: 1 } }).toArray();
  }

  async revokeApiKey(tenantId: string, id: string, audit: AuditContext = cliAudit): Promise<ApiKeyDocument> {
    // Revoking twice keeps the first revocation time.
    const changed = await this.apiKeys.updateOne({ _id: id, tenantId, revokedAt: null }, { $set: { revokedAt: new Date() } });
    const revoked = await this.apiKeys.findOne({ _id: id, tenantId });
    if (!revoked) throw new AuthStoreError('NOT_FOUND', 'id', `no API key ${id} in this tenant`);
    // Every gateway drops the key from its verification cache now, not when the cache entry expires.
    await this.revocations?.publish({ kind: 'api_key', secretHash: revoked.secretHash });
    if (changed.modifiedCount > 0) {
      await this.audit.record([tenantId], 'API_KEY_REVOKED', audit, keyTarget(revoked), `revoked API key "${revoked.name}" (${revoked.prefix}…)`);
    }
    return revoked;
  }

  async createUser(input: { tenantId: string; email: string; password: string; role: Role }, audit: AuditContext = cliAudit): Promise<UserDocument> {
    const user = await this.addUser(input);
    await this.audit.record([input.tenantId], 'USER_ADDED', audit, { kind: 'USER', id: user._id, label: user.email }, `added ${user.email} as ${input.role}`);
    return user;
  }

  private async addUser(input: { tenantId: string; email: string; password: string; role: Role }): Promise<UserDocument> {
    const tenant = await this.findTenant(input.tenantId);
    if (!tenant) throw new AuthStoreError('NOT_FOUND', 'tenant', `no tenant ${input.tenantId}`);
    const email = emailSchema.safeParse(input.email);
    if (!email.success) throw new AuthStoreError('BAD_USER_INPUT', 'email', 'email must be a valid address');
    if (input.password.length < 12 || input.password.length > 256) {
      throw new AuthStoreError('BAD_USER_INPUT', 'password', 'password must be 12–256 characters');
    }
    const existing = await this.users.findOne({ email: email.data });
    if (existing) {
      // An existing user joins another tenant; their password is not replaced by whoever added them.
      if (existing.memberships.some((m) => m.tenantId === tenant._id)) {
        throw new AuthStoreError('CONFLICT', 'email', `${email.data} is already a member of this tenant`);
      }
      const updated = await this.users.findOneAndUpdate(
        { _id: existing._id },
        { $push: { memberships: { tenantId: tenant._id, role: input.role } } },
        { returnDocument: 'after' },
      );
      return updated!;
    }
    const user: UserDocument = {
      _id: randomUUID(),
      email: email.data,
      passwordHash: await argon2Hash(input.password, ARGON2_OPTIONS),
      memberships: [{ tenantId: tenant._id, role: input.role }],
      createdAt: new Date(),
    };
    try {
      await this.users.insertOne(user);
    } catch (err) {
      if (isDuplicateKeyError(err)) throw new AuthStoreError('CONFLICT', 'email', `${email.data} was registered concurrently; retry`);
      throw err;
    }
    return user;
  }

  findUser(id: string): Promise<UserDocument | null> {
    return this.users.findOne({ _id: id });
  }
}
