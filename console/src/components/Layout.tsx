import { useState, type ReactNode } from 'react';
import { messageOf } from '../errors';
import { Link, useRouter } from '../router';
import { session, useSession } from '../session';
import { ErrorAlert } from './Notice';
import { useIsAdmin } from './SettingsNav';

function Brand() {
  return (
    <span className="brand">
      <svg width="22" height="22" viewBox="0 0 24 24" aria-hidden="true" focusable="false">
        <path d="M2 15h6l2-6h4l2 6h6" fill="none" stroke="currentColor" strokeWidth="2.5" strokeLinecap="round" strokeLinejoin="round" />
        <circle cx="12" cy="9" r="2" fill="currentColor" />
      </svg>
      Linepack
    </span>
  );
}

function SkipLink() {
  return (
    <a className="skip-link" href="#main">
      Skip to content
    </a>
  );
}

/**
 * Signing out of this session: on to the sign-in page once the server has ended it; otherwise still signed in, and
 * `error` says why (the header's Sign out and the account page's).
 */
export function useSignOut(): { signingOut: boolean; error: string | null; signOut(): void } {
  const { navigate } = useRouter();
  const [signingOut, setSigningOut] = useState(false);
  const [error, setError] = useState<string | null>(null);
  const signOut = () => {
    setSigningOut(true);
    setError(null);
    void session.signOut().then((failure) => {
      if (failure === null) return navigate('/sign-in', { replace: true });
      setSigningOut(false);
      setError(failure);
    });
  };
  return { signingOut, error, signOut };
}

/** The signed-in layout: header with the tenant picker, navigation and sign-out. */
export function Layout({ children }: { children: ReactNode }) {
  const { me, tenantId } = useSession();
  // Users and the audit log are for tenant administrators only: nobody else is offered pages their scopes refuse.
  const isAdmin = useIsAdmin();
  const [switching, setSwitching] = useState(false);
  const [switchError, setSwitchError] = useState<string | null>(null);
  const { signingOut, error: signOutError, signOut } = useSignOut();
  const error = switchError ?? signOutError;

  return (
    <>
      <SkipLink />
      <header className="app-header">
        <div className="header-inner">
          <Link to="/dashboard" className="brand-link" aria-label="Linepack home">
            <Brand />
          </Link>
          <nav aria-label="Main">
            <ul className="nav-list">
              <li>
                <Link to="/dashboard">Pipeline</Link>
              </li>
              <li>
                <Link to="/assets">Assets</Link>
              </li>
              <li>
                <Link to="/map">Map</Link>
              </li>
              <li>
                <Link to="/digs">Dig list</Link>
              </li>
              <li>
                <Link to="/risk">Risk</Link>
              </li>
              <li>
                <Link to="/compliance">Compliance</Link>
              </li>
              <li>
                <Link to="/explorer">Explorer</Link>
              </li>
              <li>
                <Link to="/settings/api-keys">API Keys</Link>
              </li>
              {isAdmin ? (
                <>
                  <li>
                    <Link to="/settings/users">Users</Link>
                  </li>
                  <li>
                    <Link to="/settings/audit-log">Audit log</Link>
                  </li>
                </>
              ) : null}
            </ul>
          </nav>
          <div className="header-tools">
            <label className="tenant-picker">
              <span>Tenant</span>
              <select
                value={tenantId ?? ''}
                disabled={switching || !me}
                onChange={(event) => {
                  const next = event.target.value;
                  setSwitching(true);
                  setSwitchError(null);
                  session
                    .selectTenant(next)
                    .catch((err: unknown) => setSwitchError(`Could not switch tenant. ${messageOf(err)}`))
                    .finally(() => setSwitching(false));
                }}
              >
                {(me?.tenants ?? []).map((t) => (
                  <option key={t.tenantId} value={t.tenantId}>
                    {t.name}
                    {t.role ? ` (${t.role.charAt(0) + t.role.slice(1).toLowerCase()})` : ''}
                  </option>
                ))}
              </select>
            </label>
            {me?.email ? (
              <span className="user-email" title="Signed in as">
                {me.email}
              </span>
            ) : null}
            {me?.kind === 'USER' ? (
              <Link to="/settings/account" className="account-link">
                Account
              </Link>
            ) : null}
            <button type="button" className="button button-quiet sign-out" disabled={signingOut} onClick={signOut}>
              Sign out
            </button>
          </div>
        </div>
      </header>
      {error ? (
        <div className="page">
          <ErrorAlert>{error}</ErrorAlert>
        </div>
      ) : null}
      <main id="main" tabIndex={-1} className="page">
        {children}
      </main>
    </>
  );
}

/** The header for pages open without signing in (the sign-in page, the explorer with an API key). */
export function PublicLayout({ children, wide = false }: { children: ReactNode; wide?: boolean }) {
  return (
    <>
      <SkipLink />
      <header className="app-header">
        <div className="header-inner">
          <Brand />
        </div>
      </header>
      <main id="main" tabIndex={-1} className={wide ? 'page' : 'page page-narrow'}>
        {children}
      </main>
    </>
  );
}
