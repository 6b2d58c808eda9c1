import { useState, type FormEvent } from 'react';
import { ConfirmDialog } from '../components/ConfirmDialog';
import { ErrorAlert, Status } from '../components/Notice';
import { useSignOut } from '../components/Layout';
import { SettingsNav } from '../components/SettingsNav';
import { messageOf } from '../errors';
import { useTitle } from '../hooks';
import { useRouter } from '../router';
import { graphql, session, useSession } from '../session';

const CHANGE_PASSWORD_MUTATION =
  'mutation ConsoleChangePassword($current: String!, $next: String!) { changePassword(currentPassword: $current, newPassword: $next) }';
const SIGN_OUT_EVERYWHERE_MUTATION = 'mutation ConsoleSignOutEverywhere { signOutEverywhere }';

/** The password rule as the server applies it (NIST SP 800-63B), said before anyone types. */
const PASSWORD_RULE =
  '12 to 256 characters of any kind (spaces too), no composition rules. Not a common or breached password, and not containing "linepack" or your email.';

/** Code points, as the server counts them (it also normalises to NFKC, which a browser can do too). */
const passwordLength = (password: string) => [...password.normalize('NFKC')].length;

/** The checks a browser can make before sending a new password; the server checks the rest (common, breached). */
export function newPasswordProblem(password: string, confirmation: string): string | null {
  if (!password) return 'Enter a new password.';
  const length = passwordLength(password);
  if (length < 12) return `The new password is ${length} characters long: it needs at least 12.`;
  if (length > 256) return 'The new password can be at most 256 characters long.';
  if (password !== confirmation) return 'The two new passwords are not the same: type it again in both fields.';
  return null;
}

/** The new password twice, with the rule said before anyone types: where it is changed and where it is set with a token. */
export function NewPasswordFields({
  idPrefix,
  password,
  again,
  onPassword,
  onAgain,
}: {
  idPrefix: string;
  password: string;
  again: string;
  onPassword(value: string): void;
  onAgain(value: string): void;
}) {
  return (
    <>
      <div className="field">
        <label htmlFor={`${idPrefix}-new`}>New password</label>
        <input
          id={`${idPrefix}-new`}
          type="password"
          autoComplete="new-password"
          value={password}
          onChange={(e) => onPassword(e.target.value)}
          aria-describedby={`${idPrefix}-new-hint`}
        />
        <p id={`${idPrefix}-new-hint`} className="hint">
          {PASSWORD_RULE}
        </p>
      </div>
      <div className="field">
        <label htmlFor={`${idPrefix}-again`}>New password again</label>
        <input id={`${idPrefix}-again`} type="password" autoComplete="new-password" value={again} onChange={(e) => onAgain(e.target.value)} />
      </div>
    </>
  );
}

function ChangePassword() {
  const [current, setCurrent] = useState('');
  const [next, setNext] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [done, setDone] = useState(false);
  const [busy, setBusy] = useState(false);
  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    setDone(false);
    if (!current) return setError('Enter your current password.');
    const problem = newPasswordProblem(next, again);
    if (problem) return setError(problem);
    setBusy(true);
    try {
      await graphql<{ changePassword: boolean }>(CHANGE_PASSWORD_MUTATION, { current, next });
      setDone(true);
      setCurrent('');
      setNext('');
      setAgain('');
    } catch (err) {
      setError(messageOf(err).replace('currentPassword', 'current password').replace('newPassword', 'new password'));
    } finally {
      setBusy(false);
    }
  };
  return (
    <section aria-labelledby="password-heading" className="card">
      <h2 id="password-heading">Change your password</h2>
      <form onSubmit={submit} noValidate className="form form-narrow">
        <div className="field">
          <label htmlFor="account-current">Current password</label>
          <input id="account-current" type="password" autoComplete="current-password" value={current} onChange={(e) => setCurrent(e.target.value)} />
        </div>
        <NewPasswordFields idPrefix="account" password={next} again={again} onPassword={setNext} onAgain={setAgain} />
        <p className="hint">Your other sessions (other browsers and devices) end at once; this one stays signed in.</p>
        <ErrorAlert>{error}</ErrorAlert>
        {done ? <Status tone="success">Your password is changed. Your other sessions have ended.</Status> : null}
        <div>
          <button type="submit" className="button button-primary" disabled={busy}>
            Change password
          </button>
        </div>
      </form>
    </section>
  );
}

function SignOutEverywhereDialog({ onClose }: { onClose(): void }) {
  const { navigate } = useRouter();
  const signOut = async () => {
    await graphql<{ signOutEverywhere: boolean }>(SIGN_OUT_EVERYWHERE_MUTATION);
    // The server has ended this session too; the page forgets it (its refresh cookie is refused and cleared).
    const failure = await session.signOut('You have signed out everywhere: every session of yours has ended, on every device.');
    if (failure !== null) throw new Error(failure);
    navigate('/sign-in', { replace: true });
  };
  return (
    <ConfirmDialog title="Sign out everywhere?" confirmLabel="Sign out everywhere" onClose={onClose} onConfirm={signOut}>
      <p>
        Every session of yours ends at once, on every browser and device, this one included: use this when a device is lost or you signed in somewhere you
        should not have. API keys keep working (revoke them under API keys).
      </p>
    </ConfirmDialog>
  );
}

export function AccountPage() {
  useTitle('Your account');
  const { me } = useSession();
  const [confirming, setConfirming] = useState(false);
  const { signingOut, error, signOut } = useSignOut();
  const tenant = me?.tenants.find((t) => t.tenantId === me.tenantId);

  if (me?.kind !== 'USER') {
    return (
      <>
        <h1>Your account</h1>
        <Status>This session is not a signed-in user&apos;s: there is no password or session to manage.</Status>
      </>
    );
  }
  return (
    <>
      <SettingsNav />
      <div className="page-head">
        <h1>Your account</h1>
        <p className="subtitle">Your password and your sessions.</p>
      </div>
      <section aria-label="Who you are" className="card">
        <dl className="facts">
          <div className="fact">
            <dt>Email</dt>
            <dd className="mono">{me.email}</dd>
          </div>
          <div className="fact">
            <dt>Tenant</dt>
            <dd>{tenant?.name ?? me.tenantId}</dd>
          </div>
          <div className="fact">
            <dt>Your role there</dt>
            <dd>{tenant?.role ? tenant.role.charAt(0) + tenant.role.slice(1).toLowerCase() : '—'}</dd>
          </div>
          <div className="fact fact-wide">
            <dt>What you may do (scopes)</dt>
            <dd className="scope-list">
              {me.scopes.map((s) => (
                <code key={s}>{s}</code>
              ))}
            </dd>
          </div>
        </dl>
      </section>
      <ChangePassword />
      <section aria-labelledby="sessions-heading" className="card">
        <h2 id="sessions-heading">Sessions</h2>
        <p>
          <strong>Sign out</strong> ends this session only. <strong>Sign out everywhere</strong> ends every session of yours, on every browser and device.
        </p>
        <ErrorAlert>{error}</ErrorAlert>
        <div className="button-row">
          <button type="button" className="button" disabled={signingOut} onClick={signOut}>
            Sign out
          </button>
          <button type="button" className="button button-danger" onClick={() => setConfirming(true)}>
            Sign out everywhere
          </button>
        </div>
      </section>
      {confirming ? <SignOutEverywhereDialog onClose={() => setConfirming(false)} /> : null}
    </>
  );
}
