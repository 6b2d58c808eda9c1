import type { RevocationPublisher } from '@linepack/lib/revocations';
import { createLogger, type Logger } from '@linepack/lib/logger';
import { AuditLog, cliAudit, type AuditContext, type AuditEventDocument } from './audit';
import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { hash as argon2Hash, verify as argon2Verify, type Algorithm } from '@node-rs/argon2';
import type { Collection, Db } from 'mongodb';
import { z } from 'zod';
import { isDuplicateKeyError } from '@linepack/lib/mongo';
import { hasUnsafeCharacters, UNSAFE_CHARACTERS_RULE } from '@linepack/lib/validation';
import { normalizeScopes, type Role, type Scope } from '@linepack/lib/scopes';
import { displayPrefix, generateApiKeySecret, hashApiKeySecret, sameHash } from '@linepack/lib/api-keys';
import type { ApiKeyDocument, PasswordResetDocument, TenantRecord, Tier, UserDocument } from './documents';
import { passwordProblem } from './password-policy';

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
const PASSWORD_RESET_TTL_MS = 30 * 60_000;
const sha256 = (value: string) => createHash('sha256').update(value).digest('hex');
export const tenantIdsOf = (user: UserDocument) => user.memberships.map((m) => m.tenantId);
export const userTarget = (user: UserDocument): AuditEventDocument['target'] => ({ kind: 'USER', id: user._id, label: user.email });

/** An API key as an audit event names it: its id and display prefix. */
export const keyTarget = (key: ApiKeyDocument): AuditEventDocument['target'] => ({ kind: 'API_KEY', id: key._id, label: `${key.prefix}…` });

/**
 * The first page of a revocation list read oldest first with `limit + 1` rows: complete for every time before the
 * returned `next` (null: the rows were the whole list). The row past the limit shows where the list was cut; rows of
 * that same millisecond are left for the next page, which starts there. If every row is of that one millisecond,
 * the whole millisecond is read (`allAt`) and the next page starts just after it.
 */
async function firstPage(
  rows: readonly { id: string; at: Date }[],
  limit: number,
  allAt: (at: Date) => Promise<string[]>,
): Promise<{ ids: string[]; next: Date | null }> {
  if (rows.length <= limit) return { ids: rows.map((r) => r.id), next: null };
  const cut = rows[limit]!.at;
  const before = rows.filter((r) => r.at.getTime() < cut.getTime());
  if (before.length > 0) return { ids: before.map((r) => r.id), next: cut };
  return { ids: await allAt(cut), next: new Date(cut.getTime() + 1) };
}

