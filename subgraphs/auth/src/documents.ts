import type { Role, Scope } from '@linepack/lib/scopes';

export type Tier = 'FREE' | 'PRO' | 'ENTERPRISE';

/** Collection `tenants`. Tenant ids are UUIDs. */
export interface TenantRecord {
  _id: string;
  name: string;
  /** The plan: user tokens are rate-limited at this tier, and no key may exceed it. */
  tier: Tier;
  createdAt: Date;
  /** API keys created without an expiry get this many days (absent: DEFAULT_KEY_EXPIRY_DAYS). */
  apiKeyDefaultExpiryDays?: number;
  /** No API key of the tenant may be created to live longer (absent: MAX_KEY_EXPIRY_DAYS). */
  apiKeyMaxExpiryDays?: number;
}

/** Collection `apiKeys`. Only the SHA-256 of the secret is stored; the secret is shown once. */
export interface ApiKeyDocument {
  _id: string;
  tenantId: string;
  name: string;
  /** First characters of the secret, for recognising a key in listings and logs. */
  prefix: string;
  secretHash: string;
  scopes: Scope[];
  tier: Tier;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
  /** Who created it (a user or key id; null for the CLI and keys older than this field): removing a member revokes their keys. */
  createdBy?: string | null;
  /**
   * The key's lineage: its own id when created, copied by each rotation to the key that replaces it. Rate limits
   * count per lineage (introspection reports it as lineage_id), so rotating a key keeps what its predecessor spent.
   * Absent on keys older than this field: their id is their lineage.
   */
  lineageId?: string;
}

export interface Membership {
  tenantId: string;
  role: Role;
}

/** Collection `users`. Passwords are argon2id hashes. */
export interface UserDocument {
  _id: string;
  email: string;
  passwordHash: string;
  memberships: Membership[];
  createdAt: Date;
  passwordChangedAt?: Date;
}

/** Collection `passwordResets`: one-time reset tokens an admin issued; only their SHA-256 is stored. */
export interface PasswordResetDocument {
  _id: string;
  tokenHash: string;
  userId: string;
  tenantId: string;
  issuedBy: string | null;
  createdAt: Date;
  expiresAt: Date;
  usedAt: Date | null;
}
