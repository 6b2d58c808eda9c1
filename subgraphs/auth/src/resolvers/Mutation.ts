import { randomBytes } from 'node:crypto';
import type { MutationResolvers } from '../generated/resolvers-types';
import { auditContextOf } from '../audit-context';
import { asGraphQLErrors } from './errors';
import { fieldError } from '@linepack/lib/errors';
import type { Identity } from '@linepack/lib/identity';

export const Mutation: MutationResolvers = {
  createApiKey: async (_parent, { input }, { identity, store }) =>
    asGraphQLErrors(
      store.createApiKey(
        {
          tenantId: identity.tenantId,
          name: input.name,
          scopes: input.scopes,
          tier: input.tier ?? 'FREE',
          expiresInDays: input.expiresInDays ?? null,
        },
        await auditContextOf(identity, store),
      ),
    ),
  revokeApiKey: async (_parent, { id }, { identity, store }) =>
    asGraphQLErrors(store.revokeApiKey(identity.tenantId, id, await auditContextOf(identity, store))),
  rotateApiKey: async (_parent, { id }, { identity, store }) =>
    asGraphQLErrors(store.rotateApiKey(identity.tenantId, id, await auditContextOf(identity, store))),
  changePassword: async (_parent, { currentPassword, newPassword }, { identity, store }) => {
    usersOnly(identity, 'change a password');
    await asGraphQLErrors(
      store.changePassword(identity.subject, currentPassword, newPassword, identity.sessionId ?? null, await auditContextOf(identity, store)),
    );
    return true;
  },
  signOutEverywhere: async (_parent, _args, { identity, store }) => {
    usersOnly(identity, 'sign out');
    const user = await store.findUser(identity.subject);
    if (user) await store.signOutEverywhere(user, await auditContextOf(identity, store));
    return true;
  },
  issuePasswordReset: async (_parent, { userId }, { identity, store }) => {
    const { token, expiresAt, user } = await asGraphQLErrors(store.issuePasswordReset(identity.tenantId, userId, await auditContextOf(identity, store)));
    return { token, expiresAt, userId: user._id };
  },
  addUser: async (_parent, { input }, { identity, store }) => {
    const audit = await auditContextOf(identity, store);
    // Someone new gets a password nobody knows (256 random bits) and a reset token to set their own: the admin never
    // learns a password, and the first sign-in goes through the same one-time flow as a reset.
    const user = await asGraphQLErrors(
      store.createUser({ tenantId: identity.tenantId, email: input.email, password: randomBytes(32).toString('base64url'), role: input.role }, audit),
    );
    const member = { id: user._id, email: user.email, role: input.role, createdAt: user.createdAt };
    // An existing account (a member of another tenant) keeps its password: no admin of this tenant may reset it.
    if (user.memberships.length > 1) return { user: member, passwordReset: null };
    const { token, expiresAt } = await asGraphQLErrors(store.issuePasswordReset(identity.tenantId, user._id, audit));
    return { user: member, passwordReset: { token, expiresAt, userId: user._id } };
  },
  changeUserRole: async (_parent, { userId, role }, { identity, store }) => {
    if (identity.kind === 'user' && identity.subject === userId) {
      throw fieldError('BAD_USER_INPUT', 'you cannot change your own role; another admin can', { field: 'userId' });
    }
    const user = await asGraphQLErrors(store.setRole(identity.tenantId, userId, role, await auditContextOf(identity, store)));
    return { id: user._id, email: user.email, role, createdAt: user.createdAt };
  },
  removeUser: async (_parent, { userId }, { identity, store }) => {
    if (identity.kind === 'user' && identity.subject === userId) {
      throw fieldError('BAD_USER_INPUT', 'you cannot remove yourself; another admin can', { field: 'userId' });
    }
    await asGraphQLErrors(store.removeMember(identity.tenantId, userId, await auditContextOf(identity, store)));
    return true;
  },
};

/** Passwords and sessions belong to users; an API key has neither. */
function usersOnly(identity: Identity, what: string): void {
  if (identity.kind !== 'user') throw fieldError('FORBIDDEN', `only a signed-in user can ${what}; this request uses an API key`);
}
