import { useEffect, useState, type FormEvent } from 'react';
import { PublicLayout } from '../components/Layout';
import { ErrorAlert, Status } from '../components/Notice';
import { describeProblem, networkError, messageOf, type Problem } from '../errors';
import { useTitle } from '../hooks';
import { Link } from '../router';
import { NewPasswordFields, newPasswordProblem } from './AccountPage';

/** The token from a link an administrator handed over (#token=…): a fragment never reaches a server or its logs. */
function tokenFromFragment(): string {
  const fragment = new URLSearchParams(window.location.hash.replace(/^#/, ''));
  return fragment.get('token')?.trim() ?? '';
}

/** POST /auth/password/reset: 204 when the password is set; otherwise a sentence saying why not. */
async function resetPassword(token: string, password: string): Promise<void> {
  let res: Response;
  try {
    res = await fetch('/auth/password/reset', {
      method: 'POST',
      credentials: 'omit',
      headers: { 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify({ reset_token: token, new_password: password }),
    });
  } catch {
    throw networkError();
  }
  if (res.status === 204) return;
  type ResetProblem = Problem & { violations?: { field: string; message: string }[] };
  const problem = (await res.json().catch(() => null)) as ResetProblem | null;
  if (problem?.code === 'INVALID_RESET_TOKEN') {
    throw new Error(
      'This token does not work: it is unknown, already used, expired (after 30 minutes) or replaced by a newer one. Ask an administrator for a new one.',
    );
  }
  const violation = problem?.violations?.find((v) => v.field === 'new_password');
  if (violation) throw new Error(`The new password is not accepted: ${violation.message}.`);
  throw describeProblem(problem, res.status, res.headers.get('Retry-After'));
}

/**
 * Forgotten passwords, and first passwords: Linepack sends no email (it has no mail server, and answers nobody who
 * merely claims an address), so an administrator of the tenant issues a one-time token (on the Users page) and hands it
 * over; here its holder sets a new password with it.
 */
export function ResetPasswordPage() {
  useTitle('Set a new password');
  const [token, setToken] = useState(tokenFromFragment);
  const [fromLink, setFromLink] = useState(() => tokenFromFragment() !== '');
  const [password, setPassword] = useState('');
  const [again, setAgain] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [done, setDone] = useState(false);

  // The token leaves the address bar (and this history entry) at once: nobody reads it over a shoulder or from history.
  // A link opened while this page is showing changes only the fragment: it is read then too.
  useEffect(() => {
    const take = () => {
      const fromFragment = tokenFromFragment();
      if (fromFragment) {
        setToken(fromFragment);
        setFromLink(true);
      }
      if (window.location.hash) window.history.replaceState(null, '', window.location.pathname + window.location.search);
    };
    take();
    window.addEventListener('hashchange', take);
    return () => window.removeEventListener('hashchange', take);
  }, []);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    if (!token.trim()) return setError('Enter the token your administrator gave you.');
    const problem = newPasswordProblem(password, again);
    if (problem) return setError(problem);
    setBusy(true);
    try {
      await resetPassword(token.trim(), password);
      setDone(true);
    } catch (err) {
      setError(messageOf(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <PublicLayout>
      <div className="sign-in">
        <h1>Set a new password</h1>
        {done ? (
          <>
            <Status tone="success">Your password is set. Every earlier session of yours has ended.</Status>
            <p>
              <Link to="/sign-in">Sign in with your new password</Link>
            </p>
          </>
        ) : (
          <>
            <p>
              Forgot your password, or new here? Linepack sends no email: an <strong>administrator of your tenant</strong> gives you a one-time token (they
              issue it on their Users page). It works once, for 30 minutes.
            </p>
            <form onSubmit={submit} noValidate className="form">
              <div className="field">
                <label htmlFor="reset-token">Token from your administrator</label>
                <input
                  id="reset-token"
                  type="text"
                  className="mono"
                  value={token}
                  onChange={(e) => setToken(e.target.value)}
                  autoComplete="off"
                  spellCheck={false}
                  aria-describedby={fromLink ? 'reset-token-hint' : undefined}
                />
                {fromLink ? (
                  <p id="reset-token-hint" className="hint">
                    Filled in from your link.
                  </p>
                ) : null}
              </div>
              <NewPasswordFields idPrefix="reset" password={password} again={again} onPassword={setPassword} onAgain={setAgain} />
              <ErrorAlert>{error}</ErrorAlert>
              <button type="submit" className="button button-primary button-block" disabled={busy}>
                Set password
              </button>
            </form>
            <p className="hint">
              Remembered it? <Link to="/sign-in">Back to sign in</Link>
            </p>
          </>
        )}
      </div>
    </PublicLayout>
  );
}
