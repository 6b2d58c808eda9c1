import type { ReactNode } from 'react';
import { useTenantTimeZone } from '../hooks';
import { Loading } from './Notice';

/**
 * Renders a page once the tenant's time zone is known (useTenantTimeZone): before it, a date shown would be a day of
 * another zone, and a date typed in would be stored as one.
 */
export function InTenantZone({ children }: { children: (zone: string | null) => ReactNode }) {
  const zone = useTenantTimeZone();
  return zone === undefined ? <Loading what="the tenant's time zone" /> : <>{children(zone)}</>;
}
