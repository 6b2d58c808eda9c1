import { lazy, Suspense, useEffect, type ReactNode } from 'react';
import { Layout, PublicLayout } from './components/Layout';
import { Status } from './components/Notice';
import { matchPath, safeNext, useRouter } from './router';
import { useSession } from './session';
import { AccountPage } from './pages/AccountPage';
import { AssetPage } from './pages/AssetPage';
import { AssetsPage } from './pages/AssetsPage';
import { CompliancePage } from './pages/CompliancePage';
import { DigListPage } from './pages/DigListPage';
import { DigSheetPage } from './pages/DigSheetPage';
import { ApiKeysPage } from './pages/ApiKeysPage';
import { AuditLogPage } from './pages/AuditLogPage';
import { DashboardPage } from './pages/DashboardPage';
import { IliImportPage } from './pages/IliImportPage';
import { NotFoundPage } from './pages/NotFoundPage';
import { OAuthAuthorizePage } from './pages/OAuthAuthorizePage';
import { ResetPasswordPage } from './pages/ResetPasswordPage';
import { RiskPage } from './pages/RiskPage';
import { SignInPage } from './pages/SignInPage';
import { UsersPage } from './pages/UsersPage';

// GraphiQL is most of the bundle: loaded only when the explorer is opened.
const ExplorerPage = lazy(() => import('./pages/ExplorerPage').then((m) => ({ default: m.ExplorerPage })));
// Leaflet and its styles load with the map page only.
const MapPage = lazy(() => import('./pages/MapPage').then((m) => ({ default: m.MapPage })));

function ExplorerLoading() {
  return <Status tone="muted">Loading the explorer…</Status>;
}

function Redirect({ to }: { to: string }) {
  const { navigate } = useRouter();
  useEffect(() => navigate(to, { replace: true }), [navigate, to]);
  return null;
}

/** Signed-in pages: anyone else goes to sign-in, which brings them back here afterwards. */
function RequireAuth({ children }: { children: ReactNode }) {
  const { status } = useSession();
  const { path, search } = useRouter();
  if (status === 'signedOut') return <Redirect to={`/sign-in?next=${encodeURIComponent(path + search)}`} />;
  return <Layout>{children}</Layout>;
}

export function App() {
  const { status } = useSession();
  const { path, search } = useRouter();

  if (status === 'restoring') {
    return (
      <main id="main" className="page page-narrow">
        <Status tone="muted">Restoring your session…</Status>
      </main>
    );
  }

  // Setting a password with an administrator's one-time token: open to anyone holding one, signed in or not.
  if (path === '/sign-in/reset-password') return <ResetPasswordPage />;
  if (path === '/' || path === '') return <Redirect to={status === 'signedIn' ? '/dashboard' : '/sign-in'} />;
  if (path === '/sign-in') {
    if (status === 'signedIn') return <Redirect to={safeNext(new URLSearchParams(search).get('next')) ?? '/dashboard'} />;
    return <SignInPage />;
  }
  // An application asking to act as the user (OAuth): signing in first returns here with the request intact.
  if (path === '/oauth/authorize')
    return status === 'signedIn' ? <OAuthAuthorizePage /> : <Redirect to={`/sign-in?next=${encodeURIComponent(path + search)}`} />;
  if (path === '/explorer' || path === '/graphql') {
    return status === 'signedIn' ? (
      <Layout>
        <Suspense fallback={<ExplorerLoading />}>
          <ExplorerPage />
        </Suspense>
      </Layout>
    ) : (
      <Suspense fallback={<ExplorerLoading />}>
        <ExplorerPage standalone />
      </Suspense>
    );
  }
  if (path === '/dashboard') {
    return (
      <RequireAuth>
        <DashboardPage />
      </RequireAuth>
    );
  }
  if (path === '/assets' || path === '/assets/') {
    return (
      <RequireAuth>
        <AssetsPage />
      </RequireAuth>
    );
  }
  if (path === '/map' || path === '/map/') {
    return (
      <RequireAuth>
        <Suspense fallback={<Status tone="muted">Loading the map…</Status>}>
          {/* A new address from the router (the menu's "Map", "Open on map") is a new view of the map. */}
          <MapPage key={search} />
        </Suspense>
      </RequireAuth>
    );
  }
  if (path === '/digs' || path === '/digs/') {
    return (
      <RequireAuth>
        <DigListPage />
      </RequireAuth>
    );
  }
  if (path === '/risk' || path === '/risk/') {
    return (
      <RequireAuth>
        <RiskPage />
      </RequireAuth>
    );
  }
  if (path === '/compliance' || path === '/compliance/') {
    return (
      <RequireAuth>
        <CompliancePage />
      </RequireAuth>
    );
  }
  const sheet = matchPath('/digs/:id', path);
  if (sheet) {
    return (
      <RequireAuth>
        <DigSheetPage key={sheet['id']} id={sheet['id']!} />
      </RequireAuth>
    );
  }
  const iliImport = matchPath('/assets/:id/ili-import', path);
  if (iliImport) {
    return (
      <RequireAuth>
        <IliImportPage key={iliImport['id']} assetId={iliImport['id']!} />
      </RequireAuth>
    );
  }
  const asset = matchPath('/assets/:id', path);
  if (asset) {
    return (
      <RequireAuth>
        <AssetPage key={asset['id']} id={asset['id']!} />
      </RequireAuth>
    );
  }
  if (path === '/settings' || path === '/settings/') return <Redirect to="/settings/api-keys" />;
  if (path === '/settings/account') {
    return (
      <RequireAuth>
        <AccountPage />
      </RequireAuth>
    );
  }
  if (path === '/settings/users') {
    return (
      <RequireAuth>
        <UsersPage />
      </RequireAuth>
    );
  }
  if (path === '/settings/audit-log') {
    return (
      <RequireAuth>
        <AuditLogPage />
      </RequireAuth>
    );
  }
  if (path === '/settings/api-keys') {
    return (
      <RequireAuth>
        <ApiKeysPage />
      </RequireAuth>
    );
  }
  // No page at this address: "Page not found" (the gateway answered 404), signed in or not — a visitor who is signed
  // out is not sent to sign in for a page that does not exist.
  if (status !== 'signedIn') {
    return (
      <PublicLayout>
        <NotFoundPage />
      </PublicLayout>
    );
  }
  return (
    <Layout>
      <NotFoundPage />
    </Layout>
  );
}
