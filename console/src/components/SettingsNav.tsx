import { Status } from './Notice';
import { Link } from '../router';
import { useSession } from '../session';

/**
 * The settings pages side by side: your account for everyone; API keys, users and the audit log for a tenant
 * administrator (admin:*), the only one whose scopes let them use those pages.
 */
export function SettingsNav() {
  const admin = useIsAdmin();
  const pages = [
    { to: '/settings/account', label: 'Your account' },
    ...(admin
      ? [
          { to: '/settings/users', label: 'Users' },
          { to: '/settings/audit-log', label: 'Audit log' },
          { to: '/settings/api-keys', label: 'API keys' },
        ]
      : []),
  ];
  if (pages.length < 2) return null;
  return (
    <nav aria-label="Settings" className="settings-nav">
      <ul>
        {pages.map((p) => (
          <li key={p.to}>
            <Link to={p.to}>{p.label}</Link>
          </li>
        ))}
      </ul>
    </nav>
  );
}

/** True when the signed-in credential administers the current tenant. */
export function useIsAdmin(): boolean {
  const { me } = useSession();
  return me?.scopes.includes('admin:*') ?? false;
}

/** What someone without admin:* sees on an administrator's page: why not, and whom to ask. */
export function AdminOnly({ title, what }: { title: string; what: string }) {
  const { me } = useSession();
  const tenant = me?.tenants.find((t) => t.tenantId === me.tenantId);
  const role = tenant?.role ? tenant.role.charAt(0) + tenant.role.slice(1).toLowerCase() : null;
  return (
    <>
      <SettingsNav />
      <h1>{title}</h1>
      <Status>
        Only a tenant administrator can {what}.{' '}
        {role && tenant ? `Your role in ${tenant.name} is ${role}: ask one of its administrators.` : 'Ask an administrator of this tenant.'}
      </Status>
    </>
  );
}
