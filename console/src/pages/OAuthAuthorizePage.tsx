import { useEffect, useState } from 'react';
import { ErrorAlert, Loading } from '../components/Notice';
import { PublicLayout } from '../components/Layout';
import { useTitle } from '../hooks';
import { useRouter } from '../router';
import { session, useSession } from '../session';

/**
 * The OAuth authorization endpoint (RFC 8414 metadata points here): an application — an MCP client, a third-party
 * tool — asks to act as the signed-in user. The auth service checks the request; the user picks the tenant the
 * application may act in and allows or denies. Signing in is the console's own sign-in page, which returns here.
 */
interface AuthorizationRequestView {
  client: { client_id: string; client_name: string; client_uri: string | null; source: 'metadata_document' | 'registered' };
  redirect_uri: string;
  resource: string;
  /** null: none asked, so whatever the user's role allows. */
  scopes: { name: string; description: string }[] | null;
}

interface OAuthErrorAnswer {
  error: string;
  error_description?: string;
  /** Present when the client may be told (its redirect URI is known to be its own). */
  redirect_to?: string;
}

type View = { kind: 'loading' } | { kind: 'ready'; request: AuthorizationRequestView } | { kind: 'failed'; message: string; returnTo: string | null };

export function OAuthAuthorizePage() {
  useTitle('Allow access');
  const { search } = useRouter();
  const { me, tenantId } = useSession();
  const [view, setView] = useState<View>({ kind: 'loading' });
  const [chosenTenant, setChosenTenant] = useState<string>(tenantId ?? me?.tenants[0]?.tenantId ?? '');
  const [busy, setBusy] = useState(false);
  const [error, setError] = useState<string | null>(null);

  useEffect(() => {
    let live = true;
    void (async () => {
      try {
        const res = await fetch(`/auth/oauth/authorize/request${search}`, { headers: { Accept: 'application/json' } });
        const body = (await res.json()) as AuthorizationRequestView | OAuthErrorAnswer;
        if (!live) return;
        if (res.ok) setView({ kind: 'ready', request: body as AuthorizationRequestView });
        else {
          const failure = body as OAuthErrorAnswer;
          setView({ kind: 'failed', message: failure.error_description ?? failure.error, returnTo: failure.redirect_to ?? null });
        }
      } catch {
        if (live) setView({ kind: 'failed', message: 'Linepack could not be reached. Try again shortly.', returnTo: null });
      }
    })();
    return () => {
      live = false;
    };
  }, [search]);

  const decide = async (approve: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const params = Object.fromEntries(new URLSearchParams(search));
      const res = await fetch('/auth/oauth/authorize/decision', {
        method: 'POST',
        headers: { 'Content-Type': 'application/json', Accept: 'application/json', Authorization: `Bearer ${session.accessToken ?? ''}` },
        body: JSON.stringify({ ...params, tenant_id: chosenTenant, approve }),
      });
      const body = (await res.json()) as { redirect_to?: string } & Partial<OAuthErrorAnswer>;
      if (body.redirect_to) {
        // Leaving the console for the application's own redirect URI, which the auth service checked.
        window.location.assign(body.redirect_to);
        return;
      }
      setError(body.error_description ?? 'The request was refused.');
    } catch {
      setError('Linepack could not be reached. Try again.');
    }
    setBusy(false);
  };

  if (view.kind === 'loading') {
    return (
      <PublicLayout>
        <Loading what="the request" />
      </PublicLayout>
    );
  }
  if (view.kind === 'failed') {
    return (
      <PublicLayout>
        <div className="sign-in">
          <h1>This application cannot be allowed</h1>
          <ErrorAlert>{view.message}</ErrorAlert>
          {view.returnTo ? (
            <a className="button button-block" href={view.returnTo}>
              Return to the application
            </a>
          ) : null}
        </div>
      </PublicLayout>
    );
  }
  const { request } = view;
  const tenants = me?.tenants ?? [];
  const name = request.client.client_name;
  const returnHost = new URL(request.redirect_uri).host;
  return (
    <PublicLayout>
      <div className="sign-in consent">
        <h1>Allow {name} to use Linepack as you?</h1>
        <p>
          Signed in as <strong>{me?.email}</strong>. {name} will act as you, within what you choose here, at <code>{request.resource}</code>.
        </p>
        {request.client.source === 'registered' ? (
          // RFC 7591 registration lets an application call itself anything: say so, as RFC 6819 §4.4.1.4 advises.
          <p className="warning">
            Linepack has not verified this name: the application gave it itself. Allow only if you have just started signing in from it.
          </p>
        ) : (
          <p className="hint">
            The application is identified by <code>{request.client.client_id}</code>.
          </p>
        )}
        <form
          className="form"
          onSubmit={(event) => {
            event.preventDefault();
            void decide(true);
          }}
        >
          <div className="field">
            <label htmlFor="oauth-tenant">Tenant</label>
            <select id="oauth-tenant" value={chosenTenant} onChange={(e) => setChosenTenant(e.target.value)}>
              {tenants.map((t) => (
                <option key={t.tenantId} value={t.tenantId}>
                  {t.name}
                  {t.role ? ` (${t.role.toLowerCase()})` : ''}
                </option>
              ))}
            </select>
            <p className="hint">It acts in this tenant only.</p>
          </div>
          <div className="consent-scopes">
            <h2 id="oauth-scopes">It asks to</h2>
            {request.scopes === null ? (
              <p>do everything your role allows in that tenant.</p>
            ) : (
              <ul aria-labelledby="oauth-scopes">
                {request.scopes.map((s) => (
                  <li key={s.name}>
                    {s.description} <code>{s.name}</code>
                  </li>
                ))}
              </ul>
            )}
            <p className="hint">Of these, it gets only what your role holds in the tenant you choose.</p>
          </div>
          <ErrorAlert>{error}</ErrorAlert>
          <button type="submit" className="button button-primary button-block" disabled={busy || !chosenTenant}>
            Allow
          </button>
          <button type="button" className="button button-block" disabled={busy} onClick={() => void decide(false)}>
            Deny
          </button>
          <p className="hint">Either way you go back to {returnHost}.</p>
        </form>
      </div>
    </PublicLayout>
  );
}
