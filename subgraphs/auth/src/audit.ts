import { randomUUID } from 'node:crypto';
import type { Collection, Db, Filter } from 'mongodb';
import type { Logger } from '@linepack/lib/logger';

/** What happened. Security events only; never a secret, a password or a token in any field. */
export const auditEventTypes = [
  'LOGIN_SUCCEEDED',
  'LOGIN_FAILED',
  'LOGIN_THROTTLED',
  'TOKEN_REFRESHED',
  'REFRESH_TOKEN_REUSED',
  'LOGGED_OUT',
  'API_KEY_CREATED',
  'API_KEY_REVOKED',
  'API_KEY_ROTATED',
  'USER_ADDED',
  'MEMBER_REMOVED',
  'ROLE_CHANGED',
  'PASSWORD_CHANGED',
  'PASSWORD_RESET_ISSUED',
  'PASSWORD_RESET_COMPLETED',
  'SIGNED_OUT_EVERYWHERE',
  'ACCESS_DENIED',
] as const;
export type AuditEventType = (typeof auditEventTypes)[number];

/** Who did it: a user, an API key (by id and display prefix), the operator's CLI, or nobody known. */
export interface AuditActor {
  kind: 'USER' | 'API_KEY' | 'CLI' | 'ANONYMOUS';
  id: string | null;
  /** A user's email, or a key's display prefix (lpk_Ab12Cd34), never the secret. */
  label: string | null;
}

export interface AuditContext {
  actor: AuditActor;
  clientAddress: string | null;
  requestId: string | null;
}

export const cliAudit: AuditContext = { actor: { kind: 'CLI', id: null, label: 'linepack CLI' }, clientAddress: null, requestId: null };

/** Collection `auditEvents`: append-only (inserted here, removed only by retention). */
export interface AuditEventDocument {
  _id: string;
  /** null for events that belong to no tenant (a login attempt for an unknown email). */
  tenantId: string | null;
  at: Date;
  type: AuditEventType;
  actor: AuditActor;
  clientAddress: string | null;
  requestId: string | null;
  /** What the event is about: a key, a user, an operation. */
  target: { kind: 'API_KEY' | 'USER' | 'OPERATION'; id: string; label: string | null } | null;
  /** One line for people: what changed or why it failed. */
  summary: string;
}

export interface AuditFilter {
  types?: readonly AuditEventType[] | null;
  actorId?: string | null;
  targetId?: string | null;
  from?: Date | null;
  to?: Date | null;
}

export const DEFAULT_AUDIT_RETENTION_DAYS = 400;

/**
 * The tenant-scoped security audit trail. Recording never fails the action it describes (the action
 * has happened; a lost record is logged as an error for the operator), and reading is for tenant admins.
 */
export class AuditLog {
  readonly events: Collection<AuditEventDocument>;

  constructor(
    db: Db,
    private readonly logger: Logger,
  ) {
    this.events = db.collection('auditEvents');
  }

  async ensureIndexes(): Promise<void> {
    await this.events.createIndexes([
      { key: { tenantId: 1, at: -1, _id: -1 }, name: 'tenant_time' },
      { key: { at: 1 }, name: 'time' },
    ]);
  }

  async record(
    tenantIds: readonly (string | null)[],
    type: AuditEventType,
    context: AuditContext,
    target: AuditEventDocument['target'],
    summary: string,
  ): Promise<void> {
    const at = new Date();
    const docs = tenantIds.map((tenantId) => ({ _id: randomUUID(), tenantId, at, type, ...context, target, summary }));
    if (docs.length === 0) return;
    try {
      await this.events.insertMany(docs);
    } catch (err) {
      this.logger.error({ err: (err as Error).message, type, requestId: context.requestId }, 'audit event not recorded');
    }
  }

  /** A tenant's events, newest first, paginated by (at, id): `first + 1` rows, the extra one telling there is more. */
  async list(
    tenantId: string,
    filter: AuditFilter,
    first: number,
    after: { at: Date; id: string } | null,
  ): Promise<{ rows: AuditEventDocument[]; totalCount: number }> {
    const query: Filter<AuditEventDocument> = { tenantId };
    if (filter.types?.length) query.type = { $in: [...filter.types] };
    if (filter.actorId) query['actor.id'] = filter.actorId;
    if (filter.targetId) query['target.id'] = filter.targetId;
    if (filter.from || filter.to) query.at = { ...(filter.from ? { $gte: filter.from } : {}), ...(filter.to ? { $lt: filter.to } : {}) };
    const page: Filter<AuditEventDocument> = after ? { $and: [query, { $or: [{ at: { $lt: after.at } }, { at: after.at, _id: { $lt: after.id } }] }] } : query;
    const [rows, totalCount] = await Promise.all([
      this.events.find(page, { sort: { at: -1, _id: -1 }, limit: first + 1 }).toArray(),
      this.events.countDocuments(query),
    ]);
    return { rows, totalCount };
  }

  /** Retention: events older than `days` are removed (the only deletion there is). */
  async prune(days: number, now = new Date()): Promise<number> {
    const result = await this.events.deleteMany({ at: { $lt: new Date(now.getTime() - days * 86_400_000) } });
    return result.deletedCount;
  }
}
