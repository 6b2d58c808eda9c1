import { useEffect, useId, useState, type FormEvent, type ReactNode } from 'react';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { Dialog } from '../components/Dialog';
import { ErrorAlert, Loading, Status } from '../components/Notice';
import { Pager } from '../components/Pager';
import { SecretReveal } from '../components/SecretReveal';
import { AdminOnly, SettingsNav, useIsAdmin } from '../components/SettingsNav';
import { messageOf } from '../errors';
import { formatDate, formatInstant } from '../format';
import { useConnection, useSettled, useTitle, type Connection } from '../hooks';
import { Link, useRouter } from '../router';
import { graphql, useSession, type Role } from '../session';

const USER_FIELDS = 'id email role createdAt';
const USERS_QUERY = `query ConsoleTenantUsers($emailContains: String, $role: Role, $first: Int, $after: String) {
  tenantUsers(emailContains: $emailContains, role: $role, first: $first, after: $after) {
    totalCount
    pageInfo { hasNextPage endCursor }
    edges { node { ${USER_FIELDS} } }
  }
}`;
const ADD_MUTATION = `mutation ConsoleAddUser($input: AddUserInput!) {
  addUser(input: $input) { user { ${USER_FIELDS} } passwordReset { token expiresAt } }
}`;
const CHANGE_ROLE_MUTATION = `mutation ConsoleChangeUserRole($userId: ID!, $role: Role!) { changeUserRole(userId: $userId, role: $role) { ${USER_FIELDS} } }`;
const REMOVE_MUTATION = 'mutation ConsoleRemoveUser($userId: ID!) { removeUser(userId: $userId) }';
const RESET_MUTATION = 'mutation ConsoleIssuePasswordReset($userId: ID!) { issuePasswordReset(userId: $userId) { token expiresAt } }';

interface TenantUser {
  id: string;
  email: string;
  role: Role;
  createdAt: string;
}
interface PasswordReset {
  token: string;
  expiresAt: string;
}

const ROLES: { role: Role; label: string; description: string }[] = [
  { role: 'VIEWER', label: 'Viewer', description: 'Reads everything in the tenant.' },
  { role: 'ENGINEER', label: 'Engineer', description: 'Reads everything, and records assets and measurements.' },
  { role: 'ADMIN', label: 'Admin', description: 'Everything, including API keys, users and the audit log.' },
];
const roleLabel = (role: Role) => ROLES.find((r) => r.role === role)?.label ?? role;
const withArticle = (role: Role) => `${role === 'ENGINEER' || role === 'ADMIN' ? 'an' : 'a'} ${roleLabel(role)}`;

const pickUsers = (d: { tenantUsers: Connection<TenantUser> }) => d.tenantUsers;

/** Where someone with a reset token sets their password; the token rides in the fragment, which no server sees. */
function resetLink(token: string): string {
  return `${window.location.origin}/sign-in/reset-password#token=${encodeURIComponent(token)}`;
}

function RoleChoice({ value, onChange, legend }: { value: Role; onChange(role: Role): void; legend: string }) {
  const name = useId();
  return (
    <fieldset className="field role-choice">
      <legend>{legend}</legend>
      {ROLES.map((r) => (
        <div key={r.role} className="scope-option">
          <input
            id={`${name}-${r.role}`}
            type="radio"
            name={name}
            value={r.role}
            checked={value === r.role}
            onChange={() => onChange(r.role)}
            aria-describedby={`${name}-${r.role}-description`}
          />
          <label htmlFor={`${name}-${r.role}`}>{r.label}</label>
          <span id={`${name}-${r.role}-description`} className="scope-description">
            {r.description}
          </span>
        </div>
      ))}
    </fieldset>
  );
}

/** A one-time password token, shown once, with where to use it. */
function ResetTokenReveal({ reset, email, onDone, children }: { reset: PasswordReset; email: string; onDone(): void; children?: ReactNode }) {
  const link = resetLink(reset.token);
  return (
    <SecretReveal
      secret={reset.token}
      label={`Password token for ${email}`}
      warning={
        <>
          Linepack sends no email: hand it to <span className="mono">{email}</span> yourself, over a channel you trust. It works once, until{' '}
          {formatInstant(reset.expiresAt)} (30 minutes).
        </>
      }
      onDone={onDone}
    >
      {children}
      <p className="hint">
        They set their password at <span className="mono">{window.location.origin}/sign-in/reset-password</span>, or with this link, which fills the token in:{' '}
        <span className="mono break-anywhere">{link}</span>
      </p>
    </SecretReveal>
  );
}

