import { useState, type FormEvent } from 'react';
import { ErrorAlert, Status } from '../components/Notice';
import { PublicLayout } from '../components/Layout';
import { ApiError, messageOf } from '../errors';
import { useTitle } from '../hooks';
import { Link } from '../router';
import { session, useSession } from '../session';

export function SignInPage() {
  useTitle('Sign in');
  const { notice } = useSession();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (event: FormEvent) => {
    event.preventDefault();
    setError(null);
    if (!email.trim() || !password) {
      setError(!email.trim() ? 'Enter your email address.' : 'Enter your password.');
      return;
    }
    setBusy(true);
    try {
      await session.signIn(email.trim(), password);
      // The app moves on to where the user wanted to go once the session is signed in.
    } catch (err) {
      setError(messageOf(err));
      if (err instanceof ApiError && err.status === 401) setPassword('');
      setBusy(false);
    }
  };

  return (
    <PublicLayout>
      <div className="sign-in">
        <h1>Sign in to Linepack</h1>
        {notice ? <Status>{notice}</Status> : null}
        <form onSubmit={submit} noValidate className="form">
          <div className="field">
            <label htmlFor="sign-in-email">Email</label>
            <input
              id="sign-in-email"
              type="email"
              autoComplete="username"
              value={email}
              onChange={(e) => setEmail(e.target.value)}
              required
              autoFocus
              aria-invalid={error !== null && !email.trim() ? true : undefined}
            />
          </div>
          <div className="field">
            <label htmlFor="sign-in-password">Password</label>
            <input
              id="sign-in-password"
              type="password"
              autoComplete="current-password"
              value={password}
              onChange={(e) => setPassword(e.target.value)}
              required
            />
          </div>
          <ErrorAlert>{error}</ErrorAlert>
          <button type="submit" className="button button-primary button-block" disabled={busy}>
            Sign in
          </button>
        </form>
        <p className="hint">
          <Link to="/sign-in/reset-password">Forgot your password?</Link> An administrator of your tenant gives you a one-time token to set a new one.
        </p>
        <p className="hint">
          Have an API key instead? Use it in the <Link to="/explorer">Explorer</Link> without signing in.
        </p>
      </div>
    </PublicLayout>
  );
}