export class AuthStore {
  readonly tenants: Collection<TenantRecord>;
  readonly apiKeys: Collection<ApiKeyDocument>;
  readonly users: Collection<UserDocument>;
  readonly passwordResets: Collection<PasswordResetDocument>;
  /** The refresh tokens (one family per sign-in), to end a user's sessions; TokenService issues and rotates them. */
  private readonly sessions: Collection<{ _id: string; familyId: string; userId: string; revokedAt: Date | null }>;

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
    this.passwordResets = db.collection('passwordResets');
    this.sessions = db.collection('refreshTokens');
  }

  async ensureIndexes(): Promise<void> {
    await this.apiKeys.createIndexes([
      { key: { secretHash: 1 }, name: 'secret_hash', unique: true },
      { key: { tenantId: 1, createdAt: 1 }, name: 'tenant_created' },
      // Global like secret_hash: gateways ask what was revoked lately, across tenants (revokedSince).
      { key: { revokedAt: 1 }, name: 'revoked_at' },
    ]);
    await this.users.createIndexes([{ key: { email: 1 }, name: 'email', unique: true }]);
    await this.audit.ensureIndexes();
    await this.passwordResets.createIndexes([{ key: { tokenHash: 1 }, name: 'token_hash', unique: true }]);
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
    /** The lineage a rotation continues (rotateApiKey); a new key starts its own. */
    lineageId?: string,
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
    const id = randomUUID();
    const apiKey: ApiKeyDocument = {
      _id: id,
      lineageId: lineageId ?? id,
      tenantId: tenant._id,
      name,
      prefix: displayPrefix(secret),
      secretHash: hashApiKeySecret(secret),
      scopes,
      tier: input.tier,
      createdAt: now,
      expiresAt: new Date(now.getTime() + days * 86_400_000),
      createdBy: audit.actor.id,
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

  /**
   * What was revoked at or after `since` — API keys by their secret's hash, sessions by their refresh family — for
   * gateways that pull the list while the Redis revocation channel is away (GET /internal/revocations). Read through
   * the revoked_at indexes, oldest first, at most about `limit` keys and `limit` sessions.
   *
   * Sessions are counted as families, in the database: a session's refresh token rotates at every refresh and signing
   * it out revokes every token it ever had, so one long session can be thousands of documents. Capping documents and
   * de-duplicating afterwards let a few such sessions fill the answer while the other sessions ended in the same
   * window were silently left out (and the answer did not even say it was cut).
   *
   * `next` is null when both lists are complete. Otherwise the answer is complete for revocations before `next` and
   * the caller asks again from `next`: a list is cut at a whole millisecond, so nothing revoked in the same
   * millisecond as the cut is lost between two pages. When more than `limit` share the first millisecond, that whole
   * millisecond is answered (one revocation's worth of writes: a user's "sign out everywhere"), so paging always
   * moves on.
   */
  async revokedSince(since: Date, limit: number): Promise<{ apiKeys: string[]; sessions: string[]; next: Date | null }> {
    const [keys, sessions] = await Promise.all([this.revokedKeysSince(since, limit), this.revokedFamiliesSince(since, limit)]);
    const cuts = [keys.next, sessions.next].filter((cut): cut is Date => cut !== null);
    // One cursor for both lists: the earlier cut (the other list then repeats a little on the next page, harmlessly).
    const next = cuts.length === 0 ? null : new Date(Math.min(...cuts.map((cut) => cut.getTime())));
    return { apiKeys: keys.ids, sessions: sessions.ids, next };
  }

  private async revokedKeysSince(since: Date, limit: number): Promise<{ ids: string[]; next: Date | null }> {
    const rows = await this.apiKeys
      .find({ revokedAt: { $gte: since } }, { projection: { secretHash: 1, revokedAt: 1 }, sort: { revokedAt: 1 }, limit: limit + 1 })
      .toArray();
    return firstPage(
      rows.map((k) => ({ id: k.secretHash, at: k.revokedAt! })),
      limit,
      async (at) => (await this.apiKeys.find({ revokedAt: at }, { projection: { secretHash: 1 } }).toArray()).map((k) => k.secretHash),
    );
  }

  /** Grouped by family in the database, so the limit counts sessions however many rotated tokens each one had. */
  private async revokedFamiliesSince(since: Date, limit: number): Promise<{ ids: string[]; next: Date | null }> {
    const rows = await this.sessions
      .aggregate<{ _id: string; at: Date }>([
        { $match: { revokedAt: { $gte: since } } },
        // A family's time is when its first token in the window was revoked (normally all at once: one updateMany).
        { $group: { _id: '$familyId', at: { $min: '$revokedAt' } } },
        { $sort: { at: 1 } },
        { $limit: limit + 1 },
      ])
      .toArray();
    return firstPage(
      rows.map((f) => ({ id: f._id, at: f.at })),
      limit,
      // Every family with a token revoked in that millisecond: a superset of those whose first one was, never fewer.
      (at) => this.sessions.distinct('familyId', { revokedAt: at }),
    );
  }

  /** Whether a sign-in (refresh family) has ended: logout, sign-out everywhere, a role change, reuse detected. */
  async sessionRevoked(familyId: string): Promise<boolean> {
    return (await this.sessions.findOne({ familyId, revokedAt: { $ne: null } }, { projection: { _id: 1 } })) !== null;
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

  /** A new key in place of an active one (same name, scopes, tier), the old one revoked at once. */
  async rotateApiKey(tenantId: string, id: string, audit: AuditContext = cliAudit): Promise<{ apiKey: ApiKeyDocument; secret: string }> {
    const old = await this.apiKeys.findOne({ _id: id, tenantId });
    if (!old) throw new AuthStoreError('NOT_FOUND', 'id', `no API key ${id} in this tenant`);
    if (old.revokedAt || (old.expiresAt && old.expiresAt <= new Date())) {
      throw new AuthStoreError('BAD_USER_INPUT', 'id', 'the key is revoked or expired: create a new one instead');
    }
    // Made before the old one is revoked: a refusal (the tenant's key cap) leaves the old key working.
    // The same lineage: the new key's rate limits continue the old one's (a rotation is not a fresh budget).
    const created = await this.createApiKey({ tenantId, name: old.name, scopes: old.scopes, tier: old.tier }, audit, old.lineageId ?? old._id);
    await this.revokeApiKey(tenantId, id, audit);
    await this.audit.record(
      [tenantId],
      'API_KEY_ROTATED',
      audit,
      keyTarget(old),
      `replaced API key "${old.name}" (${old.prefix}…) by ${created.apiKey.prefix}…`,
    );
    return created;
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
    const problem = passwordProblem(input.password, { email: email.data });
    if (problem) throw new AuthStoreError('BAD_USER_INPUT', 'password', problem);
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

  /** The members of a tenant with their role there, by email. */
  async tenantUsers(tenantId: string): Promise<{ user: UserDocument; role: Role }[]> {
    const users = await this.users.find({ 'memberships.tenantId': tenantId }, { sort: { email: 1 } }).toArray();
    return users.map((user) => ({ user, role: user.memberships.find((m) => m.tenantId === tenantId)!.role }));
  }

  /**
   * One page of a tenant's members by email (unique, so it is the cursor), with how many match: the console lists a
   * tenant's users without reading them all.
   */
  async tenantUsersPage(
    tenantId: string,
    filter: { emailContains: string | null; role: Role | null },
    size: number,
    afterEmail: string | null,
  ): Promise<{ rows: { user: UserDocument; role: Role }[]; totalCount: number }> {
    const member = filter.role ? { $elemMatch: { tenantId, role: filter.role } } : { $elemMatch: { tenantId } };
    const match: Record<string, unknown> = { memberships: member };
    // Emails are stored lower case, so a lower-cased literal pattern matches case-insensitively.
    if (filter.emailContains) match['email'] = { $regex: filter.emailContains.toLowerCase().replace(/[.*+?^${}()|[\]\\]/g, '\\$&') };
    const [users, totalCount] = await Promise.all([
      this.users.find(afterEmail === null ? match : { ...match, $and: [{ email: { $gt: afterEmail } }] }, { sort: { email: 1 }, limit: size + 1 }).toArray(),
      this.users.countDocuments(match),
    ]);
    return { rows: users.map((user) => ({ user, role: user.memberships.find((m) => m.tenantId === tenantId)!.role })), totalCount };
  }

  /** A member of `tenantId` by id, or NOT_FOUND (a user of another tenant is not found either). */
  async memberOf(tenantId: string, userId: string): Promise<UserDocument> {
    const user = await this.users.findOne({ _id: userId, 'memberships.tenantId': tenantId });
    if (!user) throw new AuthStoreError('NOT_FOUND', 'userId', `no user ${userId} in this tenant`);
    return user;
  }

  /**
   * Ends a user's sessions: every refresh family is revoked, and every gateway refuses their access tokens at
   * once. `except` keeps the session the request came from (changing a password does not sign you out here).
   */
  async endSessions(userId: string, except: string | null = null): Promise<number> {
    const families = (await this.sessions.distinct('familyId', { userId, revokedAt: null })).filter((f) => f !== except);
    if (families.length === 0) return 0;
    await this.sessions.updateMany({ userId, familyId: { $in: families }, revokedAt: null }, { $set: { revokedAt: new Date() } });
    await this.revocations?.publish(...families.map((sessionId) => ({ kind: 'session' as const, sessionId })));
    return families.length;
  }

  async signOutEverywhere(user: UserDocument, audit: AuditContext): Promise<number> {
    const ended = await this.endSessions(user._id);
    await this.audit.record(
      tenantIdsOf(user),
      'SIGNED_OUT_EVERYWHERE',
      audit,
      userTarget(user),
      `${user.email} signed out everywhere (${ended} session${ended === 1 ? '' : 's'})`,
    );
    return ended;
  }

  /** The user's own change: the current password is required; their other sessions end. */
  async changePassword(userId: string, current: string, next: string, sessionId: string | null, audit: AuditContext): Promise<void> {
    const user = await this.findUser(userId);
    if (!user || !(await argon2Verify(user.passwordHash, current))) {
      throw new AuthStoreError('BAD_USER_INPUT', 'currentPassword', 'the current password is not correct');
    }
    await this.setPassword(user, next, 'newPassword');
    await this.endSessions(user._id, sessionId);
    await this.audit.record(tenantIdsOf(user), 'PASSWORD_CHANGED', audit, userTarget(user), `${user.email} changed their password; other sessions ended`);
  }

  private async setPassword(user: UserDocument, password: string, field: string): Promise<void> {
    const problem = passwordProblem(password, { email: user.email });
    if (problem) throw new AuthStoreError('BAD_USER_INPUT', field, problem);
    await this.users.updateOne({ _id: user._id }, { $set: { passwordHash: await argon2Hash(password, ARGON2_OPTIONS), passwordChangedAt: new Date() } });
  }

  /**
   * An admin's reset for a member (there is no mail server: the admin hands the token over). One use, 30 minutes;
   * only its hash is stored. Issuing a new one voids the earlier ones.
   */
  async issuePasswordReset(tenantId: string, userId: string, audit: AuditContext): Promise<{ token: string; expiresAt: Date; user: UserDocument }> {
    const user = await this.memberOf(tenantId, userId);
    const token = `lpr_${randomBytes(24).toString('base64url')}`;
    const now = new Date();
    const expiresAt = new Date(now.getTime() + PASSWORD_RESET_TTL_MS);
    await this.passwordResets.updateMany({ userId, usedAt: null }, { $set: { usedAt: now } });
    await this.passwordResets.insertOne({
      _id: randomUUID(),
      tokenHash: sha256(token),
      userId,
      tenantId,
      issuedBy: audit.actor.id,
      createdAt: now,
      expiresAt,
      usedAt: null,
    });
    await this.audit.record(
      [tenantId],
      'PASSWORD_RESET_ISSUED',
      audit,
      userTarget(user),
      `password reset issued for ${user.email}, valid until ${expiresAt.toISOString()}`,
    );
    return { token, expiresAt, user };
  }

  /** Spends a reset token (once, before it expires): the password is replaced and every session ends. */
  async resetPassword(token: string, next: string, audit: Omit<AuditContext, 'actor'>): Promise<UserDocument | null> {
    const now = new Date();
    const reset = await this.passwordResets.findOne({ tokenHash: sha256(token), usedAt: null, expiresAt: { $gt: now } });
    if (!reset) return null;
    const user = await this.findUser(reset.userId);
    if (!user) return null;
    await this.setPassword(user, next, 'new_password'); // a refused password leaves the token usable
    const claimed = await this.passwordResets.updateOne({ _id: reset._id, usedAt: null }, { $set: { usedAt: now } });
    if (claimed.modifiedCount === 0) return null;
    await this.endSessions(user._id);
    await this.audit.record(
      tenantIdsOf(user),
      'PASSWORD_RESET_COMPLETED',
      { ...audit, actor: { kind: 'USER', id: user._id, label: user.email } },
      userTarget(user),
      `${user.email} set a new password with a reset token; every session ended`,
    );
    return user;
  }

  /** A member's new role; their sessions end, since their access tokens carry the old one. */
  async setRole(tenantId: string, userId: string, role: Role, audit: AuditContext): Promise<UserDocument> {
    const user = await this.memberOf(tenantId, userId);
    const previous = user.memberships.find((m) => m.tenantId === tenantId)!.role;
    const updated = await this.users.findOneAndUpdate(
      { _id: userId, 'memberships.tenantId': tenantId },
      { $set: { 'memberships.$.role': role } },
      { returnDocument: 'after' },
    );
    if (previous !== role) {
      await this.endSessions(userId);
      await this.audit.record([tenantId], 'ROLE_CHANGED', audit, userTarget(user), `${user.email}: ${previous} → ${role}; their sessions ended`);
    }
    return updated!;
  }

  /**
   * Removes a member from a tenant: their sessions end (their tokens carried the membership), the keys they made
   * in the tenant are revoked, and a user left in no tenant is deleted.
   */
  async removeMember(tenantId: string, userId: string, audit: AuditContext): Promise<UserDocument> {
    const user = await this.memberOf(tenantId, userId);
    const keys = await this.apiKeys.find({ tenantId, createdBy: userId, revokedAt: null }).toArray();
    for (const key of keys) await this.revokeApiKey(tenantId, key._id, audit);
    const remaining = user.memberships.filter((m) => m.tenantId !== tenantId);
    if (remaining.length === 0) await this.users.deleteOne({ _id: userId });
    else await this.users.updateOne({ _id: userId }, { $pull: { memberships: { tenantId } } });
    await this.endSessions(userId);
    await this.audit.record(
      [tenantId],
      'MEMBER_REMOVED',
      audit,
      userTarget(user),
      `removed ${user.email} from the tenant; ${keys.length} key${keys.length === 1 ? '' : 's'} they made revoked, their sessions ended`,
    );
    return user;
  }
}