function AddUserDialog({ tenantName, onClose, onAdded }: { tenantName: string; onClose(): void; onAdded(user: TenantUser): void }) {
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<Role>('VIEWER');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [added, setAdded] = useState<{ user: TenantUser; passwordReset: PasswordReset | null } | null>(null);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    const trimmed = email.trim();
    if (!trimmed) return setError('Enter the email address of the person to add.');
    if (!/^[^\s@]+@[^\s@]+$/.test(trimmed)) return setError('That is not an email address: it needs a name, an @ and a domain.');
    setBusy(true);
    try {
      const data = await graphql<{ addUser: { user: TenantUser; passwordReset: PasswordReset | null } }>(ADD_MUTATION, { input: { email: trimmed, role } });
      setAdded(data.addUser);
      onAdded(data.addUser.user);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  if (added) {
    const { user, passwordReset } = added;
    return (
      <Dialog title={`${user.email} added`} onClose={onClose}>
        {passwordReset ? (
          <ResetTokenReveal reset={passwordReset} email={user.email} onDone={onClose}>
            <p>
              They joined {tenantName} as {withArticle(user.role)} and have no password yet: with this one-time token they set their own (you never learn it).
            </p>
          </ResetTokenReveal>
        ) : (
          <>
            <p>
              {user.email} already had a Linepack account: they joined {tenantName} as {withArticle(user.role)} and sign in with their own password.
            </p>
            <div className="dialog-actions">
              <button type="button" className="button button-primary" onClick={onClose}>
                Done
              </button>
            </div>
          </>
        )}
      </Dialog>
    );
  }
  return (
    <Dialog title="Add a user" onClose={onClose}>
      <form onSubmit={submit} noValidate className="form">
        <div className="field">
          <label htmlFor="add-user-email">Email</label>
          <input
            id="add-user-email"
            type="email"
            value={email}
            maxLength={320}
            autoComplete="off"
            spellCheck={false}
            onChange={(e) => {
              setEmail(e.target.value);
              setError(null);
            }}
            aria-describedby="add-user-email-hint"
            required
          />
          <p id="add-user-email-hint" className="hint">
            Someone new gets a one-time token to set their password, shown to you next. Someone who already uses Linepack keeps their password.
          </p>
        </div>
        <RoleChoice value={role} onChange={setRole} legend="Role" />
        <ErrorAlert>{error}</ErrorAlert>
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy}>
            Add user
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function ChangeRoleDialog({ user, onClose, onChanged }: { user: TenantUser; onClose(): void; onChanged(user: TenantUser): void }) {
  const [role, setRole] = useState<Role>(user.role);
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    if (role === user.role) return onClose();
    setBusy(true);
    setError(null);
    try {
      const data = await graphql<{ changeUserRole: TenantUser }>(CHANGE_ROLE_MUTATION, { userId: user.id, role });
      onChanged(data.changeUserRole);
    } catch (err) {
      setError(messageOf(err));
      setBusy(false);
    }
  };
  return (
    <Dialog title={`Change the role of ${user.email}`} onClose={onClose}>
      <form onSubmit={submit} noValidate className="form">
        <RoleChoice value={role} onChange={setRole} legend="New role" />
        <p className="hint">Their sessions end at once (a session carries the role it was signed in with): the new role applies when they sign in again.</p>
        <ErrorAlert>{error}</ErrorAlert>
        <div className="dialog-actions">
          <button type="button" className="button" onClick={onClose}>
            Cancel
          </button>
          <button type="submit" className="button button-primary" disabled={busy}>
            Change role
          </button>
        </div>
      </form>
    </Dialog>
  );
}

function RemoveUserDialog({ user, tenantName, onClose, onRemoved }: { user: TenantUser; tenantName: string; onClose(): void; onRemoved(): void }) {
  return (
    <ConfirmDialog
      title={`Remove ${user.email}?`}
      confirmLabel="Remove user"
      onClose={onClose}
      onConfirm={async () => {
        await graphql<{ removeUser: boolean }>(REMOVE_MUTATION, { userId: user.id });
        onRemoved();
      }}
    >
      <p>
        {user.email} loses access to {tenantName} at once: their sessions end, and the API keys they created here are revoked. If they belong to no other
        tenant, their account is deleted. This cannot be undone (you can add them again).
      </p>
    </ConfirmDialog>
  );
}

/** First the confirmation, then the token it issued (shown once). */
function ResetPasswordDialog({ user, onClose }: { user: TenantUser; onClose(): void }) {
  const [reset, setReset] = useState<PasswordReset | null>(null);
  if (reset) {
    return (
      <Dialog title={`Password reset for ${user.email}`} onClose={onClose}>
        <ResetTokenReveal reset={reset} email={user.email} onDone={onClose} />
      </Dialog>
    );
  }
  return (
    <ConfirmDialog
      title={`Reset the password of ${user.email}?`}
      confirmLabel="Issue reset token"
      tone="primary"
      onClose={onClose}
      onConfirm={async () => setReset((await graphql<{ issuePasswordReset: PasswordReset }>(RESET_MUTATION, { userId: user.id })).issuePasswordReset)}
    >
      <p>
        You get a one-time token for them to set a new password with (Linepack sends no email). Their password keeps working until they use it; then every
        session of theirs ends. A token issued to them earlier stops working now.
      </p>
    </ConfirmDialog>
  );
}

type Open =
  { kind: 'none' } | { kind: 'add' } | { kind: 'role'; user: TenantUser } | { kind: 'remove'; user: TenantUser } | { kind: 'reset'; user: TenantUser };

/** The filters live in the address (?email=&role=), so a list can be bookmarked and gone back to. */
function readFilters(search: string): { email: string; role: Role | '' } {
  const params = new URLSearchParams(search);
  const role = ROLES.find((r) => r.role === params.get('role'))?.role ?? '';
  return { email: params.get('email') ?? '', role };
}

export function UsersPage() {
  useTitle('Users');
  const { me } = useSession();
  const isAdmin = useIsAdmin();
  const { search } = useRouter();
  const tenantName = me?.tenants.find((t) => t.tenantId === me.tenantId)?.name ?? 'this tenant';
  const initial = readFilters(search);
  const [email, setEmail] = useState(initial.email);
  const [role, setRole] = useState<Role | ''>(initial.role);
  const settledEmail = useSettled(email.trim());
  const [open, setOpen] = useState<Open>({ kind: 'none' });
  const [notice, setNotice] = useState<string | null>(null);

  useEffect(() => {
    const params = new URLSearchParams();
    if (settledEmail) params.set('email', settledEmail);
    if (role) params.set('role', role);
    const next = params.toString();
    if (next !== window.location.search.replace(/^\?/, '')) window.history.replaceState(null, '', `/settings/users${next ? `?${next}` : ''}`);
  }, [settledEmail, role]);

  const users = useConnection(isAdmin ? USERS_QUERY : null, { emailContains: settledEmail ? settledEmail.slice(0, 200) : null, role: role || null }, pickUsers);

  if (!isAdmin) return <AdminOnly title="Users" what="manage the tenant's users" />;

  const act = (next: Open) => {
    setNotice(null);
    setOpen(next);
  };
  const close = () => setOpen({ kind: 'none' });
  return (
    <>
      <SettingsNav />
      <div className="page-head page-head-actions">
        <div>
          <h1>Users</h1>
          <p className="subtitle">
            The people who sign in to {tenantName}, and their roles. A role decides what they may do: Viewers read, Engineers also record assets and
            measurements, Admins also manage keys and users.
          </p>
        </div>
        <button type="button" className="button button-primary" onClick={() => act({ kind: 'add' })}>
          Add user
        </button>
      </div>
      {notice ? <Status tone="success">{notice}</Status> : null}
      <section aria-label="Find users" className="card">
        <form className="filters" role="search" onSubmit={(e) => e.preventDefault()}>
          <div className="field filter-grow">
            <label htmlFor="users-email">Email contains</label>
            <input id="users-email" type="search" value={email} maxLength={200} autoComplete="off" onChange={(e) => setEmail(e.target.value)} />
          </div>
          <div className="field">
            <label htmlFor="users-role">Role</label>
            <select id="users-role" value={role} onChange={(e) => setRole(e.target.value as Role | '')}>
              <option value="">Any role</option>
              {ROLES.map((r) => (
                <option key={r.role} value={r.role}>
                  {r.label}
                </option>
              ))}
            </select>
          </div>
        </form>
      </section>
      <section aria-label="Matching users" className="card">
        <ErrorAlert onRetry={users.reload}>{users.error}</ErrorAlert>
        {users.loading && users.totalCount === null ? <Loading what="users" /> : null}
        {users.totalCount !== null ? (
          <>
            <div className="table-wrap" tabIndex={0}>
              <table role="table" className="table table-stack table-compact">
                <caption>Users of {tenantName}</caption>
                <thead role="rowgroup">
                  <tr role="row">
                    <th role="columnheader" scope="col">
                      Email
                    </th>
                    <th role="columnheader" scope="col">
                      Role
                    </th>
                    <th role="columnheader" scope="col">
                      Added
                    </th>
                    <th role="columnheader" scope="col">
                      <span className="visually-hidden">Actions</span>
                    </th>
                  </tr>
                </thead>
                <tbody role="rowgroup">
                  {users.nodes.length === 0 ? (
                    <tr role="row">
                      <td role="cell" colSpan={4} className="empty">
                        {settledEmail || role ? 'No user matches.' : 'This tenant has no users yet.'}
                      </td>
                    </tr>
                  ) : (
                    users.nodes.map((user) => {
                      const self = user.id === me?.id;
                      return (
                        <tr role="row" key={user.id}>
                          <th role="rowheader" scope="row" className="mono">
                            {user.email}
                          </th>
                          <td role="cell" data-label="Role">
                            {roleLabel(user.role)}
                          </td>
                          <td role="cell" className="nowrap" data-label="Added">
                            {formatDate(user.createdAt)}
                          </td>
                          <td role="cell" className="actions">
                            {self ? (
                              <span className="muted">
                                You (<Link to="/settings/account">your account</Link>)
                              </span>
                            ) : (
                              <>
                                <button
                                  type="button"
                                  className="button button-small"
                                  aria-label={`Change role of ${user.email}`}
                                  onClick={() => act({ kind: 'role', user })}
                                >
                                  Change role
                                </button>
                                <button
                                  type="button"
                                  className="button button-small"
                                  aria-label={`Reset password of ${user.email}`}
                                  onClick={() => act({ kind: 'reset', user })}
                                >
                                  Reset password
                                </button>
                                <button
                                  type="button"
                                  className="button button-small button-danger-quiet"
                                  aria-label={`Remove ${user.email}`}
                                  onClick={() => act({ kind: 'remove', user })}
                                >
                                  Remove
                                </button>
                              </>
                            )}
                          </td>
                        </tr>
                      );
                    })
                  )}
                </tbody>
              </table>
            </div>
            <Pager
              shown={users.nodes.length}
              total={users.totalCount}
              noun="users"
              hasNextPage={users.hasNextPage}
              loading={users.loading}
              onLoadMore={users.loadMore}
            />
          </>
        ) : null}
      </section>

      {open.kind === 'add' ? (
        <AddUserDialog
          tenantName={tenantName}
          onClose={close}
          onAdded={(user) => {
            setNotice(`${user.email} was added as ${withArticle(user.role)}.`);
            users.reload();
          }}
        />
      ) : null}
      {open.kind === 'role' ? (
        <ChangeRoleDialog
          user={open.user}
          onClose={close}
          onChanged={(user) => {
            close();
            setNotice(`${user.email} is now ${withArticle(user.role)}. Their sessions ended: the new role applies when they sign in again.`);
            users.reload();
          }}
        />
      ) : null}
      {open.kind === 'remove' ? (
        <RemoveUserDialog
          user={open.user}
          tenantName={tenantName}
          onClose={close}
          onRemoved={() => {
            close();
            setNotice(`${open.user.email} was removed from ${tenantName}.`);
            users.reload();
          }}
        />
      ) : null}
      {open.kind === 'reset' ? <ResetPasswordDialog user={open.user} onClose={close} /> : null}
    </>
  );
}
